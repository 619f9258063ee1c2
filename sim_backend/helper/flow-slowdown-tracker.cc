/*
 * ecngym fabric: running totals of the flows' FCT slowdowns, step by step (the score_dense reward).
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "flow-slowdown-tracker.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace ns3
{
namespace ecngym
{

FlowSlowdownTracker::FlowSlowdownTracker(const std::deque<QueuePair>& flows,
                                         uint64_t minSizeBytes,
                                         uint64_t maxSizeBytes)
    : m_flows(&flows),
      m_count(flows.size())
{
    if (minSizeBytes >= maxSizeBytes)
    {
        throw std::invalid_argument("FlowSlowdownTracker: min_size_bytes must be below max_size_bytes");
    }
    for (std::size_t i = 0; i < flows.size(); ++i)
    {
        if (flows[i].sizeBytes >= minSizeBytes && flows[i].sizeBytes < maxSizeBytes)
        {
            m_order.push_back(static_cast<uint32_t>(i));
        }
    }
    std::stable_sort(m_order.begin(), m_order.end(), [&flows](uint32_t a, uint32_t b) {
        return flows[a].startNs < flows[b].startNs;
    });
}

FlowSlowdownTracker::Totals
FlowSlowdownTracker::Update(const std::deque<QueuePair>& flows, int64_t nowNs)
{
    if (&flows != m_flows || flows.size() != m_count)
    {
        throw std::invalid_argument("FlowSlowdownTracker: these are another fabric's flows");
    }
    if (nowNs < m_lastNs)
    {
        throw std::invalid_argument("FlowSlowdownTracker: time went back");
    }
    m_lastNs = nowNs;
    while (m_next < m_order.size() && flows[m_order[m_next]].startNs <= nowNs)
    {
        m_running.push_back(m_order[m_next++]);
    }
    Totals t;
    std::size_t kept = 0;
    for (uint32_t i : m_running)
    {
        const QueuePair& qp = flows[i];
        if (qp.finished)
        {
            const double fct = static_cast<double>(qp.finishNs - qp.startNs);
            m_finishedSum += std::max(1.0, fct / qp.idealFctNs);
            ++m_finished;
            continue;
        }
        const double elapsed = static_cast<double>(nowNs - qp.startNs);
        t.runningSum += std::max(1.0, elapsed / qp.idealFctNs);
        ++t.running;
        m_running[kept++] = i;
    }
    m_running.resize(kept);
    t.finishedSum = m_finishedSum;
    t.finished = m_finished;
    return t;
}

} // namespace ecngym
} // namespace ns3
