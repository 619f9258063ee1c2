/*
 * ecngym fabric: an ns-3 event scheduler for packet-level fabrics (a nanosecond timing wheel over a
 * short horizon plus a heap for far events).
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_TIMING_WHEEL_SCHEDULER_H
#define ECNGYM_TIMING_WHEEL_SCHEDULER_H

#include "ns3/scheduler.h"
#include "ns3/simulator.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace ns3
{
namespace ecngym
{

/**
 * @brief Event list of a packet-level fabric: a timing wheel with one bucket per nanosecond over a
 *        short horizon, and a binary heap for the events beyond it.
 *
 * Most events of a fabric land a few hundred ns to a few µs ahead of now (the end of a packet's
 * serialisation, its arrival at the far end of a link), a few much later (DCQCN timers,
 * retransmission timeouts, flow starts). The wheel holds every event whose timestamp lies in
 * [base, base + horizon) in the bucket `ts mod horizon`, a FIFO list; the heap holds the rest.
 * `base` is the timestamp of the last event removed (the simulator's current time), so Insert() of
 * a near event is O(1) and RemoveNext() finds the next non-empty bucket with a two-level bitmap
 * (one bit per bucket, one summary bit per 64 buckets). When base advances, heap events that come
 * within the horizon move to the wheel, in heap order.
 *
 * Order: events run in exactly the order of ns-3's stock schedulers, by timestamp and then by
 * insertion uid (Scheduler::EventKey's operator<), so results are bit-identical whichever scheduler
 * a fabric uses. All events of one bucket share one timestamp; they are kept in uid order (the
 * simulator hands out increasing uids, so this is an append; an out-of-order uid, as when
 * Simulator::SetScheduler moves events from another scheduler, is placed by a short walk).
 *
 * Cancelled events stay in the list until they are due (Simulator::Cancel only marks them);
 * Remove() takes one out: O(bucket length) in the wheel, O(n) in the heap, like the stock
 * PriorityQueueScheduler's.
 *
 * Clock: the timestamp of the event RemoveNext() handed out last is the simulator's current time
 * while that event runs (DefaultSimulatorImpl sets its clock to it). With the attribute
 * PublishClock set (the fabric sets it on the scheduler it installs), NowNs() returns it without
 * the three calls and two Time objects of Simulator::Now(); with any other scheduler NowNs() is
 * Simulator::Now().
 */
class TimingWheelScheduler : public Scheduler
{
  public:
    /**
     * @brief Get the type ID.
     * @return the object TypeId
     */
    static TypeId GetTypeId();

    TimingWheelScheduler();
    ~TimingWheelScheduler() override;

    /**
     * @brief Set the wheel's horizon to 2^bits ns (the scheduler must be empty).
     * @param bits log2 of the horizon in ns, 6..22
     */
    void SetHorizonBits(uint32_t bits);

    /** @return log2 of the wheel's horizon in ns */
    uint32_t GetHorizonBits() const
    {
        return m_bitsLog2;
    }

    /**
     * @brief Make this scheduler the source of NowNs() (or stop it being that).
     * @param publish whether NowNs() reads this scheduler's clock
     */
    void SetPublishClock(bool publish);

    /** @return events in the wheel (timestamps within the horizon) */
    std::size_t GetWheelEventCount() const
    {
        return m_wheelCount;
    }

    /** @return events in the far heap (timestamps beyond the horizon) */
    std::size_t GetFarEventCount() const
    {
        return m_far.size();
    }

    /** @return far-heap events that were cancelled and wait to come due (O(far events)) */
    std::size_t CountCancelledFarEvents() const;

    /** @return whether NowNs() reads this scheduler's clock */
    bool GetPublishClock() const
    {
        return s_clock == this;
    }

    /**
     * @brief The simulator's current time in ns (Simulator::Now()), read from the scheduler that
     *        publishes its clock if there is one.
     * @return the current simulation time in ns
     */
    static int64_t NowNs()
    {
        const TimingWheelScheduler* clock = s_clock;
        return clock != nullptr ? static_cast<int64_t>(clock->m_nowTs)
                                : Simulator::Now().GetTimeStep();
    }

    // Inherited
    void Insert(const Scheduler::Event& ev) override;
    bool IsEmpty() const override;
    Scheduler::Event PeekNext() const override;
    Scheduler::Event RemoveNext() override;

    /**
     * Default of the attribute LookaheadMinEvents. Below this many wheel events a fabric's objects
     * stay cached and looking further ahead only costs (~7 % on the HPCC scenarios A and C, with
     * 700 - 1,400 pending events); at k = 16 (10,000 - 18,000) it saves ~10 % per packet-hop.
     */
    static constexpr uint32_t kDefaultLookaheadMinEvents = 8192;

    /**
     * @brief RemoveNext() for a caller that prefetches further ahead on a large fabric.
     *
     * With at least LookaheadMinEvents events left in the wheel it runs a prefetch pipeline over
     * the next events, each stage finding in cache what an earlier call started to load: it
     * prefetches the list node of the fifth next event and the object of the third, and reports
     * the second, whose object it prefetched one call ago, for the caller to prefetch what that
     * object points to. Otherwise it prefetches the next event's object only, as RemoveNext().
     * @param[out] ahead the event after the next one as the wheel stands now (impl nullptr if
     *        not reported); a hint only: an Insert() may put other events before it
     * @return the removed event
     */
    Scheduler::Event RemoveNextAhead(Scheduler::Event* ahead);
    void Remove(const Scheduler::Event& ev) override;

  private:
    /** One event in a bucket's FIFO list. */
    struct Node
    {
        Scheduler::Event ev;
        Node* next;
    };

    /** The events of one nanosecond, in uid order. */
    struct Bucket
    {
        Node* head{nullptr};
        Node* tail{nullptr};
    };

    /** @return whether ts lies within the wheel's window [base, base + horizon) */
    bool InWindow(uint64_t ts) const
    {
        return ts >= m_base && ts - m_base < m_horizon;
    }

    /**
     * @param n a node in the wheel, with a later event in the wheel
     * @return the node of the event that runs after n's
     */
    const Node* Successor(const Node* n) const;
    void InsertWheel(const Scheduler::Event& ev);
    void InsertFar(const Scheduler::Event& ev);
    /** @brief Move the heap's events that are now within the horizon to the wheel, if any. */
    void PullFromHeap()
    {
        if (!m_far.empty() && m_far.front().key.m_ts - m_base < m_horizon)
        {
            MoveFromHeap();
        }
    }
    void MoveFromHeap();
    /** @brief Move base back to ts (an event before base: never happens under ns-3's simulator). */
    void Rebase(uint64_t ts);
    /** @return the index of the first non-empty bucket at or after `from` (circular); wheel non-empty */
    uint64_t FindNextBucket(uint64_t from) const;
    /** @return the index of the first non-empty bucket in [from, horizon), or the horizon if none */
    uint64_t FindFrom(uint64_t from) const;
    void SetBit(uint64_t idx);
    void ClearBit(uint64_t idx);
    Node* AllocateNode()
    {
        if (m_freeNodes == nullptr)
        {
            AddNodes();
        }
        Node* n = m_freeNodes;
        m_freeNodes = n->next;
        // An event can schedule two: the second takes a node freed long ago (nullptr: no fault)
        __builtin_prefetch(m_freeNodes);
        return n;
    }
    void ReleaseNode(Node* n)
    {
        n->next = m_freeNodes;
        m_freeNodes = n;
    }
    void AddNodes();

    static inline const TimingWheelScheduler* s_clock{nullptr}; //!< the scheduler NowNs() reads

    uint32_t m_bitsLog2{0};
    uint64_t m_horizon{0};
    uint64_t m_mask{0};
    uint64_t m_base{0};         //!< every wheel event's timestamp lies in [m_base, m_base + m_horizon)
    uint64_t m_nowTs{0};        //!< timestamp of the event RemoveNext() handed out last
    std::size_t m_wheelCount{0}; //!< events in the wheel
    uint32_t m_maxUid{0};        //!< the largest uid ever inserted
    uint32_t m_lookaheadMinEvents{kDefaultLookaheadMinEvents}; //!< attribute LookaheadMinEvents
    std::vector<Bucket> m_buckets;
    std::vector<uint64_t> m_bits;    //!< bit i: bucket i is non-empty
    std::vector<uint64_t> m_summary; //!< bit w: m_bits[w] != 0
    std::vector<Scheduler::Event> m_far; //!< min-heap by EventKey: events at or beyond the horizon
    Node* m_freeNodes{nullptr};
    std::vector<std::unique_ptr<Node[]>> m_chunks;
};

} // namespace ecngym
} // namespace ns3

#endif
