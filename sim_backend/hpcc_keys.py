"""The HPCC simulator's ``config.txt`` keys: reading them, and the fabric settings they describe.

:mod:`ecngym.sim_backend.hpcc_config` has the whole experiment (topology, flows, output files)
and the list of derivations; this module only turns keys into fabric config overrides, so that
:class:`~ecngym.sim_backend.config.FabricConfig` reads an HPCC config without importing the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ecngym.error import ConfigError
from ecngym.files import check_input_file
from ecngym.sim_backend.topology import ALL_LAYERS
from ecngym.units import MAX_TIME_NS, parse_rate_bps
from ecngym.validation import Real, check

#: CC_MODE values we run, and the FabricConfig.cc of each
CC_MODES = {1: "dcqcn", 3: "hpcc", 7: "timely", 8: "dctcp_rate"}

#: Keys read by scratch/third.cc (its config parser), each with how many values it takes
#: (-1: a count, then that many rate/value pairs).
KNOWN_KEYS = {
    "ENABLE_QCN": 1, "USE_DYNAMIC_PFC_THRESHOLD": 1, "CLAMP_TARGET_RATE": 1, "PAUSE_TIME": 1,
    "DATA_RATE": 1, "LINK_DELAY": 1, "PACKET_PAYLOAD_SIZE": 1, "L2_CHUNK_SIZE": 1,
    "L2_ACK_INTERVAL": 1, "L2_BACK_TO_ZERO": 1, "TOPOLOGY_FILE": 1, "FLOW_FILE": 1, "TRACE_FILE": 1,
    "TRACE_OUTPUT_FILE": 1, "SIMULATOR_STOP_TIME": 1, "ALPHA_RESUME_INTERVAL": 1, "RP_TIMER": 1,
    "EWMA_GAIN": 1, "FAST_RECOVERY_TIMES": 1, "RATE_AI": 1, "RATE_HAI": 1, "ERROR_RATE_PER_LINK": 1,
    "CC_MODE": 1, "RATE_DECREASE_INTERVAL": 1, "MIN_RATE": 1, "FCT_OUTPUT_FILE": 1, "HAS_WIN": 1,
    "GLOBAL_T": 1, "MI_THRESH": 1, "VAR_WIN": 1, "FAST_REACT": 1, "U_TARGET": 1, "INT_MULTI": 1,
    "RATE_BOUND": 1, "ACK_HIGH_PRIO": 1, "DCTCP_RATE_AI": 1, "PFC_OUTPUT_FILE": 1, "LINK_DOWN": 3,
    "ENABLE_TRACE": 1, "KMAX_MAP": -1, "KMIN_MAP": -1, "PMAX_MAP": -1, "BUFFER_SIZE": 1,
    "QLEN_MON_FILE": 1, "QLEN_MON_START": 1, "QLEN_MON_END": 1, "MULTI_RATE": 1,
    "SAMPLE_FEEDBACK": 1, "PINT_LOG_BASE": 1, "PINT_PROB": 1,
}

#: third.cc's defaults for keys a config may leave out
DEFAULTS = {
    "CC_MODE": "1", "ENABLE_QCN": "1", "USE_DYNAMIC_PFC_THRESHOLD": "1", "PACKET_PAYLOAD_SIZE": "1000",
    "L2_CHUNK_SIZE": "0", "L2_ACK_INTERVAL": "0", "L2_BACK_TO_ZERO": "0", "SIMULATOR_STOP_TIME": "3.01",
    "ALPHA_RESUME_INTERVAL": "55", "RATE_DECREASE_INTERVAL": "4", "RP_TIMER": "1500", "EWMA_GAIN": "0.0625",
    "FAST_RECOVERY_TIMES": "5", "MIN_RATE": "100Mb/s", "DCTCP_RATE_AI": "1000Mb/s", "CLAMP_TARGET_RATE": "0",
    "ERROR_RATE_PER_LINK": "0", "HAS_WIN": "1", "GLOBAL_T": "1", "MI_THRESH": "5", "VAR_WIN": "0",
    "FAST_REACT": "1", "MULTI_RATE": "1", "SAMPLE_FEEDBACK": "0", "U_TARGET": "0.95", "INT_MULTI": "1",
    "RATE_BOUND": "1", "ACK_HIGH_PRIO": "0", "ENABLE_TRACE": "1", "BUFFER_SIZE": "16",
    "FCT_OUTPUT_FILE": "fct.txt", "PFC_OUTPUT_FILE": "pfc.txt", "QLEN_MON_START": "2000000000",
}

#: data packets' wire overhead without INT (PPP 2 + IPv4 20 + UDP 8 + SeqTs 14 + framing 8: the
#: model's 1052 B per 1000 B payload) and its ACK size
DATA_HEADER_BYTES = 52
ACK_BYTES = 60


def read_hpcc_keys(path: str | Path) -> dict[str, list[str]]:
    """Read ``KEY value ...`` lines (blank lines and ``#`` comments skipped; a later key wins).

    Raises:
        ConfigError: If ``path`` names no file, the file cannot be read or a line has the wrong
            number of values.
    """
    path = check_input_file("hpcc_config", path, "an HPCC config file")
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:  # a binary file is no config either
        raise ConfigError(f"hpcc_config ({path})", f"cannot read as an HPCC config: {exc}") from None
    keys: dict[str, list[str]] = {}
    for ln_no, line in enumerate(text.splitlines(), start=1):
        parts = line.split("#", 1)[0].split()
        if not parts:
            continue
        key, values = parts[0], parts[1:]
        expected = KNOWN_KEYS.get(key)
        if expected == -1:
            try:
                n = int(values[0])
            except (ValueError, IndexError):
                raise ConfigError(f"hpcc_config ({path}) line {ln_no}", f"{key}: expected a count first") from None
            expected = 1 + 2 * n
        if expected is not None and len(values) != expected:
            raise ConfigError(f"hpcc_config ({path}) line {ln_no}",
                              f"{key} takes {expected} value(s), got {len(values)}: {values}")
        keys[key] = values
    return keys


def _num(keys: dict[str, list[str]], key: str) -> float:
    value = keys.get(key, [DEFAULTS.get(key, "")])[0]
    try:
        return float(value)
    except ValueError:
        raise ConfigError(f"hpcc_config.{key}", f"expected a number, got {value!r}") from None


def _flag(keys: dict[str, list[str]], key: str) -> bool:
    value = _num(keys, key)
    if value not in (0, 1):
        raise ConfigError(f"hpcc_config.{key}", f"expected 0 or 1, got {value:g}")
    return bool(value)


def _rate(keys: dict[str, list[str]], key: str) -> float:
    return parse_rate_bps(keys.get(key, [DEFAULTS.get(key, "")])[0], f"hpcc_config.{key}")


def _whole(keys: dict[str, list[str]], key: str) -> int:
    value = _num(keys, key)
    if not value.is_integer():  # (third.cc reads these into integers: '2.5' would not be 2)
        raise ConfigError(f"hpcc_config.{key}", f"expected a whole number, got {value:g}")
    return int(value)


def _us(keys: dict[str, list[str]], key: str) -> str:
    value = _num(keys, key)  # (the DCQCN timers are in microseconds; every digit kept, "55us" stays "55us")
    return f"{int(value)}us" if value.is_integer() else f"{value!r}us"


def _global_t(keys: dict[str, list[str]], key: str) -> str:
    return "global" if _flag(keys, key) else "pair"


def _buffer_mib(keys: dict[str, list[str]], key: str) -> str:
    return f"{_whole(keys, key)}MiB"


#: FabricConfig fields read from one HPCC key each, with the reader: one table for the config and
#: for errors, which name the key the file wrote. A key the file leaves out that third.cc has no
#: default for (``RATE_AI``, ``RATE_HAI``) keeps the ``hpcc`` preset's value.
_FIELDS: tuple[tuple[str, str, Callable[[dict[str, list[str]], str], Any]], ...] = (
    ("mtu_payload", "PACKET_PAYLOAD_SIZE", _whole),
    ("dcqcn.alpha_interval", "ALPHA_RESUME_INTERVAL", _us),
    ("dcqcn.decrease_interval", "RATE_DECREASE_INTERVAL", _us),
    ("dcqcn.increase_timer", "RP_TIMER", _us),
    ("dcqcn.g", "EWMA_GAIN", _num),
    ("dcqcn.fast_recovery_steps", "FAST_RECOVERY_TIMES", _whole),
    ("dcqcn.ai_rate", "RATE_AI", _rate),
    ("dcqcn.hai_rate", "RATE_HAI", _rate),
    ("dcqcn.min_rate", "MIN_RATE", _rate),
    ("dcqcn.clamp_target_rate", "CLAMP_TARGET_RATE", _flag),
    ("dctcp_rate.g", "EWMA_GAIN", _num),
    ("dctcp_rate.ai_rate", "DCTCP_RATE_AI", _rate),
    ("dctcp_rate.min_rate", "MIN_RATE", _rate),
    ("timely.ai_rate", "RATE_AI", _rate),
    ("timely.hai_rate", "RATE_HAI", _rate),
    ("timely.min_rate", "MIN_RATE", _rate),
    ("hpcc.target_util", "U_TARGET", _num),
    ("hpcc.mi_thresh", "MI_THRESH", _whole),
    ("hpcc.fast_react", "FAST_REACT", _flag),
    ("hpcc.sample_feedback", "SAMPLE_FEEDBACK", _flag),
    ("hpcc.int_multi", "INT_MULTI", _whole),
    ("hpcc.min_rate", "MIN_RATE", _rate),
    ("hpcc.ai_rate", "RATE_AI", _rate),
    ("window.enabled", "HAS_WIN", _flag),
    ("window.variable", "VAR_WIN", _flag),
    ("window.scope", "GLOBAL_T", _global_t),
    ("buffer.buffer", "BUFFER_SIZE", _buffer_mib),
)


def stop_ns(keys: dict[str, list[str]], source: str) -> int:
    """``SIMULATOR_STOP_TIME`` (seconds; third.cc's default if left out) in whole ns.

    Args:
        keys: The config's keys.
        source: The config file, named in the error.

    Returns:
        The run limit, in [1, 2^62] ns.

    Raises:
        ConfigError: Naming ``hpcc_config.SIMULATOR_STOP_TIME`` if it is not a finite number of
            seconds from 1 ns to 2^62 ns; checked first, since the checks of other keys
            (``QLEN_MON_START``) compare with it.
    """
    field = "hpcc_config.SIMULATOR_STOP_TIME"
    try:
        seconds = check(field, _num(keys, "SIMULATOR_STOP_TIME"), Real(1e-9, MAX_TIME_NS / 1e9))
    except ConfigError as exc:
        raise ConfigError(field, f"{exc.message} (seconds; {source})") from None
    return round(seconds * 1e9)


def _rate_map(keys: dict[str, list[str]], key: str) -> dict[float, str]:
    values = keys.get(key)
    if values is None:
        return {}
    pairs = values[1:]
    out: dict[float, str] = {}
    for rate, value in zip(pairs[0::2], pairs[1::2], strict=True):  # the count was checked at parse
        out[parse_rate_bps(rate, f"hpcc_config.{key}")] = value
    return out


def _unsupported(keys: dict[str, list[str]], stop_ns: int) -> list[str]:
    """Every key, or value of a key, that the fabric cannot honour, each with the reason.

    Args:
        keys: The config's keys.
        stop_ns: ``SIMULATOR_STOP_TIME``, checked (:func:`_stop_ns`).
    """
    problems = [f"{k}: not a key of the HPCC model's config" for k in keys if k not in KNOWN_KEYS]

    def need(key: str, ok: bool, why: str) -> None:
        if key in keys and not ok:
            problems.append(f"{key} {' '.join(keys[key])}: {why}")

    def num(key: str) -> float | None:
        try:
            return _num(keys, key)
        except ConfigError:
            return None

    cc_mode = num("CC_MODE")
    need("CC_MODE", cc_mode in CC_MODES, f"supported modes are {sorted(CC_MODES)} "
         "(1 DCQCN, 3 HPCC, 7 TIMELY, 8 DCTCP); 10 (HPCC-PINT) is not")
    need("USE_DYNAMIC_PFC_THRESHOLD", num("USE_DYNAMIC_PFC_THRESHOLD") == 1,
         "only the dynamic PFC threshold (1) is modelled")
    need("L2_BACK_TO_ZERO", num("L2_BACK_TO_ZERO") == 0, "only go-back-N to the first unacknowledged "
         "byte (0) is modelled")
    payload = num("PACKET_PAYLOAD_SIZE") or 1000
    ack = num("L2_ACK_INTERVAL")
    need("L2_ACK_INTERVAL", ack is not None and 1 <= ack <= payload,
         f"only one ACK per data packet (1 .. PACKET_PAYLOAD_SIZE = {payload:g} bytes) is modelled")
    need("ERROR_RATE_PER_LINK", num("ERROR_RATE_PER_LINK") == 0, "random packet loss is not modelled")
    need("PAUSE_TIME", False, "the PFC pause time is FabricConfig.buffer.pause_quanta (512-bit quanta)")
    need("RATE_BOUND", num("RATE_BOUND") == 1, "queue pairs are always paced at their rate (1)")
    need("MULTI_RATE", num("MULTI_RATE") == 0, "HPCC keeps one rate per queue pair (0)")
    need("ENABLE_TRACE", num("ENABLE_TRACE") == 0, "the binary packet trace (mix.tr) is not written; "
         "use Fabric.read_telemetry()")
    need("LINK_DOWN", keys.get("LINK_DOWN", ["0"])[0] == "0", "link failures are not modelled")
    start = num("QLEN_MON_START")
    need("QLEN_MON_START", start is not None and start >= stop_ns,
         "the queue-length monitor file is not written (start it after SIMULATOR_STOP_TIME; use "
         "Fabric.read_telemetry())")
    for key in ("KMIN_MAP", "KMAX_MAP", "PMAX_MAP"):
        try:
            _rate_map(keys, key)
        except ConfigError as exc:
            problems.append(f"{key}: {exc}")
    return problems


def fabric_overrides_from_keys(keys: dict[str, list[str]], source: str = "hpcc_config") -> dict[str, Any]:
    """The overrides of the ``hpcc`` fabric preset that an HPCC config describes.

    :meth:`ecngym.sim_backend.config.FabricConfig.from_hpcc_keys` applies them and checks the result.

    Raises:
        ConfigError: Naming every unsupported key or value at once, or a malformed value
            (``SIMULATOR_STOP_TIME`` first: the checks of other keys compare with it).
    """
    problems = _unsupported(keys, stop_ns(keys, source))
    if problems:
        raise ConfigError(f"hpcc_config ({source})", "unsupported: " + "; ".join(problems))
    cc = CC_MODES[int(_num(keys, "CC_MODE"))]
    kmin, kmax, pmax = (_rate_map(keys, k) for k in ("KMIN_MAP", "KMAX_MAP", "PMAX_MAP"))
    if not (kmin.keys() == kmax.keys() == pmax.keys()):
        raise ConfigError(f"hpcc_config ({source})", "KMIN_MAP, KMAX_MAP and PMAX_MAP must list the same "
                          f"rates; got {sorted(kmin)}, {sorted(kmax)}, {sorted(pmax)}")
    ecn_on = _flag(keys, "ENABLE_QCN")
    # ENABLE_QCN 0: switches never mark (thresholds no queue reaches)
    by_rate = {f"{rate:.0f}bps": {"kmin_bytes": f"{kmin[rate]}KB", "kmax_bytes": f"{kmax[rate]}KB",
                                  "pmax": float(pmax[rate])} for rate in kmin} if ecn_on else {}
    red = {"policy": "red", "mark_at_dequeue": True, "by_rate": by_rate,
           **({} if ecn_on else {"kmin_bytes": 1 << 50, "kmax_bytes": 1 << 50, "pmax": 0.0})}
    overrides: dict[str, Any] = {
        "cc": cc,
        "buffer": {"headroom_rule": "rate_delay", "headroom_delays": 3, "pfc_alpha_rule": "by_rate",
                   "pfc_alpha": 0.125},
        "aqm": {ALL_LAYERS: red},  # merged into the hpcc preset's RED setting
    }
    for field, key, read in _FIELDS:
        if key in keys or key in DEFAULTS:  # (else the preset's value stays)
            *sections, name = field.split(".")
            node = overrides
            for section in sections:
                node = node.setdefault(section, {})
            node[name] = read(keys, key)
    return overrides


def key_of_field(field: str) -> str | None:
    """Return the HPCC key a fabric field (``fabric.dcqcn.ai_rate``) is read from, if one is."""
    return next((k for f, k, _ in _FIELDS if field == f"fabric.{f}"), None)
