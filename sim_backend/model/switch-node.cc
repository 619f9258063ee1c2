/* SPDX-License-Identifier: GPL-2.0-only */
#include "switch-node.h"

#include "fast-random.h"
#include "timing-wheel-scheduler.h"

#include "ns3/abort.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <map>

namespace ns3
{
namespace ecngym
{

NS_OBJECT_ENSURE_REGISTERED(SwitchNode);

TypeId
SwitchNode::GetTypeId()
{
    static TypeId tid = TypeId("ns3::ecngym::SwitchNode")
                            .SetParent<Node>()
                            .SetGroupName("Ecngym")
                            .AddConstructor<SwitchNode>();
    return tid;
}

SwitchNode::SwitchNode() = default;

void
SwitchNode::Setup(uint32_t switchIndex,
                  uint32_t nodeIndex,
                  FabricContext* ctx,
                  std::vector<Ptr<FabricNetDevice>> ports)
{
    m_switchIndex = switchIndex;
    m_nodeIndex = nodeIndex;
    m_ctx = ctx;
    m_ports.clear();
    for (auto& port : ports)
    {
        m_ports.push_back(PortSlot{std::move(port), nullptr});
    }
    const FabricConfig& cfg = ctx->cfg;
    m_hashSalt = SplitMix64(cfg.seed ^ (0xec3e000000000000ULL + switchIndex));
    m_mmu.Setup(static_cast<uint32_t>(m_ports.size()), cfg.numQueues, cfg.mmu);
    m_paused.assign(m_ports.size() * cfg.numQueues, 0);
    m_pauseRefresh.assign(m_ports.size() * cfg.numQueues, EventId());
    m_aqmIngress.assign(m_ports.size(), 0);
    m_intRateIndex.clear();
    for (const auto& slot : m_ports)
    {
        const FabricNetDevice* port = PeekPointer(slot.device);
        const auto& rates = cfg.hpcc.linkRates;
        m_intRateIndex.push_back(static_cast<uint32_t>(
            std::find(rates.begin(), rates.end(), port->GetRateBps()) - rates.begin()));
        SetAqm(port->GetLocalIndex(), ctx->aqmFactory.Create<PortAqmPolicy>());
    }
}

uint64_t
SwitchNode::AqmSeed(const FabricNetDevice* port) const
{
    return SplitMix64(m_ctx->cfg.seed ^ (0xa9e0000000000000ULL + port->GetPortId()));
}

void
SwitchNode::SetAqm(uint16_t port, Ptr<PortAqmPolicy> policy)
{
    PortSlot& slot = m_ports[port];
    if (slot.aqm != nullptr)
    {
        slot.aqm->Detach();
    }
    policy->SetStreamSeed(AqmSeed(PeekPointer(slot.device)));
    policy->Attach(this, slot.device->GetPortId(), slot.device->GetRateBps());
    slot.aqm = policy;
    m_aqmIngress[port] = policy->WantsIngress() ? 1 : 0;
}

AqmContext
SwitchNode::MakeAqmContext(const FabricNetDevice* port, uint8_t queue) const
{
    AqmContext ctx;
    ctx.nowNs = TimingWheelScheduler::NowNs();
    ctx.portId = port->GetPortId();
    ctx.queueBytes = port->GetQueueBytes(queue);
    ctx.portDataBytes = port->GetDataQueueBytes();
    ctx.linkRateBps = port->GetRateBps();
    return ctx;
}

void
SwitchNode::SetRoutes(std::vector<std::vector<uint16_t>> routes)
{
    std::map<std::vector<uint16_t>, uint16_t> setIndex;
    std::vector<const std::vector<uint16_t>*> sets;
    m_routeSet.assign(routes.size(), 0);
    std::size_t largest = 0;
    for (std::size_t host = 0; host < routes.size(); ++host)
    {
        auto [it, isNew] = setIndex.try_emplace(routes[host], setIndex.size());
        if (isNew)
        {
            NS_ABORT_MSG_IF(setIndex.size() > 65536, "more than 65536 distinct next-hop sets");
            sets.push_back(&it->first);
            largest = std::max(largest, it->first.size());
        }
        m_routeSet[host] = it->second;
    }
    m_setStride = static_cast<uint32_t>(1 + largest);
    m_sets.assign(sets.size() * m_setStride, 0);
    for (std::size_t i = 0; i < sets.size(); ++i)
    {
        uint16_t* set = m_sets.data() + i * m_setStride;
        set[0] = static_cast<uint16_t>(sets[i]->size());
        std::copy(sets[i]->begin(), sets[i]->end(), set + 1);
    }
    for (PortSlot& slot : m_ports)
    {
        slot.device->SetRouteHint(m_routeSet.data(), m_sets.data());
    }
}

uint16_t
SwitchNode::Route(const FabricPacket* p) const
{
    const uint16_t* set = m_sets.data() + m_routeSet[p->dstHost] * m_setStride;
    const uint32_t count = set[0];
    const uint16_t* next = set + 1;
    if (count == 1)
    {
        return next[0];
    }
    if (m_ctx->cfg.ecmpHash == EcmpHash::Hpcc)
    {
        // the words were taken from the queue pair, in the packet's direction, when it was built
        const uint32_t h =
            Murmur3Of3Words(p->ecmpWords[0], p->ecmpWords[1], p->ecmpWords[2], m_nodeIndex);
        return next[h % count];
    }
    const uint64_t h = SplitMix64(m_hashSalt ^ p->flowHash);
    return next[h % count];
}

void
SwitchNode::ReceivePacket(FabricNetDevice* port, FabricPacket* p)
{
    const uint16_t inPort = port->GetLocalIndex();
    p->ingressPort = inPort;
    if (p->kind != PacketKind::Data && m_aqmIngress[inPort])
    {
        // The ingress hook sees the state of the same port's egress queues (R-AQM §IV-A; docs: algorithms/r-aqm.md §3.1).
        const AqmVerdict v = m_ports[inPort].aqm->OnIngress(MakeAqmContext(port, 0), *p);
        if (v == AqmVerdict::Hold)
        {
            return;
        }
        if (v == AqmVerdict::Drop)
        {
            m_ctx->pool.Release(p);
            return;
        }
    }
    Forward(p);
}

void
SwitchNode::ForwardHeld(FabricPacket* p)
{
    Forward(p);
}

void
SwitchNode::DropHeld(FabricPacket* p)
{
    m_ctx->pool.Release(p);
}

void
SwitchNode::Forward(FabricPacket* p)
{
    const PortSlot& out = m_ports[Route(p)];
    FabricNetDevice* egress = PeekPointer(out.device);
    PortAqmPolicy* aqm = PeekPointer(out.aqm);
    const bool isData = p->kind == PacketKind::Data;
    if (!isData)
    {
        if (!m_ctx->cfg.ackInFlowQueue ||
            (p->kind != PacketKind::Ack && p->kind != PacketKind::Nack))
        {
            // Strict-priority control queue: no shared-buffer accounting, but the AQM hooks.
            p->queue = 0;
            if (aqm->OnEnqueue(MakeAqmContext(egress, 0), *p) == AqmVerdict::Drop)
            {
                m_ctx->pool.Release(p);
                return;
            }
            egress->Enqueue(p);
            return;
        }
        // HPCC-model switch: ACK / NACK join the data queue of the flow's priority.
        p->queue = p->flowQueue;
    }
    const uint16_t inPort = p->ingressPort;
    const uint8_t q = p->queue;
    ++p->hop;
    if (!m_mmu.Admit(inPort, q, p->wireBytes))
    {
        CountDrop(egress, p);
        m_ctx->pool.Release(p);
        return;
    }
    const bool wasCe = p->ce;
    if (aqm->OnEnqueue(MakeAqmContext(egress, q), *p) == AqmVerdict::Drop)
    {
        m_mmu.Release(inPort, q, p->wireBytes);
        CountDrop(egress, p);
        m_ctx->pool.Release(p);
        return;
    }
    if (p->ce && !wasCe)
    {
        ++egress->Telemetry().ecnMarked;
    }
    if (isData && p->hop < kMaxHops)
    {
        egress->CountFlow(&m_ctx->flows[p->flowId].portStamp[p->hop], m_ctx->epoch);
    }
    egress->Enqueue(p);
    CheckPause(inPort, q);
}

void
SwitchNode::CountDrop(FabricNetDevice* egress, const FabricPacket* p)
{
    // The drop counters count data packets; an ACK / NACK lost in a data queue (ackInFlowQueue)
    // is recovered by the sender's timer like a lost data packet, but is not counted.
    if (p->kind == PacketKind::Data)
    {
        ++egress->Telemetry().drops;
        ++m_ctx->counters.drops;
    }
}

void
SwitchNode::NotifyDequeue(FabricNetDevice* port, FabricPacket* p)
{
    const uint8_t q = p->queue;
    m_mmu.Release(p->ingressPort, q, p->wireBytes);
    if (m_ctx->cfg.cc == CcKind::Hpcc && p->kind == PacketKind::Data)
    {
        // HPCC's INT (Li et al. §4.1; the model's SwitchNotifyDequeue): time, bytes sent before
        // this packet, the queue it leaves behind, the link rate
        p->ints.Push(Simulator::Now().GetTimeStep(),
                     port->GetTxBytesTotal(),
                     port->GetTotalQueueBytes(),
                     m_intRateIndex[port->GetLocalIndex()],
                     m_ctx->cfg.hpcc.intMulti);
    }
    const bool wasCe = p->ce;
    m_ports[port->GetLocalIndex()].aqm->OnDequeue(MakeAqmContext(port, q), *p);
    if (p->ce && !wasCe)
    {
        ++port->Telemetry().ecnMarked;
    }
    CheckResume(p->ingressPort, q);
}

void
SwitchNode::NotifyControlDequeue(FabricNetDevice* port, FabricPacket* p)
{
    m_ports[port->GetLocalIndex()].aqm->OnDequeue(MakeAqmContext(port, 0), *p);
}

int64_t
SwitchNode::PauseDurationNs(uint16_t inPort) const
{
    // One quantum is the time to send 512 bits at the port's rate.
    return static_cast<int64_t>(m_ctx->cfg.pauseQuanta * 512.0e9 / m_ports[inPort].device->GetRateBps());
}

void
SwitchNode::CheckPause(uint16_t inPort, uint8_t queue)
{
    uint8_t& paused = m_paused[inPort * m_ctx->cfg.numQueues + queue];
    if (paused || !m_mmu.ShouldPause(inPort, queue))
    {
        return;
    }
    paused = 1;
    SendPauseAndArmRefresh(inPort, queue);
}

void
SwitchNode::SendPauseAndArmRefresh(uint16_t inPort, uint8_t queue)
{
    SendPfc(inPort, queue, true);
    // Real PFC refreshes XOFF before the pause time runs out while congestion lasts.
    m_pauseRefresh[inPort * m_ctx->cfg.numQueues + queue] =
        Simulator::Schedule(NanoSeconds(PauseDurationNs(inPort) / 2),
                            &SwitchNode::RefreshPause,
                            this,
                            inPort,
                            queue);
}

void
SwitchNode::RefreshPause(uint16_t inPort, uint8_t queue)
{
    uint8_t& paused = m_paused[inPort * m_ctx->cfg.numQueues + queue];
    if (!paused)
    {
        return;
    }
    if (m_mmu.ShouldResume(inPort, queue))
    {
        paused = 0;
        SendPfc(inPort, queue, false);
        return;
    }
    SendPauseAndArmRefresh(inPort, queue);
}

void
SwitchNode::CheckResume(uint16_t inPort, uint8_t queue)
{
    const std::size_t i = inPort * m_ctx->cfg.numQueues + queue;
    if (!m_paused[i] || !m_mmu.ShouldResume(inPort, queue))
    {
        return;
    }
    m_paused[i] = 0;
    m_pauseRefresh[i].Cancel();
    SendPfc(inPort, queue, false);
}

void
SwitchNode::SendPfc(uint16_t inPort, uint8_t queue, bool pause)
{
    FabricPacket* f = m_ctx->pool.Allocate();
    f->kind = PacketKind::Pfc;
    f->queue = queue;
    f->wireBytes = m_ctx->cfg.pfcFrameBytes;
    f->pauseNs = pause ? PauseDurationNs(inPort) : 0;
    FabricNetDevice* port = PeekPointer(m_ports[inPort].device);
    if (pause)
    {
        ++port->Telemetry().pfcPauseSent;
    }
    port->EnqueuePfcFrame(f);
}

void
SwitchNode::DoDispose()
{
    for (auto& refresh : m_pauseRefresh)
    {
        refresh.Cancel();
    }
    for (auto& slot : m_ports)
    {
        if (slot.aqm != nullptr)
        {
            slot.aqm->Dispose();
        }
    }
    m_ports.clear();
    Node::DoDispose();
}

} // namespace ecngym
} // namespace ns3
