"""The fabric's knobs: declared once as C++ attributes, read by FabricConfig for fields, defaults, ranges."""

import math

import pytest

from ecngym.error import ConfigError
from ecngym.sim_backend import FabricConfig, _fabric, knobs


def _all_knobs():
    for section in knobs.sections():
        for name, knob in knobs.section_knobs(section).items():
            yield section, name, knob


KNOBS = list(_all_knobs())


def _field(section: str, name: str) -> str:
    return f"fabric.{name}" if section == knobs.TOP_LEVEL else f"fabric.{section}.{name}"


def _overrides(section: str, name: str, value):
    return {name: value} if section == knobs.TOP_LEVEL else {section: {name: value}}


def test_every_section_of_the_simulator_is_a_config_section():
    assert set(knobs.sections()) == {"nic", "dcqcn", "dctcp", "dctcp_rate", "timely", "hpcc", "window", "buffer"}
    cfg = FabricConfig()
    for section, name, knob in KNOBS:
        node = cfg if section == knobs.TOP_LEVEL else getattr(cfg, section)
        value = getattr(node, name)
        # the attribute's default, to the bit, and the same through the attribute string
        assert value == knob.default and type(value) is type(knob.default), (section, name)
        if isinstance(value, float):
            assert float(knob.serialise(value)) == value and math.copysign(1, value) == math.copysign(1, knob.default)


def test_the_attribute_names_give_the_field_names_and_their_units():
    names = {(s, n): k.attribute for s, n, k in KNOBS}
    assert names[("timely", "alpha")] == "Alpha"
    assert names[("dcqcn", "alpha_interval")] == "AlphaIntervalNs"
    assert names[("dcqcn", "ai_rate")] == "AiRateBps"
    assert names[("buffer", "reserve")] == "ReserveBytes"
    assert names[("timely", "t_low")] == "TLowNs"
    assert names[("nic", "mtu_payload")] == "MtuPayloadBytes"
    # human units where the attribute has one
    cfg = FabricConfig(dcqcn={"alpha_interval": "2us", "ai_rate": "40Mbps"}, buffer={"reserve": "1KiB"})
    assert (cfg.dcqcn.alpha_interval, cfg.dcqcn.ai_rate, cfg.buffer.reserve) == (2000, 40e6, 1024)


@pytest.mark.parametrize(("section", "name", "knob"), KNOBS, ids=[f"{s}.{n}" for s, n, _ in KNOBS])
def test_a_value_outside_the_checker_is_refused_naming_the_field(section, name, knob):
    attr = next(a for a in _fabric.describe_fabric_section(knobs.sections()[section]) if a["name"] == knob.attribute)
    if attr["checker"] == "bool":
        bad = 1
    elif " " not in attr["checker"]:  # an enumeration: "a|b|c"
        bad = "no_such_choice"
    else:
        ctype, bounds = attr["checker"].split(" ")
        low, high = (float(x) for x in bounds.split(":"))
        is_int = ctype != "double"
        if high < 2**53 and not (name.endswith("rate")):
            bad = int(high) + 1 if is_int else high * 2
        else:
            bad = -1 if low >= 0 else None
        if bad is None:
            pytest.skip("no bound to cross")
    with pytest.raises(ConfigError) as err:
        FabricConfig.preset("hpcc").updated(_overrides(section, name, bad))
    assert err.value.field == _field(section, name), err.value


def test_timely_alpha_range_comes_from_its_checker():
    with pytest.raises(ConfigError) as err:
        FabricConfig(timely={"alpha": 1.5})
    assert str(err.value) == "fabric.timely.alpha: got 1.5, allowed range is [0, 1]"
    with pytest.raises(ConfigError) as err:
        FabricConfig(hpcc={"target_util": 0})
    assert str(err.value) == "fabric.hpcc.target_util: got 0, allowed range is (0, 1]"  # the checker's "> 0"


def test_values_set_in_python_reach_the_cpp_config():
    c = FabricConfig.preset("dctcp", mtu_payload="1500B", buffer={"pause_quanta": 7}).to_cpp()
    assert c.mtu_payload_bytes == 1500
    # the C++ checker refuses what the attribute refuses, naming the attribute
    with pytest.raises(ValueError, match=r"TimelyParameters::Alpha = 2 is outside its allowed values \(double 0:1\)"):
        _fabric.make_fabric_config([("ns3::ecngym::TimelyParameters", ["Alpha"], ["2"])])
    with pytest.raises(ValueError, match=r"NicParameters::MtuPayloadBytes = 'x' is not a number"):
        _fabric.make_fabric_config([("ns3::ecngym::NicParameters", ["MtuPayloadBytes"], ["x"])])
    with pytest.raises(ValueError, match="given twice"):
        _fabric.make_fabric_config([("ns3::ecngym::HpccParameters", [], []), ("ns3::ecngym::HpccParameters", [], [])])
    with pytest.raises(ValueError, match="not a fabric section type"):
        _fabric.make_fabric_config([("ns3::ecngym::RedAqmPolicy", [], [])])


def test_the_choices_come_from_the_simulators_enumerations():
    described = {a["name"]: a for a in _fabric.describe_fabric_section(knobs.sections()[knobs.TOP_LEVEL])}
    nic = knobs.section_knobs(knobs.TOP_LEVEL)
    expected = {"cc": ("Cc", ("dcqcn", "dctcp", "dctcp_rate", "timely", "hpcc"), "dcqcn"),
                "ecn_feedback": ("EcnFeedback", ("cnp", "ack_echo"), "cnp"),
                "nic_pacing_wake": ("NicPacingWake", ("exact", "hpcc"), "exact"),
                "switch_ack_queue": ("SwitchAckQueue", ("control", "flow"), "control"),
                "ecmp_hash": ("EcmpHash", ("salted", "hpcc"), "salted"),
                "tx_time_rounding": ("TxTimeRounding", ("carry", "truncate"), "carry")}
    for name, (attribute, choices, default) in expected.items():
        knob = nic[name]
        assert (knob.attribute, knob.default) == (attribute, default), name
        assert described[attribute]["checker"] == "|".join(choices), name
        assert getattr(FabricConfig(), name) == default
        for choice in choices:
            assert getattr(FabricConfig(**{name: choice}), name) == choice
        with pytest.raises(ConfigError) as err:
            FabricConfig(**{name: "no_such_choice"})
        assert err.value.field == f"fabric.{name}" and all(repr(c) in err.value.message for c in choices), err.value
    scope = knobs.section_knobs("window")["scope"]
    assert (scope.attribute, scope.default, scope.range) == ("Scope", "global", "global | pair")
    assert FabricConfig(window={"scope": "pair"}).window.scope == "pair"


def test_the_simulator_refuses_a_name_its_enumeration_lacks():
    # (ns-3's EnumChecker would look the name up without checking that it found one)
    with pytest.raises(ValueError, match=r"NicParameters::Cc = reno is outside its allowed values "
                                         r"\(dcqcn\|dctcp\|dctcp_rate\|timely\|hpcc\)"):
        _fabric.make_fabric_config([("ns3::ecngym::NicParameters", ["Cc"], ["reno"])])
    _fabric.make_fabric_config([("ns3::ecngym::NicParameters", ["Cc", "EcmpHash"], ["hpcc", "hpcc"])])


def test_the_dctcp_section_holds_the_tcp_host_options_too():
    fields = set(type(FabricConfig().dctcp).model_fields)
    assert set(knobs.section_knobs("dctcp")) | set(knobs.tcp_host_knobs()) <= fields


def test_the_queue_count_bound_is_the_simulators():
    from ecngym.sim_backend import _fabric
    from ecngym.sim_backend.config import NUM_QUEUES_MAX

    assert NUM_QUEUES_MAX == _fabric.MAX_QUEUES
