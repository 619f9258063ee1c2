/* SPDX-License-Identifier: GPL-2.0-only */
#include "scheduler-check.h"

#include "../model/fast-random.h"
#include "../model/timing-wheel-scheduler.h"

#include "ns3/object-factory.h"
#include "ns3/scheduler.h"
#include "ns3/uinteger.h"

#include <stdexcept>
#include <unordered_map>
#include <vector>

namespace ns3
{
namespace ecngym
{

namespace
{
std::string
Describe(const Scheduler::Event& ev)
{
    return "(ts " + std::to_string(ev.key.m_ts) + ", uid " + std::to_string(ev.key.m_uid) + ")";
}

void
Expect(bool ok, uint64_t op, const std::string& what)
{
    if (!ok)
    {
        throw std::runtime_error("operation " + std::to_string(op) + ": " + what);
    }
}

void
ExpectSame(const Scheduler::Event& got, const Scheduler::Event& want, uint64_t op, const char* call)
{
    Expect(got.key.m_ts == want.key.m_ts && got.key.m_uid == want.key.m_uid,
           op,
           std::string(call) + " gave " + Describe(got) + ", the stock scheduler " + Describe(want));
}
} // namespace

uint64_t
CheckSchedulerAgainstStock(const std::string& schedulerTypeId,
                           uint32_t horizonBits,
                           uint64_t operations,
                           uint64_t seed,
                           uint32_t lookaheadMinEvents,
                           bool scrambledUids)
{
    TypeId tid;
    if (!TypeId::LookupByNameFailSafe(schedulerTypeId, &tid) ||
        !tid.IsChildOf(Scheduler::GetTypeId()) || !tid.HasConstructor())
    {
        throw std::invalid_argument("scheduler: " + schedulerTypeId +
                                    " is not an ns-3 event scheduler");
    }
    ObjectFactory factory;
    factory.SetTypeId(tid);
    TypeId::AttributeInformation info;
    const bool hasHorizon = tid.LookupAttributeByName("HorizonBits", &info);
    if (hasHorizon)
    {
        factory.Set("HorizonBits", UintegerValue(horizonBits));
    }
    if (lookaheadMinEvents > 0 && hasHorizon)
    {
        factory.Set("LookaheadMinEvents", UintegerValue(lookaheadMinEvents));
    }
    Ptr<Scheduler> test = factory.Create<Scheduler>();
    TimingWheelScheduler* wheel =
        lookaheadMinEvents > 0 ? dynamic_cast<TimingWheelScheduler*>(PeekPointer(test)) : nullptr;
    static char object; // what every event's impl points at: the wheel prefetches it
    ObjectFactory stockFactory;
    stockFactory.SetTypeId("ns3::PriorityQueueScheduler");
    Ptr<Scheduler> stock = stockFactory.Create<Scheduler>();
    const uint64_t horizon = hasHorizon ? (uint64_t{1} << horizonBits) : 16384;

    FastRandom rng(seed);
    std::vector<Scheduler::Event> pending;          // for Remove()
    std::unordered_map<uint32_t, std::size_t> where; // uid -> index in pending
    auto forget = [&](uint32_t uid) {
        const std::size_t i = where.at(uid);
        where[pending.back().key.m_uid] = i;
        pending[i] = pending.back();
        pending.pop_back();
        where.erase(uid);
    };
    auto below = [&](uint64_t n) { return n == 0 ? 0 : rng.Next() % n; };
    uint64_t now = 0;
    uint32_t uid = 0;
    uint64_t removed = 0;
    for (uint64_t op = 0; op < operations; ++op)
    {
        Expect(test->IsEmpty() == stock->IsEmpty(), op, "IsEmpty() differs");
        const uint64_t r = below(100);
        // Inserts outweigh removals until ~2000 events are pending (a fabric's order of magnitude).
        if ((r < 45 && pending.size() < 2000) || stock->IsEmpty())
        {
            const uint64_t burst = 1 + below(3);
            for (uint64_t k = 0; k < burst; ++k)
            {
                uint64_t delay = 0;
                switch (below(7))
                {
                case 0:
                    delay = 0;
                    break;
                case 1:
                    delay = 1 + below(64);
                    break;
                case 2:
                case 3:
                    delay = 64 + below(3000);
                    break;
                case 4:
                    delay = horizon - 2 + below(5);
                    break;
                case 5:
                    delay = horizon + below(3 * horizon);
                    break;
                default:
                    delay = 100000 + below(10000000);
                    break;
                }
                Scheduler::Event ev;
                ev.impl = reinterpret_cast<EventImpl*>(&object);
                ev.key.m_ts = now + delay;
                // scrambled: a bijection of the counter (odd multiplier mod 2^32), so uids stay
                // unique but arrive in no particular order
                ev.key.m_uid = scrambledUids ? uid++ * 2654435761U : uid++;
                ev.key.m_context = 0;
                test->Insert(ev);
                stock->Insert(ev);
                where[ev.key.m_uid] = pending.size();
                pending.push_back(ev);
            }
        }
        else if (r < 85)
        {
            const Scheduler::Event want = stock->RemoveNext();
            Scheduler::Event ahead;
            ahead.impl = nullptr;
            const Scheduler::Event got = wheel != nullptr ? wheel->RemoveNextAhead(&ahead) : test->RemoveNext();
            ExpectSame(got, want, op, "RemoveNext()");
            now = want.key.m_ts;
            forget(want.key.m_uid);
            ++removed;
            if (wheel != nullptr && wheel->GetWheelEventCount() >= lookaheadMinEvents)
            {
                // the event after next: the second smallest pending key (the wheel holds the
                // earliest events; with >= 2 of them there, the second is one of them)
                Expect(ahead.impl != nullptr, op, "RemoveNextAhead() reported no event ahead");
                const Scheduler::EventKey* first = nullptr;
                const Scheduler::EventKey* second = nullptr;
                for (const Scheduler::Event& e : pending)
                {
                    if (first == nullptr || e.key < *first)
                    {
                        second = first;
                        first = &e.key;
                    }
                    else if (second == nullptr || e.key < *second)
                    {
                        second = &e.key;
                    }
                }
                Scheduler::Event expected;
                expected.key = *second;
                ExpectSame(ahead, expected, op, "RemoveNextAhead()'s event after next");
            }
        }
        else if (r < 93)
        {
            ExpectSame(test->PeekNext(), stock->PeekNext(), op, "PeekNext()");
        }
        else
        {
            const Scheduler::Event ev = pending[below(pending.size())];
            test->Remove(ev);
            stock->Remove(ev);
            forget(ev.key.m_uid);
        }
    }
    while (!stock->IsEmpty())
    {
        Expect(!test->IsEmpty(), operations, "IsEmpty() while events remain");
        ExpectSame(test->RemoveNext(), stock->RemoveNext(), operations, "RemoveNext()");
        ++removed;
    }
    Expect(test->IsEmpty(), operations, "events left after the stock scheduler is empty");
    return removed;
}

} // namespace ecngym
} // namespace ns3
