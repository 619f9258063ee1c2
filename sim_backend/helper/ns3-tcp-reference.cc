/*
 * ecngym: a reference run on ns-3's own TCP/IP stack (see ns3-tcp-reference.h).
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "ns3-tcp-reference.h"

#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/data-rate.h"
#include "ns3/double.h"
#include "ns3/inet-socket-address.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-address-generator.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/ipv4-global-routing-helper.h"
#include "ns3/node-container.h"
#include "ns3/packet-sink-helper.h"
#include "ns3/packet.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/queue-disc.h"
#include "ns3/queue-size.h"
#include "ns3/queue.h"
#include "ns3/red-queue-disc.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"
#include "ns3/socket.h"
#include "ns3/string.h"
#include "ns3/tcp-dctcp.h"
#include "ns3/tcp-l4-protocol.h"
#include "ns3/tcp-prr-recovery.h"
#include "ns3/tcp-recovery-ops.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/tcp-socket-factory.h"
#include "ns3/tcp-socket-state.h"
#include "ns3/traffic-control-helper.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ns3
{
namespace ecngym
{

/**
 * @brief ns-3's TcpDctcp with Linux's window floor: the window an ECN echo (or a loss) reduces to,
 *        the slow-start threshold, is at least WindowFloorSegments segments, as Linux's
 *        dctcp_ssthresh (max(cwnd (1 - alpha / 2), 2)); TcpDctcp itself has no floor.
 */
class TcpDctcpWithFloor : public TcpDctcp
{
  public:
    /**
     * @brief Get the type ID.
     * @return the object TypeId
     */
    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("ns3::ecngym::TcpDctcpWithFloor")
                .SetParent<TcpDctcp>()
                .SetGroupName("Ecngym")
                .AddConstructor<TcpDctcpWithFloor>()
                .AddAttribute("WindowFloorSegments",
                              "Smallest slow-start threshold after a reduction, in segments "
                              "(Linux's DCTCP: 2)",
                              UintegerValue(2),
                              MakeUintegerAccessor(&TcpDctcpWithFloor::m_floorSegments),
                              MakeUintegerChecker<uint32_t>(1, 1000));
        return tid;
    }

    TcpDctcpWithFloor() = default;

    /** @param other the congestion control to copy (Fork) */
    TcpDctcpWithFloor(const TcpDctcpWithFloor& other)
        : TcpDctcp(other),
          m_floorSegments(other.m_floorSegments)
    {
    }

    std::string GetName() const override
    {
        return "TcpDctcpWithFloor";
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        return std::max(TcpDctcp::GetSsThresh(tcb, bytesInFlight), m_floorSegments * tcb->m_segmentSize);
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<TcpDctcpWithFloor>(this);
    }

  private:
    uint32_t m_floorSegments{2};
};

NS_OBJECT_ENSURE_REGISTERED(TcpDctcpWithFloor);

namespace
{

constexpr uint16_t kSinkPort = 5000;

struct Flow
{
    uint32_t src{0};
    uint32_t dst{0};
    uint64_t size{0};
    int64_t start{0};
    uint64_t queued{0}; //!< bytes handed to the socket
    bool closed{false};
    Ptr<Socket> socket;
};

/** One switch egress port: its queue (queue disc + device queue) integrated over time. */
struct Port
{
    uint32_t node{0};
    uint32_t peer{0};
    Ptr<QueueDisc> qdisc;
    Ptr<PointToPointNetDevice> device;
    uint64_t qdiscBytes{0};
    uint64_t deviceBytes{0};
    uint64_t peak{0};
    double area{0};       //!< byte x ns since time 0
    double areaAtStart{0}; //!< area at the window start
    int64_t last{0};
    uint64_t txBytes{0};

    void Update(int64_t now)
    {
        area += static_cast<double>(qdiscBytes + deviceBytes) * static_cast<double>(now - last);
        last = now;
    }
};

class Runner
{
  public:
    Runner(const TcpReferenceSettings& s, TcpReferenceResult& r)
        : m_s(s),
          m_r(r)
    {
    }

    std::vector<Flow> flows;
    std::vector<Port> ports;
    std::vector<Ipv4Address> hostAddress;
    NodeContainer nodes;
    uint32_t remaining{0};
    uint64_t packetHops{0};

    void StartFlow(uint32_t i);
    void Fill(uint32_t i);
    void OnAck(uint32_t i, SequenceNumber32 value);

    const TcpReferenceSettings& m_s;
    TcpReferenceResult& m_r;
};

void
OnConnected(Runner* run, uint32_t i, Ptr<Socket>)
{
    run->m_r.establishedNs[i] = Simulator::Now().GetNanoSeconds();
    run->Fill(i);
}

void
OnConnectFailed(Runner*, uint32_t, Ptr<Socket>)
{
    // The flow stays unfinished (finish -1): SYN retries ran out.
}

void
OnSendSpace(Runner* run, uint32_t i, Ptr<Socket>, uint32_t)
{
    run->Fill(i);
}

void
OnHighestRxAck(Runner* run, uint32_t i, SequenceNumber32, SequenceNumber32 value)
{
    run->OnAck(i, value);
}

void
OnCongState(Runner* run,
            uint32_t i,
            TcpSocketState::TcpCongState_t,
            TcpSocketState::TcpCongState_t now)
{
    // ns-3 enters CA_LOSS only when the retransmission timer fires (TcpSocketBase::ReTxTimeout).
    if (now == TcpSocketState::CA_LOSS)
    {
        ++run->m_r.rtoCount[i];
    }
    else if (now == TcpSocketState::CA_RECOVERY)
    {
        ++run->m_r.fastRecoveryCount[i];
    }
}

void
OnCwnd(Runner* run, uint32_t i, uint32_t, uint32_t now)
{
    run->m_r.minCwndBytes[i] = std::min(run->m_r.minCwndBytes[i], now);
}

void
OnQdiscBytes(Port* port, uint32_t, uint32_t now)
{
    port->Update(Simulator::Now().GetNanoSeconds());
    port->qdiscBytes = now;
    port->peak = std::max(port->peak, port->qdiscBytes + port->deviceBytes);
}

void
OnDeviceBytes(Port* port, uint32_t, uint32_t now)
{
    port->Update(Simulator::Now().GetNanoSeconds());
    port->deviceBytes = now;
    port->peak = std::max(port->peak, port->qdiscBytes + port->deviceBytes);
}

void
OnPortTx(Port* port, Ptr<const Packet> p)
{
    port->txBytes += p->GetSize();
}

void
OnPhyTx(uint64_t* hops, Ptr<const Packet>)
{
    ++*hops;
}

void
WindowStart(Runner* run)
{
    const int64_t now = Simulator::Now().GetNanoSeconds();
    for (Port& p : run->ports)
    {
        p.Update(now);
        p.areaAtStart = p.area;
    }
}

void
Runner::StartFlow(uint32_t i)
{
    Flow& f = flows[i];
    f.socket = Socket::CreateSocket(nodes.Get(f.src), TcpSocketFactory::GetTypeId());
    Ptr<TcpSocketBase> tcp = DynamicCast<TcpSocketBase>(f.socket);
    tcp->TraceConnectWithoutContext("HighestRxAck", MakeBoundCallback(&OnHighestRxAck, this, i));
    tcp->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, this, i));
    tcp->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnCwnd, this, i));
    f.socket->Bind();
    f.socket->SetConnectCallback(MakeBoundCallback(&OnConnected, this, i),
                                 MakeBoundCallback(&OnConnectFailed, this, i));
    f.socket->SetSendCallback(MakeBoundCallback(&OnSendSpace, this, i));
    f.socket->Connect(InetSocketAddress(hostAddress[f.dst], kSinkPort));
}

void
Runner::Fill(uint32_t i)
{
    Flow& f = flows[i];
    if (m_r.establishedNs[i] < 0)
    {
        return;
    }
    while (f.queued < f.size)
    {
        const uint32_t room = f.socket->GetTxAvailable();
        if (room == 0)
        {
            return;
        }
        const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>({f.size - f.queued, room, 1u << 20}));
        const int sent = f.socket->Send(Create<Packet>(n));
        if (sent <= 0)
        {
            return;
        }
        f.queued += static_cast<uint64_t>(sent);
    }
    if (!f.closed)
    {
        f.closed = true;
        f.socket->Close(); // FIN after the queued data
    }
}

void
Runner::OnAck(uint32_t i, SequenceNumber32 value)
{
    // The SYN takes sequence number 0 (ns-3's initial sequence number): the last byte's ACK is
    // size + 1 (size + 2 once the FIN is acknowledged too).
    if (m_r.finishNs[i] >= 0 || static_cast<uint64_t>(value.GetValue()) < flows[i].size + 1)
    {
        return;
    }
    m_r.finishNs[i] = Simulator::Now().GetNanoSeconds();
    if (--remaining == 0)
    {
        Simulator::Stop();
    }
}

void
SetTcpDefaults(const TcpReferenceSettings& s)
{
    if (s.windowFloorSegments > 0)
    {
        Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpDctcpWithFloor::GetTypeId()));
        Config::SetDefault("ns3::ecngym::TcpDctcpWithFloor::WindowFloorSegments",
                           UintegerValue(s.windowFloorSegments));
    }
    else
    {
        Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpDctcp::GetTypeId()));
    }
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(s.segmentBytes));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(s.initialCwndSegments));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(s.delAckCount));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(NanoSeconds(s.delAckTimeoutNs)));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(NanoSeconds(s.connTimeoutNs)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(s.sndBufBytes));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(s.rcvBufBytes));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(NanoSeconds(s.minRtoNs)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity",
                       TimeValue(NanoSeconds(s.clockGranularityNs)));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(s.timestamps));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(s.sack));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(s.classicRecovery ? TcpClassicRecovery::GetTypeId()
                                                     : TcpPrrRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpDctcp::DctcpShiftG", DoubleValue(s.dctcpG));
    Config::SetDefault("ns3::TcpDctcp::DctcpAlphaOnInit", DoubleValue(s.dctcpInitialAlpha));
}

} // namespace

TcpReferenceResult
RunTcpReference(const std::vector<uint8_t>& isSwitch,
                const std::vector<uint32_t>& linkA,
                const std::vector<uint32_t>& linkB,
                const std::vector<double>& rateBps,
                const std::vector<int64_t>& delayNs,
                const std::vector<uint32_t>& src,
                const std::vector<uint32_t>& dst,
                const std::vector<uint64_t>& sizeBytes,
                const std::vector<int64_t>& startNs,
                const TcpReferenceSettings& s)
{
    const std::size_t numNodes = isSwitch.size();
    const std::size_t numLinks = linkA.size();
    const std::size_t numFlows = src.size();
    if (linkB.size() != numLinks || rateBps.size() != numLinks || delayNs.size() != numLinks)
    {
        throw std::invalid_argument("link arrays differ in length");
    }
    if (dst.size() != numFlows || sizeBytes.size() != numFlows || startNs.size() != numFlows)
    {
        throw std::invalid_argument("flow arrays differ in length");
    }
    if (numFlows == 0)
    {
        throw std::invalid_argument("no flows");
    }
    if (s.kBytes == 0 || s.bufferBytes == 0 || s.segmentBytes == 0)
    {
        throw std::invalid_argument("K, buffer and segment size must be > 0");
    }
    for (std::size_t l = 0; l < numLinks; ++l)
    {
        if (linkA[l] >= numNodes || linkB[l] >= numNodes || linkA[l] == linkB[l])
        {
            throw std::invalid_argument("link " + std::to_string(l) + " has a bad end");
        }
    }

    TcpReferenceResult r;
    r.finishNs.assign(numFlows, -1);
    r.establishedNs.assign(numFlows, -1);
    r.rtoCount.assign(numFlows, 0);
    r.fastRecoveryCount.assign(numFlows, 0);
    r.minCwndBytes.assign(numFlows, UINT32_MAX);

    Simulator::Destroy();
    Ipv4AddressGenerator::Reset();
    RngSeedManager::SetSeed(s.rngSeed);
    RngSeedManager::SetRun(s.rngRun);
    SetTcpDefaults(s);
    // Routes follow one shortest path (no per-packet random ECMP, which would reorder segments).
    Config::SetDefault("ns3::Ipv4GlobalRouting::RandomEcmpRouting", BooleanValue(false));

    Runner run(s, r);
    run.nodes.Create(static_cast<uint32_t>(numNodes));
    InternetStackHelper stack;
    stack.Install(run.nodes);

    TrafficControlHelper hostTc;
    hostTc.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(QueueSize("1000000p")));

    Ipv4AddressHelper address("10.0.0.0", "255.255.255.252");
    run.hostAddress.assign(numNodes, Ipv4Address());
    std::vector<std::vector<uint32_t>> hostLinks(numNodes);
    run.ports.reserve(2 * numLinks);
    for (std::size_t l = 0; l < numLinks; ++l)
    {
        PointToPointHelper p2p;
        p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(static_cast<uint64_t>(rateBps[l]))));
        p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(delayNs[l])));
        p2p.SetQueue("ns3::DropTailQueue<Packet>",
                     "MaxSize",
                     QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, s.deviceQueuePackets)));
        NetDeviceContainer devs = p2p.Install(run.nodes.Get(linkA[l]), run.nodes.Get(linkB[l]));
        const uint32_t ends[2] = {linkA[l], linkB[l]};
        for (int e = 0; e < 2; ++e)
        {
            Ptr<NetDevice> dev = devs.Get(e);
            dev->TraceConnectWithoutContext("PhyTxBegin", MakeBoundCallback(&OnPhyTx, &run.packetHops));
            TrafficControlHelper red;
            red.SetRootQueueDisc(
                "ns3::RedQueueDisc",
                "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::BYTES, s.bufferBytes)),
                "MinTh", DoubleValue(static_cast<double>(s.kBytes)),
                "MaxTh", DoubleValue(static_cast<double>(s.kBytes)),
                "UseEcn", BooleanValue(true),
                "UseHardDrop", BooleanValue(false),
                "Gentle", BooleanValue(false),
                "QW", DoubleValue(1.0),
                "MeanPktSize", UintegerValue(s.segmentBytes + 54),
                "LinkBandwidth", DataRateValue(DataRate(static_cast<uint64_t>(rateBps[l]))),
                "LinkDelay", TimeValue(NanoSeconds(delayNs[l])));
            if (isSwitch[ends[e]])
            {
                QueueDiscContainer q = red.Install(dev);
                run.ports.push_back(Port{});
                Port& port = run.ports.back();
                port.node = ends[e];
                port.peer = ends[1 - e];
                port.qdisc = q.Get(0);
                port.device = DynamicCast<PointToPointNetDevice>(dev);
            }
            else
            {
                // A sender's own NIC queue: without marking there, the flows of one host would
                // grow their windows into it unchecked (ns-3's TCP has no TSQ-like limit on what
                // a socket queues below it), inflating RTTs to spurious timeouts.
                (s.hostMarking ? red : hostTc).Install(dev);
                hostLinks[ends[e]].push_back(static_cast<uint32_t>(l));
            }
        }
        Ipv4InterfaceContainer ifs = address.Assign(devs);
        address.NewNetwork();
        for (int e = 0; e < 2; ++e)
        {
            if (!isSwitch[ends[e]])
            {
                run.hostAddress[ends[e]] = ifs.GetAddress(e);
            }
        }
    }
    for (std::size_t n = 0; n < numNodes; ++n)
    {
        if (!isSwitch[n] && hostLinks[n].size() != 1)
        {
            Simulator::Destroy();
            throw std::invalid_argument("host " + std::to_string(n) + " needs exactly one link");
        }
    }
    // Connect the queue traces once the ports vector no longer moves.
    for (Port& port : run.ports)
    {
        port.qdisc->TraceConnectWithoutContext("BytesInQueue", MakeBoundCallback(&OnQdiscBytes, &port));
        port.device->GetQueue()->TraceConnectWithoutContext("BytesInQueue",
                                                            MakeBoundCallback(&OnDeviceBytes, &port));
        port.device->TraceConnectWithoutContext("PhyTxBegin", MakeBoundCallback(&OnPortTx, &port));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), kSinkPort));
    std::vector<bool> receives(numNodes, false);
    run.flows.resize(numFlows);
    int64_t first = startNs[0];
    for (std::size_t i = 0; i < numFlows; ++i)
    {
        if (src[i] >= numNodes || dst[i] >= numNodes || isSwitch[src[i]] || isSwitch[dst[i]] || src[i] == dst[i])
        {
            Simulator::Destroy();
            throw std::invalid_argument("flow " + std::to_string(i) + " does not join two distinct hosts");
        }
        Flow& f = run.flows[i];
        f.src = src[i];
        f.dst = dst[i];
        f.size = sizeBytes[i];
        f.start = startNs[i];
        receives[f.dst] = true;
        first = std::min(first, f.start);
        Simulator::Schedule(NanoSeconds(f.start), &Runner::StartFlow, &run, static_cast<uint32_t>(i));
    }
    for (std::size_t n = 0; n < numNodes; ++n)
    {
        if (receives[n])
        {
            sink.Install(run.nodes.Get(static_cast<uint32_t>(n))).Start(Seconds(0));
        }
    }
    run.remaining = static_cast<uint32_t>(numFlows);
    r.windowStartNs = first;
    Simulator::Schedule(NanoSeconds(first), &WindowStart, &run);
    Simulator::Stop(NanoSeconds(s.stopNs));
    Simulator::Run();

    const int64_t end = Simulator::Now().GetNanoSeconds();
    r.endNs = end;
    r.events = Simulator::GetEventCount();
    r.packetHops = run.packetHops;
    for (Port& p : run.ports)
    {
        p.Update(end);
        r.portNode.push_back(p.node);
        r.portPeer.push_back(p.peer);
        r.peakQueueBytes.push_back(p.peak);
        r.meanQueueBytes.push_back(end > first ? (p.area - p.areaAtStart) / static_cast<double>(end - first) : 0.0);
        const QueueDisc::Stats& st = p.qdisc->GetStats();
        r.markedPackets.push_back(st.GetNMarkedPackets(RedQueueDisc::FORCED_MARK) +
                                  st.GetNMarkedPackets(RedQueueDisc::UNFORCED_MARK));
        r.droppedPackets.push_back(st.nTotalDroppedPackets);
        r.txBytes.push_back(p.txBytes);
    }
    for (Flow& f : run.flows)
    {
        f.socket = nullptr;
    }
    run.ports.clear();
    Simulator::Destroy();
    return r;
}

} // namespace ecngym
} // namespace ns3
