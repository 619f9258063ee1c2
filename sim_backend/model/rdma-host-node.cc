/* SPDX-License-Identifier: GPL-2.0-only */
#include "rdma-host-node.h"

#include "timing-wheel-scheduler.h"

#include "ns3/simulator.h"

#include <algorithm>
#include <cmath>

namespace ns3
{
namespace ecngym
{

NS_OBJECT_ENSURE_REGISTERED(RdmaHostNode);

namespace
{
/**
 * Stamp @p p as a packet of @p qp that travels sender -> receiver (data, the SYN, the handshake's
 * ACK): its flow, hosts, ECMP hash words and the flow's queue.
 */
inline void
StampForward(FabricPacket& p, const QueuePair& qp)
{
    p.flowId = qp.flowId;
    p.srcHost = qp.srcHost;
    p.dstHost = qp.dstHost;
    p.flowHash = qp.flowHash;
    p.SetEcmpWords(qp.srcAddr, qp.dstAddr, qp.srcPort, qp.dstPort);
    p.flowQueue = qp.queue;
}
} // namespace

TypeId
RdmaHostNode::GetTypeId()
{
    static TypeId tid = TypeId("ns3::ecngym::RdmaHostNode")
                            .SetParent<Node>()
                            .SetGroupName("Ecngym")
                            .AddConstructor<RdmaHostNode>();
    return tid;
}

RdmaHostNode::RdmaHostNode() = default;

void
RdmaHostNode::Setup(uint32_t hostIndex, FabricContext* ctx)
{
    m_hostIndex = hostIndex;
    m_ctx = ctx;
    const FabricConfig& cfg = ctx->cfg;
    const bool dctcp = cfg.cc == CcKind::Dctcp;
    m_handshake = dctcp && cfg.dctcp.tcp.handshake;
    m_delayedAck = dctcp && cfg.dctcp.tcp.delayedAck;
    m_tcpLoss = dctcp && (cfg.dctcp.tcp.slowStart || cfg.dctcp.tcp.rtoEstimate);
}

void
RdmaHostNode::StartFlow(QueuePair& qp)
{
    const int64_t now = Simulator::Now().GetTimeStep();
    qp.host = this;
    qp.started = true;
    qp.nextSendNs = now;
    qp.lastProgressNs = now;
    const FabricConfig& cfg = m_ctx->cfg;
    qp.rtoNs = cfg.retransmitTimeoutNs; // (the RTO estimate, if on, replaces it in Start)
    bool opened = true;
    switch (cfg.cc)
    {
    case CcKind::Dcqcn:
        qp.cc = std::make_unique<DcqcnRateControl>(&cfg.dcqcn);
        break;
    case CcKind::Dctcp:
        if (cfg.dctcp.persistentConnections)
        {
            opened = TakeConnection(qp, now);
            break;
        }
        qp.cc = std::make_unique<DctcpWindowControl>(&cfg.dctcp);
        break;
    case CcKind::DctcpRate:
        qp.cc = std::make_unique<DctcpRateControl>(&cfg.dctcpRate);
        break;
    case CcKind::Timely:
        qp.cc = std::make_unique<TimelyRateControl>(&cfg.timely);
        break;
    case CcKind::Hpcc:
        qp.cc = std::make_unique<HpccRateControl>(&cfg.hpcc);
        break;
    }
    if (qp.connection < 0)
    {
        qp.cc->Start(qp, now);
    }
    ++m_ctx->flowsStarted;
    if (m_handshake && opened)
    {
        // the data waits for the SYN-ACK (ReceiveHandshakeAck); the SYN's timer is the RTO
        qp.handshakePhase = 1;
        SendHandshake(qp, PacketKind::Data);
        ArmRetransmitTimer(qp, qp.rtoNs);
        return;
    }
    m_active.push_back(&qp);
    m_port->TryTransmit();
}

void
RdmaHostNode::SendHandshake(const QueuePair& qp, PacketKind kind)
{
    FabricPacket* p = m_ctx->pool.Allocate();
    p->kind = kind;
    // The SYN (Data) waits in the flow's data queue, behind data, as a SYN does; the sender's ACK
    // of the SYN-ACK (Ack, sender -> receiver unlike every other ACK) in the control queue.
    p->queue = kind == PacketKind::Data ? qp.queue : 0;
    p->ecnCapable = false; // RFC 3168 §6.1.1: a SYN is not ECN-capable
    p->wireBytes = m_ctx->cfg.ackBytes;
    p->sendNs = Simulator::Now().GetTimeStep();
    p->payloadBytes = 0; // the receiver tells a SYN by its empty payload
    StampForward(*p, qp);
    p->seq = 0;
    m_port->Enqueue(p);
}

bool
RdmaHostNode::ReceiveHandshakeAck(QueuePair& qp, FabricPacket* p)
{
    if (p->dstHost == qp.dstHost && p->dstHost != qp.srcHost)
    {
        // the sender's ACK reached the receiver: the handshake is over
        if (qp.handshakePhase == 2)
        {
            qp.handshakePhase = 0;
        }
        return true;
    }
    if (qp.handshakePhase == 1)
    {
        // the SYN-ACK: answer it, then the data may go
        const int64_t now = Simulator::Now().GetTimeStep();
        qp.handshakePhase = 2;
        qp.rtoEvent.Cancel();
        qp.rtoArmed = false;
        qp.lastProgressNs = now;
        qp.nextSendNs = now;
        if (m_ctx->cfg.dctcp.tcp.rtoEstimate)
        {
            static_cast<DctcpWindowControl&>(*qp.cc).OnRttSample(qp, now - p->sendNs);
        }
        SendHandshake(qp, PacketKind::Ack);
        m_active.push_back(&qp);
        m_port->TryTransmit();
        return true;
    }
    return p->seq == 0; // a duplicate SYN-ACK (data ACKs acknowledge at least one byte)
}

bool
RdmaHostNode::TakeConnection(QueuePair& qp, int64_t nowNs)
{
    // The TrafficGenerator client's rule (PRED; docs: algorithms/pred.md §5.1, ref [40]): the first idle
    // connection to the peer, in the order they were opened, else a new one.
    std::vector<Connection>& pool = m_connections[qp.dstHost];
    auto idle = std::find_if(pool.begin(), pool.end(), [](const Connection& c) { return !c.busy; });
    const bool opened = idle == pool.end();
    if (opened)
    {
        qp.cc = std::make_unique<DctcpWindowControl>(&m_ctx->cfg.dctcp);
        qp.cc->Start(qp, nowNs);
        pool.emplace_back();
        idle = std::prev(pool.end());
    }
    else
    {
        qp.cc = std::move(idle->cc);
        static_cast<DctcpWindowControl&>(*qp.cc).Resume(qp, nowNs);
    }
    idle->busy = true;
    qp.connection = static_cast<int32_t>(idle - pool.begin());
    return opened;
}

void
RdmaHostNode::OnRateChange(QueuePair& qp)
{
    // The pacing gap of the packet in flight was computed with the old rate; keep it (as NICs
    // do, and as the HPCC model's DCQCN does: it writes the rate without touching m_nextAvail),
    // but a queue pair waiting on a wake-up may now be due earlier. The HPCC model's NIC
    // schedules nothing on a DCQCN rate change, so in that mode neither do we.
    if (m_ctx->cfg.hpccNicWake)
    {
        return;
    }
    if (!qp.finished && qp.nextSendNs > Simulator::Now().GetTimeStep())
    {
        ScheduleWake(qp.nextSendNs);
    }
}

int64_t
RdmaHostNode::TxTimeNs(uint32_t bytes, double rateBps) const
{
    const double ns = bytes * 8e9 / rateBps;
    return m_ctx->cfg.truncateTxTime ? static_cast<int64_t>(ns) : std::llround(ns);
}

void
RdmaHostNode::ChangePacingRate(QueuePair& qp, double newRateBps)
{
    if (qp.lastPacketWireBytes > 0)
    {
        qp.nextSendNs += TxTimeNs(qp.lastPacketWireBytes, newRateBps) -
                         TxTimeNs(qp.lastPacketWireBytes, qp.rateBps);
    }
    qp.rateBps = newRateBps;
    if (qp.finished)
    {
        return;
    }
    const int64_t now = Simulator::Now().GetTimeStep();
    if (m_wakeEvent.IsPending() && qp.nextSendNs < m_wakeAtNs)
    {
        // QbbNetDevice::UpdateNextAvail: only a pending wake-up moves, and only earlier
        m_wakeEvent.Cancel();
        m_wakeAtNs = std::max(now, qp.nextSendNs);
        m_wakeEvent = Simulator::Schedule(NanoSeconds(m_wakeAtNs - now), &RdmaHostNode::Wake, this);
    }
    else if (!m_ctx->cfg.hpccNicWake && qp.nextSendNs > now)
    {
        ScheduleWake(qp.nextSendNs);
    }
}

FabricPacket*
RdmaHostNode::PullData(FabricNetDevice* port)
{
    const std::size_t n = m_active.size();
    if (n == 0)
    {
        return nullptr;
    }
    const int64_t now = TimingWheelScheduler::NowNs();
    // Round-robin from the queue pair after the one served last (the HPCC model's NIC scan).
    // Finished queue pairs leave the list lazily: those the scan passes before finding one to
    // serve are compacted out afterwards, keeping the others' order.
    std::size_t chosenIdx = n;
    std::size_t firstFinished = n;
    for (std::size_t i = 1; i <= n; ++i)
    {
        const std::size_t idx = (m_rrLast + i) % n;
        QueuePair* qp = m_active[idx];
        const bool blocked =
            qp->sndNxt >= qp->sizeBytes || port->IsPaused(qp->queue) || qp->IsWindowBound();
        if (!blocked)
        {
            if (qp->nextSendNs > now)
            {
                continue;
            }
            chosenIdx = idx;
            break;
        }
        if (qp->finished)
        {
            firstFinished = std::min(firstFinished, idx);
        }
    }
    if (firstFinished < n)
    {
        std::size_t kept = firstFinished;
        for (std::size_t i = firstFinished + 1; i < n; ++i)
        {
            if (!m_active[i]->finished)
            {
                if (i == chosenIdx)
                {
                    chosenIdx = kept;
                }
                m_active[kept++] = m_active[i];
            }
        }
        m_active.resize(kept);
    }
    if (chosenIdx >= m_active.size())
    {
        ScheduleWakeForPacing(port, now);
        return nullptr;
    }
    m_rrLast = static_cast<uint32_t>(chosenIdx);
    QueuePair* chosen = m_active[chosenIdx];
    QueuePair& qp = *chosen;
    const FabricConfig& cfg = m_ctx->cfg;
    const uint32_t payload =
        static_cast<uint32_t>(std::min<uint64_t>(cfg.mtuPayloadBytes, qp.sizeBytes - qp.sndNxt));
    FabricPacket* p = m_ctx->pool.Allocate();
    p->kind = PacketKind::Data;
    p->queue = qp.queue;
    p->ecnCapable = true;
    p->wireBytes = payload + cfg.dataHeaderBytes + DataFeedbackBytes(cfg.cc);
    p->sendNs = now;
    p->payloadBytes = payload;
    StampForward(*p, qp);
    p->seq = qp.sndNxt;
    if (qp.sndNxt < qp.maxSent)
    {
        qp.retransmittedBytes += payload;
        m_ctx->counters.retransmittedBytes += payload;
    }
    qp.sndNxt += payload;
    qp.maxSent = std::max(qp.maxSent, qp.sndNxt);
    qp.lastPacketWireBytes = p->wireBytes;
    qp.nextSendNs = now + TxTimeNs(p->wireBytes, qp.rateBps);
    port->CountFlow(&qp.portStamp[0], m_ctx->epoch);
    qp.cc->OnDataSent(qp, payload, now);
    if (!qp.rtoArmed)
    {
        qp.lastProgressNs = now;
        ArmRetransmitTimer(qp, qp.rtoNs);
    }
    return p;
}

void
RdmaHostNode::ScheduleWakeForPacing(FabricNetDevice* port, int64_t now)
{
    // Nothing may be sent now: wake up when the earliest paced queue pair becomes due.
    int64_t earliest = INT64_MAX;
    const bool hpcc = m_ctx->cfg.hpccNicWake;
    for (const QueuePair* qp : m_active)
    {
        if (hpcc)
        {
            // The HPCC model's ns-3.36 port takes the minimum over every queue pair in the NIC's
            // list, including those that have sent everything (or finished and are not yet
            // compacted out): one of those in the past means no wake-up is scheduled at all.
            earliest = std::min(earliest, qp->nextSendNs);
        }
        else if (qp->sndNxt < qp->sizeBytes && !port->IsPaused(qp->queue) && !qp->IsWindowBound())
        {
            // (a window-limited queue pair is woken by the ACK that opens its window, a paused
            // one by the RESUME)
            earliest = std::min(earliest, qp->nextSendNs);
        }
    }
    if (earliest != INT64_MAX && earliest > now)
    {
        ScheduleWake(earliest);
    }
}

void
RdmaHostNode::ScheduleWake(int64_t atNs)
{
    if (m_wakeEvent.IsPending() && m_wakeAtNs <= atNs)
    {
        return;
    }
    m_wakeEvent.Cancel();
    m_wakeAtNs = atNs;
    m_wakeEvent = Simulator::Schedule(NanoSeconds(atNs - Simulator::Now().GetTimeStep()),
                                      &RdmaHostNode::Wake,
                                      this);
}

void
RdmaHostNode::Wake()
{
    m_wakeAtNs = -1;
    m_port->TryTransmit();
}

void
RdmaHostNode::ReceivePacket(FabricNetDevice* port, FabricPacket* p)
{
    switch (p->kind)
    {
    case PacketKind::Data:
        ReceiveData(p);
        break;
    case PacketKind::Ack:
        ReceiveAck(p);
        break;
    case PacketKind::Nack:
        ReceiveNack(p);
        break;
    case PacketKind::Cnp: {
        QueuePair& qp = m_ctx->flows[p->flowId];
        if (!qp.finished)
        {
            qp.cc->OnCongestionNotification(qp, Simulator::Now().GetTimeStep());
        }
        break;
    }
    case PacketKind::Pfc:
        break;
    }
    m_ctx->pool.Release(p);
}

void
RdmaHostNode::SendControl(PacketKind kind, const QueuePair& qp, uint64_t seq, bool ce,
                          const FabricPacket* data)
{
    const FabricConfig& cfg = m_ctx->cfg;
    FabricPacket* c = m_ctx->pool.Allocate();
    c->kind = kind;
    c->queue = 0;
    c->wireBytes = kind == PacketKind::Cnp ? cfg.cnpBytes : cfg.ackBytes + AckFeedbackBytes(cfg.cc);
    if (data != nullptr && kind != PacketKind::Cnp)
    {
        // ACKs and NACKs echo the data packet's feedback (its send time, its INT records)
        c->sendNs = data->sendNs;
        if (cfg.cc == CcKind::Hpcc)
        {
            // Only HPCC's switches push INT records (SwitchNode::NotifyDequeue): under any other
            // congestion control both stacks are empty (a packet is zeroed when allocated), and
            // copying would only read the data packet's third cache line (issue 12: at k = 16 that
            // miss was three quarters of this function's time).
            c->ints = data->ints;
        }
    }
    c->flowId = qp.flowId;
    c->srcHost = qp.dstHost; // control packets travel receiver -> sender
    c->dstHost = qp.srcHost;
    c->flowHash = qp.flowHash ^ 0x5bd1e995U;
    c->SetEcmpWords(qp.dstAddr, qp.srcAddr, qp.dstPort, qp.srcPort);
    c->flowQueue = qp.queue;
    c->seq = seq;
    c->ce = ce;
    if (qp.extraDelayNs > 0)
    {
        // The flow's extra base delay (ECN#; docs: algorithms/ecn-sharp.md §8 note 3): the receiver's stack answers late.
        Simulator::Schedule(NanoSeconds(qp.extraDelayNs), &RdmaHostNode::EnqueueControl, this, c);
        return;
    }
    m_port->Enqueue(c);
}

void
RdmaHostNode::EnqueueControl(FabricPacket* c)
{
    m_port->Enqueue(c);
}

void
RdmaHostNode::ReceiveData(FabricPacket* p)
{
    QueuePair& qp = m_ctx->flows[p->flowId];
    if (p->payloadBytes == 0)
    {
        // a SYN (TcpHostConfig::handshake; every data packet carries payload): answer with the
        // SYN-ACK, again for a retransmitted SYN
        SendControl(PacketKind::Ack, qp, 0, false, p);
        return;
    }
    const FabricConfig& cfg = m_ctx->cfg;
    const int64_t now = TimingWheelScheduler::NowNs();
    if (p->ce && cfg.ecnFeedback == EcnFeedback::Cnp && now - qp.lastCnpNs >= cfg.cnpIntervalNs)
    {
        qp.lastCnpNs = now;
        SendControl(PacketKind::Cnp, qp, 0, true, nullptr);
    }
    if (p->seq == qp.rcvNxt)
    {
        if (m_delayedAck)
        {
            ReceiveInOrderDelayed(qp, p);
            return;
        }
        qp.rcvNxt += p->payloadBytes;
        qp.ceSinceAck |= p->ce;
        if (++qp.unackedPackets >= cfg.ackIntervalPackets || qp.rcvNxt >= qp.sizeBytes)
        {
            SendControl(PacketKind::Ack, qp, qp.rcvNxt, qp.ceSinceAck, p);
            qp.unackedPackets = 0;
            qp.ceSinceAck = false;
        }
    }
    else if (p->seq > qp.rcvNxt)
    {
        // Go-back-N: one NACK per gap; the sender's timer covers a lost NACK.
        if (qp.lastNackSeq != qp.rcvNxt)
        {
            qp.lastNackSeq = qp.rcvNxt;
            SendControl(PacketKind::Nack, qp, qp.rcvNxt, false, p);
        }
    }
    else
    {
        SendControl(PacketKind::Ack, qp, qp.rcvNxt, false, p); // duplicate: re-acknowledge
    }
}

void
RdmaHostNode::ReceiveInOrderDelayed(QueuePair& qp, FabricPacket* p)
{
    if (p->ce != qp.ceState)
    {
        // RFC 8257 §3.2: on a change of CE state, acknowledge the packets received so far at
        // once, with the old state's ECE, then delay ACKs again with the new one
        if (qp.unackedPackets > 0)
        {
            SendDelayedAck(qp, p);
        }
        qp.ceState = p->ce;
    }
    qp.rcvNxt += p->payloadBytes;
    if (++qp.unackedPackets == 1)
    {
        qp.delAckEchoNs = p->sendNs; // an ACK echoes the earliest unacknowledged packet (RFC 7323)
    }
    if (qp.unackedPackets >= 2 || qp.rcvNxt >= qp.sizeBytes)
    {
        SendDelayedAck(qp, p);
    }
    else if (qp.unackedPackets == 1)
    {
        qp.delAckEvent = Simulator::Schedule(NanoSeconds(m_ctx->cfg.dctcp.tcp.delayedAckTimeoutNs),
                                             &RdmaHostNode::DelayedAckTimeout,
                                             this,
                                             &qp);
    }
}

void
RdmaHostNode::SendDelayedAck(QueuePair& qp, FabricPacket* p)
{
    const int64_t sendNs = p->sendNs;
    p->sendNs = qp.delAckEchoNs;
    SendControl(PacketKind::Ack, qp, qp.rcvNxt, qp.ceState, p);
    p->sendNs = sendNs;
    qp.unackedPackets = 0;
    qp.delAckEvent.Cancel();
}

void
RdmaHostNode::DelayedAckTimeout(QueuePair* qp)
{
    if (qp->unackedPackets == 0)
    {
        return;
    }
    FabricPacket echo{};
    echo.sendNs = qp->delAckEchoNs;
    SendDelayedAck(*qp, &echo);
}

void
RdmaHostNode::ReceiveAck(FabricPacket* p)
{
    QueuePair& qp = m_ctx->flows[p->flowId];
    if (qp.handshakePhase != 0 && ReceiveHandshakeAck(qp, p))
    {
        return;
    }
    if (qp.finished)
    {
        return;
    }
    const int64_t now = TimingWheelScheduler::NowNs();
    uint64_t newly = 0;
    if (p->seq > qp.sndUna)
    {
        newly = p->seq - qp.sndUna;
        qp.sndUna = p->seq;
        qp.lastProgressNs = now;
        if (qp.sndNxt < qp.sndUna)
        {
            qp.sndNxt = qp.sndUna;
        }
    }
    qp.rwndBytes = p->rwndBytes; // every ACK advertises a window: a switch may have lowered it
    if (p->ce && m_ctx->cfg.ecnFeedback == EcnFeedback::AckEcho)
    {
        qp.cc->OnCongestionNotification(qp, now);
    }
    qp.cc->OnAck(qp, newly, p->ce, now);
    qp.cc->OnAckFeedback(qp, *p, now);
    if (qp.sndUna >= qp.sizeBytes)
    {
        FinishFlow(qp);
    }
    // An ACK may open a window or end a flow: give the NIC a chance to send (HPCC's NIC does the
    // same on every ACK).
    m_port->TryTransmit();
}

void
RdmaHostNode::ReceiveNack(FabricPacket* p)
{
    QueuePair& qp = m_ctx->flows[p->flowId];
    if (qp.finished)
    {
        return;
    }
    if (p->seq > qp.sndUna)
    {
        qp.sndUna = p->seq;
        qp.lastProgressNs = Simulator::Now().GetTimeStep();
    }
    if (p->seq < qp.sndNxt)
    {
        qp.sndNxt = std::max(p->seq, qp.sndUna); // go back N
        if (m_tcpLoss)
        {
            static_cast<DctcpWindowControl&>(*qp.cc).OnLoss(qp, false, Simulator::Now().GetTimeStep());
        }
    }
    m_port->TryTransmit();
}

void
RdmaHostNode::ArmRetransmitTimer(QueuePair& qp, int64_t delayNs)
{
    qp.rtoArmed = true;
    qp.rtoEvent =
        Simulator::Schedule(NanoSeconds(delayNs), &RdmaHostNode::RetransmitTimeout, this, &qp);
}

void
RdmaHostNode::RetransmitTimeout(QueuePair* qp)
{
    qp->rtoArmed = false;
    if (qp->handshakePhase == 1)
    {
        // no SYN-ACK: send the SYN again, with the timer backed off (RFC 6298 §5.5)
        ++m_ctx->counters.retransmitTimeouts;
        if (m_ctx->cfg.dctcp.tcp.rtoEstimate)
        {
            qp->rtoNs = std::min(2 * qp->rtoNs, m_ctx->cfg.dctcp.tcp.maxRtoNs);
        }
        SendHandshake(*qp, PacketKind::Data);
        ArmRetransmitTimer(*qp, qp->rtoNs);
        return;
    }
    if (qp->finished || qp->sndUna >= qp->sndNxt)
    {
        return; // nothing outstanding: the next send re-arms the timer
    }
    const int64_t now = Simulator::Now().GetTimeStep();
    const int64_t rto = qp->rtoNs;
    if (now - qp->lastProgressNs >= rto)
    {
        qp->sndNxt = qp->sndUna; // go back N
        ++m_ctx->counters.retransmitTimeouts;
        qp->lastProgressNs = now;
        if (m_tcpLoss)
        {
            static_cast<DctcpWindowControl&>(*qp->cc).OnLoss(*qp, true, now); // (backs qp->rtoNs off)
        }
        ArmRetransmitTimer(*qp, qp->rtoNs);
        m_port->TryTransmit();
    }
    else
    {
        ArmRetransmitTimer(*qp, qp->lastProgressNs + rto - now);
    }
}

void
RdmaHostNode::FinishFlow(QueuePair& qp)
{
    qp.finished = true;
    qp.finishNs = Simulator::Now().GetTimeStep();
    qp.cc->Stop();
    qp.rtoEvent.Cancel();
    qp.rtoArmed = false;
    if (m_delayedAck)
    {
        qp.delAckEvent.Cancel();
    }
    // The queue pair stays in m_active until a PullData scan compacts it out (HPCC's NIC does).
    if (qp.connection >= 0)
    {
        // the connection goes idle with the flow's congestion state, for the pair's next flow
        Connection& conn = m_connections[qp.dstHost][qp.connection];
        conn.cc = std::move(qp.cc);
        conn.busy = false;
    }
    qp.cc.reset();
    if (++m_ctx->flowsCompleted == m_ctx->flows.size() && m_ctx->stopWhenAllComplete)
    {
        Simulator::Stop();
    }
}

void
RdmaHostNode::DoDispose()
{
    m_wakeEvent.Cancel();
    m_active.clear();
    m_connections.clear();
    m_port = nullptr;
    Node::DoDispose();
}

} // namespace ecngym
} // namespace ns3
