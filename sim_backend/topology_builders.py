"""The named topologies: incast star, dumbbell, leaf-spine, fat-tree, and the HPCC simulator's file format.

Each builder checks its arguments (human units accepted for rates and delays) and returns a
:class:`~ecngym.sim_backend.topology.Topology`; ``Topology.from_config`` picks one by its ``kind``.
:mod:`ecngym.sim_backend.topology` re-exports them (``topology.leaf_spine(...)``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from pydantic import model_validator

from ecngym.error import ConfigError
from ecngym.sim_backend.topology import MAX_LINK_DELAY_NS, SwitchLayer, Topology, _check_memory
from ecngym.units import parse_rate_bps
from ecngym.validation import ConfigModel, Duration, Rate, Text, Whole, check, field_error, range_text

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
    _check_memory(f"leaf_spine({nl}x{ns}x{hpl})", n, nl + ns, n + nl * ns)
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
    from ecngym.sim_backend.hpcc_flow_file import whole_token  # (lazily: it imports pandas)

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
