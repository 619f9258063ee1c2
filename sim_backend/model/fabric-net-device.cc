/* SPDX-License-Identifier: GPL-2.0-only */
#include "fabric-net-device.h"

#include "timing-wheel-scheduler.h"

#include "fabric-events.h"

#include "ns3/simulator.h"

#include <algorithm>
#include <cmath>

namespace ns3
{
namespace ecngym
{

NS_OBJECT_ENSURE_REGISTERED(FabricNetDevice);

TypeId
FabricNetDevice::GetTypeId()
{
    static TypeId tid = TypeId("ns3::ecngym::FabricNetDevice")
                            .SetParent<NetDevice>()
                            .SetGroupName("Ecngym")
                            .AddConstructor<FabricNetDevice>();
    return tid;
}

FabricNetDevice::FabricNetDevice() = default;

void
FabricNetDevice::Setup(FabricPortOwner* owner,
                       uint32_t portId,
                       uint16_t localIndex,
                       double rateBps,
                       uint8_t numQueues,
                       FabricCounters* counters,
                       PacketPool* pool)
{
    m_pool = pool;
    m_owner = owner;
    m_portId = portId;
    m_localIndex = localIndex;
    m_rateBps = rateBps;
    m_psPerByte = 8.0e12 / rateBps;
    m_rateBpsInt = static_cast<uint64_t>(std::llround(rateBps)); // rateBps >= 1 (Fabric::Build)
    m_numQueues = numQueues;
    m_counters = counters;
    m_lastQueueChangeNs = Simulator::Now().GetTimeStep();
}

void
FabricNetDevice::SetChannel(Ptr<FabricChannel> channel)
{
    m_channel = channel;
    m_linkDelayNs = channel->GetDelayNs();
}

void
FabricNetDevice::Enqueue(FabricPacket* p)
{
    const int64_t now = TimingWheelScheduler::NowNs();
    p->enqueueNs = now;
    p->next = nullptr;
    Fifo& f = m_queues[p->queue];
    if (p->queue != 0)
    {
        AdvanceQueueIntegral(now);
        m_dataBytes += p->wireBytes;
        if (p->kind == PacketKind::Data)
        {
            ++m_tel.enqueuedDataPackets;
        }
        m_tel.maxQueueBytes = std::max(m_tel.maxQueueBytes, m_dataBytes);
    }
    if (f.tail == nullptr)
    {
        f.head = p;
        m_nonEmptyMask |= static_cast<uint8_t>(1U << p->queue);
    }
    else
    {
        f.tail->next = p;
    }
    f.tail = p;
    f.bytes += p->wireBytes;
    TryTransmit();
}

void
FabricNetDevice::EnqueuePfcFrame(FabricPacket* p)
{
    p->enqueueNs = TimingWheelScheduler::NowNs();
    Fifo& f = m_queues[0];
    p->next = f.head;
    f.head = p;
    m_nonEmptyMask |= 1U;
    if (f.tail == nullptr)
    {
        f.tail = p;
    }
    f.bytes += p->wireBytes;
    TryTransmit();
}

FabricPacket*
FabricNetDevice::DequeueEligible()
{
    uint8_t chosenQueue = 0;
    if ((m_nonEmptyMask & 1U) == 0) // the control queue is empty (its bit mirrors its head)
    {
        // Round-robin over the non-empty, unpaused data queues (bit q of each mask = queue q),
        // starting at m_rrNext.
        const unsigned ready = m_nonEmptyMask & ~m_pausedMask & ~1U;
        if (ready == 0)
        {
            return nullptr;
        }
        const unsigned fromNext = ready & (~0U << m_rrNext);
        chosenQueue = static_cast<uint8_t>(__builtin_ctz(fromNext != 0 ? fromNext : ready));
        m_rrNext = static_cast<uint8_t>(chosenQueue + 1 < m_numQueues ? chosenQueue + 1 : 1);
    }
    Fifo* chosen = &m_queues[chosenQueue];
    FabricPacket* p = chosen->head;
    chosen->head = p->next;
    if (chosen->head == nullptr)
    {
        chosen->tail = nullptr;
        m_nonEmptyMask &= static_cast<uint8_t>(~(1U << chosenQueue));
    }
    else
    {
        // The new head leaves at this port's next transmission: start loading it now (on a
        // large fabric a queued packet is rarely still cached). A prefetch changes no result.
        __builtin_prefetch(chosen->head);
    }
    chosen->bytes -= p->wireBytes;
    p->next = nullptr;
    if (chosenQueue != 0)
    {
        AdvanceQueueIntegral(TimingWheelScheduler::NowNs());
        m_dataBytes -= p->wireBytes;
        m_owner->NotifyDequeue(this, p);
    }
    else if (p->kind != PacketKind::Pfc)
    {
        m_owner->NotifyControlDequeue(this, p);
    }
    return p;
}

bool
FabricNetDevice::IsBusy() const
{
    if (!m_busy || m_txEndUid == 0)
    {
        return m_busy;
    }
    return !FabricSimulatorImpl::Active()->IsBeforeCurrent(m_txEndNs, m_txEndUid);
}

bool
FabricNetDevice::StillSerialising()
{
    if (m_txEndUid == 0)
    {
        return true; // the end of the serialisation is a scheduled event
    }
    FabricSimulatorImpl* sim = FabricSimulatorImpl::Active();
    if (sim->IsBeforeCurrent(m_txEndNs, m_txEndUid))
    {
        // It ended before the event running now, with nothing queued: as its event would have.
        m_busy = false;
        m_txEndUid = 0;
        return false;
    }
    // Something now waits for the wire: the end becomes an event, in the place its uid keeps.
    sim->ScheduleTransmitCompleteAt(m_txEndNs, m_txEndUid, this);
    m_txEndUid = 0;
    return true;
}

void
FabricNetDevice::TryTransmit()
{
    if (m_busy && StillSerialising())
    {
        return;
    }
    FabricPacket* p = DequeueEligible();
    if (p == nullptr)
    {
        p = m_owner->PullData(this);
        if (p == nullptr)
        {
            return;
        }
    }
    m_busy = true;
    int64_t txNs;
    if (m_truncateTxTime)
    {
        txNs = static_cast<int64_t>(p->wireBytes * 8000000000ULL / m_rateBpsInt);
    }
    else
    {
        const int64_t totalPs =
            std::llround(static_cast<double>(p->wireBytes) * m_psPerByte) + m_residualPs;
        txNs = totalPs / 1000;
        m_residualPs = totalPs - txNs * 1000;
    }
    m_tel.txBytes += p->wireBytes;
    m_txBytesTotal += p->wireBytes;
    if (p->kind == PacketKind::Data)
    {
        m_tel.txDataBytes += p->wireBytes;
        ++m_tel.txDataPackets;
        ++m_counters->dataPacketHops;
    }
    else
    {
        ++m_tel.txControlPackets;
        ++m_counters->controlPacketHops;
    }
    // The end of this serialisation does nothing if no queued packet may leave then and the owner
    // offers none (a switch; a host with no queue pair sending): only an Enqueue(), an Unpause()
    // or the owner can change that, and each calls TryTransmit(). So keep the event's uid and
    // schedule it there, if it is needed at all.
    const bool waiting = (m_nonEmptyMask & ~m_pausedMask) != 0;
    FabricSimulatorImpl* sim =
        waiting || m_owner->MayOfferData() ? nullptr : FabricSimulatorImpl::Active();
    if (sim != nullptr)
    {
        m_txEndNs = TimingWheelScheduler::NowNs() + txNs;
        m_txEndUid = sim->ReserveUid();
    }
    else
    {
        ScheduleTransmitComplete(txNs, this);
    }
    // straight to the far end, without touching the channel object (one more cache line per hop
    // on a large fabric)
    SchedulePacketArrival(txNs + m_linkDelayNs, m_peer, p);
}

void
FabricNetDevice::TransmitComplete()
{
    m_busy = false;
    TryTransmit();
}

void
FabricNetDevice::Receive(FabricPacket* p)
{
    if (p->kind == PacketKind::Pfc)
    {
        HandlePfc(p);
        return;
    }
    m_owner->ReceivePacket(this, p);
}

void
FabricNetDevice::HandlePfc(FabricPacket* p)
{
    const uint8_t q = p->queue;
    const int64_t pauseNs = p->pauseNs;
    // The frame is consumed here: hop-by-hop flow control is never forwarded.
    m_pool->Release(p);
    if (m_pfcLog != nullptr)
    {
        m_pfcLog->push_back(
            PfcEvent{Simulator::Now().GetTimeStep(), m_portId, static_cast<uint8_t>(pauseNs > 0)});
    }
    if (pauseNs > 0)
    {
        ++m_tel.pfcPauseReceived;
        if (!m_paused[q])
        {
            m_paused[q] = true;
            m_pausedMask |= static_cast<uint8_t>(1U << q);
            if (m_pausedCount++ == 0)
            {
                m_pausedSinceNs = Simulator::Now().GetTimeStep();
            }
        }
        m_pauseExpiry[q].Cancel();
        m_pauseExpiry[q] =
            Simulator::Schedule(NanoSeconds(pauseNs), &FabricNetDevice::Unpause, this, q);
    }
    else
    {
        m_pauseExpiry[q].Cancel();
        Unpause(q);
    }
}

void
FabricNetDevice::Unpause(uint8_t queue)
{
    if (!m_paused[queue])
    {
        return;
    }
    m_paused[queue] = false;
    m_pausedMask &= static_cast<uint8_t>(~(1U << queue));
    if (--m_pausedCount == 0)
    {
        m_tel.pausedNs += Simulator::Now().GetTimeStep() - m_pausedSinceNs;
    }
    TryTransmit();
}

PortTelemetry
FabricNetDevice::ReadInterval()
{
    const int64_t now = Simulator::Now().GetTimeStep();
    AdvanceQueueIntegral(now);
    if (m_pausedCount > 0)
    {
        m_tel.pausedNs += now - m_pausedSinceNs;
        m_pausedSinceNs = now;
    }
    PortTelemetry out = m_tel;
    m_tel = PortTelemetry{};
    m_tel.maxQueueBytes = m_dataBytes;
    return out;
}

uint64_t
FabricNetDevice::DrainQueues(PacketPool& pool)
{
    uint64_t payload = 0;
    for (Fifo& f : m_queues)
    {
        while (f.head != nullptr)
        {
            FabricPacket* p = f.head;
            f.head = p->next;
            payload += p->payloadBytes;
            pool.Release(p);
        }
        f.tail = nullptr;
        f.bytes = 0;
    }
    m_nonEmptyMask = 0;
    m_dataBytes = 0;
    return payload;
}

void
FabricNetDevice::DoDispose()
{
    for (auto& ev : m_pauseExpiry)
    {
        ev.Cancel();
    }
    m_channel = nullptr;
    m_node = nullptr;
    m_owner = nullptr;
    NetDevice::DoDispose();
}

void
PacketArrivalEvent::Notify()
{
    m_device->Receive(m_packet);
}

void
TransmitCompleteEvent::Notify()
{
    m_device->TransmitComplete();
}

// --- ns3::NetDevice boilerplate ------------------------------------------------------------

void
FabricNetDevice::SetIfIndex(const uint32_t index)
{
    m_ifIndex = index;
}

uint32_t
FabricNetDevice::GetIfIndex() const
{
    return m_ifIndex;
}

Ptr<Channel>
FabricNetDevice::GetChannel() const
{
    return m_channel;
}

void
FabricNetDevice::SetAddress(Address address)
{
    m_address = Mac48Address::ConvertFrom(address);
}

Address
FabricNetDevice::GetAddress() const
{
    return m_address;
}

bool
FabricNetDevice::SetMtu(const uint16_t mtu)
{
    return false;
}

uint16_t
FabricNetDevice::GetMtu() const
{
    return 9000;
}

bool
FabricNetDevice::IsLinkUp() const
{
    return m_channel != nullptr;
}

void
FabricNetDevice::AddLinkChangeCallback(Callback<void> callback)
{
}

bool
FabricNetDevice::IsBroadcast() const
{
    return false;
}

Address
FabricNetDevice::GetBroadcast() const
{
    return Mac48Address::GetBroadcast();
}

bool
FabricNetDevice::IsMulticast() const
{
    return false;
}

Address
FabricNetDevice::GetMulticast(Ipv4Address multicastGroup) const
{
    return Mac48Address::GetMulticast(multicastGroup);
}

Address
FabricNetDevice::GetMulticast(Ipv6Address addr) const
{
    return Mac48Address::GetMulticast(addr);
}

bool
FabricNetDevice::IsBridge() const
{
    return false;
}

bool
FabricNetDevice::IsPointToPoint() const
{
    return true;
}

bool
FabricNetDevice::Send(Ptr<Packet> packet, const Address& dest, uint16_t protocolNumber)
{
    return false;
}

bool
FabricNetDevice::SendFrom(Ptr<Packet> packet,
                          const Address& source,
                          const Address& dest,
                          uint16_t protocolNumber)
{
    return false;
}

Ptr<Node>
FabricNetDevice::GetNode() const
{
    return m_node;
}

void
FabricNetDevice::SetNode(Ptr<Node> node)
{
    m_node = node;
}

bool
FabricNetDevice::NeedsArp() const
{
    return false;
}

void
FabricNetDevice::SetReceiveCallback(NetDevice::ReceiveCallback cb)
{
}

void
FabricNetDevice::SetPromiscReceiveCallback(PromiscReceiveCallback cb)
{
}

bool
FabricNetDevice::SupportsSendFrom() const
{
    return false;
}

} // namespace ecngym
} // namespace ns3
