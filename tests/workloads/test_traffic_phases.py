"""Traffic phases that change the background workload and the incast pattern, not only the load."""

import numpy as np
import pytest

from ecngym.error import ConfigError
from ecngym.workloads import generate_trace

BASE = {"load": 0.3, "hosts": 16, "duration": "6ms", "seed": 3}


def test_a_phase_switches_the_flow_size_distribution():
    t = generate_trace("pred_workload2", **BASE, phases=[{"at": "3ms", "workload": "pred_workload1"}])
    f = t.flows
    first, second = f[f["start_ns"] < 3_000_000], f[f["start_ns"] >= 3_000_000]
    assert first["size_bytes"].between(30_000, 600_000).all()
    assert second["size_bytes"].between(3_000, 6_000).all()
    # the load carries over into a phase that does not give one
    assert second["size_bytes"].sum() / first["size_bytes"].sum() == pytest.approx(1.0, rel=0.1)
    assert t.params["phases"] == [{"at_ns": 3_000_000, "load": 0.3, "workload": "pred_workload1"}]


def test_a_phase_changes_the_incast_degree_size_and_rate():
    t = generate_trace("websearch", **BASE, incast={"degree": 2, "size": "10KB", "interval": "500us",
                                                     "arrival": "periodic"},
                       phases=[{"at": "2ms", "incast": {"degree": 12, "size": "20KB", "interval": "100us"}},
                               {"at": "4ms", "incast": {"degree": 0}}])
    inc = t.flows[t.flows["tag"] == "incast"]
    first, second, third = (inc[inc["start_ns"].between(a, b - 1)] for a, b in
                            ((0, 2_000_000), (2_000_000, 4_000_000), (4_000_000, 6_000_000)))
    assert len(first) == 4 * 2 and (first["size_bytes"] == 10_000).all()
    assert len(second) == 20 * 12 and (second["size_bytes"] == 20_000).all()  # periodic carries over
    assert third.empty
    assert t.params["phases"][0]["incast"]["degree"] == 12
    assert t.params["phases"][1]["incast"] is None


def test_an_incast_only_in_a_phase_and_its_load():
    t = generate_trace("websearch", **BASE, phases=[{"at": "3ms", "incast": {"degree": 8, "size": "64KB",
                                                                              "load": 0.2}}])
    inc = t.flows[t.flows["tag"] == "incast"]
    assert (inc["start_ns"] >= 3_000_000).all()
    offered = inc["size_bytes"].sum() * 8 / (16 * 100e9 * 3e-3)
    assert offered == pytest.approx(0.2, rel=0.3)


def test_phases_that_change_nothing_but_load_keep_the_recorded_params():
    t = generate_trace("websearch", **BASE, phases=[{"at": "3ms", "load": 0.6}])
    assert t.params["phases"] == [{"at_ns": 3_000_000, "load": 0.6}]


def test_incast_phases_leave_the_background_unchanged():
    plain = generate_trace("websearch", **BASE, phases=[{"at": "3ms", "load": 0.3}])
    phased = generate_trace("websearch", **BASE, phases=[{"at": "3ms", "incast": {"degree": 4}}])
    cols = ["src", "dst", "size_bytes", "start_ns"]  # (flow ids count the incast flows too)
    bg = lambda t: t.flows.loc[t.flows["tag"] != "incast", cols].reset_index(drop=True)  # noqa: E731
    assert bg(plain).equals(bg(phased))
    again = generate_trace("websearch", **BASE, phases=[{"at": "3ms", "incast": {"degree": 4}}])
    assert again.hash == phased.hash and not np.array_equal(plain.flows["start_ns"], phased.flows["start_ns"])


@pytest.mark.parametrize(
    "phases,field",
    [([{"at": "3ms", "workload": "websaerch"}], r"^trace\.phases\[0\]\.workload: got 'websaerch'"),
     ([{"at": "3ms", "workload": "none"}], r"^trace\.phases\[0\]\.workload"),
     ([{"at": "3ms", "workload": 3}], r"^trace\.phases\[0\]\.workload"),
     ([{"at": "3ms", "bogus": 1}], r"^trace\.phases\[0\]: expected \{at"),
     ([{"load": 0.2}], r"^trace\.phases\[0\]: expected \{at"),
     ([{"at": "3ms", "incast": {"degree": 16}}], r"^trace\.phases\[0\]\.incast\.degree"),
     ([{"at": "3ms", "incast": {"degree": 2, "size": 0}}], r"^trace\.phases\[0\]\.incast\.size"),
     ([{"at": "3ms", "incast": {"degree": 2, "arrival": "bursty"}}], r"^trace\.phases\[0\]\.incast\.arrival"),
     ([{"at": "3ms", "incast": {"degree": 2, "load": 1.5}}], r"^trace\.phases\[0\]\.incast\.load"),
     ([{"at": "3ms", "incast": {"degree": 2, "interval": "1ms", "load": 0.1}}], r"^trace\.phases\[0\]\.incast\.load"),
     ([{"at": "3ms", "incast": {"degre": 2}}], r"^trace\.phases\[0\]\.incast\.degre"),
     ([{"at": "3ms", "incast": {"degree": 2, "at": "1ms"}}], r"^trace\.phases\[0\]\.incast\.at"),
     ([{"at": "3ms", "incast": 5}], r"^trace\.phases\[0\]\.incast"),
     ([{"at": "1ms"}, {"at": "4ms", "incast": {"degree": 2, "interval": 0}}],
      r"^trace\.phases\[1\]\.incast\.interval")],
)
def test_bad_phase_fields_are_refused_naming_the_field(phases, field):
    with pytest.raises(ConfigError, match=field):
        generate_trace("websearch", **BASE, phases=phases)


def test_background_phase_fields_need_a_background():
    with pytest.raises(ConfigError, match=r"^trace\.phases\[0\]\.workload"):
        generate_trace("none", hosts=16, duration="6ms", incast={"degree": 2},
                       phases=[{"at": "3ms", "workload": "websearch"}])
    t = generate_trace("none", hosts=16, duration="6ms", incast={"degree": 2, "interval": "1ms"},
                       phases=[{"at": "3ms", "incast": {"degree": 6}}])
    assert t.params["phases"] == [{"at_ns": 3_000_000, "incast": {
        "degree": 6, "size_bytes": 64_000, "interval_ns": 1_000_000, "load": None, "arrival": "poisson",
        "receiver": None}}]
