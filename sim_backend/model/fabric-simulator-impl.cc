/* SPDX-License-Identifier: GPL-2.0-only */
#include "fabric-simulator-impl.h"

#include "fabric-net-device.h"
#include "fabric-packet.h"

#include "ns3/assert.h"
#include "ns3/simulator.h"

namespace ns3
{
namespace ecngym
{

NS_OBJECT_ENSURE_REGISTERED(FabricSimulatorImpl);

TypeId
FabricSimulatorImpl::GetTypeId()
{
    static TypeId tid = TypeId("ns3::ecngym::FabricSimulatorImpl")
                            .SetParent<SimulatorImpl>()
                            .SetGroupName("Ecngym")
                            .AddConstructor<FabricSimulatorImpl>();
    return tid;
}

FabricSimulatorImpl::FabricSimulatorImpl()
    : m_currentContext(Simulator::NO_CONTEXT)
{
    // ns-3 creates the simulator implementation once per Simulator lifetime (Simulator::Destroy
    // deletes it), so the newest instance is the one in use.
    s_active = this;
}

FabricSimulatorImpl::~FabricSimulatorImpl()
{
    ReleaseEvents();
    if (s_active == this)
    {
        s_active = nullptr;
    }
}

void
FabricSimulatorImpl::ReleaseEvents()
{
    if (m_events == nullptr)
    {
        return;
    }
    while (!EventsEmpty())
    {
        Scheduler::Event next = m_wheel != nullptr ? m_wheel->TimingWheelScheduler::RemoveNext()
                                                   : m_events->RemoveNext();
        // a packet's arrival or a port's end of serialisation has nothing to free (the packet
        // belongs to the pool)
        if (!IsBareEntry(next.key.m_context))
        {
            next.impl->Unref();
        }
    }
    m_wheel = nullptr;
    m_events = nullptr;
    m_nextArrival = nullptr;
}

void
FabricSimulatorImpl::DoDispose()
{
    ReleaseEvents();
    if (s_active == this)
    {
        s_active = nullptr;
    }
    SimulatorImpl::DoDispose();
}

void
FabricSimulatorImpl::Destroy()
{
    while (!m_destroyEvents.empty())
    {
        Ptr<EventImpl> ev = m_destroyEvents.front().PeekEventImpl();
        m_destroyEvents.pop_front();
        if (!ev->IsCancelled())
        {
            ev->Invoke();
        }
    }
}

void
FabricSimulatorImpl::SetScheduler(ObjectFactory schedulerFactory)
{
    Ptr<Scheduler> scheduler = schedulerFactory.Create<Scheduler>();
    if (m_events != nullptr)
    {
        while (!EventsEmpty())
        {
            scheduler->Insert(m_wheel != nullptr ? m_wheel->TimingWheelScheduler::RemoveNext()
                                                 : m_events->RemoveNext());
        }
    }
    m_events = scheduler;
    m_wheel = dynamic_cast<TimingWheelScheduler*>(PeekPointer(scheduler));
    m_nextArrival = nullptr;
}

uint32_t
FabricSimulatorImpl::GetSystemId() const
{
    return 0;
}

void
FabricSimulatorImpl::ProcessOneEvent()
{
    Scheduler::Event ahead;
    ahead.impl = nullptr;
    Scheduler::Event next =
        m_wheel != nullptr ? m_wheel->RemoveNextAhead(&ahead) : m_events->RemoveNext();
    // The next event, if the wheel reported it as the event after next last time (a hint: an
    // insert may have come before it; its arrival is still pending either way, so the packet is
    // live): its packet and port are cached by now; start on what forwarding it reads first.
    const FabricPacket* nextArrival = m_nextArrival;
    m_nextArrival = nullptr;
    if (ahead.impl != nullptr)
    {
        if (nextArrival != nullptr)
        {
            nextArrival->arrivalPort->PrefetchForward(nextArrival);
        }
        if (ahead.key.m_context == kPacketArrivalContext)
        {
            // The event after next: the wheel prefetched its packet one event ago; start on its
            // port.
            m_nextArrival = reinterpret_cast<FabricPacket*>(ahead.impl);
            __builtin_prefetch(m_nextArrival->arrivalPort);
        }
    }
    NS_ASSERT(next.key.m_ts >= m_currentTs);
    --m_unscheduledEvents;
    ++m_eventCount;
    m_currentTs = next.key.m_ts;
    m_currentUid = next.key.m_uid;
    if (next.key.m_context == kPacketArrivalContext)
    {
        m_currentContext = Simulator::NO_CONTEXT;
        FabricPacket* p = reinterpret_cast<FabricPacket*>(next.impl);
        p->arrivalPort->Receive(p);
        return;
    }
    if (next.key.m_context == kTransmitCompleteContext)
    {
        m_currentContext = Simulator::NO_CONTEXT;
        reinterpret_cast<FabricNetDevice*>(next.impl)->TransmitComplete();
        return;
    }
    m_currentContext = next.key.m_context;
    next.impl->Invoke(); // runs Notify() unless the event was cancelled
    next.impl->Unref();
}

bool
FabricSimulatorImpl::IsFinished() const
{
    return EventsEmpty() || m_stop;
}

void
FabricSimulatorImpl::Run()
{
    m_stop = false;
    while (!m_stop && !EventsEmpty())
    {
        ProcessOneEvent();
    }
    NS_ASSERT(!EventsEmpty() || m_unscheduledEvents == 0);
}

void
FabricSimulatorImpl::Stop()
{
    m_stop = true;
}

EventId
FabricSimulatorImpl::Stop(const Time& delay)
{
    return Simulator::Schedule(delay, &Simulator::Stop);
}

EventId
FabricSimulatorImpl::Schedule(const Time& delay, EventImpl* event)
{
    NS_ASSERT_MSG(delay.IsPositive(), "FabricSimulatorImpl::Schedule(): negative delay");
    const uint64_t ts = m_currentTs + static_cast<uint64_t>(delay.GetTimeStep());
    const uint32_t uid = m_uid;
    Insert(ts, m_currentContext, event);
    return EventId(Ptr<EventImpl>(event), ts, m_currentContext, uid);
}

void
FabricSimulatorImpl::ScheduleWithContext(uint32_t context, const Time& delay, EventImpl* event)
{
    Insert(m_currentTs + static_cast<uint64_t>(delay.GetTimeStep()), context, event);
}

EventId
FabricSimulatorImpl::ScheduleNow(EventImpl* event)
{
    const uint32_t uid = m_uid;
    Insert(m_currentTs, m_currentContext, event);
    return EventId(Ptr<EventImpl>(event), m_currentTs, m_currentContext, uid);
}

EventId
FabricSimulatorImpl::ScheduleDestroy(EventImpl* event)
{
    EventId id(Ptr<EventImpl>(event, false), m_currentTs, 0xffffffff, 2);
    m_destroyEvents.push_back(id);
    ++m_uid; // the default implementation spends a uid on it too
    return id;
}

Time
FabricSimulatorImpl::Now() const
{
    return TimeStep(m_currentTs);
}

Time
FabricSimulatorImpl::GetDelayLeft(const EventId& id) const
{
    if (IsExpired(id))
    {
        return TimeStep(0);
    }
    return TimeStep(id.GetTs() - m_currentTs);
}

void
FabricSimulatorImpl::Remove(const EventId& id)
{
    if (id.GetUid() == 2)
    {
        for (auto i = m_destroyEvents.begin(); i != m_destroyEvents.end(); ++i)
        {
            if (*i == id)
            {
                m_destroyEvents.erase(i);
                break;
            }
        }
        return;
    }
    if (IsExpired(id))
    {
        return;
    }
    Scheduler::Event event;
    event.impl = id.PeekEventImpl();
    event.key.m_ts = id.GetTs();
    event.key.m_context = id.GetContext();
    event.key.m_uid = id.GetUid();
    m_events->Remove(event);
    event.impl->Cancel();
    event.impl->Unref(); // the scheduler's reference
    --m_unscheduledEvents;
}

void
FabricSimulatorImpl::Cancel(const EventId& id)
{
    if (!IsExpired(id))
    {
        id.PeekEventImpl()->Cancel();
    }
}

bool
FabricSimulatorImpl::IsExpired(const EventId& id) const
{
    if (id.GetUid() == 2)
    {
        if (id.PeekEventImpl() == nullptr || id.PeekEventImpl()->IsCancelled())
        {
            return true;
        }
        for (const EventId& d : m_destroyEvents)
        {
            if (d == id)
            {
                return false;
            }
        }
        return true;
    }
    return id.PeekEventImpl() == nullptr || id.GetTs() < m_currentTs ||
           (id.GetTs() == m_currentTs && id.GetUid() <= m_currentUid) ||
           id.PeekEventImpl()->IsCancelled();
}

Time
FabricSimulatorImpl::GetMaximumSimulationTime() const
{
    return TimeStep(0x7fffffffffffffffLL);
}

uint32_t
FabricSimulatorImpl::GetContext() const
{
    return m_currentContext;
}

uint64_t
FabricSimulatorImpl::GetEventCount() const
{
    return m_eventCount;
}

} // namespace ecngym
} // namespace ns3
