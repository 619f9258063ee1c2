"""The OpenGym messages built from messages.proto, and the Gymnasium <-> OpenGym space mapping."""

import ast
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from google.protobuf import descriptor_pb2
from gymnasium import spaces

from ecngym.error import InvalidAction
from ecngym.opengym import protocol as pb


def _fields(name):
    d = pb.message_class(name).DESCRIPTOR
    return {f.name: (f.number, f.type, f.is_repeated) for f in d.fields}


def test_messages_have_ns3gyms_names_field_numbers_and_types():
    F = descriptor_pb2.FieldDescriptorProto
    assert _fields("SimInitMsg") == {"simProcessId": (1, F.TYPE_UINT64, False),
                                     "wafShellProcessId": (2, F.TYPE_UINT64, False),
                                     "obsSpace": (3, F.TYPE_MESSAGE, False), "actSpace": (4, F.TYPE_MESSAGE, False)}
    assert _fields("SimInitAck") == {"done": (1, F.TYPE_BOOL, False), "stopSimReq": (2, F.TYPE_BOOL, False)}
    assert _fields("EnvStateMsg") == {"obsData": (1, F.TYPE_MESSAGE, False), "reward": (2, F.TYPE_FLOAT, False),
                                      "isGameOver": (3, F.TYPE_BOOL, False), "reason": (4, F.TYPE_ENUM, False),
                                      "info": (5, F.TYPE_STRING, False)}
    assert _fields("EnvActMsg") == {"actData": (1, F.TYPE_MESSAGE, False), "stopSimReq": (2, F.TYPE_BOOL, False)}
    assert _fields("BoxSpace") == {"low": (1, F.TYPE_FLOAT, False), "high": (2, F.TYPE_FLOAT, False),
                                   "dtype": (3, F.TYPE_ENUM, False), "shape": (4, F.TYPE_UINT32, True)}
    assert _fields("BoxDataContainer") == {"dtype": (1, F.TYPE_ENUM, False), "shape": (2, F.TYPE_UINT32, True),
                                           "intData": (3, F.TYPE_INT32, True), "uintData": (4, F.TYPE_UINT32, True),
                                           "floatData": (5, F.TYPE_FLOAT, True),
                                           "doubleData": (6, F.TYPE_DOUBLE, True)}
    for name in ("SpaceDescription", "DataContainer"):
        assert {k: v[0] for k, v in _fields(name).items()} == {"type": 1, ("space" if "Space" in name else "data"): 2,
                                                               "name": 3}
    assert (pb.DISCRETE, pb.BOX, pb.TUPLE, pb.DICT) == (1, 2, 3, 4)
    assert (pb.INT, pb.UINT, pb.FLOAT, pb.DOUBLE) == (1, 2, 3, 4)
    assert (pb.SIMULATION_END, pb.GAME_OVER) == (0, 1)
    assert pb.enum_value("MsgType", "StopEnv") == 9


def test_wire_bytes_and_any_type_urls():
    # proto3 wire format: field 2 varint 1; packed repeated floats; the Any carries ns3opengym's full name
    assert pb.EnvActMsg(stopSimReq=True).SerializeToString() == b"\x10\x01"
    box = pb.BoxDataContainer(dtype=pb.FLOAT, shape=[2], floatData=[1.0, 2.0])
    assert box.SerializeToString() == b"\x08\x03\x12\x01\x02\x2a\x08\x00\x00\x80\x3f\x00\x00\x00\x40"
    container = pb.encode(np.array([1, 2], np.float32), spaces.Box(0, 2, (2,), np.float32))
    assert container.data.type_url == "type.googleapis.com/ns3opengym.BoxDataContainer"


def _serialized_descriptor(pb2_source):
    """The FileDescriptorProto bytes a protoc-generated ``*_pb2.py`` registers (its AddSerializedFile argument)."""
    for node in ast.walk(ast.parse(pb2_source)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "AddSerializedFile":
            return node.args[0].value
    raise AssertionError("no AddSerializedFile call in the generated module")


def test_committed_messages_pb2_is_protocs_code_for_messages_proto(tmp_path):
    # protoc (grpcio-tools, a test dependency) run on messages.proto now registers the same descriptor
    # as the committed module: an edit of messages.proto without `make proto` fails here
    here = Path(pb.__file__).parent
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{here}", f"--python_out={tmp_path}",
                    str(here / "messages.proto")], check=True)
    fresh = _serialized_descriptor((tmp_path / "messages_pb2.py").read_text())
    assert fresh == pb.messages_pb2.DESCRIPTOR.serialized_pb
    assert _serialized_descriptor((here / "messages_pb2.py").read_text()) == fresh
    # ns3-gym's file name and package: its own messages_pb2 registers the identical file
    assert (pb.messages_pb2.DESCRIPTOR.name, pb.messages_pb2.DESCRIPTOR.package) == ("messages.proto", "ns3opengym")


def test_space_mapping_round_trip():
    box = spaces.Box(0.0, np.array([1.0, 2.0, 1.0], np.float32), dtype=np.float32)
    view = pb.space_from_description(pb.describe_space(box, "observation"))
    assert view == spaces.Box(0.0, 2.0, (3,), np.float32)  # scalar hull of the per-element bounds
    md = spaces.MultiDiscrete([13, 7])
    assert pb.space_from_description(pb.describe_space(md, "action")) == spaces.Tuple([spaces.Discrete(13),
                                                                                        spaces.Discrete(7)])
    cont = spaces.Box(-1.0, 1.0, (2, 3), np.float32)
    assert pb.space_from_description(pb.describe_space(cont, "action")) == spaces.Box(-1, 1, (6,), np.float32)
    nested = spaces.Dict({"a": spaces.Discrete(3), "b": spaces.Tuple([spaces.MultiBinary(2)])})
    assert pb.space_from_description(pb.describe_space(nested, "observation")) == spaces.Dict(
        {"a": spaces.Discrete(3), "b": spaces.Tuple([spaces.Tuple([spaces.Discrete(2), spaces.Discrete(2)])])})


def _description(kind, payload=None, name=""):
    desc = pb.SpaceDescription(type=kind, name=name)
    if payload is not None:
        desc.space.Pack(payload)
    return desc


def test_a_space_description_of_too_many_elements_is_refused_before_it_is_built():
    # a declared Box shape was built as given: [10^5, 10^5] asked for two arrays of 10^10 numbers (this
    # one, twice the limit, still fits in memory when the limit is missing: the test fails, not the machine)
    big = _description(pb.BOX, pb.BoxSpace(low=0, high=1, dtype=pb.FLOAT, shape=[4096, 8192]))
    with pytest.raises(pb.UnsupportedSpace, match=r"^action space: Box of shape \[4096, 8192\] \(33,554,432 "
                                                  r"elements\) takes the declared space past 16,777,216 elements in "
                                                  r"all \(MAX_SPACE_ELEMENTS"):
        pb.space_from_description(big, "action space")
    # the elements of a Tuple / Dict count together
    half = _description(pb.BOX, pb.BoxSpace(low=0, high=1, dtype=pb.FLOAT, shape=[pb.MAX_SPACE_ELEMENTS // 2]))
    pair = _description(pb.TUPLE, pb.TupleSpace(element=[half, half]))
    assert pb.space_from_description(pair).shape is None  # exactly the limit: built
    three = _description(pb.TUPLE, pb.TupleSpace(element=[half, half, _description(pb.DISCRETE,
                                                                                   pb.DiscreteSpace(n=2))]))
    with pytest.raises(pb.UnsupportedSpace, match=r"^space\[2\]: a Discrete takes the declared space past "):
        pb.space_from_description(three)


@pytest.mark.parametrize(("desc", "match"), [
    # were a ValueError without the space's name, KeyErrors (0, 9), gymnasium's AssertionError / OverflowError,
    # or a space built from the wrong payload (a Box read from a DiscreteSpace: KeyError 0)
    (pb.SpaceDescription(), r"^action space: declared as NoSpaceType; expected one of Discrete, Box, Tuple, Dict"),
    (_description(7), r"^action space: declared as SpaceType 7; expected one of"),
    (_description(pb.BOX, pb.DiscreteSpace(n=3)),
     r"^action space: declared as Box but holds ns3opengym.DiscreteSpace, not an ns3opengym.BoxSpace"),
    (_description(pb.DISCRETE), r"^action space: declared as Discrete but holds nothing"),
    (_description(pb.BOX, pb.BoxSpace(low=0, high=1, dtype=9, shape=[2])),
     r"^action space: Box of Dtype NoDType \(9\); expected INT, UINT, FLOAT or DOUBLE"),
    (_description(pb.BOX, pb.BoxSpace(low=0, high=1, shape=[2])), r"^action space: Box of Dtype NoDType \(0\)"),
    (_description(pb.DISCRETE, pb.DiscreteSpace(n=0)),
     r"^action space: Discrete with n = 0; a Discrete space has n >= 1"),
    (_description(pb.BOX, pb.BoxSpace(low=0.5, high=3, dtype=pb.INT, shape=[2])),  # was read as low 0
     r"^action space: Box low 0.5 of Dtype INT; expected a whole number in \[-2147483648, 2147483647\]"),
    (_description(pb.BOX, pb.BoxSpace(low=-1, high=3, dtype=pb.UINT, shape=[2])),
     r"^action space: Box low -1.0 of Dtype UINT; expected a whole number in \[0, 4294967295\]"),
    (_description(pb.BOX, pb.BoxSpace(low=0, high=float("inf"), dtype=pb.INT, shape=[2])),
     r"^action space: Box high inf of Dtype INT"),
    (_description(pb.BOX, pb.BoxSpace(low=1, high=0, dtype=pb.FLOAT, shape=[2])),
     r"^action space: Box\(low=1.0, high=0.0, shape=\[2\], FLOAT\) is no Gymnasium space: .*less than or equal"),
    (_description(pb.TUPLE, pb.TupleSpace(element=[_description(pb.DISCRETE, pb.DiscreteSpace(n=2)),
                                                   _description(pb.DISCRETE, pb.DiscreteSpace(n=-1))])),
     r"^action space\[1\]: Discrete with n = -1"),
    (_description(pb.DICT, pb.DictSpace(element=[_description(pb.DISCRETE, pb.DiscreteSpace(n=2), "a"),
                                                 _description(pb.DISCRETE, pb.DiscreteSpace(n=3), "a")])),
     r"^action space: Dict with more than one element named 'a'"),  # was the last one's Discrete(3)
    (_description(pb.DICT, pb.DictSpace(element=[_description(pb.BOX, None, "k")])),
     r"^action space\['k'\]: declared as Box but holds nothing"),
])
def test_a_malformed_space_description_is_refused_naming_the_space(desc, match):
    with pytest.raises(pb.UnsupportedSpace, match=match):
        pb.space_from_description(desc, "action space")


@pytest.mark.parametrize(("space", "match"), [
    (spaces.Text(5), "has no OpenGym equivalent"),
    (spaces.Discrete(3, start=1), "starts at 1"),
    (spaces.Box(0, 1, (2,), np.int64), "Box dtype int64 has no OpenGym Dtype"),
    (spaces.Box(np.zeros(2), np.array([1.0, 2.0]), dtype=np.float64), "per-element bounds"),
])
def test_spaces_without_an_equivalent_are_refused(space, match):
    with pytest.raises(pb.UnsupportedSpace, match=match):
        pb.describe_space(space, "action")


def test_actions_decode_from_what_ns3gym_clients_send():
    md = spaces.MultiDiscrete([13, 13])
    tup = pb.DataContainer(type=pb.TUPLE)
    elements = []
    for v in (4, 12):
        e = pb.DataContainer(type=pb.DISCRETE)
        e.data.Pack(pb.DiscreteDataContainer(data=v))
        elements.append(e)
    tup.data.Pack(pb.TupleDataContainer(element=elements))
    np.testing.assert_array_equal(pb.decode_action(tup, md), [4, 12])
    cont = spaces.Box(-1.0, 1.0, (2, 3), np.float32)
    flat = pb.DataContainer(type=pb.BOX)  # as ns3-gym's client packs a Box: flat, shape [len]
    flat.data.Pack(pb.BoxDataContainer(dtype=pb.FLOAT, shape=[6], floatData=[0.5, 0, 0, 0, 0, -0.25]))
    np.testing.assert_array_equal(pb.decode_action(flat, cont), [[0.5, 0, 0], [0, 0, -0.25]])
    # the value is not range-checked here (the env gives its own InvalidAction) ...
    assert pb.decode_action(pb.encode(99, spaces.Discrete(13), "action"), spaces.Discrete(13)) == 99
    # ... but the wire form is
    short = pb.DataContainer(type=pb.BOX)
    short.data.Pack(pb.BoxDataContainer(dtype=pb.FLOAT, shape=[5], floatData=[0.0] * 5))
    with pytest.raises(InvalidAction, match=r"expected 6 Box element\(s\)"):
        pb.decode_action(short, cont)
    ints = pb.DataContainer(type=pb.BOX)
    ints.data.Pack(pb.BoxDataContainer(dtype=pb.INT, shape=[6], intData=[0] * 6))
    with pytest.raises(InvalidAction, match="expected Box data of Dtype FLOAT or DOUBLE"):
        pb.decode_action(ints, cont)
    with pytest.raises(InvalidAction, match=r"action\[1\]: expected an OpenGym Discrete data container"):
        bad = pb.DataContainer(type=pb.TUPLE)
        bad.data.Pack(pb.TupleDataContainer(element=[elements[0], flat]))
        pb.decode_action(bad, md)
    with pytest.raises(InvalidAction, match="got type NoSpaceType holding nothing"):
        pb.decode_action(pb.DataContainer(), spaces.Discrete(13))


def test_a_dict_action_naming_a_key_twice_is_refused():
    space = spaces.Dict({"a": spaces.Discrete(3), "b": spaces.Discrete(3)})
    container = pb.encode({"a": 1, "b": 2}, space, "action")
    d = pb.DictDataContainer()
    container.data.Unpack(d)
    again = d.element.add()
    again.CopyFrom(d.element[0])  # a second 'a', holding 2
    again.data.Pack(pb.DiscreteDataContainer(data=2))
    container.data.Pack(d)
    with pytest.raises(InvalidAction, match=r"^action: the element 'a' is given 2 times \(space Dict.*; each key once"):
        pb.decode_action(container, space)  # was {'a': 2, 'b': 2}: the last 'a' kept, the first dropped


@pytest.mark.parametrize("value", [2.5, np.float64(1.5), "1", True, None, 2**40, [1, 2]])
def test_an_action_element_that_is_no_whole_number_is_refused_not_truncated(value):
    # int() sent 2.5 as 2 and True as 1 (an agent's bug passed on as another action)
    with pytest.raises(InvalidAction, match=r"^action: .*int32"):
        pb.encode(value, spaces.Discrete(13), "action")
    if not isinstance(value, (bool, list)):  # (NumPy makes [0, True] [0, 1] before any check sees it)
        with pytest.raises(InvalidAction, match=r"^action: .*int32"):
            pb.encode([0, value], spaces.MultiDiscrete([13, 13]), "action")
    assert pb.decode_action(pb.encode(np.int64(3), spaces.Discrete(13), "action"), spaces.Discrete(13)) == 3
    assert pb.decode_action(pb.encode(3.0, spaces.Discrete(13), "action"), spaces.Discrete(13)) == 3


@pytest.mark.parametrize(("value", "space", "role", "match"), [
    # were sent as is (a Box as 5 elements with shape [5]; MultiDiscrete as 3 Discretes): the receiver refused them
    (np.zeros(5), spaces.Box(0, 1, (2, 3), np.float32), "observation",
     r"^observation: got a value of shape \(5,\), expected shape \(2, 3\) for the space Box\(0.0, 1.0, \(2, 3\)"),
    (np.zeros((2, 3)), spaces.Box(0, 1, (6,), np.float32), "action",
     r"^action: got a value of shape \(2, 3\), expected shape \(6,\) for the space Box"),
    (0.5, spaces.Box(0, 1, (1,), np.float32), "action", r"^action: got a value of shape \(\), expected shape \(1,\)"),
    ([[1, 2], [3]], spaces.Box(0, 9, (2, 2), np.float32), "action", r"^action: got \[\[1, 2\], \[3\]\], a ragged"),
    ([1, 2, 3], spaces.MultiDiscrete([13, 13]), "action",
     r"^action: got a value of shape \(3,\), expected shape \(2,\)"),
    ([1], spaces.MultiBinary(2), "action", r"^action: got a value of shape \(1,\), expected shape \(2,\)"),
    # were numpy's ValueError / a KeyError
    (["a", "b"], spaces.Box(0, 1, (2,), np.float32), "action", r"^action: cannot send \['a', 'b'\] as Box data"),
])
def test_a_value_not_of_the_spaces_shape_is_refused_at_encode(value, space, role, match):
    with pytest.raises(InvalidAction, match=match):
        pb.encode(value, space, role)


@pytest.mark.parametrize(("value", "space", "match"), [
    # were zip's ValueError, a TypeError, a KeyError; an extra key was dropped without a word
    ((1,), spaces.Tuple([spaces.Discrete(3)] * 2), r"^action: got \(1,\), expected a tuple of 2 element\(s\) for the "
                                                  r"space Tuple\(Discrete\(3\), Discrete\(3\)\)"),
    (1, spaces.Tuple([spaces.Discrete(3)] * 2), r"^action: got 1, expected a tuple of 2 element\(s\)"),
    ({}, spaces.Dict({"a": spaces.Discrete(3)}), r"^action: got the keys \[\], expected a mapping of the keys \['a'\]"),
    ({"a": 1, "b": 2}, spaces.Dict({"a": spaces.Discrete(3)}),
     r"^action: got the keys \['a', 'b'\], expected a mapping"),
    ([1], spaces.Dict({"a": spaces.Discrete(3)}), r"^action: got \[1\], expected a mapping of the keys \['a'\]"),
])
def test_a_tuple_or_dict_value_not_of_the_spaces_structure_is_refused_at_encode(value, space, match):
    with pytest.raises(InvalidAction, match=match):
        pb.encode(value, space, "action")
    good = {"a": 1} if isinstance(space, spaces.Dict) else np.array([1, 2])  # (gymnasium takes an array for a Tuple)
    assert pb.decode_action(pb.encode(good, space, "action"), space) == ({"a": 1} if isinstance(good, dict) else (1, 2))


def test_encode_names_a_box_dtype_without_an_opengym_dtype():
    with pytest.raises(pb.UnsupportedSpace, match="^action: Box dtype int64 has no OpenGym Dtype"):
        pb.encode(np.zeros(2, np.int64), spaces.Box(0, 1, (2,), np.int64), "action")  # was a KeyError


@pytest.mark.parametrize(("kwargs", "message"), [
    # were a ZMQError / ValueError / OverflowError from the socket, or bound a port nobody asked for
    ({"port": -1}, r"^port: got -1, allowed range is \[0, 65535\]"),
    ({"port": 70000}, r"^port: got 70000, allowed range is \[0, 65535\]"),
    ({"port": 5.5}, r"^port: expected a whole number, got 5.5"),
    ({"port": True}, r"^port: expected a whole number, got True"),
    ({"port": "x"}, r"^port: expected a whole number, got 'x'"),
    ({"timeout_s": -1}, r"^timeout_s: got -1, allowed range is \(0, 2147483.647\]"),
    ({"timeout_s": float("nan")}, r"^timeout_s: expected a finite number, got nan"),
    ({"timeout_s": 1e12}, r"^timeout_s: got 1000000000000.0, allowed range"),
    ({"host": ""}, r"^host: got '', expected the agent's host name or address"),
    ({"host": None}, r"^host: expected a string, got None"),
    ({"host": "a b"}, r"^host: cannot bind tcp://a b:\*"),
])
def test_bad_agent_settings_name_the_field(kwargs, message):
    from ecngym.error import ConfigError
    from ecngym.opengym.agent import OpenGymAgent

    with pytest.raises(ConfigError, match=message):
        OpenGymAgent(**kwargs)


def test_an_agent_that_hears_nothing_names_what_it_awaited_and_the_timeout():
    # the wait ran out as ZMQ's bare zmq.Again ('Resource temporarily unavailable') traceback
    from ecngym.error import EcnGymError
    from ecngym.opengym.agent import OpenGymAgent

    agent = OpenGymAgent(timeout_s=0.05)
    try:
        for receive, what in ((agent.wait_init, "SimInitMsg"), (agent.recv_state, "EnvStateMsg")):
            # an EcnGymError: the CLI prints it as one line, exit 2
            with pytest.raises(EcnGymError, match=rf"^no {what} from the simulation on port {agent.port} within "
                                                  r"timeout_s = 0\.05 s: it never connected, or it stopped \(is "
                                                  r"'ecngym serve-ns3gym' running with this port\?\)$") as err:
                receive()
            assert type(err.value).__name__ == "SimulationTimeout" and isinstance(err.value, TimeoutError)
    finally:
        agent.close()


@pytest.mark.parametrize(("port", "message"), [
    # the server took any port and dialled 'tcp://127.0.0.1:True' (then blamed the host) or ':70000'
    (70000, r"^port: got 70000, allowed range is \[1, 65535\]"),
    (0, r"^port: got 0, allowed range is \[1, 65535\]"),
    (True, r"^port: expected a whole number, got True"),
    (5.5, r"^port: expected a whole number, got 5.5"),
])
def test_a_bad_server_port_is_named(port, message):
    from ecngym.error import ConfigError
    from ecngym.opengym.server import OpenGymServer

    class Env:
        observation_space, action_space = spaces.Box(0, 1, (2,), np.float32), spaces.Discrete(3)

    with pytest.raises(ConfigError, match=message):
        OpenGymServer(Env(), port=port)
    server = OpenGymServer(Env(), port=np.int64(5555))
    assert server.address == "tcp://127.0.0.1:5555"
    server.close()


@pytest.mark.parametrize(("value", "space", "match"), [
    # were truncated / wrapped by numpy's cast and sent: 2.5 went out as 2, -1 as 4294967295
    (np.array([1.0, 2.5]), spaces.Box(0, 9, (2,), np.int32),
     r"^action: element 1 \(flat\) is 2\.5; the space .* goes out as int32: whole numbers in \[-2147483648, "
     r"2147483647\]"),
    ([-1, 3], spaces.Box(0, 9, (2,), np.uint32), r"^action: element 0 \(flat\) is -1; .* uint32: whole numbers in "
                                                 r"\[0, 4294967295\]"),
    ([2**40, 0], spaces.Box(0, 9, (2,), np.int32), r"^action: element 0 \(flat\) is 1099511627776;"),
    ([np.nan, 1.5, 2.5], spaces.Box(0, 9, (3,), np.int32), r"^action: element 0 \(flat\) is nan \(and 2 more\);"),
])
def test_an_int_box_value_that_is_not_whole_or_in_range_is_refused_at_encode(value, space, match):
    with pytest.raises(InvalidAction, match=match):
        pb.encode(value, space, "action")
    whole = np.array([1.0, 2.0, 3.0][:space.shape[0]])  # whole floats are exact: sent as they are
    assert pb.decode_data(pb.encode(whole, space, "action")).tolist() == whole.tolist()


def test_data_of_an_unknown_dtype_or_container_type_is_refused_by_decode_data():
    box = pb.DataContainer(type=pb.BOX)
    box.data.Pack(pb.BoxDataContainer(dtype=7, shape=[1], floatData=[0.5]))  # was read as float data
    tup = pb.DataContainer(type=pb.TUPLE)
    tup.data.Pack(pb.TupleDataContainer(element=[box]))
    with pytest.raises(pb.UnsupportedSpace, match=r"^observation\[0\]: Box data of Dtype NoDType \(7\); expected INT"):
        pb.decode_data(tup)
    with pytest.raises(pb.UnsupportedSpace, match=r"^observation: a data container of type NoSpaceType; expected "):
        pb.decode_data(pb.DataContainer())  # was None
