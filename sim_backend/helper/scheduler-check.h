/*
 * ecngym fabric: a differential check of an event scheduler against ns-3's PriorityQueueScheduler.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_SCHEDULER_CHECK_H
#define ECNGYM_SCHEDULER_CHECK_H

#include <cstdint>
#include <string>

namespace ns3
{
namespace ecngym
{

/**
 * @brief Drive a scheduler and ns-3's PriorityQueueScheduler with the same random sequence of
 *        Insert / RemoveNext / PeekNext / Remove / IsEmpty calls, as the simulator would make them
 *        (increasing uids, timestamps never before the last removed event), and compare every
 *        answer.
 *
 * Delays mix same-time bursts, nanoseconds, microseconds, the wheel's horizon +- 2 ns and far
 * events, so every path of TimingWheelScheduler (append, heap, heap-to-wheel moves, wrap-around,
 * removal from wheel and heap) is taken.
 * @param schedulerTypeId the scheduler under test (an ns-3 TypeId name)
 * @param horizonBits TimingWheelScheduler's HorizonBits (ignored for other schedulers)
 * @param operations number of operations
 * @param seed random seed
 * @param lookaheadMinEvents 0: RemoveNext(); else TimingWheelScheduler's LookaheadMinEvents, its
 *        removals through RemoveNextAhead(), and the event it reports ahead checked too
 * @param scrambledUids hand out unique uids in no particular order (a scheduler must order by
 *        (timestamp, uid) whatever order the uids arrive in) instead of increasing ones
 * @return the number of events removed in order (all checked)
 * @throws std::runtime_error describing the first difference
 * @throws std::invalid_argument if schedulerTypeId names no event scheduler
 */
uint64_t CheckSchedulerAgainstStock(const std::string& schedulerTypeId,
                                    uint32_t horizonBits,
                                    uint64_t operations,
                                    uint64_t seed,
                                    uint32_t lookaheadMinEvents = 0,
                                    bool scrambledUids = false);

} // namespace ecngym
} // namespace ns3

#endif
