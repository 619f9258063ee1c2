/*
 * ecngym fabric: the simulator's event loop, lean (no per-event logging checks or EventId objects
 * for the fabric's own packet events), with exactly DefaultSimulatorImpl's event order.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_FABRIC_SIMULATOR_IMPL_H
#define ECNGYM_FABRIC_SIMULATOR_IMPL_H

#include "timing-wheel-scheduler.h"

#include "ns3/event-id.h"
#include "ns3/event-impl.h"
#include "ns3/scheduler.h"
#include "ns3/simulator-impl.h"
#include "ns3/simulator.h"

#include <cstdint>
#include <list>

namespace ns3
{
namespace ecngym
{

class FabricNetDevice;
struct FabricPacket;

/**
 * @brief ns-3's simulator core for a fabric run: DefaultSimulatorImpl's semantics, less its
 *        per-event overhead.
 *
 * A profile of scenario A (issue 12) put ~44 % of the instructions per data packet-hop in ns-3's
 * own event bookkeeping: DefaultSimulatorImpl::Schedule and ProcessOneEvent, the EventId built for
 * every Schedule() and again for the PreEventHook of every event, Simulator::Schedule's Ptr
 * copies, and the log-level checks compiled into each. This implementation keeps what decides
 * results bit for bit — uids handed out from 4 in the same order (Schedule, ScheduleNow,
 * ScheduleWithContext and ScheduleDestroy each take one), events run by (timestamp, uid), cancelled
 * events counted when they come due, the same clock and Stop() — and drops the rest:
 *
 * - the fabric's packet events (a packet arriving, a port finishing a packet: ~90 % of all
 *   events) are inserted directly (SchedulePacketArrival, ScheduleTransmitComplete), without an
 *   EventId nobody keeps and without an event object: the scheduler entry points at the packet or
 *   the port;
 * - no PreEventHook (SimulatorImpl's is empty; DefaultSimulatorImpl builds an EventId to call it);
 * - with a TimingWheelScheduler the scheduler calls are not virtual.
 *
 * Threads: like the fabric, it is single-threaded; ScheduleWithContext inserts at once (the
 * default's cross-thread queue is for multi-threaded emulation, which the fabric never uses).
 *
 * The fabric installs it (SimulatorImplementationType) when it runs on the timing wheel; with any
 * other scheduler the stock DefaultSimulatorImpl runs, which is what the bit-identity tests
 * compare against.
 */
class FabricSimulatorImpl : public SimulatorImpl
{
  public:
    /**
     * @brief Get the type ID.
     * @return the object TypeId
     */
    static TypeId GetTypeId();

    FabricSimulatorImpl();
    ~FabricSimulatorImpl() override;

    /** @return the simulator implementation in use if it is this class, else nullptr */
    static FabricSimulatorImpl* Active()
    {
        return s_active;
    }

    /**
     * @brief Schedule a packet's arrival at p->arrivalPort: the scheduler entry points at the
     *        packet itself (context kPacketArrivalContext), so running it touches no event object
     *        (issue 12: at k = 16 each separate event object was one more cache miss per hop).
     *        The same uid and order as Simulator::Schedule.
     * @param delayNs delay from now, ns (>= 0)
     * @param p the packet, its arrivalPort set
     */
    void SchedulePacketArrival(int64_t delayNs, FabricPacket* p)
    {
        NS_ASSERT(m_currentContext == Simulator::NO_CONTEXT);
        Insert(m_currentTs + static_cast<uint64_t>(delayNs),
               kPacketArrivalContext,
               reinterpret_cast<EventImpl*>(p));
    }

    /**
     * @brief Schedule the end of a port's serialisation: the scheduler entry points at the port
     *        (context kTransmitCompleteContext). The same uid and order as Simulator::Schedule.
     * @param delayNs delay from now, ns (>= 0)
     * @param port the transmitting port
     */
    void ScheduleTransmitComplete(int64_t delayNs, FabricNetDevice* port)
    {
        NS_ASSERT(m_currentContext == Simulator::NO_CONTEXT);
        Insert(m_currentTs + static_cast<uint64_t>(delayNs),
               kTransmitCompleteContext,
               reinterpret_cast<EventImpl*>(port));
    }

    /**
     * @param context a scheduler entry's context
     * @return whether the entry's impl is not an EventImpl but a packet or a port
     *         (SchedulePacketArrival, ScheduleTransmitComplete)
     */
    static bool IsBareEntry(uint32_t context)
    {
        return context == kPacketArrivalContext || context == kTransmitCompleteContext;
    }

    /**
     * @brief Take the uid the next scheduled event would get, without scheduling one.
     *
     * A port whose end of serialisation may turn out to do nothing (a switch port whose queues
     * are empty then) takes its event's place in the order of same-time events here and
     * schedules it only once something waits for the wire (ScheduleTransmitCompleteAt()): the
     * events that do run keep the uids, and so the order, they would have had.
     * @return the reserved uid
     */
    uint32_t ReserveUid()
    {
        return m_uid++;
    }

    /**
     * @param ts a timestamp
     * @param uid a uid
     * @return whether the event (ts, uid) would have run before the event running now (or the
     *         last one run, between Run() calls)
     */
    bool IsBeforeCurrent(uint64_t ts, uint32_t uid) const
    {
        return ts < m_currentTs || (ts == m_currentTs && uid < m_currentUid);
    }

    /**
     * @brief Schedule a port's end of serialisation at an absolute time with a uid from
     *        ReserveUid() (not before the event running now).
     * @param ts the time of the end, ns
     * @param uid the reserved uid
     * @param port the transmitting port
     */
    void ScheduleTransmitCompleteAt(uint64_t ts, uint32_t uid, FabricNetDevice* port)
    {
        NS_ASSERT(!IsBeforeCurrent(ts, uid));
        InsertWithUid(ts, uid, kTransmitCompleteContext, reinterpret_cast<EventImpl*>(port));
    }

    /** @return events scheduled and not yet run or removed (cancelled ones included) */
    int64_t GetPendingEventCount() const
    {
        return m_unscheduledEvents;
    }

    /** @return the scheduler when it is a timing wheel, else nullptr */
    const TimingWheelScheduler* GetWheel() const
    {
        return m_wheel;
    }

    // Inherited from SimulatorImpl
    void Destroy() override;
    bool IsFinished() const override;
    void Stop() override;
    EventId Stop(const Time& delay) override;
    EventId Schedule(const Time& delay, EventImpl* event) override;
    void ScheduleWithContext(uint32_t context, const Time& delay, EventImpl* event) override;
    EventId ScheduleNow(EventImpl* event) override;
    EventId ScheduleDestroy(EventImpl* event) override;
    void Remove(const EventId& id) override;
    void Cancel(const EventId& id) override;
    bool IsExpired(const EventId& id) const override;
    void Run() override;
    Time Now() const override;
    Time GetDelayLeft(const EventId& id) const override;
    Time GetMaximumSimulationTime() const override;
    void SetScheduler(ObjectFactory schedulerFactory) override;
    uint32_t GetSystemId() const override;
    uint32_t GetContext() const override;
    uint64_t GetEventCount() const override;

  protected:
    void DoDispose() override;

  private:
    /** @brief Give the next uid to an event at ts and hand it to the scheduler. */
    void Insert(uint64_t ts, uint32_t context, EventImpl* event)
    {
        InsertWithUid(ts, m_uid++, context, event);
    }

    /** @brief Hand an event at ts with the given uid to the scheduler. */
    void InsertWithUid(uint64_t ts, uint32_t uid, uint32_t context, EventImpl* event)
    {
        Scheduler::Event ev;
        ev.impl = event;
        ev.key.m_ts = ts;
        ev.key.m_context = context;
        ev.key.m_uid = uid;
        ++m_unscheduledEvents;
        if (m_wheel != nullptr)
        {
            m_wheel->TimingWheelScheduler::Insert(ev);
        }
        else
        {
            m_events->Insert(ev);
        }
    }

    bool EventsEmpty() const
    {
        return m_wheel != nullptr ? m_wheel->TimingWheelScheduler::IsEmpty() : m_events->IsEmpty();
    }

    void ProcessOneEvent();
    void ReleaseEvents();

    /** Context value of a packet's arrival (impl is the FabricPacket; node ids stay far below). */
    static constexpr uint32_t kPacketArrivalContext = 0xfffffffdU;
    /** Context value of a port's end of serialisation (impl is the FabricNetDevice). */
    static constexpr uint32_t kTransmitCompleteContext = 0xfffffffcU;

    static inline FabricSimulatorImpl* s_active{nullptr}; //!< the instance in use, if any

    Ptr<Scheduler> m_events;
    TimingWheelScheduler* m_wheel{nullptr}; //!< m_events when it is a timing wheel, else nullptr
    std::list<EventId> m_destroyEvents;
    bool m_stop{false};
    uint32_t m_uid{4}; //!< next uid: 0 = invalid, 1 = "now", 2 = destroy events, 3 = unused
    uint32_t m_currentUid{0};
    uint64_t m_currentTs{0};
    uint32_t m_currentContext;
    uint64_t m_eventCount{0};
    /** The packet of the event after next at the last RemoveNextAhead() that reported one, if
     *  that was an arrival: the next event now, most likely (only prefetches depend on it). */
    const FabricPacket* m_nextArrival{nullptr};
    int64_t m_unscheduledEvents{0};
};

} // namespace ecngym
} // namespace ns3

#endif
