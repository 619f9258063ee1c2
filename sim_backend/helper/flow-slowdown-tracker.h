/*
 * ecngym fabric: running totals of the flows' FCT slowdowns, step by step (the score_dense reward).
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_FLOW_SLOWDOWN_TRACKER_H
#define ECNGYM_FLOW_SLOWDOWN_TRACKER_H

#include "../model/queue-pair.h"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace ns3
{
namespace ecngym
{

/**
 * @brief The FCT slowdowns of one fabric's flows of a size range, summed as the episode runs.
 *
 * A flow's slowdown is max(1, FCT / ideal FCT) once it has finished (Fabric::GetFlowRecords'
 * definition, the one the episode summary averages) and max(1, (now - start) / ideal FCT) while
 * it runs (started, start <= now, not finished). Update() returns the sum and count of each kind,
 * visiting only the flows started and not yet seen finished: flows are taken in start order, and
 * a finished flow's slowdown is added to the finished sum once, then the flow is dropped. Each
 * slowdown is computed as NumPy computes it from the flow records (the int64 difference converted
 * to double, then one division and the max), so the finished sum differs from the summary's only
 * by the order of the additions.
 */
class FlowSlowdownTracker
{
  public:
    /** What Update() returns. */
    struct Totals
    {
        double finishedSum{0.0}; //!< sum of the finished flows' slowdowns
        uint64_t finished{0};    //!< finished flows
        double runningSum{0.0};  //!< sum of the running flows' slowdowns so far
        uint64_t running{0};     //!< running flows
    };

    /**
     * @brief Track the flows of `flows` with minSizeBytes <= size < maxSizeBytes.
     * @param flows the fabric's flows (Fabric::Flows); the tracker keeps their address and count
     * @param minSizeBytes smallest size counted
     * @param maxSizeBytes first size not counted (UINT64_MAX: no bound)
     * @throws std::invalid_argument if minSizeBytes >= maxSizeBytes
     */
    FlowSlowdownTracker(const std::deque<QueuePair>& flows, uint64_t minSizeBytes, uint64_t maxSizeBytes);

    /**
     * @brief The totals at time nowNs (which never decreases from one call to the next).
     * @param flows the same fabric's flows as at construction
     * @param nowNs the simulated time now
     * @return the totals
     * @throws std::invalid_argument if `flows` is another fabric's, or nowNs went back
     */
    Totals Update(const std::deque<QueuePair>& flows, int64_t nowNs);

  private:
    const std::deque<QueuePair>* m_flows;         //!< the tracked fabric's flows (identity check only)
    std::size_t m_count;              //!< their number
    std::vector<uint32_t> m_order;    //!< flows of the size range, by start time (stable)
    std::size_t m_next{0};            //!< first of m_order not yet started
    std::vector<uint32_t> m_running;  //!< started and not yet seen finished
    double m_finishedSum{0.0};
    uint64_t m_finished{0};
    int64_t m_lastNs{0};
};

} // namespace ecngym
} // namespace ns3

#endif
