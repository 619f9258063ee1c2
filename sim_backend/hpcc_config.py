"""Bring an HPCC-simulator experiment over: its ``config.txt``, topology and flow files, FCT output.

The HPCC RDMA model on ns-3 (docs: concepts/prior-art.md §3.1) is run as
``third config.txt``; the config is one ``KEY value...`` per line (its ``mix/config_doc.txt``).
:func:`load_hpcc_experiment` reads such a file and returns the fabric config, topology and flows it
names, with the derivations the reference program (``scratch/third.cc``) applies:

- per switch port: ECN thresholds by link rate (``KMIN_MAP`` / ``KMAX_MAP`` / ``PMAX_MAP``, KB =
  1000 B), PFC headroom 3 x rate x delay, PFC alpha 1/8 doubled per halving of the port's rate
  down to the NIC rate (``ecngym.sim_backend.port_settings``);
- ``BUFFER_SIZE`` in MiB; DCQCN timers in us; rates as written (``20Mb/s``);
- ``HAS_WIN`` / ``VAR_WIN`` / ``GLOBAL_T``: the NIC window (``FabricConfig.window``);
- ``CC_MODE`` 1 DCQCN, 3 HPCC, 7 TIMELY, 8 rate-based DCTCP;
- the behaviours of the model that the ``hpcc`` preset reproduces (ACKs queued behind data at
  switches, its ECMP hash, its NIC pacing wake-up, whole-ns serialisation times), ECN marked at
  dequeue and echoed on every ACK.

Every key the fabric cannot honour, and every value of a supported key that it cannot honour
(``CC_MODE 10``, ``ERROR_RATE_PER_LINK`` > 0, a ``LINK_DOWN`` event ...), is named in one
:class:`~ecngym.error.ConfigError`. Keys that only concern the reference's tracing are accepted
when they ask for nothing we would have to produce. ``FCT_OUTPUT_FILE`` and ``PFC_OUTPUT_FILE``
are written, in the reference's formats, by ``ecngym bench fabric --hpcc-config`` (which replays
the whole experiment); ``ecngym run fabric=hpcc_file`` takes only the fabric settings.

:func:`write_hpcc_fct` writes our flow records in the reference's ``FCT_OUTPUT_FILE`` format,
:func:`write_hpcc_pfc` our PFC frames (:meth:`Fabric.pfc_events`) in its ``PFC_OUTPUT_FILE`` format.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ecngym.error import ConfigError
from ecngym.files import check_input_file
from ecngym.sim_backend.config import FabricConfig
from ecngym.sim_backend.flows import read_hpcc_flow_file
from ecngym.sim_backend.topology import Topology, from_hpcc_file
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


def _stop_ns(keys: dict[str, list[str]], source: str) -> int:
    """``SIMULATOR_STOP_TIME`` (seconds; third.cc's default if left out) in whole ns.

    Args:
        keys: The config's keys.
        source: The config file, named in the error.

    Returns:
        The run limit, in [1, 2^62] ns.

    Raises:
        ConfigError: Naming ``hpcc_config.SIMULATOR_STOP_TIME`` if it is not a finite number of
            seconds from 1 ns to 2^62 ns (``-1`` gave a run limit of -10^9 ns; NaN or inf failed
            the ``QLEN_MON_START`` check that compares with it, which was blamed).
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


def fabric_config_from_keys(keys: dict[str, list[str]], source: str = "hpcc_config") -> FabricConfig:
    """The :class:`FabricConfig` an HPCC config describes (see the module docstring).

    Raises:
        ConfigError: Naming every unsupported key or value at once, or a malformed value
            (``SIMULATOR_STOP_TIME`` first: the checks of other keys compare with it).
    """
    problems = _unsupported(keys, _stop_ns(keys, source))
    if problems:
        raise ConfigError(f"hpcc_config ({source})", "unsupported: " + "; ".join(problems))
    cc = CC_MODES[int(_num(keys, "CC_MODE"))]
    kmin, kmax, pmax = (_rate_map(keys, k) for k in ("KMIN_MAP", "KMAX_MAP", "PMAX_MAP"))
    if not (kmin.keys() == kmax.keys() == pmax.keys()):
        raise ConfigError(f"hpcc_config ({source})", "KMIN_MAP, KMAX_MAP and PMAX_MAP must list the same "
                          f"rates; got {sorted(kmin)}, {sorted(kmax)}, {sorted(pmax)}")
    ecn_on = _flag(keys, "ENABLE_QCN")
    # ENABLE_QCN 0: switches never mark (thresholds no queue reaches)
    by_rate = {f"{rate:.0f}bps": {"kmin": f"{kmin[rate]}KB", "kmax": f"{kmax[rate]}KB", "pmax": float(pmax[rate])}
               for rate in kmin} if ecn_on else {}
    overrides: dict[str, Any] = {
        "cc": cc,
        "buffer": {"headroom_rule": "rate_delay", "headroom_delays": 3, "pfc_alpha_rule": "by_rate",
                   "pfc_alpha": 0.125},
        "ecn": {"by_rate": by_rate, "mark_at": "dequeue",
                **({} if ecn_on else {"kmin": 1 << 50, "kmax": 1 << 50, "pmax": 0.0})},
    }
    for field, key, read in _FIELDS:
        if key in keys or key in DEFAULTS:  # (else the preset's value stays)
            *sections, name = field.split(".")
            node = overrides
            for section in sections:
                node = node.setdefault(section, {})
            node[name] = read(keys, key)
    config = FabricConfig.preset("hpcc").updated(overrides)
    try:
        config.to_cpp()  # every range check, here, so that an error names the file's key
    except ConfigError as exc:
        key = next((k for f, k, _ in _FIELDS if exc.field == f"fabric.{f}"), None)
        if key is None:
            raise
        raise ConfigError(f"hpcc_config.{key}", f"{exc.message} (as {exc.field}; {source})") from None
    return config


@dataclass
class HpccExperiment:
    """An HPCC-simulator experiment: its fabric config, topology, flows and output files.

    Attributes:
        path: The config file.
        config: The fabric settings (:meth:`FabricConfig.from_hpcc_config`).
        topology: From ``TOPOLOGY_FILE``.
        flows: From ``FLOW_FILE`` (start times as written, e.g. from t = 2 s).
        stop_ns: ``SIMULATOR_STOP_TIME`` in ns (the run limit).
        fct_output: ``FCT_OUTPUT_FILE`` (resolved like the inputs).
        pfc_output: ``PFC_OUTPUT_FILE``.
        keys: The raw key / values.
    """

    path: Path
    config: FabricConfig
    topology: Topology
    flows: pd.DataFrame
    stop_ns: int
    fct_output: Path
    pfc_output: Path
    keys: dict[str, list[str]]

    def with_config(self, **overrides: Any) -> HpccExperiment:
        """A copy with fabric-config overrides applied (``seed=2``, ``ecn={...}``)."""
        return dataclasses.replace(self, config=self.config.updated(overrides))


def _resolve(base: Path, name: str) -> Path:
    """A file the config names: relative to the config's folder, else to the working directory.

    The reference program opens names relative to its working directory (``mix/...``); a config
    moved with its inputs finds them beside itself.
    """
    p = Path(name)
    if p.is_absolute():
        return p
    for candidate in (base / p, base / p.name, Path.cwd() / p):
        if candidate.exists():
            return candidate
    return base / p


def load_hpcc_experiment(path: str | Path) -> HpccExperiment:
    """Read an HPCC config and everything it names (topology, flows, output file names).

    Raises:
        ConfigError: On an unsupported key, a malformed value (``SIMULATOR_STOP_TIME`` not a
            finite number of seconds from 1 ns to 2^62 ns ...), a missing or malformed input file.
    """
    keys = read_hpcc_keys(path)  # (checks the path first)
    path = Path(path)
    config = fabric_config_from_keys(keys, str(path))
    base = path.parent
    for key in ("TOPOLOGY_FILE", "FLOW_FILE"):
        if key not in keys:
            raise ConfigError(f"hpcc_config ({path})", f"{key} is required")
    topology = from_hpcc_file(_resolve(base, keys["TOPOLOGY_FILE"][0]))
    flow_path = _resolve(base, keys["FLOW_FILE"][0])
    if not flow_path.exists():
        raise ConfigError(f"hpcc_config.FLOW_FILE ({path})", f"file not found: {flow_path}")
    flows = read_hpcc_flow_file(flow_path, topology)
    out = {k: base / keys.get(k, [DEFAULTS[k]])[0] for k in ("FCT_OUTPUT_FILE", "PFC_OUTPUT_FILE")}
    return HpccExperiment(path=path, config=config, topology=topology, flows=flows,
                          stop_ns=_stop_ns(keys, str(path)),
                          fct_output=out["FCT_OUTPUT_FILE"], pfc_output=out["PFC_OUTPUT_FILE"], keys=keys)


def hpcc_ip(node: np.ndarray) -> np.ndarray:
    """The HPCC model's host IP of a node id (``node_id_to_ip`` in third.cc)."""
    node = np.asarray(node, dtype=np.int64)
    return 0x0B000001 + (node // 256) * 0x10000 + (node % 256) * 0x100


def source_ports(flows: pd.DataFrame) -> np.ndarray:
    """The source port of each flow: 10000, 10001, ... per (src, dst) pair in flow-table order."""
    return (10000 + flows.groupby(["src", "dst"]).cumcount()).to_numpy()


#: the columns of the reference's FCT_OUTPUT_FILE (its third.cc ``qp_finish``)
FCT_COLUMNS = ["sip", "dip", "sport", "dport", "size_bytes", "start_ns", "fct_ns", "ideal_fct_ns"]


def read_hpcc_fct(path: str | Path) -> pd.DataFrame:
    """Read an FCT file in the reference's format (every line a finished flow).

    Adds ``src`` / ``dst`` (the node ids, ``(ip >> 8) & 0xffff``), ``finished`` and
    ``slowdown = max(1, fct / standalone_fct)``.

    Raises:
        ConfigError: If the file cannot be read or a line does not have the eight fields.
    """
    path = Path(path)
    try:
        df = pd.read_csv(path, sep=" ", header=None, names=FCT_COLUMNS,
                         dtype={"sip": str, "dip": str}, skipinitialspace=True)
        df = df.astype({c: "int64" for c in FCT_COLUMNS[2:]})
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise ConfigError(f"reference FCT file ({path})",
                          f"cannot read as '{' '.join(FCT_COLUMNS)}' lines: {exc}") from None
    for ip_col, node_col in (("sip", "src"), ("dip", "dst")):
        df[node_col] = (df[ip_col].map(lambda v: int(v, 16)).to_numpy(np.int64) >> 8) & 0xFFFF
    df["finished"] = True
    df["slowdown"] = np.maximum(1.0, df["fct_ns"] / df["ideal_fct_ns"])
    return df


def write_hpcc_fct(records: pd.DataFrame, flows: pd.DataFrame, path: str | Path,
                   topology: Topology | None = None) -> Path:
    """Write finished flows in the reference's FCT format, in completion order.

    ``sip dip sport dport size start_ns fct_ns standalone_fct_ns`` (IPs in hex); the standalone
    FCT is ours (the same definition, truncated to whole ns as the reference's integer arithmetic).

    Args:
        records: :meth:`Fabric.flow_records`.
        flows: The flow table the fabric ran (for ``dport``).
        path: Output file.
        topology: The fabric's topology: IPs come from its file's node ids
            (:meth:`Topology.node_ids`); default: host ``i`` is node ``i``.

    Returns:
        ``path``.
    """
    done = records[records["finished"]].copy()
    ids = (np.arange(int(max(records["src"].max(), records["dst"].max())) + 1) if topology is None
           else topology.node_ids())
    sport = source_ports(flows)
    dport = flows["dport"].to_numpy() if "dport" in flows.columns else np.full(len(flows), 100)
    fid = done["flow_id"].to_numpy()
    done = done.assign(sip=hpcc_ip(ids[done["src"].to_numpy()]), dip=hpcc_ip(ids[done["dst"].to_numpy()]),
                       sport=sport[fid], dport=dport[fid]).sort_values(["finish_ns", "flow_id"])
    lines = [f"{r.sip:08x} {r.dip:08x} {r.sport} {r.dport} {r.size_bytes} {r.start_ns} {int(r.fct_ns)} "
             f"{int(r.ideal_fct_ns)}" for r in done.itertuples()]
    path = Path(path)
    path.write_text("".join(line + "\n" for line in lines))
    return path


def write_hpcc_pfc(events: pd.DataFrame, ports: Any, topology: Topology, path: str | Path) -> Path:
    """Write PFC frames in the reference's ``PFC_OUTPUT_FILE`` format, in arrival order.

    One line per frame a port received (third.cc's ``get_pfc``, on its ``QbbPfc`` trace):
    ``time_ns node_id node_type if_index type`` with the node's id in the topology file, type 1 for
    a switch and 0 for a host, the device index (the node's links in file order from 1: device 0
    is ns-3's loopback) and 1 for a pause, 0 for a resume.

    Args:
        events: :meth:`Fabric.pfc_events`.
        ports: The fabric's :class:`~ecngym.sim_backend.fabric.PortTable`.
        topology: The fabric's topology (:meth:`Topology.node_ids`).
        path: Output file.

    Returns:
        ``path``.
    """
    port = events["port"].to_numpy(np.int64)
    node = topology.node_ids()[ports.node[port]]
    lines = [f"{t} {n} {int(sw)} {i + 1} {int(pause)}" for t, n, sw, i, pause in
             zip(events["time_ns"], node, ports.is_switch[port], ports.local_index[port], events["pause"],
                 strict=True)]
    path = Path(path)
    path.write_text("".join(line + "\n" for line in lines))
    return path
