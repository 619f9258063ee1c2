"""Datacenter topologies as node / link tables the fabric builds from.

Hosts come first (host ``i`` is node ``i``), then switches. Every switch has a *layer* name
(``tor``, ``leaf``, ``spine``, ``edge``, ``agg``, ``core``) so that controllers can act per layer.
Rates and delays accept human units.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from pydantic import BeforeValidator, model_validator

from ecngym.error import ConfigError, first_offending
from ecngym.sim_backend.flow_checks import check_rows
from ecngym.sim_backend.hpcc_flow_file import whole_token
from ecngym.sim_backend.topology_checks import (
    MAX_NODE_ID,
    MAX_SWITCH_PORTS,
    check_distinct,
    check_memory,
    checked_array,
    id_ranges,
    reached,
)
from ecngym.units import MAX_RATE_BPS, MIN_RATE_BPS, parse_rate_bps
from ecngym.validation import (
    ConfigModel,
    Duration,
    OneOf,
    Rate,
    Text,
    Whole,
    check,
    check_whole,
    convert,
    field_error,
    plain,
    range_text,
)

#: The layer of a host NIC's port in port tables (:meth:`Topology.port_table`, the fabric's ``PortTable``).
HOST_LAYER = "host"
#: The layer selector meaning every switch layer (a ``fabric.aqm`` key).
ALL_LAYERS = "all"


def _layer_name(value: Any) -> str:
    """A switch layer's name, checked (:data:`SwitchLayer`).

    Raises:
        ValueError: For a value that is no string, an empty (or blank) name, or a reserved one:
            a layer so named would take host ports into its port selection, or be unreachable
            behind ``fabric.aqm``'s ``all``.
    """
    name = convert(value, Text)
    if not name.strip():
        raise ValueError(f"got {name!r}, expected a layer name (e.g. 'tor', 'spine')")
    if name in (HOST_LAYER, ALL_LAYERS):
        raise ValueError(f"got {name!r}, a reserved name ({HOST_LAYER!r} is the layer of host ports, "
                         f"{ALL_LAYERS!r} selects every switch layer, e.g. in fabric.aqm); allowed: any other name")
    return name


#: A switch layer's name: a non-blank string other than :data:`HOST_LAYER` and :data:`ALL_LAYERS`.
SwitchLayer = Annotated[str, BeforeValidator(_layer_name)]


@dataclass
class Topology:
    """Nodes and full-duplex links.

    Attributes:
        name: Short description ("leaf_spine(4x4x4)").
        num_hosts: Hosts are nodes ``0 .. num_hosts-1``.
        switch_layers: Layer name of each switch, in switch order (node ``num_hosts + i``).
        link_a, link_b: Node indices of each link's ends.
        rate_bps: Rate of each link (bits/s).
        delay_ns: One-way propagation delay of each link (ns).
        params: The builder's parameters; ``node_ids`` (one per node), if given, is :meth:`node_ids`.

    Construction checks every field (a hand-built topology skips the builders' checks) and stores
    the link arrays in the fabric's dtypes (``uint32`` ends, ``float64`` rates, ``int64`` delays).
    How the links join the nodes (one link per host, a path between every two hosts ...) is
    checked by :meth:`check_buildable`, which the fabric calls before it builds.

    Raises:
        ConfigError: Naming the field (``topology.link_a[3]``), what was given and what is allowed:
            a count that is not a whole number, layers that are not a list of layer names (a blank
            name, or a reserved one: :data:`HOST_LAYER`, :data:`ALL_LAYERS`), a link array
            that is not a flat array of numbers (integers for ends and delays) of one length per
            link, a link end outside the nodes, a rate outside [1, 1e15] bit/s, a delay outside
            [0, :data:`MAX_LINK_DELAY_NS`] ns, or ``params["node_ids"]`` that are not one distinct
            id in [0, 2^32) per node.
    """

    name: str
    num_hosts: int
    switch_layers: list[str]
    link_a: np.ndarray
    link_b: np.ndarray
    rate_bps: np.ndarray
    delay_ns: np.ndarray
    params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.num_hosts = check_whole("topology.num_hosts", self.num_hosts, 0, MAX_NODE_ID)
        self.switch_layers = check("topology.switch_layers", self.switch_layers, list[SwitchLayer])
        if not isinstance(self.params, dict):
            raise ConfigError("topology.params", f"expected a dict, got {self.params!r}")
        last_node = min(self.num_nodes - 1, MAX_NODE_ID)
        self.link_a = checked_array("topology.link_a", self.link_a, np.uint32, 0, last_node)
        links = len(self.link_a)
        self.link_b = checked_array("topology.link_b", self.link_b, np.uint32, 0, last_node, links)
        self.rate_bps = checked_array("topology.rate_bps", self.rate_bps, np.float64, MIN_RATE_BPS, MAX_RATE_BPS,
                                       links)
        self.delay_ns = checked_array("topology.delay_ns", self.delay_ns, np.int64, 0, MAX_LINK_DELAY_NS, links)
        if self.params.get("node_ids") is not None:
            ids = checked_array("topology.params.node_ids", self.params["node_ids"], np.uint32, 0, MAX_NODE_ID,
                                 self.num_nodes, per="node")
            check_distinct("topology.params.node_ids", ids)

    @property
    def num_switches(self) -> int:
        """Number of switches."""
        return len(self.switch_layers)

    @property
    def num_nodes(self) -> int:
        """Hosts plus switches."""
        return self.num_hosts + self.num_switches

    def node_ids(self) -> np.ndarray:
        """Each of our nodes' id in the file the topology was read from (identity otherwise).

        The one home of the mapping: an HPCC topology file may number switches between hosts,
        while our nodes are hosts first. Its flow files name hosts by these ids, the HPCC model
        derives IPs (its ECMP hash, its FCT file) from them and seeds each switch's hash with them.
        """
        ids = self.params.get("node_ids")
        return np.arange(self.num_nodes, dtype=np.int64) if ids is None else np.asarray(ids, dtype=np.int64)

    def hosts_of_node_ids(self, ids: Any, field_name: str) -> np.ndarray:
        """Our host index of each file node id in ``ids`` (inverse of :meth:`node_ids` on hosts).

        A binary search in the sorted host ids: memory and time grow with the hosts and ``ids``,
        not with the largest id (node ids go up to 2^32 - 1).

        Raises:
            ConfigError: Naming ``field_name``, the first row whose id is not a host of this
                topology and how many more rows are so (:func:`~ecngym.sim_backend.flow_checks.check_rows`).
        """
        ids = np.asarray(ids, dtype=np.int64)
        host_ids = self.node_ids()[: self.num_hosts]
        order = np.argsort(host_ids)
        sorted_ids = host_ids[order]
        at = np.searchsorted(sorted_ids, ids)
        found = at < len(sorted_ids)
        found[found] = sorted_ids[at[found]] == ids[found]
        check_rows(field_name, ~found, lambda row: f"node {int(ids[row])} is not a host of {self.name} "
                                                   f"(hosts: {id_ranges(host_ids)})")
        return order[at].astype(np.int64)

    def port_table(self) -> dict[str, np.ndarray]:
        """The ports as the fabric numbers them: link l has ports 2l (at ``link_a``) and 2l + 1.

        Returns:
            Per port id: ``node`` (the node it belongs to), ``peer`` (the node at the link's other
            end), ``rate_bps``, ``is_switch`` and ``layer`` (the switch layer, :data:`HOST_LAYER` for a NIC).
        """
        node = np.empty(2 * len(self.link_a), dtype=np.int64)
        node[0::2], node[1::2] = self.link_a, self.link_b
        peer = np.empty_like(node)
        peer[0::2], peer[1::2] = self.link_b, self.link_a
        rate = np.repeat(np.asarray(self.rate_bps, dtype=np.float64), 2)
        is_switch = node >= self.num_hosts
        layers = np.array(list(self.switch_layers) + [HOST_LAYER], dtype=object)
        layer = layers[np.where(is_switch, node - self.num_hosts, len(self.switch_layers))]
        return {"node": node, "peer": peer, "rate_bps": rate, "is_switch": is_switch, "layer": layer}

    def is_switch(self) -> np.ndarray:
        """Return a uint8 array, 1 for switch nodes."""
        flags = np.zeros(self.num_nodes, dtype=np.uint8)
        flags[self.num_hosts :] = 1
        return flags

    def max_base_rtt_ns(self, mtu_payload_bytes: int = 1000) -> int:
        """The largest base RTT between two hosts, from the links alone (no fabric is built).

        A path's base RTT is HPCC's (Li et al., SIGCOMM 2019, §5): 2 x its propagation delay +
        one MTU payload's serialisation per hop, on the path the fabric routes (the first of the
        shortest ones). This is the env's base RTT (its unit ``"rtt"``, its step mapping's BDP),
        computed by the C++ path facts (``_fabric.max_base_rtt_ns``) with the env's rounding
        (``RttRounding.RUNNING_HALF_EVEN``: the hops' terms added in one double, rounded once,
        half to even; sim_backend/model/path-facts.h says why the fabric has others).

        Args:
            mtu_payload_bytes: The payload whose serialisation each hop adds (``fabric.mtu_payload``).

        Returns:
            The base RTT in whole ns; 0 without two hosts joined by a path.
        """
        from ecngym.sim_backend import _fabric

        return int(_fabric.max_base_rtt_ns(self.num_hosts, self.link_a, self.link_b, self.delay_ns, self.rate_bps,
                                           mtu_payload_bytes, _fabric.RttRounding.RUNNING_HALF_EVEN))

    def check_buildable(self, available_bytes: int | None = None) -> None:
        """Refuse a topology the fabric cannot build.

        Refused: a link whose two ends are one node, a host without exactly one link, a host that
        cannot reach every other host (:meth:`_structure_fault`), a switch beyond 65535 ports, or
        a topology whose estimated memory exceeds what this machine has available.

        The estimate is dominated by the per-destination tables: hop counts (4 B x hosts x nodes)
        and each switch's next-hop list per host (a vector header plus its smallest heap block,
        ~56 B x switches x hosts), plus ~2 KiB per port; it is a lower bound, so a refused build
        would certainly not fit.

        Args:
            available_bytes: Memory budget; default: ``MemAvailable`` of ``/proc/meminfo``.

        Raises:
            ConfigError: Naming ``topology.links[i]`` for a link that joins a node to itself or is
                a host's second link; else naming ``topology`` with what is wrong (a host without
                a link, hosts without a path between them, a switch's port count, the memory
                estimate and the budget).
        """
        fault = self._structure_fault(np.arange(self.num_nodes), lambda link: f"links[{link}]")
        if fault is not None:
            link, message = fault
            if link is None:
                raise ConfigError("topology", f"{self.name}: {message}")
            raise ConfigError(f"topology.links[{link}]", message)
        degree = np.bincount(np.concatenate([self.link_a, self.link_b]), minlength=self.num_nodes)
        if self.num_switches and degree[self.num_hosts :].max() > MAX_SWITCH_PORTS:
            sw = int(np.argmax(degree[self.num_hosts :]))
            raise ConfigError("topology", f"{self.name}: switch {sw} has {int(degree[self.num_hosts + sw])} "
                                          f"ports, allowed at most {MAX_SWITCH_PORTS}")
        check_memory(self.name, self.num_hosts, self.num_switches, len(self.link_a), available_bytes)

    def _structure_fault(self, node_ids: np.ndarray, link_name: Callable[[int], str]) -> tuple[int | None, str] | None:
        """The first rule on how the links join the nodes that this topology breaks, if any.

        The rules are the fabric builder's (``Fabric::Build`` in ``helper/fabric-builder.cc``), checked
        here so that a hand-built or file topology gets a ConfigError rather than the builder's
        bare ValueError: a link joins two different nodes, and every host has exactly one link.
        Then every host reaches every other host, which a flow between them needs (the fabric's
        ``SetFlows``): a link table that cuts hosts off is no datacenter fabric. Hosts do not
        forward, but with one link each a host is never on a path between two others, so a
        search over all nodes finds exactly the pairs the fabric's routes join.

        Args:
            node_ids: How a message names each node: its index, or its id in the topology file.
            link_name: How a message names link ``i`` (``links[3]``, or the file's ``line 5``).

        Returns:
            ``(link, message)``: the offending link (``None`` for a fault of no one link) and what
            is wrong; ``None`` if every rule holds.
        """
        a, b = self.link_a.astype(np.int64), self.link_b.astype(np.int64)
        loops = np.flatnonzero(a == b)
        if len(loops):
            i, more = first_offending(loops)
            return i, f"got node {int(node_ids[a[i]])} at both ends{more}; a link joins two different nodes"
        degree = np.bincount(np.concatenate([a, b]), minlength=self.num_nodes)
        odd = np.flatnonzero(degree[: self.num_hosts] != 1)
        if len(odd) and degree[odd[0]] == 0:
            lonely = odd[degree[odd] == 0]
            h, more = first_offending(lonely)
            return None, f"host {int(node_ids[h])}{more} has no link; each host needs exactly one link"
        if len(odd):
            h = int(odd[0])
            first, second = np.flatnonzero((a == h) | (b == h))[:2]
            return int(second), (f"a second link of host {int(node_ids[h])} (its first: {link_name(int(first))}); "
                                 "each host needs exactly one link (only switches have several)")
        if self.num_hosts > 1:
            cut_off = np.flatnonzero(~reached(self.num_nodes, a, b, 0)[: self.num_hosts])
            if len(cut_off):
                h, more = first_offending(cut_off)
                return None, (f"host {int(node_ids[h])}{more} cannot reach host {int(node_ids[0])}: no path over "
                              "the links (every host needs a path to every other)")
        return None

    @classmethod
    def from_config(cls, cfg: dict[str, Any]) -> Topology:
        """Build from a config mapping with a ``kind`` key and that builder's arguments.

        Raises:
            ConfigError: On an unknown kind or a bad argument.
        """
        cfg = plain(cfg)
        if not isinstance(cfg, dict):
            raise ConfigError("topology", f"expected a mapping with a 'kind' key, got {cfg!r}")
        kind = cfg.pop("kind", None)
        builders = {
            "incast_star": incast_star,
            "star": incast_star,
            "dumbbell": dumbbell,
            "leaf_spine": leaf_spine,
            "fat_tree": fat_tree,
            "hpcc_file": from_hpcc_file,
        }
        check("topology.kind", kind, OneOf(*sorted(builders)))
        try:
            return builders[kind](**cfg)
        except TypeError as exc:  # unknown or missing argument
            raise ConfigError("topology", f"bad arguments for {kind!r}: {exc}") from None


def _links(
    pairs: list[tuple[int, int, float, int]], name: str, num_hosts: int, layers: list[str], **params: Any
) -> Topology:
    arr = np.array([(a, b) for a, b, _, _ in pairs], dtype=np.uint32).reshape(-1, 2)
    return Topology(
        name=name,
        num_hosts=num_hosts,
        switch_layers=layers,
        link_a=np.ascontiguousarray(arr[:, 0]),
        link_b=np.ascontiguousarray(arr[:, 1]),
        rate_bps=np.array([r for _, _, r, _ in pairs], dtype=np.float64),
        delay_ns=np.array([d for _, _, _, d in pairs], dtype=np.int64),
        params=params,
    )


#: Longest link propagation delay accepted (1 s; the fabric sums delays along paths in int64 ns).
MAX_LINK_DELAY_NS = 1_000_000_000


#: A host / switch count of a generated topology.
Count = Whole(1, 100_000)
#: A link's one-way propagation delay (ns or a duration string), at most 1 s.
LinkDelay = Duration(0, MAX_LINK_DELAY_NS)


class _IncastStar(ConfigModel):
    hosts: Whole(2, 100_000)
    link_rate: Rate()
    link_delay: LinkDelay


class _Dumbbell(ConfigModel):
    left_hosts: Count
    right_hosts: Count
    host_rate: Rate()
    bottleneck_rate: Rate()
    link_delay: LinkDelay


class _LeafSpine(ConfigModel):
    leaves: Count
    spines: Count
    hosts_per_leaf: Count
    host_rate: Rate()
    fabric_rate: Rate()
    host_delay: LinkDelay
    fabric_delay: LinkDelay


#: Largest fat-tree arity (k = 64: 65,536 hosts, 5,120 switches).
MAX_FAT_TREE_K = 64


class _FatTree(ConfigModel):
    k: Whole(2, MAX_FAT_TREE_K)
    link_rate: Rate()
    link_delay: LinkDelay

    @model_validator(mode="after")
    def _even(self) -> _FatTree:
        if self.k % 2:
            raise field_error("k", f"got {self.k}, must be even")
        return self


class _HpccFile(ConfigModel):
    path: Text
    host_layer: SwitchLayer


#: Most nodes an HPCC topology file may declare.
MAX_FILE_NODES = 10**6


def _delay(name: str, value: Any) -> int:
    return check(name, value, LinkDelay)


def incast_star(hosts: int = 16, link_rate: Any = "100Gbps", link_delay: Any = "1us") -> Topology:
    """One switch with ``hosts`` hosts (the incast scenario, HPCC scenario A).

    Raises:
        ConfigError: If ``hosts`` < 2 or a rate / delay is malformed.
    """
    a = _IncastStar.parse({"hosts": hosts, "link_rate": link_rate, "link_delay": link_delay}, "topology")
    n, rate, delay = a.hosts, a.link_rate, a.link_delay
    pairs = [(h, n, rate, delay) for h in range(n)]
    return _links(pairs, f"incast_star({n})", n, ["tor"], hosts=n, link_rate=rate, link_delay=delay)


def dumbbell(
    left_hosts: int = 4,
    right_hosts: int = 1,
    host_rate: Any = "100Gbps",
    bottleneck_rate: Any = "100Gbps",
    link_delay: Any = "1us",
) -> Topology:
    """Two switches joined by one bottleneck link; hosts ``0..left-1`` on the left.

    Raises:
        ConfigError: On a bad count, rate or delay.
    """
    a = _Dumbbell.parse({"left_hosts": left_hosts, "right_hosts": right_hosts, "host_rate": host_rate,
                         "bottleneck_rate": bottleneck_rate, "link_delay": link_delay}, "topology")
    nl, nr, hr, br, d = a.left_hosts, a.right_hosts, a.host_rate, a.bottleneck_rate, a.link_delay
    n = nl + nr
    s_left, s_right = n, n + 1
    pairs = [(h, s_left, hr, d) for h in range(nl)]
    pairs += [(nl + h, s_right, hr, d) for h in range(nr)]
    pairs.append((s_left, s_right, br, d))
    return _links(pairs, f"dumbbell({nl}x{nr})", n, ["tor", "tor"], left_hosts=nl, right_hosts=nr)


def leaf_spine(
    leaves: int = 4,
    spines: int = 4,
    hosts_per_leaf: int = 4,
    host_rate: Any = "100Gbps",
    fabric_rate: Any = "100Gbps",
    host_delay: Any = "1us",
    fabric_delay: Any = "1us",
) -> Topology:
    """A two-tier Clos: every leaf connects to every spine (HPCC scenario C is 4 x 4 x 4).

    Oversubscription = hosts_per_leaf * host_rate / (spines * fabric_rate).

    Raises:
        ConfigError: On a bad count, rate or delay.
    """
    a = _LeafSpine.parse({"leaves": leaves, "spines": spines, "hosts_per_leaf": hosts_per_leaf,
                          "host_rate": host_rate, "fabric_rate": fabric_rate, "host_delay": host_delay,
                          "fabric_delay": fabric_delay}, "topology")
    nl, ns, hpl, hr, fr, hd, fd = (a.leaves, a.spines, a.hosts_per_leaf, a.host_rate, a.fabric_rate,
                                   a.host_delay, a.fabric_delay)
    n = nl * hpl
    # before the link list is built: its size is known from the counts, and 10^4 leaves x 10^5 hosts is 10^9 links
    check_memory(f"leaf_spine({nl}x{ns}x{hpl})", n, nl + ns, n + nl * ns)
    leaf0, spine0 = n, n + nl
    pairs = [(leaf * hpl + h, leaf0 + leaf, hr, hd) for leaf in range(nl) for h in range(hpl)]
    pairs += [(leaf0 + leaf, spine0 + s, fr, fd) for leaf in range(nl) for s in range(ns)]
    return _links(
        pairs,
        f"leaf_spine({nl}x{ns}x{hpl})",
        n,
        ["leaf"] * nl + ["spine"] * ns,
        leaves=nl,
        spines=ns,
        hosts_per_leaf=hpl,
        oversubscription=hpl * hr / (ns * fr),
    )


def fat_tree(k: int = 4, link_rate: Any = "100Gbps", link_delay: Any = "1us") -> Topology:
    """A k-ary fat-tree (Al-Fares et al.): k pods, k^3/4 hosts, 5k^2/4 switches.

    Raises:
        ConfigError: If ``k`` is not an even number in ``[2, MAX_FAT_TREE_K]``.
    """
    a = _FatTree.parse({"k": k, "link_rate": link_rate, "link_delay": link_delay}, "topology")
    k, rate, d = a.k, a.link_rate, a.link_delay
    half = k // 2
    n_hosts = k**3 // 4
    edge0 = n_hosts
    agg0 = edge0 + k * half
    core0 = agg0 + k * half
    pairs = []
    for pod in range(k):
        for e in range(half):
            edge = edge0 + pod * half + e
            for h in range(half):
                pairs.append(((pod * half + e) * half + h, edge, rate, d))
            for a in range(half):
                pairs.append((edge, agg0 + pod * half + a, rate, d))
        for a in range(half):
            for c in range(half):
                pairs.append((agg0 + pod * half + a, core0 + a * half + c, rate, d))
    layers = ["edge"] * (k * half) + ["agg"] * (k * half) + ["core"] * (half * half)
    return _links(pairs, f"fat_tree(k={k})", n_hosts, layers, k=k)


def from_hpcc_file(path: str | Path, host_layer: str = "tor") -> Topology:
    """Read the HPCC simulator's topology format.

    Line 1: ``nodes switches links``; line 2: the switch ids; then ``src dst rate delay error``.
    Non-switch nodes are hosts and keep their relative order. Switches directly attached to hosts
    get layer ``tor`` (or ``host_layer``), the others ``spine``.

    The format is read strictly: line 1 has exactly the three counts, line 2 exactly the switch ids
    (no line for no switches), then exactly one line per link, of 5 columns (or 4: an error rate
    left out is 0). Counts and node ids are whole numbers as in flow files (digits, maybe a minus:
    no ``+2``, no ``1_0``). Blank lines are skipped (line numbers in errors count them).

    The links must make a topology the fabric can build (:meth:`Topology.check_buildable`: no
    link from a node to itself, one link per host, a path between every two hosts), and join
    each pair of nodes at most once: the HPCC model keeps one interface per neighbour (its
    ``nbr2if``), so it would route over the last of two parallel links only, where our fabric
    would spread flows over both.

    Raises:
        ConfigError: Naming ``topology.host_layer`` if it is no layer name (:data:`SwitchLayer`);
            naming the file and line of a malformed entry; naming the file (and the line of the
            offending link, if one is) for links that break those rules.
    """
    a = _HpccFile.parse({"path": str(path) if isinstance(path, Path) else path, "host_layer": host_layer},
                        "topology")
    path = Path(a.path)
    host_layer = a.host_layer
    field_name = f"topology.path ({path})"
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:  # a binary file is no topology either
        raise ConfigError(field_name, f"cannot read: {exc}") from None
    # blank lines skipped, but counted in line numbers (as the flow-file reader's)
    lines = [(no, ln.split()) for no, ln in enumerate(text.splitlines(), start=1) if ln.strip()]
    if not lines:
        raise ConfigError(field_name, "empty file")
    header_no, header = lines[0]
    counts = [whole_token(x) for x in header]
    if len(header) != 3 or None in counts:
        raise ConfigError(field_name, f"line {header_no}: expected 'nodes switches links', 3 whole numbers, got "
                                      f"{' '.join(header)!r:.80}")
    n_nodes, n_switches, n_links = counts
    for what, n, low, high in (("nodes", n_nodes, 1, MAX_FILE_NODES), ("switches", n_switches, 0, n_nodes),
                               ("links", n_links, 0, None)):
        if not (low <= n and (high is None or n <= high)):
            raise ConfigError(field_name, f"line {header_no}: {what} got {n}, allowed range is "
                                          f"{range_text(low, high)}")
    # the switch ids' line (none for no switches: a blank line 2 is skipped as any blank line)
    switch_no, switch_tokens = lines[1] if n_switches and len(lines) > 1 else (header_no + 1, [])
    switch_ids = [whole_token(x) for x in switch_tokens]
    if len(switch_ids) != n_switches or None in switch_ids:
        raise ConfigError(field_name, f"line {switch_no}: expected the {n_switches} switch ids the header announces "
                                      f"(whole numbers), got {' '.join(switch_tokens)!r:.80}")
    if any(not 0 <= i < n_nodes for i in switch_ids) or len(set(switch_ids)) != n_switches:
        raise ConfigError(field_name, f"line {switch_no}: need distinct switch ids in [0, {n_nodes})")
    link_rows = lines[1 + bool(n_switches) :]
    if len(link_rows) != n_links:
        raise ConfigError(field_name, f"line {header_no}: header says {n_links} links, file has {len(link_rows)} "
                                      "link lines")
    is_sw = np.zeros(n_nodes, dtype=bool)
    is_sw[switch_ids] = True
    hosts = [i for i in range(n_nodes) if not is_sw[i]]
    order = hosts + switch_ids
    new_index = {old: new for new, old in enumerate(order)}
    pairs = []
    link_lines: list[int] = []  # the line of each link, for messages
    line_of_pair: dict[tuple[int, int], int] = {}
    for ln_no, parts in link_rows:
        expected = f"line {ln_no}: expected 'src dst rate delay error' (the error rate may be left out)"
        if len(parts) not in (4, 5):
            raise ConfigError(field_name, f"{expected}, got {len(parts)} columns: {' '.join(parts)!r:.80}")
        a, b = whole_token(parts[0]), whole_token(parts[1])
        if a is None or b is None:
            raise ConfigError(field_name, f"{expected} with whole-number node ids, got {' '.join(parts)!r:.80}")
        try:
            rate, delay = parse_rate_bps(parts[2], "rate"), _delay("delay", parts[3])
        except ConfigError as exc:  # (named as every other fault of the file: by the file, then the line)
            raise ConfigError(field_name, f"line {ln_no}: {exc}") from None
        try:
            error_rate = float(parts[4]) if len(parts) > 4 else 0.0
        except ValueError:
            raise ConfigError(field_name, f"{expected} with a number for the error rate, got "
                                          f"{parts[4]!r:.80}") from None
        if error_rate != 0:
            raise ConfigError(field_name, f"line {ln_no}: error rate {parts[4]}: random packet loss is not modelled")
        for node in (a, b):
            if node not in new_index:
                raise ConfigError(field_name, f"line {ln_no}: node {node} is not a node id in [0, {n_nodes})")
        pair = (min(a, b), max(a, b))
        if pair in line_of_pair:
            raise ConfigError(field_name, f"line {ln_no}: a second link between nodes {a} and {b} (the first is on "
                                          f"line {line_of_pair[pair]}); the HPCC model routes over one link per pair "
                                          "of neighbours")
        line_of_pair[pair] = ln_no
        link_lines.append(ln_no)
        pairs.append((new_index[a], new_index[b], rate, delay))
    host_set = set(range(len(hosts)))
    attached = {b for a, b, _, _ in pairs if a in host_set} | {a for a, b, _, _ in pairs if b in host_set}
    n_h = len(hosts)
    layers = [host_layer if (n_h + i) in attached else "spine" for i in range(n_switches)]
    # node_ids: the file's node id of each of our nodes (hosts first), for output in its numbering
    topo = _links(pairs, f"hpcc_file({path.name})", n_h, layers, path=str(path), node_ids=order)
    fault = topo._structure_fault(np.asarray(order), lambda link: f"line {link_lines[link]}")
    if fault is not None:
        link, message = fault
        raise ConfigError(field_name, message if link is None else f"line {link_lines[link]}: {message}")
    return topo
