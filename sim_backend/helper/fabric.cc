/* SPDX-License-Identifier: GPL-2.0-only */
#include "fabric.h"

#include "attribute-reflection.h"

#include "../model/fast-random.h"
#include "../model/timing-wheel-scheduler.h"

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/global-value.h"
#include "ns3/nstime.h"
#include "ns3/object-factory.h"
#include "ns3/scheduler.h"
#include "ns3/string.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace ns3
{
namespace ecngym
{

namespace
{
bool g_fabricAlive = false;
constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
constexpr double kMinRateBps = 1.0;          //!< below it the whole-bit/s rate would be 0
constexpr double kMaxRateBps = 1e15;         //!< 1 Pbit/s
constexpr int64_t kMaxLinkDelayNs = 1000000000; //!< 1 s: path sums stay far from int64 overflow
constexpr uint32_t kHpccFirstPort = 10000; //!< third.cc: each host pair's ports start here

void
StopSimulator()
{
    Simulator::Stop();
}

uint64_t g_bareEventsLeft = 0;

void
BareTick()
{
    if (--g_bareEventsLeft > 0)
    {
        Simulator::Schedule(NanoSeconds(1), &BareTick);
    }
}

/**
 * @brief Make the simulator use the named event scheduler.
 * @param typeId an ns-3 TypeId name of a Scheduler subclass
 * @throws std::invalid_argument if there is no such scheduler
 */
void
UseScheduler(const std::string& typeId)
{
    TypeId tid;
    if (!TypeId::LookupByNameFailSafe(typeId, &tid) || !tid.IsChildOf(Scheduler::GetTypeId()) ||
        !tid.HasConstructor())
    {
        throw std::invalid_argument("scheduler: " + typeId + " is not an ns-3 event scheduler");
    }
    // The simulator core: ours with the timing wheel, ns-3's DefaultSimulatorImpl with the stock
    // schedulers (so that comparing schedulers compares against stock ns-3 as a whole). ns-3 reads
    // the type when it creates the implementation, after Simulator::Destroy() has deleted the last
    // one; no fabric is alive here, so nothing else uses the simulator.
    Simulator::Destroy();
    GlobalValue::Bind("SimulatorImplementationType",
                      StringValue(tid == TimingWheelScheduler::GetTypeId()
                                      ? "ns3::ecngym::FabricSimulatorImpl"
                                      : "ns3::DefaultSimulatorImpl"));
    ObjectFactory scheduler;
    scheduler.SetTypeId(tid);
    if (tid == TimingWheelScheduler::GetTypeId())
    {
        // The model reads the time from it (TimingWheelScheduler::NowNs()).
        scheduler.Set("PublishClock", BooleanValue(true));
    }
    Simulator::SetScheduler(scheduler);
}

std::string
Where(const char* what, std::size_t i)
{
    return std::string(what) + "[" + std::to_string(i) + "]";
}

/**
 * The checks set_pfc and set_port_pfc share: the three arrays have one entry per id, every id
 * passes \p idError (an empty string) and every alpha is > 0, reported in index order.
 *
 * \param call the Python method's name, for the length error.
 * \param idsName the ids' argument name.
 * \param idError for an id, the reason it is refused, or "" if it is a valid one.
 */
template <typename IdError>
void
CheckPfcEntries(const char* call,
                const char* idsName,
                const std::vector<uint32_t>& ids,
                const std::vector<double>& alpha,
                const std::vector<uint64_t>& headroomBytes,
                IdError idError)
{
    const std::size_t n = ids.size();
    if (alpha.size() != n || headroomBytes.size() != n)
    {
        throw std::invalid_argument(std::string(call) + ": " + idsName + ", alpha, headroom differ in length");
    }
    for (std::size_t i = 0; i < n; ++i)
    {
        const std::string reason = idError(ids[i]);
        if (!reason.empty())
        {
            throw std::invalid_argument(Where(idsName, i) + ": " + reason);
        }
        if (!(alpha[i] > 0))
        {
            throw std::invalid_argument(Where("alpha", i) + ": must be > 0");
        }
    }
}
} // namespace

Fabric::Fabric(const FabricConfig& cfg)
{
    if (g_fabricAlive)
    {
        throw std::runtime_error(
            "a Fabric already exists in this process: ns-3's simulator is a process-wide "
            "singleton; destroy the old fabric first (or use one process per fabric)");
    }
    if (Time::GetResolution() != Time::NS)
    {
        throw std::runtime_error("the fabric needs ns-3's default nanosecond time resolution");
    }
    UseScheduler(cfg.schedulerTypeId);
    g_fabricAlive = true;
    m_ctx = std::make_unique<FabricContext>();
    m_ctx->cfg = cfg;
    // only HPCC's switches write INT records (SwitchNode::NotifyDequeue)
    m_ctx->pool.SetCarriesInt(cfg.cc == CcKind::Hpcc);
}

Fabric::~Fabric()
{
    Destroy();
}

void
Fabric::CheckAlive() const
{
    if (m_destroyed)
    {
        throw std::runtime_error("this Fabric has been destroyed");
    }
}

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

void
Fabric::ComputePathFacts(QueuePair& qp) const
{
    const FabricConfig& cfg = m_ctx->cfg;
    const std::vector<uint32_t>& dist = m_hopsToHost[qp.dstHost];
    FabricNetDevice* port = m_hosts[qp.srcHost]->GetPort();
    qp.lineRateBps = port->GetRateBps();
    double minRate = qp.lineRateBps;
    int64_t delaySum = 0;
    double serialisationNs = 0;
    // Follow one shortest path (all ECMP paths have the same hop count).
    while (true)
    {
        delaySum += port->GetFabricChannel()->GetDelayNs();
        minRate = std::min(minRate, port->GetRateBps());
        serialisationNs += cfg.mtuPayloadBytes * 8e9 / port->GetRateBps();
        const uint32_t v = m_portNode[port->GetPeer()->GetPortId()];
        if (!m_isSwitch[v])
        {
            break;
        }
        FabricNetDevice* next = nullptr;
        for (uint32_t pid : m_nodePorts[v])
        {
            const uint32_t w = m_portNode[m_ports[pid]->GetPeer()->GetPortId()];
            if (dist[w] + 1 == dist[v] && (m_isSwitch[w] || m_nodeToHost[w] == qp.dstHost))
            {
                next = PeekPointer(m_ports[pid]);
                break;
            }
        }
        port = next;
    }
    // HPCC's definitions (README of the reference runs), so slowdowns compare directly.
    qp.bottleneckBps = minRate;
    qp.baseRttNs = 2 * delaySum + static_cast<int64_t>(std::llround(serialisationNs));
    const uint64_t packets = (qp.sizeBytes + cfg.mtuPayloadBytes - 1) / cfg.mtuPayloadBytes;
    qp.idealFctNs = static_cast<double>(qp.baseRttNs) +
                    (qp.sizeBytes + static_cast<double>(cfg.dataHeaderBytes) * packets) * 8e9 /
                        minRate;
}

void
Fabric::PairRttAndBdp(uint32_t srcHost, uint32_t dstHost, int64_t& rttNs, uint64_t& bdpBytes) const
{
    // As the HPCC model's CalculateRoute: 2 x propagation + per-hop serialisation of one payload,
    // each hop's in whole ns; BDP = RTT x bottleneck rate, integer arithmetic throughout.
    const std::vector<uint32_t>& dist = m_hopsToHost[dstHost];
    FabricNetDevice* port = m_hosts[srcHost]->GetPort();
    const uint64_t payload = m_ctx->cfg.mtuPayloadBytes;
    uint64_t delay = 0, txDelay = 0;
    uint64_t bw = UINT64_MAX;
    while (port != nullptr)
    {
        const uint64_t rate = static_cast<uint64_t>(port->GetRateBps());
        delay += port->GetFabricChannel()->GetDelayNs();
        txDelay += payload * 1000000000ULL * 8 / rate;
        bw = std::min(bw, rate);
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
    const uint64_t rtt = delay * 2 + txDelay;
    rttNs = static_cast<int64_t>(rtt);
    bdpBytes = static_cast<uint64_t>(static_cast<unsigned __int128>(rtt) * bw / 1000000000ULL / 8);
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
    int64_t maxRtt = 0;
    uint64_t maxBdp = 0;
    if (cfg.windowGlobal)
    {
        // GLOBAL_T 1: the largest over every ordered pair of hosts
        const uint32_t nHosts = NumHosts();
        for (uint32_t s = 0; s < nHosts; ++s)
        {
            for (uint32_t d = 0; d < nHosts; ++d)
            {
                if (s == d || m_hopsToHost[d][m_hostNode[s]] == kNone)
                {
                    continue;
                }
                int64_t rtt;
                uint64_t bdp;
                PairRttAndBdp(s, d, rtt, bdp);
                maxRtt = std::max(maxRtt, rtt);
                maxBdp = std::max(maxBdp, bdp);
            }
        }
    }
    for (QueuePair& qp : m_ctx->flows)
    {
        int64_t rtt = maxRtt;
        uint64_t bdp = maxBdp;
        if (!cfg.windowGlobal)
        {
            PairRttAndBdp(qp.srcHost, qp.dstHost, rtt, bdp);
        }
        qp.nicWindowBytes = cfg.nicWindow ? bdp : 0;
        qp.varWindow = cfg.varWindow;
        qp.ccBaseRttNs = rtt;
    }
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
            throw std::invalid_argument(Where("flows", i) + ": start_ns is in the past");
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
    m_ctx->flows.resize(n);
    std::unordered_map<uint64_t, uint32_t> pairFlows; // (src, dst) -> flows so far
    for (std::size_t i = 0; i < n; ++i)
    {
        QueuePair& qp = m_ctx->flows[i];
        qp.flowId = static_cast<uint32_t>(i);
        qp.srcHost = src[i];
        qp.dstHost = dst[i];
        qp.sizeBytes = sizeBytes[i];
        qp.startNs = startNs[i];
        qp.queue = queue[i];
        qp.flowHash = static_cast<uint32_t>(SplitMix64(m_ctx->cfg.seed * 0x9E3779B97F4A7C15ULL + i));
        // HPCC addressing (EcmpHash::Hpcc): its node-id-derived IPs, per-pair source ports
        const auto hpccIp = [](uint32_t node) {
            return 0x0b000001U + (node / 256) * 0x00010000U + (node % 256) * 0x00000100U;
        };
        qp.srcAddr = hpccIp(m_nodeId[m_hostNode[qp.srcHost]]);
        qp.dstAddr = hpccIp(m_nodeId[m_hostNode[qp.dstHost]]);
        qp.srcPort = static_cast<uint16_t>(
            kHpccFirstPort + pairFlows[(static_cast<uint64_t>(qp.srcHost) << 32) | qp.dstHost]++);
        qp.dstPort = dstPort[i];
        ComputePathFacts(qp);
    }
    SetWindows();
    m_flowOrder.resize(n);
    std::iota(m_flowOrder.begin(), m_flowOrder.end(), 0);
    std::stable_sort(m_flowOrder.begin(), m_flowOrder.end(), [&](uint32_t a, uint32_t b) {
        return startNs[a] < startNs[b];
    });
    m_nextFlow = 0;
    if (n > 0)
    {
        Simulator::Schedule(NanoSeconds(startNs[m_flowOrder[0]] - now),
                            &Fabric::StartDueFlows,
                            this);
    }
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

void
Fabric::StartDueFlows()
{
    const int64_t now = NowNs();
    while (m_nextFlow < m_flowOrder.size() &&
           m_ctx->flows[m_flowOrder[m_nextFlow]].startNs <= now)
    {
        QueuePair& qp = m_ctx->flows[m_flowOrder[m_nextFlow++]];
        m_hosts[qp.srcHost]->StartFlow(qp);
    }
    if (m_nextFlow < m_flowOrder.size())
    {
        Simulator::Schedule(NanoSeconds(m_ctx->flows[m_flowOrder[m_nextFlow]].startNs - now),
                            &Fabric::StartDueFlows,
                            this);
    }
}

int64_t
Fabric::NowNs() const
{
    return Simulator::Now().GetTimeStep();
}

void
Fabric::RunUntil(int64_t untilNs)
{
    CheckAlive();
    const int64_t now = NowNs();
    if (untilNs < now)
    {
        throw std::invalid_argument("until_ns (" + std::to_string(untilNs) +
                                    ") is before the current time (" + std::to_string(now) + ")");
    }
    if (untilNs == now)
    {
        return;
    }
    // Our own stop event (not Simulator::Stop(delay)) so that it can be cancelled when the run
    // ends early, leaving no stale stop behind for the next call.
    EventId stop = Simulator::Schedule(NanoSeconds(untilNs - now), &StopSimulator);
    Simulator::Run();
    stop.Cancel();
}

bool
Fabric::RunToCompletion(int64_t limitNs)
{
    CheckAlive();
    if (m_ctx->flowsCompleted == m_ctx->flows.size())
    {
        return true;
    }
    m_ctx->stopWhenAllComplete = true;
    RunUntil(std::max(limitNs, NowNs()));
    m_ctx->stopWhenAllComplete = false;
    return m_ctx->flowsCompleted == m_ctx->flows.size();
}

uint64_t
Fabric::GetEventCount() const
{
    return Simulator::GetEventCount();
}

const TelemetryRowInfo kTelemetryRowInfo[kTelemetryRows] = {
    {"tx_bytes", 'u'},
    {"tx_data_bytes", 'u'},
    {"tx_data_packets", 'u'},
    {"tx_control_packets", 'u'},
    {"enqueued_data_packets", 'u'},
    {"mean_queue_bytes", 'f'},
    {"max_queue_bytes", 'u'},
    {"queue_bytes", 'u'},
    {"ecn_marked_packets", 'u'},
    {"pfc_pause_sent", 'u'},
    {"pfc_pause_received", 'u'},
    {"paused_ns", 'i'},
    {"drops", 'u'},
    {"distinct_flows", 'u'},
    {"utilization", 'f'},
};

TelemetrySnapshot
Fabric::ReadTelemetry()
{
    CheckAlive();
    TelemetrySnapshot s;
    const int64_t now = NowNs();
    s.intervalStartNs = m_intervalStartNs;
    s.intervalEndNs = now;
    const int64_t spanNs = now - m_intervalStartNs;
    const double span = static_cast<double>(spanNs);
    const std::size_t n = m_ports.size();
    s.block.resize(kTelemetryRows * n);
    uint64_t* row[kTelemetryRows];
    for (std::size_t r = 0; r < kTelemetryRows; ++r)
    {
        row[r] = s.block.data() + r * n;
    }
    for (std::size_t i = 0; i < n; ++i)
    {
        const PortTelemetry t = m_ports[i]->ReadInterval();
        row[kTelTxBytes][i] = t.txBytes;
        row[kTelTxDataBytes][i] = t.txDataBytes;
        row[kTelTxDataPackets][i] = t.txDataPackets;
        row[kTelTxControlPackets][i] = t.txControlPackets;
        row[kTelEnqueuedDataPackets][i] = t.enqueuedDataPackets;
        row[kTelMeanQueueBytes][i] = std::bit_cast<uint64_t>(span > 0 ? t.queueByteNs / span : 0.0);
        row[kTelMaxQueueBytes][i] = t.maxQueueBytes;
        row[kTelQueueBytes][i] = m_ports[i]->GetDataQueueBytes();
        row[kTelEcnMarked][i] = t.ecnMarked;
        row[kTelPfcPauseSent][i] = t.pfcPauseSent;
        row[kTelPfcPauseReceived][i] = t.pfcPauseReceived;
        row[kTelPausedNs][i] = std::bit_cast<uint64_t>(t.pausedNs);
        row[kTelDrops][i] = t.drops;
        row[kTelDistinctFlows][i] = t.distinctFlows;
        // bits sent / bits the line could send (this operation order is the documented formula)
        const double util = spanNs > 0 ? static_cast<double>(t.txBytes) * 8e9 /
                                             (m_ports[i]->GetRateBps() * span)
                                       : 0.0;
        row[kTelUtilization][i] = std::bit_cast<uint64_t>(util);
    }
    // Per-policy telemetry, one array per name (first seen order: deterministic).
    std::vector<std::pair<const char*, double>> buf;
    for (std::size_t i = 0; i < n; ++i)
    {
        if (!m_isSwitch[m_portNode[i]])
        {
            continue;
        }
        SwitchNode* sw = PeekPointer(m_switches[m_nodeToSwitch[m_portNode[i]]]);
        buf.clear();
        sw->GetAqm(m_ports[i]->GetLocalIndex())->ReadTelemetry(buf);
        for (const auto& [name, value] : buf)
        {
            auto it = std::find_if(s.aqm.begin(), s.aqm.end(),
                                   [&](const auto& e) { return e.first == name; });
            if (it == s.aqm.end())
            {
                s.aqm.emplace_back(name, std::vector<double>(n, std::nan("")));
                it = s.aqm.end() - 1;
            }
            it->second[i] = value;
        }
    }
    m_intervalStartNs = now;
    ++m_ctx->epoch;
    return s;
}

SwitchNode*
Fabric::SwitchOfPort(uint32_t portId, std::size_t i, const char* what) const
{
    if (portId >= m_ports.size() || !m_isSwitch[m_portNode[portId]])
    {
        throw std::invalid_argument(Where(what, i) + ": " + std::to_string(portId) +
                                    " is not a switch egress port");
    }
    return PeekPointer(m_switches[m_nodeToSwitch[m_portNode[portId]]]);
}

namespace
{
TypeId
LookupAqmType(const std::string& typeName)
{
    TypeId tid;
    if (!TypeId::LookupByNameFailSafe(typeName, &tid) ||
        !tid.IsChildOf(PortAqmPolicy::GetTypeId()) || !tid.HasConstructor())
    {
        throw std::invalid_argument("aqm: " + typeName + " is not a port AQM policy type");
    }
    return tid;
}

Ptr<PortAqmPolicy>
MakeAqm(const TypeId& tid)
{
    ObjectFactory f;
    f.SetTypeId(tid);
    return f.Create<PortAqmPolicy>();
}

void
ApplyAqmAttributes(PortAqmPolicy& policy,
                   const std::string& typeName,
                   const std::vector<std::string>& names,
                   const std::vector<std::string>& values)
{
    SetAttributeStrings(policy, "aqm: " + typeName, names, values);
    const std::string bad = policy.CheckConsistency();
    if (!bad.empty())
    {
        throw std::invalid_argument("aqm: " + typeName + ": " + bad);
    }
}
} // namespace

void
Fabric::ConfigureAqmBirth()
{
    const FabricConfig& cfg = m_ctx->cfg;
    if (cfg.aqmAttributeNames.size() != cfg.aqmAttributeValues.size())
    {
        throw std::invalid_argument("aqm: aqm_attribute_names and aqm_attribute_values differ in "
                                    "length");
    }
    const TypeId tid = LookupAqmType(cfg.aqmTypeId);
    ApplyAqmAttributes(*MakeAqm(tid), cfg.aqmTypeId, cfg.aqmAttributeNames, cfg.aqmAttributeValues);
    ObjectFactory& factory = m_ctx->aqmFactory;
    factory = ObjectFactory();
    factory.SetTypeId(tid);
    for (std::size_t k = 0; k < cfg.aqmAttributeNames.size(); ++k)
    {
        factory.Set(cfg.aqmAttributeNames[k], StringValue(cfg.aqmAttributeValues[k]));
    }
}

namespace
{
/**
 * One numeric attribute of a policy type as the bulk setter writes it: an unsigned integer, a
 * real or a boolean (0 or 1), with its accessor and checker looked up once per call.
 */
struct NumericAttribute
{
    std::string name;
    TypeId::AttributeInformation info;

    enum class Kind
    {
        Uinteger,
        Double,
        Boolean
    } kind;
};

std::vector<NumericAttribute>
LookupNumericAttributes(const TypeId& tid,
                        const std::string& typeName,
                        const std::vector<std::string>& names)
{
    std::vector<NumericAttribute> out;
    out.reserve(names.size());
    for (const std::string& name : names)
    {
        NumericAttribute a{name, {}, NumericAttribute::Kind::Double};
        if (!tid.LookupAttributeByName(name, &a.info))
        {
            throw std::invalid_argument("aqm: " + typeName + " has no attribute " + name);
        }
        const Ptr<AttributeValue> kind = a.info.checker->Create();
        if (DynamicCast<UintegerValue>(kind))
        {
            a.kind = NumericAttribute::Kind::Uinteger;
        }
        else if (DynamicCast<BooleanValue>(kind))
        {
            a.kind = NumericAttribute::Kind::Boolean;
        }
        else if (!DynamicCast<DoubleValue>(kind))
        {
            throw std::invalid_argument("aqm: " + typeName + "::" + name + " is not a number (" +
                                        a.info.checker->GetUnderlyingTypeInformation() +
                                        "): set it with set_aqm");
        }
        out.push_back(std::move(a));
    }
    return out;
}

/**
 * The attribute value of @p x, or nullptr if @p x is none of the attribute's values (a fraction
 * or a negative for an unsigned integer, not 0 or 1 for a boolean, outside the checker's range,
 * NaN): never rounded or wrapped.
 */
Ptr<AttributeValue>
NumericValue(const NumericAttribute& a, double x)
{
    Ptr<AttributeValue> v;
    switch (a.kind)
    {
    case NumericAttribute::Kind::Uinteger:
        // 2^64 is exact in a double; every whole double below it is a uint64_t
        if (!(x >= 0.0 && x < 18446744073709551616.0 && x == std::floor(x)))
        {
            return nullptr;
        }
        v = Create<UintegerValue>(static_cast<uint64_t>(x));
        break;
    case NumericAttribute::Kind::Boolean:
        if (x != 0.0 && x != 1.0)
        {
            return nullptr;
        }
        v = Create<BooleanValue>(x == 1.0);
        break;
    case NumericAttribute::Kind::Double:
        v = Create<DoubleValue>(x);
        break;
    }
    return a.info.checker->Check(*v) ? v : nullptr;
}

double
NumericOf(const NumericAttribute& a, const AttributeValue& v)
{
    switch (a.kind)
    {
    case NumericAttribute::Kind::Uinteger:
        return static_cast<double>(static_cast<const UintegerValue&>(v).Get());
    case NumericAttribute::Kind::Boolean:
        return static_cast<const BooleanValue&>(v).Get() ? 1.0 : 0.0;
    case NumericAttribute::Kind::Double:
        return static_cast<const DoubleValue&>(v).Get();
    }
    return std::nan("");
}
} // namespace

void
Fabric::SetAqmValues(const std::vector<uint32_t>& portIds,
                     const std::string& typeName,
                     const std::vector<std::string>& names,
                     const double* values)
{
    CheckAlive();
    const TypeId tid = LookupAqmType(typeName);
    const std::vector<NumericAttribute> attrs = LookupNumericAttributes(tid, typeName, names);
    const std::size_t m = attrs.size();
    // Every value is checked against its checker and every port resolved before anything
    // changes; then each port takes its row (a fresh instance first where it runs another type)
    // and the policy's consistency rule is checked with the port's own other parameters. A
    // refusal puts back every port changed so far: old values, old instances.
    std::vector<Ptr<AttributeValue>> converted(portIds.size() * m);
    std::vector<SwitchNode*> switches(portIds.size());
    for (std::size_t i = 0; i < portIds.size(); ++i)
    {
        switches[i] = SwitchOfPort(portIds[i], i, "port_ids");
        for (std::size_t k = 0; k < m; ++k)
        {
            const double x = values[i * m + k];
            converted[i * m + k] = NumericValue(attrs[k], x);
            if (converted[i * m + k] == nullptr)
            {
                std::ostringstream text;
                text.precision(std::numeric_limits<double>::max_digits10);
                text << x;
                throw std::invalid_argument(
                    Where("values", i) + ": aqm: " + typeName + "::" + attrs[k].name + " = " +
                    text.str() + " is outside its allowed values (" +
                    attrs[k].info.checker->GetUnderlyingTypeInformation() + ")");
            }
        }
    }
    struct Saved
    {
        PortAqmPolicy* policy;
        std::vector<Ptr<AttributeValue>> values; //!< the named attributes before this call
    };

    std::vector<Saved> saved;
    std::vector<std::pair<std::size_t, Ptr<PortAqmPolicy>>> fresh; //!< (row, instance) to install
    for (std::size_t i = 0; i < portIds.size(); ++i)
    {
        PortAqmPolicy* policy = switches[i]->GetAqm(m_ports[portIds[i]]->GetLocalIndex());
        if (policy->GetInstanceTypeId() != tid)
        {
            fresh.emplace_back(i, MakeAqm(tid));
            policy = PeekPointer(fresh.back().second);
        }
        else
        {
            Saved before{policy, {}};
            before.values.reserve(m);
            for (std::size_t k = 0; k < m; ++k)
            {
                Ptr<AttributeValue> old = attrs[k].info.checker->Create();
                attrs[k].info.accessor->Get(policy, *old);
                before.values.push_back(old);
            }
            saved.push_back(std::move(before));
        }
        for (std::size_t k = 0; k < m; ++k)
        {
            attrs[k].info.accessor->Set(policy, *converted[i * m + k]);
        }
        const std::string bad = policy->CheckConsistency();
        if (!bad.empty())
        {
            // newest first: a port listed twice ends as it began (plain member accessors: exact)
            for (auto it = saved.rbegin(); it != saved.rend(); ++it)
            {
                for (std::size_t k = 0; k < m; ++k)
                {
                    attrs[k].info.accessor->Set(it->policy, *it->values[k]);
                }
            }
            throw std::invalid_argument("aqm: " + typeName + ": " + Where("port_ids", i) + ": " + bad);
        }
    }
    for (auto& [i, policy] : fresh)
    {
        switches[i]->SetAqm(m_ports[portIds[i]]->GetLocalIndex(), policy);
    }
}

void
Fabric::GetAqmValues(const std::vector<uint32_t>& portIds,
                     const std::string& typeName,
                     const std::vector<std::string>& names,
                     double* out) const
{
    CheckAlive();
    const TypeId tid = LookupAqmType(typeName);
    const std::vector<NumericAttribute> attrs = LookupNumericAttributes(tid, typeName, names);
    const std::size_t m = attrs.size();
    std::vector<Ptr<AttributeValue>> scratch;
    for (const NumericAttribute& a : attrs)
    {
        scratch.push_back(a.info.checker->Create());
    }
    for (std::size_t i = 0; i < portIds.size(); ++i)
    {
        const PortAqmPolicy* policy =
            SwitchOfPort(portIds[i], i, "port_ids")->GetAqm(m_ports[portIds[i]]->GetLocalIndex());
        for (std::size_t k = 0; k < m; ++k)
        {
            if (policy->GetInstanceTypeId() != tid)
            {
                out[i * m + k] = std::nan("");
                continue;
            }
            attrs[k].info.accessor->Get(policy, *scratch[k]);
            out[i * m + k] = NumericOf(attrs[k], *scratch[k]);
        }
    }
}

void
Fabric::SetAqm(const std::vector<uint32_t>& portIds,
               const std::string& typeName,
               const std::vector<std::string>& names,
               const std::vector<std::string>& values)
{
    CheckAlive();
    if (names.size() != values.size())
    {
        throw std::invalid_argument("set_aqm: names and values differ in length");
    }
    const TypeId tid = LookupAqmType(typeName);
    // All or nothing. Every port is resolved first (a bad id changes nothing). A port that gets a
    // fresh instance (and a call with no port) is checked against the defaults on a scratch
    // instance, once, before anything changes. A port already running the policy keeps its other
    // parameters, so its merged setting is what must pass (a partial update can break a
    // consistency rule, e.g. K_min > K_max, or satisfy one only with the port's own values): it
    // is set in place, and a refusal restores every port set so far. Restoring is exact because
    // every policy attribute is a plain member accessor (no setter side effects), and far cheaper
    // than building a scratch policy per port.
    struct Target
    {
        SwitchNode* sw;
        uint16_t local; //!< the port's index on its switch
    };

    std::vector<Target> targets;
    targets.reserve(portIds.size());
    bool checkDefaults = portIds.empty();
    for (std::size_t i = 0; i < portIds.size(); ++i)
    {
        const Target t{SwitchOfPort(portIds[i], i, "port_ids"), m_ports[portIds[i]]->GetLocalIndex()};
        checkDefaults |= t.sw->GetAqm(t.local)->GetInstanceTypeId() != tid;
        targets.push_back(t);
    }
    if (checkDefaults)
    {
        ApplyAqmAttributes(*MakeAqm(tid), typeName, names, values);
    }
    struct Saved
    {
        PortAqmPolicy* policy;
        std::vector<Ptr<AttributeValue>> values; //!< the named attributes before this call
    };

    std::vector<Saved> saved;
    try
    {
        for (const Target& t : targets)
        {
            PortAqmPolicy* current = t.sw->GetAqm(t.local);
            if (current->GetInstanceTypeId() != tid)
            {
                continue;
            }
            Saved before{current, {}};
            for (const std::string& name : names)
            {
                TypeId::AttributeInformation info;
                if (!tid.LookupAttributeByName(name, &info))
                {
                    throw std::invalid_argument("aqm: " + typeName + " has no attribute " + name);
                }
                Ptr<AttributeValue> v = info.checker->Create();
                current->GetAttribute(name, *v);
                before.values.push_back(v);
            }
            saved.push_back(std::move(before));
            ApplyAqmAttributes(*current, typeName, names, values);
        }
    }
    catch (const std::invalid_argument&)
    {
        for (auto it = saved.rbegin(); it != saved.rend(); ++it) // newest first: a port listed twice ends as it began
        {
            for (std::size_t k = 0; k < names.size(); ++k)
            {
                it->policy->SetAttribute(names[k], *it->values[k]);
            }
        }
        throw;
    }
    for (const Target& t : targets)
    {
        if (t.sw->GetAqm(t.local)->GetInstanceTypeId() == tid)
        {
            continue; // set in place above (or a fresh instance given to an earlier entry of this port)
        }
        Ptr<PortAqmPolicy> policy = MakeAqm(tid);
        ApplyAqmAttributes(*policy, typeName, names, values); // passed on the defaults above
        t.sw->SetAqm(t.local, policy);
    }
}

std::string
Fabric::GetAqm(uint32_t portId,
               std::vector<std::string>& names,
               std::vector<std::string>& values) const
{
    SwitchNode* sw = SwitchOfPort(portId, 0, "port_ids");
    PortAqmPolicy* policy = sw->GetAqm(m_ports[portId]->GetLocalIndex());
    const TypeId tid = policy->GetInstanceTypeId();
    names.clear();
    values.clear();
    for (std::size_t k = 0; k < tid.GetAttributeN(); ++k)
    {
        const TypeId::AttributeInformation info = tid.GetAttribute(k);
        names.push_back(info.name);
        if (DynamicCast<DoubleValue>(info.checker->Create()))
        {
            // a DoubleValue's own string has 6 significant digits: set_aqm(get_aqm()) would move it
            DoubleValue v;
            policy->GetAttribute(info.name, v);
            std::ostringstream oss;
            oss.precision(std::numeric_limits<double>::max_digits10);
            oss << v.Get();
            values.push_back(oss.str());
            continue;
        }
        StringValue v;
        policy->GetAttribute(info.name, v);
        values.push_back(v.Get());
    }
    return tid.GetName();
}

std::vector<AqmAttributeInfo>
DescribeAqmType(const std::string& typeName)
{
    const TypeId tid = LookupAqmType(typeName);
    std::vector<AqmAttributeInfo> out;
    for (std::size_t k = 0; k < tid.GetAttributeN(); ++k)
    {
        const TypeId::AttributeInformation info = tid.GetAttribute(k);
        out.push_back({info.name,
                       info.help,
                       info.initialValue->SerializeToString(info.checker),
                       info.checker->GetUnderlyingTypeInformation()});
    }
    return out;
}

std::string
CheckAqmSetting(const std::string& typeName,
                const std::vector<std::string>& names,
                const std::vector<std::string>& values)
{
    if (names.size() != values.size())
    {
        throw std::invalid_argument("check_aqm: names and values differ in length");
    }
    const TypeId tid = LookupAqmType(typeName);
    try
    {
        ApplyAqmAttributes(*MakeAqm(tid), typeName, names, values);
    }
    catch (const std::invalid_argument& e)
    {
        return e.what();
    }
    return "";
}

void
Fabric::SetPfc(const std::vector<uint32_t>& switchIds,
               const std::vector<double>& alpha,
               const std::vector<uint64_t>& headroomBytes)
{
    CheckAlive();
    CheckPfcEntries("set_pfc", "switch_ids", switchIds, alpha, headroomBytes, [this](uint32_t id) {
        return id < m_switches.size() ? std::string()
                                      : "must be in [0, " + std::to_string(m_switches.size()) + ")";
    });
    for (std::size_t i = 0; i < switchIds.size(); ++i)
    {
        m_switches[switchIds[i]]->Mmu().SetPfcParameters(alpha[i], headroomBytes[i]);
    }
}

void
Fabric::SetPortPfc(const std::vector<uint32_t>& portIds,
                   const std::vector<double>& alpha,
                   const std::vector<uint64_t>& headroomBytes)
{
    CheckAlive();
    CheckPfcEntries("set_port_pfc", "port_ids", portIds, alpha, headroomBytes, [this](uint32_t id) {
        return id < m_ports.size() && m_isSwitch[m_portNode[id]]
                   ? std::string()
                   : std::to_string(id) + " is not a switch port";
    });
    for (std::size_t i = 0; i < portIds.size(); ++i)
    {
        const uint32_t node = m_portNode[portIds[i]];
        m_switches[m_nodeToSwitch[node]]->Mmu().SetPortPfcParameters(
            m_ports[portIds[i]]->GetLocalIndex(), alpha[i], headroomBytes[i]);
    }
}

void
Fabric::GetPortPfc(std::vector<double>& alpha, std::vector<uint64_t>& headroomBytes) const
{
    const std::size_t n = m_ports.size();
    alpha.assign(n, 0.0);
    headroomBytes.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i)
    {
        const uint32_t node = m_portNode[i];
        if (m_isSwitch[node])
        {
            SharedBufferMmu& mmu = m_switches[m_nodeToSwitch[node]]->Mmu();
            alpha[i] = mmu.GetPortAlpha(m_ports[i]->GetLocalIndex());
            headroomBytes[i] = mmu.GetPortHeadroom(m_ports[i]->GetLocalIndex());
        }
    }
}

FlowRecords
Fabric::GetFlowRecords() const
{
    FlowRecords r;
    const std::size_t n = m_ctx->flows.size();
    r.src.resize(n);
    r.dst.resize(n);
    r.sizeBytes.resize(n);
    r.startNs.resize(n);
    r.finishNs.resize(n);
    r.idealFctNs.resize(n);
    r.baseRttNs.resize(n);
    r.ccUtilisation.resize(n);
    r.deliveredBytes.resize(n);
    r.retransmittedBytes.resize(n);
    r.finished.resize(n);
    r.rateBps.resize(n);
    r.inflightBytes.resize(n);
    r.windowBytes.resize(n);
    r.connection.resize(n);
    r.rtoNs.resize(n);
    r.ccAlpha.resize(n);
    for (std::size_t i = 0; i < n; ++i)
    {
        const QueuePair& qp = m_ctx->flows[i];
        r.src[i] = qp.srcHost;
        r.dst[i] = qp.dstHost;
        r.sizeBytes[i] = qp.sizeBytes;
        r.startNs[i] = qp.startNs;
        r.finishNs[i] = qp.finishNs;
        r.idealFctNs[i] = qp.idealFctNs;
        r.baseRttNs[i] = qp.baseRttNs;
        r.ccUtilisation[i] =
            qp.cc ? qp.cc->UtilisationEstimate() : std::numeric_limits<double>::quiet_NaN();
        r.deliveredBytes[i] = qp.rcvNxt;
        r.retransmittedBytes[i] = qp.retransmittedBytes;
        r.finished[i] = qp.finished ? 1 : 0;
        r.rateBps[i] = qp.rateBps;
        r.inflightBytes[i] = qp.sndNxt - qp.sndUna;
        r.windowBytes[i] = qp.EffectiveWindow();
        r.connection[i] = qp.connection;
        r.rtoNs[i] = qp.rtoNs;
        r.ccAlpha[i] = qp.cc ? qp.cc->AlphaEstimate() : std::numeric_limits<double>::quiet_NaN();
    }
    return r;
}

std::vector<uint32_t>
Fabric::PortNode() const
{
    return m_portNode;
}

std::vector<uint32_t>
Fabric::PortPeerNode() const
{
    std::vector<uint32_t> v(m_ports.size());
    for (std::size_t i = 0; i < m_ports.size(); ++i)
    {
        v[i] = m_portNode[m_ports[i]->GetPeer()->GetPortId()];
    }
    return v;
}

void
Fabric::LogPfcEvents(bool on)
{
    for (auto& port : m_ports)
    {
        port->SetPfcLog(on ? &m_pfcLog : nullptr);
    }
}

std::vector<uint16_t>
Fabric::PortLocalIndex() const
{
    std::vector<uint16_t> v(m_ports.size());
    for (std::size_t i = 0; i < m_ports.size(); ++i)
    {
        v[i] = m_ports[i]->GetLocalIndex();
    }
    return v;
}

std::vector<uint8_t>
Fabric::PortIsSwitch() const
{
    std::vector<uint8_t> v(m_ports.size());
    for (std::size_t i = 0; i < m_ports.size(); ++i)
    {
        v[i] = m_isSwitch[m_portNode[i]];
    }
    return v;
}

std::vector<double>
Fabric::PortRateBps() const
{
    std::vector<double> v(m_ports.size());
    for (std::size_t i = 0; i < m_ports.size(); ++i)
    {
        v[i] = m_ports[i]->GetRateBps();
    }
    return v;
}

std::vector<uint32_t>
Fabric::PortSwitchIndex() const
{
    std::vector<uint32_t> v(m_ports.size());
    for (std::size_t i = 0; i < m_ports.size(); ++i)
    {
        v[i] = m_nodeToSwitch[m_portNode[i]];
    }
    return v;
}

double
MeasureBareEventRate(uint64_t events, const std::string& schedulerTypeId)
{
    if (g_fabricAlive)
    {
        throw std::runtime_error("cannot measure the bare event loop while a Fabric is alive");
    }
    if (events == 0)
    {
        throw std::invalid_argument("events must be > 0");
    }
    UseScheduler(schedulerTypeId);
    g_bareEventsLeft = events;
    Simulator::Schedule(NanoSeconds(1), &BareTick);
    const auto start = std::chrono::steady_clock::now();
    Simulator::Run();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    Simulator::Destroy();
    return static_cast<double>(events) / seconds;
}

void
Fabric::Destroy()
{
    if (m_destroyed)
    {
        return;
    }
    m_destroyed = true;
    Simulator::Destroy();
    for (QueuePair& qp : m_ctx->flows)
    {
        qp.cc.reset();
    }
    m_ports.clear();
    m_hosts.clear();
    m_switches.clear();
    m_ctx.reset();
    g_fabricAlive = false;
}

} // namespace ecngym
} // namespace ns3
