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

/**
 * @brief An event that FabricSimulatorImpl runs directly (FabricSimulatorImpl::ScheduleOwned):
 *        never cancelled, never handed out as an EventId, not reference-counted; the object is
 *        reused (a free list per event class) instead of built and destroyed per event.
 */
class OwnedEvent : public EventImpl
{
  public:
    /** @brief Run the event; the object goes back to its free list. */
    virtual void Fire() = 0;
    /** @brief Give the object back to its free list without running it (simulator torn down). */
    virtual void Discard() = 0;

  protected:
    void Notify() override
    {
        Fire(); // not reached: owned events are never Invoke()d
    }
};

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
 * - ScheduleOwned(): the fabric's packet events (a packet arriving, a port finishing a
 *   packet: ~90 % of all events) are inserted directly, without an EventId nobody keeps, and run
 *   as reused objects (OwnedEvent), without EventImpl's construction, Invoke() and destruction;
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
     * @brief Schedule an owned event: the same uid and order as Simulator::Schedule, without the
     *        EventId, the reference counts or the event's construction and destruction.
     *
     * The event's context is marked kOwnedContext in the scheduler (contexts take no part in the
     * order); it runs with Simulator::NO_CONTEXT, the only context the fabric schedules from.
     * @param delayNs delay from now, ns (>= 0)
     * @param event the event, armed; the simulator fires or discards it exactly once
     */
    void ScheduleOwned(int64_t delayNs, OwnedEvent* event)
    {
        NS_ASSERT(m_currentContext == Simulator::NO_CONTEXT);
        Insert(m_currentTs + static_cast<uint64_t>(delayNs), kOwnedContext, event);
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
        Scheduler::Event ev;
        ev.impl = event;
        ev.key.m_ts = ts;
        ev.key.m_context = context;
        ev.key.m_uid = m_uid++;
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

    /** Context value that marks an owned event in the scheduler (node ids stay far below it). */
    static constexpr uint32_t kOwnedContext = 0xfffffffeU;

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
    int64_t m_unscheduledEvents{0};
};

} // namespace ecngym
} // namespace ns3

#endif
