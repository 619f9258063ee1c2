"""`ecngym trace generate` / `ecngym trace inspect` end to end, in-process; the shipped workload configs."""

import pytest

from ecngym import cli
from ecngym.sim_backend.data import hpcc_reference_path
from ecngym.workloads import Trace, generate_trace
from ecngym.workloads.cli import workload_choices


def _generate(tmp_path, *overrides):
    return cli.main(["trace", "generate", *overrides, f"hydra.run.dir={tmp_path}/hydra",
                     f"hydra.sweep.dir={tmp_path}/sweep"])


def test_generate_then_inspect(tmp_path, capsys):
    out = tmp_path / "t.parquet"
    assert _generate(tmp_path, "workload=fb_hadoop", "load=0.3", "hosts=8", "duration=2ms", "seed=3",
                     "link_rate=25Gbps", f"output={out}",
                     "incast.degree=3", "incast.size=16KB", "incast.arrival=periodic") == 0
    printed = capsys.readouterr().out
    trace = Trace.load(out)
    assert str(out) in printed and trace.hash in printed
    # the CLI's trace is the library's trace for the same parameters
    assert trace.hash == generate_trace("fb_hadoop", load=0.3, hosts=8, duration="2ms", seed=3,
                                        link_rate="25Gbps",
                                        incast={"degree": 3, "size": "16KB", "arrival": "periodic"}).hash
    assert cli.main(["trace", "inspect", str(out)]) == 0
    printed = capsys.readouterr().out
    assert trace.hash in printed and "achieved load" in printed and f"{trace.achieved_load(25e9):.4f}" in printed
    assert "p99" in printed and "incast: 6" in printed.replace(",", "")


def test_default_output_path_and_multirun(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert _generate(tmp_path, "-m", "seed=1,2", "duration=1ms", "hosts=4") == 0
    files = sorted((tmp_path / "traces").glob("*.parquet"))
    assert [f.name for f in files] == [f"websearch_load0.5_hosts4_seed{s}.parquet" for s in (1, 2)]
    assert Trace.load(files[0]).hash != Trace.load(files[1]).hash


def test_generate_errors_are_one_line_naming_the_field(tmp_path, capsys):
    assert _generate(tmp_path, "load=1.2", f"output={tmp_path}/x.parquet") == 2
    err = capsys.readouterr().err
    assert "trace.load" in err and "Traceback" not in err
    assert _generate(tmp_path, "workload=websaerch") == 2
    assert "Did you mean 'websearch'" in capsys.readouterr().err
    bad = tmp_path / "bad.cdf"
    bad.write_text("0 0\n100 x\n")
    assert _generate(tmp_path, "workload=custom", f"workload.cdf_file={bad}", f"output={tmp_path}/y.parquet") == 2
    assert "line 2" in capsys.readouterr().err
    assert not (tmp_path / "x.parquet").exists() and not (tmp_path / "y.parquet").exists()


def test_inspect_errors_and_hpcc_files(tmp_path, capsys):
    assert cli.main(["trace", "inspect", str(tmp_path / "missing.parquet")]) == 2
    assert "trace: no file at" in capsys.readouterr().err
    ref = hpcc_reference_path("flow_ws50_16h_100g_10ms.txt")
    assert cli.main(["trace", "inspect", str(ref), "--head", "2"]) == 0
    assert "605" in capsys.readouterr().out


@pytest.mark.parametrize("name", workload_choices())
def test_every_shipped_workload_config_generates(tmp_path, name):
    overrides = {
        "hpcc_incast": ["hosts=64", "load=0.3", "duration=1ms"],
        "laecn_load_step": ["duration=250ms", "load=0.3", "hosts=4"],
        "none": ["incast.degree=2", "incast.arrival=periodic", "duration=1ms"],
        "custom": [f"workload.cdf_file={tmp_path}/c.txt", "duration=1ms"],
    }.get(name, ["duration=1ms"])
    (tmp_path / "c.txt").write_text("1000 0\n2000 100\n")
    out = tmp_path / f"{name}.parquet"
    assert _generate(tmp_path, f"workload={name}", *overrides, f"output={out}") == 0
    trace = Trace.load(out)
    assert len(trace) > 0
    if name == "hpcc_incast":
        inc = trace.flows[trace.flows["tag"] == "incast"]
        assert inc.groupby("start_ns").size().eq(60).all() and (inc["size_bytes"] == 500_000).all()
    if name == "laecn_load_step":
        assert trace.params["phases"] == [{"at_ns": 200_000_000, "load": 0.7}]
