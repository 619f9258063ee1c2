/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Fabric's builder: nodes and links, routes (ECMP next hops), path facts (base RTT, BDP), NIC
 * windows, the flow table, and the static facts of every port.
 */
#include "fabric.h"
#include "fabric-internal.h"

#include "../model/fast-random.h"

#include "ns3/simulator.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace ns3
{
namespace ecngym
{

namespace
{
constexpr double kMinRateBps = 1.0;          //!< below it the whole-bit/s rate would be 0
constexpr double kMaxRateBps = 1e15;         //!< 1 Pbit/s
constexpr int64_t kMaxLinkDelayNs = 1000000000; //!< 1 s: path sums stay far from int64 overflow
constexpr uint32_t kHpccFirstPort = 10000; //!< third.cc: each host pair's ports start here
} // namespace

void
Fabric::SetNodeIds(const std::vector<uint32_t>& ids)
{
    CheckAlive();
    if (m_built)
    {
        throw std::runtime_error("SetNodeIds() must come before Build()");
    }
    std::vector<uint32_t> sorted = ids;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    {
        throw std::invalid_argument("node_ids: ids must be distinct");
    }
    m_nodeId = ids;
}

void
Fabric::Build(const std::vector<uint8_t>& isSwitch,
              const std::vector<uint32_t>& linkA,
              const std::vector<uint32_t>& linkB,
              const std::vector<double>& rateBps,
              const std::vector<int64_t>& delayNs)
{
    CheckAlive();
    if (m_built)
    {
        throw std::runtime_error("Build() was already called on this Fabric");
    }
    ConfigureAqmBirth();
    const std::size_t nNodes = isSwitch.size();
    const std::size_t nLinks = linkA.size();
    if (m_nodeId.empty())
    {
        m_nodeId.resize(nNodes);
        std::iota(m_nodeId.begin(), m_nodeId.end(), 0U);
    }
    else if (m_nodeId.size() != nNodes)
    {
        throw std::invalid_argument("node_ids: " + std::to_string(m_nodeId.size()) + " ids for " +
                                    std::to_string(nNodes) + " nodes");
    }
    if (linkB.size() != nLinks || rateBps.size() != nLinks || delayNs.size() != nLinks)
    {
        throw std::invalid_argument("links: linkA, linkB, rateBps and delayNs differ in length");
    }
    m_isSwitch = isSwitch;
    m_nodeToHost.assign(nNodes, kNone);
    m_nodeToSwitch.assign(nNodes, kNone);
    m_nodePorts.assign(nNodes, {});
    std::vector<uint32_t> degree(nNodes, 0);
    for (std::size_t l = 0; l < nLinks; ++l)
    {
        if (linkA[l] >= nNodes || linkB[l] >= nNodes || linkA[l] == linkB[l])
        {
            throw std::invalid_argument(Where("links", l) + ": endpoints must be two different "
                                        "nodes in [0, " + std::to_string(nNodes) + ")");
        }
        // Ports keep the rate as a whole number of bit/s and divide by it; delays are summed
        // along paths: these bounds (also ecngym.units.MAX_RATE_BPS / topology's delay bound)
        // keep every such division and sum defined.
        if (!(rateBps[l] >= kMinRateBps && rateBps[l] <= kMaxRateBps) || delayNs[l] < 0 ||
            delayNs[l] > kMaxLinkDelayNs)
        {
            throw std::invalid_argument(Where("links", l) +
                                        ": rate must be in [1, 1e15] bit/s and delay in [0, 1e9] ns");
        }
        ++degree[linkA[l]];
        ++degree[linkB[l]];
    }
    for (std::size_t n = 0; n < nNodes; ++n)
    {
        if (!isSwitch[n] && degree[n] != 1)
        {
            throw std::invalid_argument(Where("nodes", n) + ": a host needs exactly one link, has " +
                                        std::to_string(degree[n]));
        }
        if (isSwitch[n] && degree[n] > 65535)
        {
            throw std::invalid_argument(Where("nodes", n) + ": too many ports");
        }
    }
    // Nodes
    std::vector<Ptr<Node>> nodes(nNodes);
    for (std::size_t n = 0; n < nNodes; ++n)
    {
        if (isSwitch[n])
        {
            m_nodeToSwitch[n] = static_cast<uint32_t>(m_switches.size());
            Ptr<SwitchNode> s = CreateObject<SwitchNode>();
            m_switches.push_back(s);
            nodes[n] = s;
        }
        else
        {
            m_nodeToHost[n] = static_cast<uint32_t>(m_hosts.size());
            m_hostNode.push_back(static_cast<uint32_t>(n));
            Ptr<RdmaHostNode> h = CreateObject<RdmaHostNode>();
            h->Setup(m_nodeToHost[n], m_ctx.get());
            m_hosts.push_back(h);
            nodes[n] = h;
        }
    }
    auto ownerOf = [&](uint32_t n) -> FabricPortOwner* {
        if (isSwitch[n])
        {
            return PeekPointer(m_switches[m_nodeToSwitch[n]]);
        }
        return PeekPointer(m_hosts[m_nodeToHost[n]]);
    };
    // Links: two ports and a channel each
    for (std::size_t l = 0; l < nLinks; ++l)
    {
        Ptr<FabricNetDevice> ends[2];
        const uint32_t ab[2] = {linkA[l], linkB[l]};
        for (int e = 0; e < 2; ++e)
        {
            const uint32_t n = ab[e];
            ends[e] = CreateObject<FabricNetDevice>();
            const uint32_t portId = static_cast<uint32_t>(m_ports.size());
            ends[e]->Setup(ownerOf(n),
                           portId,
                           static_cast<uint16_t>(m_nodePorts[n].size()),
                           rateBps[l],
                           m_ctx->cfg.numQueues,
                           &m_ctx->counters,
                           &m_ctx->pool);
            ends[e]->SetTruncateTxTime(m_ctx->cfg.truncateTxTime);
            ends[e]->SetAddress(Mac48Address::Allocate());
            nodes[n]->AddDevice(ends[e]);
            m_nodePorts[n].push_back(portId);
            m_ports.push_back(ends[e]);
            m_portNode.push_back(n);
        }
        Ptr<FabricChannel> ch = CreateObject<FabricChannel>();
        ch->Attach(ends[0], ends[1], delayNs[l]);
        ends[0]->SetChannel(ch);
        ends[1]->SetChannel(ch);
        ends[0]->SetPeer(PeekPointer(ends[1]));
        ends[1]->SetPeer(PeekPointer(ends[0]));
    }
    // The link rates INT records name by index (3 bits, as the HPCC model's fixed table of five).
    std::vector<double>& rates = m_ctx->cfg.hpcc.linkRates;
    rates.clear();
    for (std::size_t l = 0; l < nLinks; ++l)
    {
        if (std::find(rates.begin(), rates.end(), rateBps[l]) == rates.end())
        {
            rates.push_back(rateBps[l]);
        }
    }
    if (m_ctx->cfg.cc == CcKind::Hpcc && rates.size() > 8)
    {
        throw std::invalid_argument("links: HPCC's INT records name a link rate in 3 bits; this "
                                    "topology has " + std::to_string(rates.size()) +
                                    " different rates (at most 8)");
    }
    for (std::size_t n = 0; n < nNodes; ++n)
    {
        if (isSwitch[n])
        {
            std::vector<Ptr<FabricNetDevice>> ports;
            for (uint32_t pid : m_nodePorts[n])
            {
                ports.push_back(m_ports[pid]);
            }
            m_switches[m_nodeToSwitch[n]]->Setup(m_nodeToSwitch[n],
                                                 m_nodeId[n],
                                                 m_ctx.get(),
                                                 std::move(ports));
        }
        else
        {
            m_hosts[m_nodeToHost[n]]->SetPort(m_ports[m_nodePorts[n][0]]);
        }
    }
    ComputeRoutes();
    m_built = true;
}

void
Fabric::ComputeRoutes()
{
    const std::size_t nNodes = m_isSwitch.size();
    std::vector<std::vector<std::vector<uint16_t>>> routes(
        m_switches.size(),
        std::vector<std::vector<uint16_t>>(m_hosts.size()));
    m_hopsToHost.assign(m_hosts.size(), std::vector<uint32_t>(nNodes, kNone));
    for (std::size_t n = 0; n < nNodes; ++n)
    {
        if (m_isSwitch[n])
        {
            continue;
        }
        const uint32_t h = m_nodeToHost[n];
        std::vector<uint32_t>& dist = m_hopsToHost[h];
        // BFS from the destination host; only switches forward.
        std::deque<uint32_t> frontier{static_cast<uint32_t>(n)};
        dist[n] = 0;
        while (!frontier.empty())
        {
            const uint32_t u = frontier.front();
            frontier.pop_front();
            if (u != n && !m_isSwitch[u])
            {
                continue;
            }
            for (uint32_t pid : m_nodePorts[u])
            {
                const uint32_t v = m_portNode[m_ports[pid]->GetPeer()->GetPortId()];
                if (dist[v] == kNone)
                {
                    dist[v] = dist[u] + 1;
                    frontier.push_back(v);
                }
            }
        }
        for (std::size_t s = 0; s < nNodes; ++s)
        {
            if (!m_isSwitch[s] || dist[s] == kNone)
            {
                continue;
            }
            auto& next = routes[m_nodeToSwitch[s]][h];
            std::vector<std::pair<uint32_t, uint16_t>> byPeer; // (peer node, local port)
            for (uint32_t pid : m_nodePorts[s])
            {
                const uint32_t v = m_portNode[m_ports[pid]->GetPeer()->GetPortId()];
                if (dist[v] + 1 == dist[s] && (m_isSwitch[v] || v == n))
                {
                    byPeer.emplace_back(v, m_ports[pid]->GetLocalIndex());
                }
            }
            if (m_ctx->cfg.ecmpHash == EcmpHash::Hpcc)
            {
                // The HPCC model lists next hops in node order (its BFS visits neighbours so),
                // in its own (the topology file's) node ids.
                std::stable_sort(byPeer.begin(), byPeer.end(), [this](const auto& a, const auto& b) {
                    return m_nodeId[a.first] < m_nodeId[b.first];
                });
            }
            for (const auto& [peer, local] : byPeer)
            {
                next.push_back(local);
            }
        }
    }
    for (std::size_t s = 0; s < m_switches.size(); ++s)
    {
        m_switches[s]->SetRoutes(std::move(routes[s]));
    }
}

PathSum
Fabric::RoutedPath(uint32_t srcHost, uint32_t dstHost) const
{
    const uint32_t payload = m_ctx->cfg.mtuPayloadBytes;
    const std::vector<uint32_t>& dist = m_hopsToHost[dstHost];
    PathSum path;
    FabricNetDevice* port = m_hosts[srcHost]->GetPort();
    while (port != nullptr)
    {
        path = path.Then(port->GetFabricChannel()->GetDelayNs(), port->GetRateBps(), payload);
        const uint32_t v = m_portNode[port->GetPeer()->GetPortId()];
        if (!m_isSwitch[v])
        {
            break;
        }
        FabricNetDevice* next = nullptr;
        for (uint32_t pid : m_nodePorts[v])
        {
            const uint32_t w = m_portNode[m_ports[pid]->GetPeer()->GetPortId()];
            if (dist[w] + 1 == dist[v] && (m_isSwitch[w] || m_nodeToHost[w] == dstHost))
            {
                next = PeekPointer(m_ports[pid]);
                break;
            }
        }
        port = next;
    }
    return path;
}

void
Fabric::ComputePathFacts(QueuePair& qp) const
{
    const FabricConfig& cfg = m_ctx->cfg;
    const PathSum path = RoutedPath(qp.srcHost, qp.dstHost);
    qp.lineRateBps = m_hosts[qp.srcHost]->GetPort()->GetRateBps();
    // HPCC's definitions (README of the reference runs), so slowdowns compare directly.
    qp.bottleneckBps = path.BottleneckBps();
    qp.baseRttNs = path.BaseRttNs(RttRounding::RoundedOnce);
    const uint64_t packets = (qp.sizeBytes + cfg.mtuPayloadBytes - 1) / cfg.mtuPayloadBytes;
    qp.idealFctNs = static_cast<double>(qp.baseRttNs) +
                    (qp.sizeBytes + static_cast<double>(cfg.dataHeaderBytes) * packets) * 8e9 /
                        qp.bottleneckBps;
}

void
Fabric::PairRttAndBdp(uint32_t srcHost, uint32_t dstHost, int64_t& rttNs, uint64_t& bdpBytes) const
{
    // As the HPCC model's CalculateRoute: integer arithmetic throughout, BDP = RTT x bottleneck.
    const PathSum path = RoutedPath(srcHost, dstHost);
    rttNs = path.BaseRttNs(RttRounding::PerHopTruncated);
    bdpBytes = BdpBytesWhole(static_cast<uint64_t>(rttNs), static_cast<uint64_t>(path.BottleneckBps()));
}

void
Fabric::SetWindows()
{
    const FabricConfig& cfg = m_ctx->cfg;
    if (cfg.cc == CcKind::Hpcc && !cfg.nicWindow)
    {
        throw std::invalid_argument("HPCC needs the NIC window (its INT arithmetic divides by it)");
    }
    if (!cfg.nicWindow && cfg.cc != CcKind::Hpcc)
    {
        return;
    }
    for (QueuePair& qp : m_ctx->flows)
    {
        SetWindow(qp);
    }
}

void
Fabric::SetWindow(QueuePair& qp)
{
    const FabricConfig& cfg = m_ctx->cfg;
    if (!cfg.nicWindow && cfg.cc != CcKind::Hpcc)
    {
        return;
    }
    int64_t rtt;
    uint64_t bdp;
    if (cfg.windowGlobal)
    {
        if (!m_windowBoundsSet)
        {
            // GLOBAL_T 1: the largest over every ordered pair of hosts (computed once: routes
            // do not change while the fabric runs)
            const uint32_t nHosts = NumHosts();
            for (uint32_t s = 0; s < nHosts; ++s)
            {
                for (uint32_t d = 0; d < nHosts; ++d)
                {
                    if (s == d || m_hopsToHost[d][m_hostNode[s]] == kNone)
                    {
                        continue;
                    }
                    int64_t pairRtt;
                    uint64_t pairBdp;
                    PairRttAndBdp(s, d, pairRtt, pairBdp);
                    m_windowMaxRttNs = std::max(m_windowMaxRttNs, pairRtt);
                    m_windowMaxBdpBytes = std::max(m_windowMaxBdpBytes, pairBdp);
                }
            }
            m_windowBoundsSet = true;
        }
        rtt = m_windowMaxRttNs;
        bdp = m_windowMaxBdpBytes;
    }
    else
    {
        PairRttAndBdp(qp.srcHost, qp.dstHost, rtt, bdp);
    }
    qp.nicWindowBytes = cfg.nicWindow ? bdp : 0;
    qp.varWindow = cfg.varWindow;
    qp.ccBaseRttNs = rtt;
}

void
Fabric::CheckFlowRows(const std::vector<uint32_t>& src,
                      const std::vector<uint32_t>& dst,
                      const std::vector<uint64_t>& sizeBytes,
                      const std::vector<int64_t>& startNs,
                      const std::vector<uint8_t>& queue,
                      const std::vector<uint16_t>& dstPort) const
{
    const std::size_t n = src.size();
    if (dst.size() != n || sizeBytes.size() != n || startNs.size() != n || queue.size() != n ||
        dstPort.size() != n)
    {
        throw std::invalid_argument("flows: src, dst, size_bytes, start_ns, priority, dport differ "
                                    "in length");
    }
    const uint32_t nHosts = NumHosts();
    const int64_t now = NowNs();
    for (std::size_t i = 0; i < n; ++i)
    {
        if (src[i] >= nHosts || dst[i] >= nHosts)
        {
            throw std::invalid_argument(Where("flows", i) + ": src and dst must be host indices in "
                                        "[0, " + std::to_string(nHosts) + ")");
        }
        if (src[i] == dst[i])
        {
            throw std::invalid_argument(Where("flows", i) + ": src and dst are the same host");
        }
        if (sizeBytes[i] == 0)
        {
            throw std::invalid_argument(Where("flows", i) + ": size_bytes must be > 0");
        }
        if (startNs[i] < now)
        {
            throw std::invalid_argument(Where("flows", i) + ": start_ns (" + std::to_string(startNs[i]) +
                                        ") is in the past (now: " + std::to_string(now) + ")");
        }
        if (queue[i] < 1 || queue[i] >= m_ctx->cfg.numQueues)
        {
            throw std::invalid_argument(Where("flows", i) + ": priority must be in [1, " +
                                        std::to_string(m_ctx->cfg.numQueues - 1) +
                                        "] (queue 0 is the control queue)");
        }
        if (m_hopsToHost[dst[i]][m_hostNode[src[i]]] == kNone)
        {
            throw std::invalid_argument(Where("flows", i) + ": no path from src to dst");
        }
    }
}

void
Fabric::InitFlow(QueuePair& qp,
                 uint32_t flowId,
                 uint32_t src,
                 uint32_t dst,
                 uint64_t sizeBytes,
                 int64_t startNs,
                 uint8_t queue,
                 uint16_t dstPort,
                 std::unordered_map<uint64_t, uint32_t>& pairFlows) const
{
    qp.flowId = flowId;
    qp.srcHost = src;
    qp.dstHost = dst;
    qp.sizeBytes = sizeBytes;
    qp.startNs = startNs;
    qp.queue = queue;
    qp.flowHash = static_cast<uint32_t>(SplitMix64(m_ctx->cfg.seed * 0x9E3779B97F4A7C15ULL + flowId));
    // HPCC addressing (EcmpHash::Hpcc): its node-id-derived IPs, per-pair source ports
    const auto hpccIp = [](uint32_t node) {
        return 0x0b000001U + (node / 256) * 0x00010000U + (node % 256) * 0x00000100U;
    };
    qp.srcAddr = hpccIp(m_nodeId[m_hostNode[qp.srcHost]]);
    qp.dstAddr = hpccIp(m_nodeId[m_hostNode[qp.dstHost]]);
    qp.srcPort = static_cast<uint16_t>(
        kHpccFirstPort + pairFlows[(static_cast<uint64_t>(qp.srcHost) << 32) | qp.dstHost]++);
    qp.dstPort = dstPort;
    ComputePathFacts(qp);
}

void
Fabric::SetFlows(const std::vector<uint32_t>& src,
                 const std::vector<uint32_t>& dst,
                 const std::vector<uint64_t>& sizeBytes,
                 const std::vector<int64_t>& startNs,
                 const std::vector<uint8_t>& queue,
                 const std::vector<uint16_t>& dstPort)
{
    CheckAlive();
    if (!m_built)
    {
        throw std::runtime_error("call Build() before SetFlows()");
    }
    if (!m_ctx->flows.empty())
    {
        throw std::runtime_error("SetFlows() was already called on this Fabric");
    }
    CheckFlowRows(src, dst, sizeBytes, startNs, queue, dstPort);
    const std::size_t n = src.size();
    m_ctx->flows.resize(n);
    std::unordered_map<uint64_t, uint32_t> pairFlows; // (src, dst) -> flows so far
    for (std::size_t i = 0; i < n; ++i)
    {
        InitFlow(m_ctx->flows[i],
                 static_cast<uint32_t>(i),
                 src[i],
                 dst[i],
                 sizeBytes[i],
                 startNs[i],
                 queue[i],
                 dstPort[i],
                 pairFlows);
    }
    SetWindows();
    m_flowOrder.resize(n);
    std::iota(m_flowOrder.begin(), m_flowOrder.end(), 0);
    std::stable_sort(m_flowOrder.begin(), m_flowOrder.end(), [&](uint32_t a, uint32_t b) {
        return startNs[a] < startNs[b];
    });
    m_nextFlow = 0;
    ScheduleNextStart();
}

void
Fabric::SetFlowExtraDelay(const std::vector<int64_t>& extraDelayNs)
{
    CheckAlive();
    if (extraDelayNs.size() != m_ctx->flows.size())
    {
        throw std::invalid_argument("extra_delay_ns: expected one entry per flow (" +
                                    std::to_string(m_ctx->flows.size()) + "), got " +
                                    std::to_string(extraDelayNs.size()));
    }
    if (m_ctx->flowsStarted > 0 || m_nextFlow > 0)
    {
        throw std::runtime_error("extra delays must be set before the first flow starts");
    }
    for (std::size_t i = 0; i < extraDelayNs.size(); ++i)
    {
        if (extraDelayNs[i] < 0)
        {
            throw std::invalid_argument(Where("extra_delay_ns", i) + ": must be >= 0");
        }
    }
    for (std::size_t i = 0; i < extraDelayNs.size(); ++i)
    {
        QueuePair& qp = m_ctx->flows[i];
        qp.baseRttNs += extraDelayNs[i] - qp.extraDelayNs;
        qp.idealFctNs += static_cast<double>(extraDelayNs[i] - qp.extraDelayNs);
        qp.extraDelayNs = extraDelayNs[i];
    }
}

std::vector<uint32_t>
Fabric::PortNode() const
{
    return m_portNode;
}

std::vector<uint32_t>
Fabric::PortPeerNode() const
{
    return PortColumn<uint32_t>([this](std::size_t i) {
        return m_portNode[m_ports[i]->GetPeer()->GetPortId()];
    });
}

std::vector<uint16_t>
Fabric::PortLocalIndex() const
{
    return PortColumn<uint16_t>([this](std::size_t i) { return m_ports[i]->GetLocalIndex(); });
}

std::vector<uint8_t>
Fabric::PortIsSwitch() const
{
    return PortColumn<uint8_t>([this](std::size_t i) { return m_isSwitch[m_portNode[i]]; });
}

std::vector<double>
Fabric::PortRateBps() const
{
    return PortColumn<double>([this](std::size_t i) { return m_ports[i]->GetRateBps(); });
}

std::vector<uint32_t>
Fabric::PortSwitchIndex() const
{
    return PortColumn<uint32_t>([this](std::size_t i) { return m_nodeToSwitch[m_portNode[i]]; });
}

} // namespace ecngym
} // namespace ns3
