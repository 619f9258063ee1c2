"""Bring an HPCC-simulator experiment over: its ``config.txt``, topology and flow files, FCT output.

The HPCC RDMA model on ns-3 (docs: concepts/prior-art.md §3.1) is run as
``third config.txt``; the config is one ``KEY value...`` per line (its ``mix/config_doc.txt``).
:func:`load_hpcc_experiment` reads such a file and returns the fabric config, topology and flows it
names, with the derivations the reference program (``scratch/third.cc``) applies:

- per switch port: ECN thresholds by link rate (``KMIN_MAP`` / ``KMAX_MAP`` / ``PMAX_MAP``, KB =
  1000 B: ``fabric.aqm.all.by_rate`` of RED marking at dequeue), PFC headroom 3 x rate x delay,
  PFC alpha 1/8 doubled per halving of the port's rate down to the NIC rate
  (``ecngym.sim_backend.port_settings``);
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

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ecngym.error import ConfigError
from ecngym.sim_backend.config import FabricConfig
from ecngym.sim_backend.hpcc_flow_file import read_hpcc_flow_file
from ecngym.sim_backend.hpcc_keys import DEFAULTS, read_hpcc_keys, stop_ns
from ecngym.sim_backend.topology import Topology, from_hpcc_file


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
    config = FabricConfig.from_hpcc_keys(keys, str(path))
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
                          stop_ns=stop_ns(keys, str(path)),
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
