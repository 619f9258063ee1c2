/* SPDX-License-Identifier: GPL-2.0-only */
#include "timing-wheel-scheduler.h"

#include "fabric-simulator-impl.h"

#include "ns3/assert.h"
#include "ns3/boolean.h"
#include "ns3/event-impl.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{
namespace ecngym
{

namespace
{
/** Min-heap order on std::*_heap (which keep the largest first): the later event is "less". */
bool
Later(const Scheduler::Event& a, const Scheduler::Event& b)
{
    return b.key < a.key;
}

constexpr uint32_t kDefaultHorizonBits = 14; //!< 16.4 µs: links' serialisation + propagation and the DCQCN µs timers
constexpr std::size_t kNodesPerChunk = 1024;

} // namespace

NS_OBJECT_ENSURE_REGISTERED(TimingWheelScheduler);

TypeId
TimingWheelScheduler::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::ecngym::TimingWheelScheduler")
            .SetParent<Scheduler>()
            .SetGroupName("Ecngym")
            .AddConstructor<TimingWheelScheduler>()
            .AddAttribute("HorizonBits",
                          "log2 of the wheel's horizon in ns: events due within it are kept in "
                          "per-nanosecond buckets, later ones in a heap.",
                          UintegerValue(kDefaultHorizonBits),
                          MakeUintegerAccessor(&TimingWheelScheduler::SetHorizonBits,
                                               &TimingWheelScheduler::GetHorizonBits),
                          MakeUintegerChecker<uint32_t>(6, 22))
            .AddAttribute("LookaheadMinEvents",
                          "Wheel events from which RemoveNextAhead() prefetches several events "
                          "ahead (a hint only: no result depends on it).",
                          UintegerValue(kDefaultLookaheadMinEvents),
                          MakeUintegerAccessor(&TimingWheelScheduler::m_lookaheadMinEvents),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("PublishClock",
                          "Whether TimingWheelScheduler::NowNs() reads this scheduler's clock (set "
                          "it only on the scheduler the simulator uses).",
                          BooleanValue(false),
                          MakeBooleanAccessor(&TimingWheelScheduler::SetPublishClock,
                                              &TimingWheelScheduler::GetPublishClock),
                          MakeBooleanChecker());
    return tid;
}

TimingWheelScheduler::TimingWheelScheduler()
{
    SetHorizonBits(kDefaultHorizonBits);
}

TimingWheelScheduler::~TimingWheelScheduler()
{
    SetPublishClock(false);
}

void
TimingWheelScheduler::SetPublishClock(bool publish)
{
    if (publish)
    {
        s_clock = this;
    }
    else if (s_clock == this)
    {
        s_clock = nullptr;
    }
}

std::size_t
TimingWheelScheduler::CountCancelledFarEvents() const
{
    std::size_t n = 0;
    for (const Scheduler::Event& ev : m_far)
    {
        // a packet's arrival or a port's end of serialisation is a bare entry, never cancelled
        n += !FabricSimulatorImpl::IsBareEntry(ev.key.m_context) && ev.impl->IsCancelled() ? 1 : 0;
    }
    return n;
}

void
TimingWheelScheduler::SetHorizonBits(uint32_t bits)
{
    NS_ASSERT_MSG(bits >= 6 && bits <= 22, "HorizonBits must be in [6, 22]");
    NS_ASSERT_MSG(IsEmpty(), "the horizon can only change while the scheduler is empty");
    if (bits == m_bitsLog2)
    {
        return;
    }
    m_bitsLog2 = bits;
    m_horizon = uint64_t{1} << bits;
    m_mask = m_horizon - 1;
    m_buckets.assign(m_horizon, Bucket{});
    m_bits.assign(m_horizon / 64, 0);
    m_summary.assign((m_bits.size() + 63) / 64, 0);
}

void
TimingWheelScheduler::AddNodes()
{
    m_chunks.push_back(std::make_unique<Node[]>(kNodesPerChunk));
    Node* chunk = m_chunks.back().get();
    for (std::size_t i = 0; i < kNodesPerChunk; ++i)
    {
        chunk[i].next = m_freeNodes;
        m_freeNodes = &chunk[i];
    }
}

void
TimingWheelScheduler::SetBit(uint64_t idx)
{
    const uint64_t w = idx >> 6;
    m_bits[w] |= uint64_t{1} << (idx & 63);
    m_summary[w >> 6] |= uint64_t{1} << (w & 63);
}

void
TimingWheelScheduler::ClearBit(uint64_t idx)
{
    const uint64_t w = idx >> 6;
    m_bits[w] &= ~(uint64_t{1} << (idx & 63));
    if (m_bits[w] == 0)
    {
        m_summary[w >> 6] &= ~(uint64_t{1} << (w & 63));
    }
}

uint64_t
TimingWheelScheduler::FindFrom(uint64_t from) const
{
    if (from >= m_horizon)
    {
        return m_horizon;
    }
    uint64_t w = from >> 6;
    const uint64_t word = m_bits[w] & (~uint64_t{0} << (from & 63));
    if (word != 0)
    {
        return (w << 6) + __builtin_ctzll(word);
    }
    // The first non-empty word after w, through the summary.
    ++w;
    const uint64_t nWords = m_bits.size();
    if (w >= nWords)
    {
        return m_horizon;
    }
    uint64_t s = w >> 6;
    uint64_t sword = m_summary[s] & (~uint64_t{0} << (w & 63));
    while (sword == 0)
    {
        if (++s >= m_summary.size())
        {
            return m_horizon;
        }
        sword = m_summary[s];
    }
    const uint64_t w2 = (s << 6) + __builtin_ctzll(sword);
    return (w2 << 6) + __builtin_ctzll(m_bits[w2]);
}

uint64_t
TimingWheelScheduler::FindNextBucket(uint64_t from) const
{
    const uint64_t idx = FindFrom(from);
    if (idx < m_horizon)
    {
        return idx;
    }
    return FindFrom(0); // wrapped: the window's later part sits below `from`
}

void
TimingWheelScheduler::InsertWheel(const Scheduler::Event& ev)
{
    const uint64_t idx = ev.key.m_ts & m_mask;
    Node* n = AllocateNode();
    n->ev = ev;
    n->next = nullptr;
    // The simulator hands out increasing uids, so a new event's uid is above every uid in the
    // wheel and it goes last in its bucket without reading the bucket's last node (on a large
    // fabric that node is long out of cache). Heap events joining the wheel, events handed over
    // by another scheduler and uids after a wrap take the comparison.
    const bool newest = ev.key.m_uid > m_maxUid;
    if (newest)
    {
        m_maxUid = ev.key.m_uid;
    }
    Bucket& b = m_buckets[idx];
    if (b.tail == nullptr)
    {
        b.head = n;
        b.tail = n;
        SetBit(idx);
    }
    else if (newest || b.tail->ev.key.m_uid < ev.key.m_uid)
    {
        b.tail->next = n;
        b.tail = n;
    }
    else
    {
        // An older uid than the bucket's last (events handed over by another scheduler): keep
        // the bucket in uid order.
        Node** link = &b.head;
        while ((*link)->ev.key.m_uid < ev.key.m_uid)
        {
            link = &(*link)->next;
        }
        n->next = *link;
        *link = n;
    }
    ++m_wheelCount;
}

void
TimingWheelScheduler::InsertFar(const Scheduler::Event& ev)
{
    m_far.push_back(ev);
    std::push_heap(m_far.begin(), m_far.end(), Later);
}

void
TimingWheelScheduler::MoveFromHeap()
{
    while (!m_far.empty() && m_far.front().key.m_ts - m_base < m_horizon)
    {
        std::pop_heap(m_far.begin(), m_far.end(), Later);
        InsertWheel(m_far.back());
        m_far.pop_back();
    }
}

void
TimingWheelScheduler::Rebase(uint64_t ts)
{
    std::vector<Scheduler::Event> wheel;
    wheel.reserve(m_wheelCount);
    for (Bucket& b : m_buckets)
    {
        for (Node* n = b.head; n != nullptr;)
        {
            Node* next = n->next;
            wheel.push_back(n->ev);
            ReleaseNode(n);
            n = next;
        }
        b = Bucket{};
    }
    std::fill(m_bits.begin(), m_bits.end(), 0);
    std::fill(m_summary.begin(), m_summary.end(), 0);
    m_wheelCount = 0;
    m_base = ts;
    std::sort(wheel.begin(), wheel.end(), [](const Event& a, const Event& b) {
        return a.key < b.key;
    });
    for (const Scheduler::Event& ev : wheel)
    {
        if (InWindow(ev.key.m_ts))
        {
            InsertWheel(ev);
        }
        else
        {
            InsertFar(ev);
        }
    }
}

void
TimingWheelScheduler::Insert(const Scheduler::Event& ev)
{
    const uint64_t ts = ev.key.m_ts;
    if (ts - m_base < m_horizon) // (ts < m_base wraps around to a huge difference)
    {
        InsertWheel(ev);
        return;
    }
    if (ts < m_base)
    {
        if (IsEmpty())
        {
            m_base = ts;
        }
        else
        {
            Rebase(ts);
        }
    }
    if (ts - m_base < m_horizon)
    {
        InsertWheel(ev);
    }
    else
    {
        InsertFar(ev);
    }
}

bool
TimingWheelScheduler::IsEmpty() const
{
    return m_wheelCount == 0 && m_far.empty();
}

Scheduler::Event
TimingWheelScheduler::PeekNext() const
{
    NS_ASSERT(!IsEmpty());
    if (m_wheelCount == 0)
    {
        return m_far.front(); // every heap event is later than every wheel event
    }
    return m_buckets[FindNextBucket(m_base & m_mask)].head->ev;
}

Scheduler::Event
TimingWheelScheduler::RemoveNext()
{
    return RemoveNextAhead(nullptr);
}

Scheduler::Event
TimingWheelScheduler::RemoveNextAhead(Scheduler::Event* ahead)
{
    NS_ASSERT(!IsEmpty());
    if (m_wheelCount == 0)
    {
        m_base = m_far.front().key.m_ts;
        PullFromHeap();
    }
    const uint64_t baseIdx = m_base & m_mask;
    const uint64_t idx = FindNextBucket(baseIdx);
    if (idx != baseIdx)
    {
        // The window slides forward; heap events it now covers join the wheel (never in bucket
        // idx: they lie beyond the old window's end, after this event's timestamp).
        m_base += (idx - baseIdx) & m_mask;
        PullFromHeap();
    }
    Bucket& b = m_buckets[idx];
    Node* n = b.head;
    b.head = n->next;
    if (b.head == nullptr)
    {
        b.tail = nullptr;
        ClearBit(idx);
    }
    --m_wheelCount;
    const Scheduler::Event ev = n->ev;
    ReleaseNode(n);
    m_nowTs = ev.key.m_ts;
    if (ahead != nullptr)
    {
        ahead->impl = nullptr;
    }
    if (m_wheelCount != 0)
    {
        // Start loading the next event's object (a packet, a device or an EventImpl) while this
        // event runs: on a large fabric it is rarely still cached, and its miss was a quarter of
        // the run time at k = 16 (perf). A prefetch changes no result.
        const Node* after = b.head != nullptr ? b.head : m_buckets[FindNextBucket(idx)].head;
        if (ahead == nullptr || m_wheelCount < m_lookaheadMinEvents)
        {
            __builtin_prefetch(after->ev.impl);
            return ev;
        }
        // A pipeline over the next events, each stage loading what an earlier event's call
        // started, so that each node and object is in cache when read: the fifth event's list
        // node, the third one's object, and (the caller) the second one's second-level object.
        const Node* after2 = Successor(after);
        const Node* after3 = Successor(after2);
        __builtin_prefetch(after3->ev.impl);
        __builtin_prefetch(Successor(Successor(after3)));
        *ahead = after2->ev;
    }
    return ev;
}

const TimingWheelScheduler::Node*
TimingWheelScheduler::Successor(const Node* n) const
{
    return n->next != nullptr ? n->next
                              : m_buckets[FindNextBucket(((n->ev.key.m_ts & m_mask) + 1) & m_mask)].head;
}

void
TimingWheelScheduler::Remove(const Scheduler::Event& ev)
{
    if (InWindow(ev.key.m_ts))
    {
        const uint64_t idx = ev.key.m_ts & m_mask;
        Bucket& b = m_buckets[idx];
        Node* prev = nullptr;
        for (Node* n = b.head; n != nullptr; prev = n, n = n->next)
        {
            if (n->ev.key.m_uid != ev.key.m_uid)
            {
                continue;
            }
            (prev == nullptr ? b.head : prev->next) = n->next;
            if (b.tail == n)
            {
                b.tail = prev;
            }
            if (b.head == nullptr)
            {
                ClearBit(idx);
            }
            --m_wheelCount;
            ReleaseNode(n);
            return;
        }
    }
    else
    {
        auto it = std::find_if(m_far.begin(), m_far.end(), [&](const Scheduler::Event& e) {
            return e.key.m_uid == ev.key.m_uid;
        });
        if (it != m_far.end())
        {
            m_far.erase(it);
            std::make_heap(m_far.begin(), m_far.end(), Later);
            return;
        }
    }
    NS_ASSERT_MSG(false, "TimingWheelScheduler::Remove: event not found");
}

} // namespace ecngym
} // namespace ns3
