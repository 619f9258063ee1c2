"""The OpenGym (ns3-gym) messages, and the mapping between Gymnasium spaces / values and them.

The messages are declared once, in ``messages.proto`` beside this module (ns3-gym's file: package
``ns3opengym``, its message and field names and numbers). :mod:`ecngym.opengym.messages_pb2` is
protobuf's code generated from it (``make proto`` runs ``protoc`` from ``grpcio-tools``; the module
is committed, as ns3-gym commits its own, so installing ecngym runs no protoc). Its descriptor is
byte-for-byte the one ns3-gym's ``messages_pb2`` registers (same file name ``messages.proto``, same
declarations), so both load into protobuf's default pool in one process, and the full names (and
so the ``google.protobuf.Any`` type URLs, ``type.googleapis.com/ns3opengym.BoxDataContainer``)
are ns3-gym's.

Space mapping (:func:`describe_space`), Gymnasium -> OpenGym:

| Gymnasium | OpenGym | note |
|---|---|---|
| ``Discrete(n)`` (start 0) | ``Discrete`` n | |
| ``Box`` | ``Box`` low, high, dtype, shape | int8-32 -> INT, uint8-32 -> UINT, float16/32 -> FLOAT, |
| | | float64 -> DOUBLE (int64 / uint64 refused) |
| ``MultiDiscrete(nvec)`` (start 0) | ``Tuple`` of ``Discrete(n_i)`` | nvec flattened row-major; the values come |
| | | back as one integer array of nvec's shape |
| ``MultiBinary(n)`` | ``Tuple`` of ``Discrete(2)`` | as ``MultiDiscrete([2] * n)`` |
| ``Tuple`` / ``Dict`` | ``Tuple`` / ``Dict`` | element by element (Dict keys as element names) |
| anything else | refused | Text, Graph, Sequence, OneOf, a Discrete not starting at 0: |
| | | :class:`UnsupportedSpace` names it |

OpenGym's Box bounds are two scalars. An observation Box sends the smallest low and the largest
high of its elements (every observation lies inside; per-element bounds are in the env's docs).
An action Box must have one low and one high for all elements (else it is refused: a wider
declared range would invite actions the env refuses), and is declared flat, shape
``(prod(shape),)``: ns3-gym's Python client packs a Box action as a flat list with shape
``[len(action)]``. Its values come back reshaped row-major to the env's shape.

A space description from the peer declares at most :data:`MAX_SPACE_ELEMENTS` elements in all
(2^24): its Box bounds are built as arrays of the declared shape.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from ecngym.error import ConfigError, EcnGymError, InvalidAction, first_offending, shown
from ecngym.opengym import messages_pb2
from ecngym.validation import Real, Text, Whole, check


class MalformedMessage(EcnGymError, ValueError):
    """A message from the peer that does not parse as the protocol message expected at that point."""


def parse_message(message_type: Any, data: bytes, what: str) -> Any:
    """``data`` parsed as ``message_type`` (e.g. :data:`SimInitAck`).

    Args:
        message_type: The message class expected.
        data: The bytes received.
        what: Where in the exchange this is, named in the error.

    Raises:
        MalformedMessage: If ``data`` is not a serialised ``message_type`` (another program, or a
            peer built from another ``messages.proto``).
    """
    from google.protobuf.message import DecodeError

    try:
        return message_type.FromString(data)
    except DecodeError as exc:
        raise MalformedMessage(f"{what}: the peer sent {len(data)} bytes that are no {message_type.DESCRIPTOR.name} "
                               f"({exc}); is it an ns3-gym peer of the same messages.proto?") from None


class UnsupportedSpace(EcnGymError, ValueError):
    """A space with no equivalent on the other side (see the mapping table of this module).

    A Gymnasium space with no OpenGym equivalent (:func:`describe_space`, :func:`encode`), or an
    OpenGym space description from the peer that declares no Gymnasium space
    (:func:`space_from_description`: a malformed or unknown description).
    """


#: Longest wait for the other side, in seconds: ZMQ takes its waits as C ints of milliseconds (~24.8 days).
MAX_WAIT_S = (2**31 - 1) / 1000
#: A wait in seconds: a finite number in (0, MAX_WAIT_S].
WAIT_S = Real(0, MAX_WAIT_S, low_open=True)


def check_endpoint(host: Any, port: Any, timeout_s: Any, lowest_port: int = 1) -> tuple[str, int, float]:
    """The ``host``, ``port`` and ``timeout_s`` of either side of the protocol, checked.

    Args:
        host: The agent's host name or address (a non-empty string).
        port: Its TCP port, a whole number in [``lowest_port``, 65535] (the agent binds port 0 as
            "any free port").
        timeout_s: The longest wait for the other side, in (0, :data:`MAX_WAIT_S`] seconds.
        lowest_port: 1, or 0 where 0 means any free port.

    Returns:
        ``(host, port, timeout_s)``, the port as an int and the wait as a float.

    Raises:
        ConfigError: Naming ``host``, ``port`` or ``timeout_s``.
    """
    if not check("host", host, Text).strip():
        raise ConfigError("host", f"got {host!r}, expected the agent's host name or address (e.g. 127.0.0.1)")
    return host, check("port", port, Whole(lowest_port, 65535)), check("timeout_s", timeout_s, WAIT_S)


# ----------------------------------------------------------------------------- messages
def message_class(name: str) -> type:
    """The generated class of top-level message ``name`` (``"EnvStateMsg"``)."""
    messages_pb2.DESCRIPTOR.message_types_by_name[name]  # KeyError on a name messages.proto does not declare
    return getattr(messages_pb2, name)


def enum_value(enum: str, name: str) -> int:
    """The number of value ``name`` of enum ``enum`` (``enum_value("SpaceType", "Box") == 2``).

    A nested enum is named with its message (``"EnvStateMsg.Reason"``).
    """
    outer, _, inner = enum.rpartition(".")
    scope = messages_pb2.DESCRIPTOR.message_types_by_name[outer] if outer else messages_pb2.DESCRIPTOR
    return scope.enum_types_by_name[inner].values_by_name[name].number


SpaceDescription = messages_pb2.SpaceDescription
DiscreteSpace = messages_pb2.DiscreteSpace
BoxSpace = messages_pb2.BoxSpace
TupleSpace = messages_pb2.TupleSpace
DictSpace = messages_pb2.DictSpace
DataContainer = messages_pb2.DataContainer
DiscreteDataContainer = messages_pb2.DiscreteDataContainer
BoxDataContainer = messages_pb2.BoxDataContainer
TupleDataContainer = messages_pb2.TupleDataContainer
DictDataContainer = messages_pb2.DictDataContainer
SimInitMsg = messages_pb2.SimInitMsg
SimInitAck = messages_pb2.SimInitAck
EnvStateMsg = messages_pb2.EnvStateMsg
EnvActMsg = messages_pb2.EnvActMsg

DISCRETE, BOX, TUPLE, DICT = messages_pb2.Discrete, messages_pb2.Box, messages_pb2.Tuple, messages_pb2.Dict
INT, UINT, FLOAT, DOUBLE = messages_pb2.INT, messages_pb2.UINT, messages_pb2.FLOAT, messages_pb2.DOUBLE
SIMULATION_END, GAME_OVER = messages_pb2.EnvStateMsg.SimulationEnd, messages_pb2.EnvStateMsg.GameOver
SPACE_TYPE_NAMES = {0: "NoSpaceType", DISCRETE: "Discrete", BOX: "Box", TUPLE: "Tuple", DICT: "Dict"}

# Box element types: numpy dtype <-> OpenGym Dtype and the BoxDataContainer field that carries it
_BOX_DTYPES = {np.dtype(t): INT for t in (np.int8, np.int16, np.int32)}
_BOX_DTYPES |= {np.dtype(t): UINT for t in (np.uint8, np.uint16, np.uint32)}
_BOX_DTYPES |= {np.dtype(np.float16): FLOAT, np.dtype(np.float32): FLOAT, np.dtype(np.float64): DOUBLE}
BOX_FIELDS = {INT: "intData", UINT: "uintData", FLOAT: "floatData", DOUBLE: "doubleData"}
BOX_NUMPY = {INT: np.int32, UINT: np.uint32, FLOAT: np.float32, DOUBLE: np.float64}


# ----------------------------------------------------------------------------- spaces
def _discrete_n(space: spaces.Discrete, where: str) -> int:
    if int(space.start) != 0:
        raise UnsupportedSpace(f"{where}: {space} starts at {space.start}; OpenGym's Discrete counts from 0")
    return int(space.n)


def _box_dtype(space: spaces.Box, where: str) -> int:
    if space.dtype not in _BOX_DTYPES:
        raise UnsupportedSpace(f"{where}: Box dtype {space.dtype} has no OpenGym Dtype; allowed: "
                               f"{sorted(str(d) for d in _BOX_DTYPES)}")
    return _BOX_DTYPES[space.dtype]


def describe_space(space: spaces.Space, role: str, where: str = "") -> Any:
    """The OpenGym ``SpaceDescription`` of a Gymnasium space (mapping in the module docstring).

    Args:
        space: The space.
        role: ``"observation"`` (a Box's bounds may differ per element: the hull is sent) or
            ``"action"`` (a Box must have uniform bounds and is declared flat).
        where: Path of this space inside the top one, for error messages.

    Raises:
        UnsupportedSpace: If the space has no OpenGym equivalent.
    """
    where = where or f"{role} space"
    desc = SpaceDescription()
    if isinstance(space, spaces.Discrete):
        desc.type = DISCRETE
        desc.space.Pack(DiscreteSpace(n=_discrete_n(space, where)))
    elif isinstance(space, spaces.Box):
        dtype = _box_dtype(space, where)
        low, high = float(np.min(space.low)), float(np.max(space.high))
        shape = list(space.shape)
        if role == "action":
            if np.any(space.low != low) or np.any(space.high != high):
                raise UnsupportedSpace(f"{where}: {space} has per-element bounds; an OpenGym Box action has one "
                                       "low and one high (use a Box with uniform bounds)")
            shape = [int(np.prod(space.shape))]
        desc.type = BOX
        desc.space.Pack(BoxSpace(low=low, high=high, dtype=dtype, shape=shape))
    elif isinstance(space, (spaces.MultiDiscrete, spaces.MultiBinary)):
        nvec = np.full(space.shape, 2) if isinstance(space, spaces.MultiBinary) else space.nvec
        if isinstance(space, spaces.MultiDiscrete) and np.any(space.start != 0):
            raise UnsupportedSpace(f"{where}: {space} does not start at 0; OpenGym's Discrete counts from 0")
        desc.type = TUPLE
        desc.space.Pack(TupleSpace(element=[describe_space(spaces.Discrete(int(n)), role, f"{where}[{i}]")
                                            for i, n in enumerate(np.ravel(nvec))]))
    elif isinstance(space, spaces.Tuple):
        desc.type = TUPLE
        desc.space.Pack(TupleSpace(element=[describe_space(s, role, f"{where}[{i}]")
                                            for i, s in enumerate(space.spaces)]))
    elif isinstance(space, spaces.Dict):
        elements = []
        for key, sub in space.spaces.items():
            element = describe_space(sub, role, f"{where}[{key!r}]")
            element.name = str(key)
            elements.append(element)
        desc.type = DICT
        desc.space.Pack(DictSpace(element=elements))
    else:
        raise UnsupportedSpace(f"{where}: {space} has no OpenGym equivalent (Discrete, Box, MultiDiscrete, "
                               "MultiBinary, Tuple and Dict are supported)")
    return desc


#: The most elements a declared space may have, Box elements and Discretes of every Tuple / Dict
#: element together (2^24 = 16 777 216; an env's observation of 5 120 fat-tree k = 16 ports has
#: ~10^5): a Box's bounds are arrays built as declared, so a peer declaring shape [10^5, 10^5] asked
#: this side for two arrays of 10^10 numbers (an out-of-memory kill, not an error).
MAX_SPACE_ELEMENTS = 2**24


def space_from_description(desc: Any, where: str = "space") -> spaces.Space:
    """The Gymnasium space an OpenGym ``SpaceDescription`` declares (the agent side's view).

    Box bounds and dtype as declared (INT -> int32, UINT -> uint32, FLOAT -> float32, DOUBLE -> float64).

    Args:
        desc: The description (a ``SimInitMsg``'s ``obsSpace`` / ``actSpace``, from the peer).
        where: Its name, for errors (``"action space"``); an element's adds ``[i]`` / ``['key']``.

    Returns:
        The space.

    Raises:
        UnsupportedSpace: If ``desc`` declares no Gymnasium space, naming ``where``: a space type
            or Box Dtype outside the protocol's, a payload that is not of the declared type, a
            Discrete of fewer than one value, INT / UINT Box bounds that are no whole numbers of
            the Dtype, bounds Gymnasium refuses (NaN, low > high), Dict elements of one name, or
            more than :data:`MAX_SPACE_ELEMENTS` elements in all (refused before any is built).
    """
    return _space_from_description(desc, where, [MAX_SPACE_ELEMENTS])


def _take_elements(remaining: list[int], n: int, where: str, what: str) -> None:
    """Count ``n`` more declared elements against the space's budget (``remaining[0]``).

    Raises:
        UnsupportedSpace: Naming ``where`` and ``what`` if the space would exceed :data:`MAX_SPACE_ELEMENTS`.
    """
    if n > remaining[0]:
        raise UnsupportedSpace(f"{where}: {what} takes the declared space past {MAX_SPACE_ELEMENTS:,} elements in "
                               f"all (MAX_SPACE_ELEMENTS: larger bounds arrays are not built)")
    remaining[0] -= n


def _space_from_description(desc: Any, where: str, remaining: list[int]) -> spaces.Space:
    """:func:`space_from_description`, with ``remaining[0]`` elements still allowed."""
    payloads = {DISCRETE: DiscreteSpace, BOX: BoxSpace, TUPLE: TupleSpace, DICT: DictSpace}
    kind = SPACE_TYPE_NAMES.get(desc.type, f"SpaceType {desc.type}")
    if desc.type not in payloads:
        raise UnsupportedSpace(f"{where}: declared as {kind}; expected one of Discrete, Box, Tuple, Dict")
    payload = payloads[desc.type]()
    if not desc.space.Unpack(payload):
        raise UnsupportedSpace(f"{where}: declared as {kind} but holds {desc.space.TypeName() or 'nothing'}, "
                               f"not an ns3opengym.{payload.DESCRIPTOR.name}")
    if desc.type == DISCRETE:
        if payload.n < 1:
            raise UnsupportedSpace(f"{where}: Discrete with n = {payload.n}; a Discrete space has n >= 1 values")
        _take_elements(remaining, 1, where, "a Discrete")
        return spaces.Discrete(payload.n)
    if desc.type == BOX:
        if payload.dtype not in BOX_NUMPY:
            raise UnsupportedSpace(f"{where}: Box of Dtype {_dtype_name(payload.dtype)}; expected INT, UINT, FLOAT "
                                   "or DOUBLE")
        dtype = BOX_NUMPY[payload.dtype]
        if payload.dtype in (INT, UINT):
            info = np.iinfo(dtype)
            for name, bound in (("low", payload.low), ("high", payload.high)):
                if not (float(bound).is_integer() and info.min <= bound <= info.max):
                    raise UnsupportedSpace(f"{where}: Box {name} {bound!r} of Dtype {_dtype_name(payload.dtype)}; "
                                           f"expected a whole number in [{info.min}, {info.max}]")
        size = math.prod(payload.shape)  # (Python ints: no overflow, whatever the declared dimensions)
        _take_elements(remaining, size, where, f"Box of shape {list(payload.shape)} ({size:,} elements)")
        try:
            return spaces.Box(dtype(payload.low), dtype(payload.high), shape=tuple(payload.shape), dtype=dtype)
        except (ValueError, OverflowError) as exc:  # NaN, low > high, a shape too big to allocate
            raise UnsupportedSpace(f"{where}: Box(low={payload.low!r}, high={payload.high!r}, "
                                   f"shape={list(payload.shape)}, {_dtype_name(payload.dtype)}) is no Gymnasium "
                                   f"space: {exc}") from None
    if desc.type == TUPLE:
        return spaces.Tuple([_space_from_description(e, f"{where}[{i}]", remaining)
                             for i, e in enumerate(payload.element)])
    repeated = _repeated_names(payload.element)
    if repeated:
        raise UnsupportedSpace(f"{where}: Dict with more than one element named {repeated[0][0]!r}; "
                               "element names are keys and must differ")
    return spaces.Dict({e.name: _space_from_description(e, f"{where}[{e.name!r}]", remaining)
                        for e in payload.element})


# ----------------------------------------------------------------------------- values
def encode(value: Any, space: spaces.Space, role: str = "observation") -> Any:
    """Pack ``value`` (an element of ``space``) into an OpenGym ``DataContainer``.

    A Box is sent in its declared Dtype with its shape (flat for an action, as declared by
    :func:`describe_space`); MultiDiscrete / MultiBinary as a Tuple of Discrete.

    Args:
        value: The value: an element of ``space`` (a Box or MultiDiscrete value of its shape).
        space: The space it belongs to (for an action, the space as the agent sees it:
            :func:`space_from_description`).
        role: ``"observation"`` or ``"action"``, also the name the errors give the value.

    Raises:
        InvalidAction: If a Box, MultiDiscrete or MultiBinary value does not have the space's
            shape, a Tuple value is no tuple (or list) of its length, a Dict value no mapping of
            its keys, a Box value is not an array of numbers, or a Discrete element or an element
            of an INT / UINT Box is not a whole number within int32 / uint32: it would be
            truncated or wrapped. The range is the receiver's check
            (``decode_action``).
        UnsupportedSpace: If the space has no OpenGym equivalent.
    """
    out = DataContainer()
    if isinstance(space, spaces.Discrete):
        out.type = DISCRETE
        out.data.Pack(DiscreteDataContainer(data=_discrete_value(value, role)))
    elif isinstance(space, spaces.Box):
        dtype = _box_dtype(space, role)
        _check_shape(value, space, role)
        arr = _box_values(value, space, BOX_NUMPY[dtype], role)
        box = BoxDataContainer(dtype=dtype, shape=[arr.size] if role == "action" else list(arr.shape))
        getattr(box, BOX_FIELDS[dtype]).extend(arr.ravel().tolist())
        out.type = BOX
        out.data.Pack(box)
    elif isinstance(space, (spaces.MultiDiscrete, spaces.MultiBinary)):
        _check_shape(value, space, role)
        out.type = TUPLE
        out.data.Pack(TupleDataContainer(element=[encode(v, spaces.Discrete(2), role)  # (n is not sent)
                                                  for v in np.ravel(value)]))
    elif isinstance(space, spaces.Tuple):
        as_sequence = isinstance(value, (tuple, list)) or (isinstance(value, np.ndarray) and value.ndim == 1)
        if not as_sequence or len(value) != len(space.spaces):
            raise InvalidAction(f"{role}: got {_value_text(value)}, expected a tuple of {len(space.spaces)} "
                                f"element(s) for the space {space}")
        out.type = TUPLE
        out.data.Pack(TupleDataContainer(element=[encode(v, s, role) for v, s in zip(value, space.spaces,
                                                                                      strict=True)]))
    elif isinstance(space, spaces.Dict):
        if not isinstance(value, Mapping) or set(value) != set(space.spaces):
            keys = sorted(map(str, value)) if isinstance(value, Mapping) else None
            raise InvalidAction(f"{role}: got {f'the keys {keys}' if keys is not None else _value_text(value)}, "
                                f"expected a mapping of the keys {sorted(map(str, space.spaces))} for the space "
                                f"{space}")
        elements = []
        for key, sub in space.spaces.items():
            element = encode(value[key], sub, role)
            element.name = str(key)
            elements.append(element)
        out.type = DICT
        out.data.Pack(DictDataContainer(element=elements))
    else:
        raise UnsupportedSpace(f"{space} has no OpenGym equivalent")
    return out


def _repeated_names(elements: Any) -> list[tuple[str, int]]:
    """(name, count) of each name that more than one of a Dict's elements carries, sorted by name.

    A Dict's elements are keyed by name (a space description's, a data container's): a repeated
    one would be kept as its last.
    """
    return sorted((name, n) for name, n in Counter(e.name for e in elements).items() if n > 1)


def _value_text(value: Any) -> str:
    """A value for a message: its repr, or just its type when that is long (an array of thousands)."""
    text = shown(value)
    return text if len(text) <= 80 else f"a {type(value).__name__} ({len(text)} characters as text)"


def _check_shape(value: Any, space: spaces.Box | spaces.MultiDiscrete | spaces.MultiBinary, role: str) -> None:
    """Refuse a value whose shape is not the space's (it would go out as is, and the receiver refuse it).

    Raises:
        InvalidAction: Naming ``role``, the shape given and the space.
    """
    try:
        shape = np.shape(value)
    except ValueError:  # a ragged nesting ([[1, 2], [3]]) has no shape
        raise InvalidAction(f"{role}: got {_value_text(value)}, a ragged nesting; expected a value of shape "
                            f"{space.shape} for the space {space}") from None
    if shape != space.shape:
        raise InvalidAction(f"{role}: got a value of shape {shape}, expected shape {space.shape} "
                            f"for the space {space}")


def _box_values(value: Any, space: spaces.Box, target: type, role: str) -> np.ndarray:
    """``value`` as an array of the Box container's element type, never truncated or wrapped.

    Raises:
        InvalidAction: If ``value`` is no array of numbers, or (for an INT / UINT Dtype) an element
            is not a whole number within the Dtype's range (``2.5`` would go out as 2, ``-1`` as
            4294967295 for UINT).
    """
    try:
        given = np.asarray(value)
        with np.errstate(invalid="ignore"):  # (NaN to an integer type: refused below)
            arr = given.astype(target) if given.dtype.kind in "biuf" else np.asarray(value, dtype=target)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InvalidAction(f"{role}: cannot send {_value_text(value)} as Box data of the space {space} "
                            f"({exc})") from None
    if arr.dtype.kind in "iu" and given.dtype.kind in "iuf":
        with np.errstate(invalid="ignore"):
            bad = np.flatnonzero(arr.ravel() != given.ravel())  # changed by the cast: not whole, or out of range
        if len(bad):
            i, more = first_offending(bad)
            raise InvalidAction(f"{role}: element {i} (flat) is {shown(given.ravel()[i])}{more}; the space {space} "
                                f"goes out as {np.dtype(target).name}: whole numbers in [{np.iinfo(target).min}, "
                                f"{np.iinfo(target).max}], never truncated")
    return arr


def _discrete_value(value: Any, role: str) -> int:
    """``value`` as a Discrete container's int32, never truncated (the receiver checks the range).

    Raises:
        InvalidAction: If ``value`` is not a whole number within int32 (``2.5`` would go out as 2).
    """
    try:
        return check(role, value, Whole(-2**31, 2**31 - 1))
    except ConfigError as exc:
        raise InvalidAction(f"{exc.field}: {exc.message} (a Discrete element goes out as an int32)") from None


def _unpack(container: Any, kind: int, message: type, space: spaces.Space, where: str) -> Any:
    """The payload of ``container`` if it is the ``kind`` the space needs, else :class:`InvalidAction`."""
    got = SPACE_TYPE_NAMES.get(container.type, f"SpaceType {container.type}")
    if container.type != kind or not container.data.Is(message.DESCRIPTOR):
        payload = container.data.TypeName() or "nothing"
        raise InvalidAction(f"{where}: expected an OpenGym {SPACE_TYPE_NAMES[kind]} data container "
                            f"({message.DESCRIPTOR.name}) for the space {space}, got type {got} holding {payload}")
    payload = message()
    container.data.Unpack(payload)
    return payload


def decode_action(container: Any, space: spaces.Space, where: str = "action") -> Any:
    """The action an agent sent, as an element candidate of ``space`` (the env checks its range).

    Only the wire form is checked here (container type, Dtype family, element count); the value is
    passed on unchanged, so that an out-of-range action gets the env's own :class:`InvalidAction`.

    Raises:
        InvalidAction: If the container does not have the form ``space`` is declared with (a Dict's
            elements: each of its keys exactly once).
    """
    if isinstance(space, spaces.Discrete):
        return int(_unpack(container, DISCRETE, DiscreteDataContainer, space, where).data)
    if isinstance(space, spaces.Box):
        box = _unpack(container, BOX, BoxDataContainer, space, where)
        want_float = space.dtype.kind == "f"
        allowed = (FLOAT, DOUBLE) if want_float else (INT, UINT)
        if box.dtype not in allowed:
            raise InvalidAction(f"{where}: expected Box data of Dtype {' or '.join(_dtype_name(d) for d in allowed)} "
                                f"for the space {space}, got {_dtype_name(box.dtype)}")
        values = np.asarray(getattr(box, BOX_FIELDS[box.dtype]), dtype=BOX_NUMPY[box.dtype])
        size = int(np.prod(space.shape))
        if values.size != size or (len(box.shape) and int(np.prod(box.shape)) != size):
            raise InvalidAction(f"{where}: expected {size} Box element(s) (space {space}), got {values.size} "
                                f"with shape {list(box.shape)}")
        return values.reshape(space.shape)
    if isinstance(space, (spaces.MultiDiscrete, spaces.MultiBinary)):
        t = _unpack(container, TUPLE, TupleDataContainer, space, where)
        if len(t.element) != int(np.prod(space.shape)):
            raise InvalidAction(f"{where}: expected {int(np.prod(space.shape))} Discrete elements (space {space}), "
                                f"got {len(t.element)}")
        nvec = np.ravel(space.nvec) if isinstance(space, spaces.MultiDiscrete) else np.full(len(t.element), 2)
        values = [decode_action(e, spaces.Discrete(int(n)), f"{where}[{i}]")
                  for i, (e, n) in enumerate(zip(t.element, nvec, strict=True))]
        return np.asarray(values, dtype=np.int64).reshape(space.shape)
    if isinstance(space, spaces.Tuple):
        t = _unpack(container, TUPLE, TupleDataContainer, space, where)
        if len(t.element) != len(space.spaces):
            raise InvalidAction(f"{where}: expected {len(space.spaces)} elements (space {space}), got {len(t.element)}")
        pairs = enumerate(zip(t.element, space.spaces, strict=True))
        return tuple(decode_action(e, s, f"{where}[{i}]") for i, (e, s) in pairs)
    if isinstance(space, spaces.Dict):
        d = _unpack(container, DICT, DictDataContainer, space, where)
        repeated = _repeated_names(d.element)
        if repeated:
            raise InvalidAction(f"{where}: the element {repeated[0][0]!r} is given {repeated[0][1]} times "
                                f"(space {space}); each key once")
        given = {e.name: e for e in d.element}
        if set(given) != set(space.spaces):
            raise InvalidAction(f"{where}: expected elements named {sorted(space.spaces)}, got {sorted(given)}")
        return {k: decode_action(given[k], s, f"{where}[{k!r}]") for k, s in space.spaces.items()}
    raise UnsupportedSpace(f"{space} has no OpenGym equivalent")


def decode_data(container: Any, where: str = "observation") -> Any:
    """A ``DataContainer``'s value as the agent side sees it: int, flat numpy array, tuple or dict.

    A Box comes back flat, in its Dtype, reshaped to its shape field when that matches the size.

    Args:
        container: The container.
        where: What it is, named in the error (elements as ``[i]`` / ``['key']``).

    Raises:
        UnsupportedSpace: On a container of no known type, or Box data of no known Dtype (they were
            read as None / as float data).
    """
    if container.type == DISCRETE:
        d = DiscreteDataContainer()
        container.data.Unpack(d)
        return d.data
    if container.type == BOX:
        b = BoxDataContainer()
        container.data.Unpack(b)
        if b.dtype not in BOX_FIELDS:
            raise UnsupportedSpace(f"{where}: Box data of Dtype {_dtype_name(b.dtype)}; expected INT, UINT, FLOAT "
                                   "or DOUBLE")
        values = np.asarray(getattr(b, BOX_FIELDS[b.dtype]), dtype=BOX_NUMPY[b.dtype])
        return values.reshape(tuple(b.shape)) if len(b.shape) and int(np.prod(b.shape)) == values.size else values
    if container.type == TUPLE:
        t = TupleDataContainer()
        container.data.Unpack(t)
        return tuple(decode_data(e, f"{where}[{i}]") for i, e in enumerate(t.element))
    if container.type == DICT:
        d = DictDataContainer()
        container.data.Unpack(d)
        return {e.name: decode_data(e, f"{where}[{e.name!r}]") for e in d.element}
    raise UnsupportedSpace(f"{where}: a data container of type {SPACE_TYPE_NAMES.get(container.type, container.type)}; "
                           "expected Discrete, Box, Tuple or Dict data")


def _dtype_name(dtype: int) -> str:
    return {INT: "INT", UINT: "UINT", FLOAT: "FLOAT", DOUBLE: "DOUBLE"}.get(dtype, f"NoDType ({dtype})")
