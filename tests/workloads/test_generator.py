"""The generator: target load, exact incast, composable patterns, reproducible hashes, clear errors."""

import re

import numpy as np
import pandas as pd
import pytest

from ecngym.error import ConfigError
from ecngym.workloads import generate_trace, generate_trace_from_config, get_distribution


@pytest.mark.parametrize("workload,hosts,duration", [("websearch", 16, "1s"), ("fb_hadoop", 16, "50ms"),
                                                     ("pred_workload2", 8, "20ms")])
def test_achieved_load_within_3_percent_of_target(workload, hosts, duration):
    trace = generate_trace(workload, load=0.6, hosts=hosts, duration=duration, seed=4)
    assert len(trace) > 3_000
    assert trace.achieved_load(100e9) == pytest.approx(0.6, rel=0.03)
    f = trace.flows
    assert (f["src"] != f["dst"]).all()
    assert f["src"].between(0, hosts - 1).all() and f["dst"].between(0, hosts - 1).all()
    # sources and destinations uniform over the hosts
    counts = np.bincount(f["src"], minlength=hosts)
    assert counts.min() > 0.9 * len(f) / hosts and counts.max() < 1.1 * len(f) / hosts


def test_load_phases_change_the_rate():
    trace = generate_trace("pred_workload2", load=0.3, hosts=8, duration="200ms", seed=2,
                           phases=[{"at": "100ms", "load": 0.7}])
    f = trace.flows
    first = f.loc[f["start_ns"] < 100_000_000, "size_bytes"].sum()
    second = f.loc[f["start_ns"] >= 100_000_000, "size_bytes"].sum()
    assert second / first == pytest.approx(0.7 / 0.3, rel=0.05)
    assert trace.params["phases"] == [{"at_ns": 100_000_000, "load": 0.7}]


def test_an_idle_phase_has_no_background():
    f = generate_trace("websearch", load=0.5, hosts=8, duration="3ms", seed=2,
                       phases=[{"at": "1ms", "load": 0.0}, {"at": "2ms", "load": 0.5}]).flows
    assert not f["start_ns"].between(1_000_000, 1_999_999).any()
    assert (f["start_ns"] < 1_000_000).any() and (f["start_ns"] >= 2_000_000).any()


def test_incast_flows_have_exactly_the_requested_degree_and_size():
    trace = generate_trace("websearch", load=0.3, hosts=32, duration="20ms", seed=9,
                           incast={"degree": 12, "size": "48KB", "interval": "2ms", "arrival": "periodic"})
    inc = trace.flows[trace.flows["tag"] == "incast"]
    bursts = inc.groupby("start_ns")
    assert sorted(bursts.groups) == list(range(0, 20_000_000, 2_000_000))
    for _, burst in bursts:
        assert len(burst) == 12
        assert burst["dst"].nunique() == 1
        assert burst["src"].nunique() == 12
        assert (burst["src"] != burst["dst"]).all()
        assert (burst["size_bytes"] == 48_000).all()


def test_poisson_incast_to_a_fixed_receiver():
    inc = generate_trace("websearch", load=0.2, hosts=16, duration="50ms", seed=5,
                         incast={"degree": 15, "size": "10KB", "interval": "1ms", "receiver": 4}).flows
    inc = inc[inc["tag"] == "incast"]
    bursts = inc.groupby("start_ns")
    assert 30 < len(bursts) < 70  # Poisson, mean 50 bursts
    assert (inc["dst"] == 4).all() and all(sorted(b["src"]) == [h for h in range(16) if h != 4] for _, b in bursts)
    gaps = np.diff(sorted(bursts.groups))
    assert gaps.std() > 0.5 * gaps.mean()  # exponential gaps, not a fixed period


def test_incast_load_sets_the_interval():
    # the HPCC recipe: 60 senders x 500 KB, incasts offering 2 % of the host links
    trace = generate_trace("fb_hadoop", load=0.3, hosts=128, duration="20ms", seed=1,
                           incast={"degree": 60, "size": "500KB", "load": 0.02, "arrival": "periodic"})
    interval_ns = trace.params["incast"]["interval_ns"]
    assert interval_ns == round(60 * 500_000 * 8e9 / (0.02 * 128 * 100e9))
    inc = trace.flows[trace.flows["tag"] == "incast"]
    incast_load = inc["size_bytes"].sum() * 8e9 / (128 * 100e9 * 20e6)
    assert incast_load == pytest.approx(0.02, abs=60 * 500_000 * 8e9 / (128 * 100e9 * 20e6))  # one burst


def test_adding_incast_keeps_the_background():
    base = generate_trace("websearch", load=0.5, hosts=16, duration="5ms", seed=3)
    mixed = generate_trace("websearch", load=0.5, hosts=16, duration="5ms", seed=3,
                           incast={"degree": 4, "size": "10KB", "interval": "1ms"})
    assert (mixed.flows["tag"] == "incast").sum() > 0
    cols = ["src", "dst", "size_bytes", "start_ns"]
    bg = mixed.flows[mixed.flows["tag"] == "background"][cols].reset_index(drop=True)
    pd.testing.assert_frame_equal(bg, base.flows[cols].reset_index(drop=True))


def test_permutation_all_to_all_and_long_lived_without_background():
    t = generate_trace("none", hosts=6, duration="1ms", seed=1,
                       permutation={"size": "1MB"}, all_to_all={"size": "10KB", "at": "100us"},
                       long_lived={"flows": 3, "size": "1GB", "receiver": 0})
    assert "background" not in set(t.flows["tag"]) and t.params["load"] is None
    perm = t.flows[t.flows["tag"] == "permutation"]
    assert sorted(perm["src"]) == list(range(6)) and sorted(perm["dst"]) == list(range(6))
    assert (perm["src"] != perm["dst"]).all() and (perm["size_bytes"] == 1_000_000).all()
    a2a = t.flows[t.flows["tag"] == "all_to_all"]
    assert len(a2a) == 30 and len(set(zip(a2a["src"], a2a["dst"], strict=True))) == 30
    assert (a2a["start_ns"] == 100_000).all()
    ll = t.flows[t.flows["tag"] == "long_lived"]
    assert len(ll) == 3 and (ll["dst"] == 0).all() and ll["src"].nunique() == 3 and (ll["src"] != 0).all()


def test_long_lived_random_destinations_have_distinct_senders():
    ll = generate_trace("none", hosts=8, duration="1ms", seed=2, long_lived={"flows": 8, "size": "1MB"}).flows
    assert sorted(ll["src"]) == list(range(8)) and (ll["src"] != ll["dst"]).all()


def test_same_seed_same_hash_and_table_different_seed_or_param_different_hash():
    kw = dict(load=0.5, hosts=16, duration="5ms", incast={"degree": 3, "interval": "1ms"})
    a, b = generate_trace(seed=1, **kw), generate_trace(seed=1, **kw)
    assert a.hash == b.hash and len(a.hash) == 64
    pd.testing.assert_frame_equal(a.flows, b.flows)
    variants = [generate_trace(seed=2, **kw), generate_trace(seed=1, **{**kw, "load": 0.51}),
                generate_trace("datamining", seed=1, **kw), generate_trace(seed=1, **{**kw, "hosts": 17}),
                generate_trace(seed=1, **{**kw, "link_rate": "40Gbps"}),
                generate_trace(seed=1, **{**kw, "priority": 4}),
                generate_trace(seed=1, **{**kw, "incast": {"degree": 4, "interval": "1ms"}})]
    hashes = {v.hash for v in variants}
    assert a.hash not in hashes and len(hashes) == len(variants)


def test_hash_and_flows_do_not_depend_on_the_progress_bar():
    kw = dict(load=0.3, hosts=8, duration="2ms", seed=3)
    assert generate_trace(progress=True, **kw).hash == generate_trace(progress=False, **kw).hash


def test_params_record_what_made_the_trace():
    t = generate_trace("fixed", size="64KB", load=0.4, hosts=8, link_rate="25Gbps", duration="2ms", seed=6,
                       incast={"degree": 2, "size": "1KB", "interval": "500us", "arrival": "periodic"})
    p = t.params
    assert (p["workload"], p["load"], p["hosts"], p["link_rate_bps"], p["duration_ns"]) == (
        "fixed(64000B)", 0.4, 8, 25e9, 2_000_000)
    assert p["incast"] == {"degree": 2, "size_bytes": 1000, "interval_ns": 500_000, "load": None,
                           "arrival": "periodic", "receiver": None, "at_ns": 0}
    assert t.seed == 6 and (t.flows[t.flows["tag"] == "background"]["size_bytes"] == 64_000).all()


@pytest.mark.parametrize(
    "kwargs,field",
    [({"load": 1.0}, "trace.load"), ({"load": 1.5}, "trace.load"), ({"load": 0}, "trace.load.*workload=none"),
     ({"load": -0.1}, "trace.load"), ({"hosts": 0}, "trace.hosts"), ({"hosts": 1}, "trace.hosts"),
     ({"hosts": 2.5}, "trace.hosts"), ({"duration": "-1ms"}, "trace.duration"), ({"duration": 0}, "trace.duration"),
     ({"seed": -1}, "trace.seed"),
     # the episode seed's range (an env's episode seed seeds its trace): 1e30 was taken
     ({"seed": 2**64}, r"^trace.seed: got 18446744073709551616, allowed range is \[0, 18446744073709551615\]"),
     ({"seed": 1e30}, r"^trace.seed: got 1e\+30, allowed range is \[0, "),
     ({"workload": "websaerch"}, "workload.name.*Did you mean 'websearch'"),
     ({"link_rate": "fast"}, "trace.link_rate"), ({"priority": 0}, "trace.priority"),
     ({"incast": {"degree": 16, "interval": "1ms"}, "hosts": 8}, "trace.incast.degree"),
     ({"incast": {"degree": 2, "interval": "1ms", "load": 0.1}}, "trace.incast.load"),
     ({"incast": {"degree": 2, "arrival": "bursty"}}, "trace.incast.arrival"),
     ({"incast": {"degree": 2, "interval": 0}}, "trace.incast.interval"),
     ({"incast": {"degree": 2, "load": 1.5}}, "trace.incast.load"),
     ({"incast": {"degre": 2}}, "trace.incast.degre"),
     ({"long_lived": {"flows": 8, "receiver": 0}, "hosts": 8}, "trace.long_lived.flows"),
     ({"phases": [{"at": "20ms", "load": 0.5}]}, r"trace.phases\[0\].at"),
     ({"phases": [{"at": "5ms", "load": 1.2}]}, r"trace.phases\[0\].load"),
     ({"workload": "none", "phases": [{"at": "5ms", "load": 0.2}]}, "trace.phases"),
     ({"workload": "fixed"}, "workload.size")],
)
def test_bad_parameters_name_the_field(kwargs, field):
    kwargs = {"duration": "10ms", **kwargs}
    with pytest.raises(ConfigError, match=field):
        generate_trace(**kwargs)


@pytest.mark.parametrize("phases", [-1, 1.5, True, 0, "", {"at": "5ms", "load": 0.2}])
def test_phases_that_are_not_a_list_are_refused(phases):
    # -1 / 1.5 / True raised TypeError ('int' object is not iterable: ecngym eval +workload.phases=-1
    # exited 1 with a traceback); 0 and "" were taken as no phases, a mapping as a list of its keys
    with pytest.raises(ConfigError, match=rf"^trace\.phases: expected a list of \{{at: <time>, load: <0\.\.1>\}}, "
                                          rf"got {re.escape(repr(phases))}$"):
        generate_trace(duration="10ms", phases=phases)
    generate_trace(duration="1ms", phases=[])  # no phase changes


def test_bad_cdf_file_through_the_generator(tmp_path):
    bad = tmp_path / "my.cdf"
    bad.write_text("0 0\n1000 70\n500 100\n")
    with pytest.raises(ConfigError, match=r"workload\.cdf_file.*my\.cdf.*line 3"):
        generate_trace("custom", cdf_file=bad, duration="1ms")


def test_config_mix_is_the_base_and_set_fields_override_it():
    mix = {"name": "fb_hadoop", "incast": {"degree": 6, "size": "20KB", "interval": "1ms", "arrival": "periodic"}}
    unset = {"degree": None, "size": None, "interval": None, "load": None, "arrival": None, "receiver": None,
             "at": None}
    base = {"load": 0.3, "hosts": 16, "duration": "3ms", "seed": 2, "output": "ignored.parquet", "phases": None}
    t = generate_trace_from_config({**base, "workload": mix, "incast": unset})
    inc = t.flows[t.flows["tag"] == "incast"]
    assert len(inc) == 3 * 6 and (inc["size_bytes"] == 20_000).all()
    t2 = generate_trace_from_config({**base, "workload": mix, "incast": {**unset, "degree": 2}})
    inc2 = t2.flows[t2.flows["tag"] == "incast"]
    assert len(inc2) == 3 * 2 and (inc2["size_bytes"] == 20_000).all()  # the mix's size is kept
    with pytest.raises(ConfigError, match="trace.bogus"):
        generate_trace_from_config({**base, "bogus": 1})
    with pytest.raises(ConfigError, match="workload.incats"):
        generate_trace_from_config({**base, "workload": {"name": "websearch", "incats": {}}})


@pytest.mark.parametrize(("section", "message"), [
    ({"incast": {"degree": None, "size": "64KB"}},
     r"trace\.incast\.size: got '64KB', but incast\.degree is 0 \(no incast\), so it would be ignored"),
    ({"incast": {"degree": 0, "arrival": "bursty"}}, r"trace\.incast\.arrival: got 'bursty', but incast\.degree is 0"),
    ({"permutation": {"size": "0B", "at": "1ms"}}, r"trace\.permutation\.at: got '1ms', but permutation\.size is 0B"),
    ({"all_to_all": {"size": None, "at": "1ms"}}, r"trace\.all_to_all\.at: got '1ms', but all_to_all\.size is 0"),
    ({"long_lived": {"flows": None, "receiver": 2}}, r"trace\.long_lived\.receiver: got 2, but long_lived\.flows is 0"),
])
def test_config_fields_of_a_pattern_that_is_off_are_refused(section, message):
    # `ecngym trace generate incast.size=64KB` without incast.degree gave the trace without incasts
    # (same hash): the field was silently ignored, not even checked
    with pytest.raises(ConfigError, match=message):
        generate_trace_from_config({"duration": "1ms", **section})


@pytest.mark.parametrize("section,message", [
    ({"incast": {"degree": "0", "size": "1MB"}}, r"^trace\.incast\.degree: expected a whole number, got '0'$"),
    ({"incast": {"degree": "0B", "size": "1MB"}}, r"^trace\.incast\.degree: expected a whole number, got '0B'$"),
    ({"long_lived": {"flows": "0", "size": "1MB"}}, r"^trace\.long_lived\.flows: expected a whole number, got '0'$"),
    ({"incast": {"degree": 0.0, "size": "1MB"}}, r"^trace\.incast\.size: got '1MB', but incast\.degree is 0 "),
    ({"permutation": {"size": "0KB", "at": "1us"}},
     r"^trace\.permutation\.at: got '1us', but permutation\.size is 0KB"),
])
def test_the_config_check_reads_a_pattern_switch_as_the_generator_does(section, message):
    # the config check read every switch as a size ('0' and '0B' turned an incast off) while the
    # generator reads a degree / flow count as a whole number: the error blamed incast.size
    with pytest.raises(ConfigError, match=message):
        generate_trace_from_config({"duration": "1ms", **section})


def test_a_mix_that_turns_a_pattern_on_takes_its_fields_and_off_leaves_its_own_alone():
    mix = {"name": "fb_hadoop", "incast": {"degree": 2, "size": "20KB", "interval": "1ms"}}
    t = generate_trace_from_config({"duration": "3ms", "workload": mix, "incast": {"size": "10KB"}})
    assert (t.flows[t.flows["tag"] == "incast"]["size_bytes"] == 10_000).all()
    t = generate_trace_from_config({"duration": "3ms", "workload": mix, "incast": {"degree": 0}})
    assert not (t.flows["tag"] == "incast").any()  # the mix's own size / interval are not the user's


@pytest.mark.parametrize("cfg,message", [
    ([1, 2], r"^trace: expected a mapping of generate_trace arguments, got \[1, 2\]$"),
    ({"workload": {"name": "websearch", "incast": "x"}},
     r"^workload\.incast: expected a mapping of \['arrival', .*'size'\], got 'x'$"),
    ({"workload": {"name": "websearch", "incast": {"degree": 2}}, "incast": 5},
     r"^trace\.incast: expected a mapping of \['arrival', .*'size'\], got 5$"),
    ({"workload": {"name": "websearch", "permutation": {"sise": "1MB"}}},
     r"^workload\.permutation\.sise: unknown key; permutation has \['at', 'size'\]$"),
    ({"workload": {"name": "websearch", 1: 2, "zz": 3}}, r"^workload\.1: unknown key; a workload has "),
    ({"duration": "1ms", 1: 2, "zz": 3}, r"^trace\.1: unknown field; known: "),
    ({"duration": "1ms", "incast": {1: 2, "zz": 3}}, r"^trace\.incast\.1: unknown key; incast has "),
])
def test_a_config_of_the_wrong_shape_is_a_config_error(cfg, message):
    # [1, 2] raised TypeError (cannot convert dictionary update sequence), a mix's incast 'x' TypeError
    # ('str' object is not a mapping), a top-level incast 5 over a mix's AttributeError ('int' object
    # has no attribute 'items'), a key that is no string TypeError ('<' not supported)
    with pytest.raises(ConfigError, match=message):
        generate_trace_from_config(cfg)


@pytest.mark.parametrize("kwargs,message", [
    # was: numpy's MemoryError after trying to allocate 90.9 TiB (a 10^7 x 10^7 mask)
    ({"workload": "none", "hosts": 10**7, "duration": "1us", "all_to_all": {"size": "1KB"}},
     r"^trace\.hosts: the trace would have ~1e\+14 flows, more than the 5e\+07 a trace may have \(~300 B of memory "
     r"per flow to generate: ~3e\+07 GB\); all_to_all ~1e\+14 = hosts x \(hosts - 1\) = 10000000 x 9999999$"),
    # was: a MemoryError after trying to allocate 526 TiB of arrival times
    ({"load": 0.9, "hosts": 10**6, "link_rate": 1e15, "duration": "1s"},
     r"^trace\.duration: the trace would have ~6\.57e\+13 flows, .*; background ~6\.57e\+13 = load x hosts x link "
     r"rate x duration / \(8 x mean flow size\) = 0\.9 x 1000000 x 1e\+15 bit/s x 1000000000 ns / \(8 x "),
    ({"hosts": 1000, "duration": "1s", "incast": {"degree": 999, "interval": "1us"}},
     r"^trace\.incast\.interval: the trace would have ~1e\+09 flows, .*; incast ~9\.99e\+08 = degree x duration / "
     r"interval = 999 x 1000000000 ns / 1000 ns \(of background ~3\.65e\+06, incast ~9\.99e\+08\)$"),
    ({"hosts": 1000, "duration": "1s", "incast": {"degree": 999, "size": "1KB", "load": 0.5}},
     r"^trace\.incast\.load: the trace would have "),
])
def test_a_trace_expected_to_be_too_large_is_refused_before_it_is_drawn(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        generate_trace(**kwargs)


def test_the_flow_bound_is_on_the_expected_count(monkeypatch):
    from ecngym.workloads import generator

    monkeypatch.setattr(generator, "MAX_TRACE_FLOWS", 30)
    generate_trace("none", hosts=6, duration="1ms", all_to_all={"size": "1KB"})  # 30 flows: at the bound
    with pytest.raises(ConfigError, match=r"^trace\.hosts: the trace would have ~42 flows, more than the 3e\+01 "):
        generate_trace("none", hosts=7, duration="1ms", all_to_all={"size": "1KB"})


@pytest.mark.parametrize("workload,kwargs,message", [
    ("websearch", {"size": "1KB"}, r"^workload\.size: got '1KB', but workload 'websearch' does not read a size \(only "
                                   r"workload 'fixed' does\), so it would be ignored; leave workload\.size out$"),
    ("websearch", {"cdf_file": "/nonexistent"}, r"^workload\.cdf_file: got '/nonexistent', but workload 'websearch' "
                                                r"does not read a cdf_file \(only workload 'custom' does\)"),
    ("none", {"size": "garbage"}, r"^workload\.size: got 'garbage', but workload 'none' does not read a size"),
    ("fixed", {"size": "1KB", "cdf_file": "x.txt"}, r"^workload\.cdf_file: got 'x\.txt', but workload 'fixed' "),
    ("custom", {"size": 5, "cdf_file": "x.txt"}, r"^workload\.size: got 5, but workload 'custom' does not read a size"),
])
def test_an_argument_the_workload_does_not_read_is_refused(workload, kwargs, message):
    # generate_trace('websearch', size='1KB') and cdf_file='/nonexistent' were accepted and unused,
    # ('none', size='garbage') too
    with pytest.raises(ConfigError, match=message):
        generate_trace(workload, duration="1ms", permutation={"size": "1KB"}, **kwargs)
    if workload != "none":  # (get_distribution has no 'none': no background, no distribution)
        with pytest.raises(ConfigError, match=message):
            get_distribution(workload, size_bytes=kwargs.get("size"), cdf_file=kwargs.get("cdf_file"))
    with pytest.raises(ConfigError, match=message):  # through a config's workload mapping
        generate_trace_from_config({"workload": {"name": workload, **kwargs}, "duration": "1ms",
                                    "permutation": {"size": "1KB"}})


@pytest.mark.parametrize("section,message", [
    ({"incast": {"degree": 0, "size": "garbage", "arrival": "x"}},
     r"^trace\.incast\.size: got 'garbage', but incast\.degree is 0 \(no incast\), so it would be ignored; set "
     r"incast\.degree \(> 0\) or leave incast\.size out$"),
    ({"incast": {"size": "64KB"}}, r"^trace\.incast\.size: got '64KB', but incast\.degree is 0 \(no incast\)"),
    ({"permutation": {"size": 0, "at": "garbage"}},
     r"^trace\.permutation\.at: got 'garbage', but permutation\.size is 0 \(no permutation\)"),
    ({"all_to_all": {"size": "0KB", "at": "1ms"}}, r"^trace\.all_to_all\.at: got '1ms', but all_to_all\.size is 0KB"),
    ({"long_lived": {"flows": 0, "receiver": 99}},
     r"^trace\.long_lived\.receiver: got 99, but long_lived\.flows is 0 \(no long_lived\)"),
])
def test_a_field_of_a_pattern_that_is_off_is_refused_by_the_generator(section, message):
    # generate_trace(incast={'degree': 0, 'size': 'garbage', 'arrival': 'x'}) and
    # permutation={'size': 0, 'at': 'garbage'} were accepted and unused, while
    # generate_trace_from_config refused the same fields: the check now lives in generate_trace
    with pytest.raises(ConfigError, match=message):
        generate_trace(duration="1ms", **section)
    ((name, fields),) = section.items()
    switch = {"incast": "degree", "permutation": "size", "all_to_all": "size", "long_lived": "flows"}[name]
    off = generate_trace(duration="1ms", **{name: {switch: fields.get(switch)}})  # the switch alone: off
    assert (off.flows["tag"] == "background").all()


def test_a_base_s_fields_of_a_pattern_turned_off_are_left_out():
    # an env's workload is merged over its scenario's: incast.degree=0 keeps the scenario's size, interval ...
    from ecngym.workloads.generator import without_fields_of_patterns_off

    merged = {"load": 0.3, "incast": {"degree": 0, "size": "64KB", "interval": "200us"},
              "long_lived": {"flows": 2, "size": "1MB"}, "permutation": None}
    assert without_fields_of_patterns_off(merged) == {"load": 0.3, "incast": {"degree": 0},
                                                      "long_lived": {"flows": 2, "size": "1MB"}, "permutation": None}
    generate_trace(duration="1ms", **without_fields_of_patterns_off(merged))


@pytest.mark.parametrize("progress", ["yes", "no", 1, 0])
def test_progress_must_be_a_boolean(progress):
    # progress='yes' was taken as true (and 'no' too: any non-empty string), 0 / 1 as false / true
    message = rf"^trace\.progress: expected true or false, got {re.escape(repr(progress))}$"
    with pytest.raises(ConfigError, match=message):
        generate_trace(duration="1ms", progress=progress)
    generate_trace(duration="1ms", progress=np.bool_(False))  # a NumPy boolean is one


@pytest.mark.parametrize("load,message", [
    # was: interval_ns 1 via max(1, round(...)), so the incasts offered ~2e5 times less than the load asked
    (0.9, r"^trace\.incast\.load: got 0\.9, which implies 4\.44e-06 ns between bursts \(degree x size x 8 / \(load x "
          r"hosts x link rate\) = 1 x 1 B x 8 / \(0\.9 x 2 x 1e\+15 bit/s\)\); allowed range is \[1, 2\^62\] ns, as "
          r"incast\.interval's$"),
    (1e-300, r"^trace\.incast\.load: got 1e-300, which implies 4e\+294 ns between bursts "),
])
def test_an_incast_load_implying_an_interval_out_of_range_is_refused(load, message):
    incast = {"degree": 1, "size": "1B", "load": load}
    with pytest.raises(ConfigError, match=message):
        generate_trace("none", hosts=2, link_rate=1e15, duration="100ns", incast=incast)
    # 1 ns exactly: 1 x 1 B x 8 / (0.004 x 2 x 1e12 bit/s)
    t = generate_trace("none", hosts=2, link_rate=1e12, duration="100ns", incast={**incast, "load": 0.004})
    assert t.params["incast"]["interval_ns"] == 1


@pytest.mark.parametrize("patterns", [{}, {"incast": {"degree": 0}}, {"permutation": {"size": 0}},
                                      {"long_lived": {"flows": 0}, "all_to_all": None}])
def test_workload_none_without_a_pattern_is_refused(patterns):
    # generate_trace('none') made a trace without flows (an env with workload none and its incast
    # turned off ran every episode without traffic), while such a trace is refused where it is replayed
    message = (r"^workload\.name: got 'none' \(no background flows\) and no other arrival pattern, so the trace could "
               r"have no flow; give a background workload \(e\.g\. websearch\) or turn a pattern on \(incast\.degree, "
               r"permutation\.size, all_to_all\.size or long_lived\.flows > 0\)$")
    with pytest.raises(ConfigError, match=message):
        generate_trace("none", duration="1ms", **patterns)
    with pytest.raises(ConfigError, match=message):
        generate_trace_from_config({"workload": "none", "duration": "1ms", **patterns})
    assert len(generate_trace("none", duration="1ms", long_lived={"flows": 1})) == 1
