/* SPDX-License-Identifier: GPL-2.0-only */
#include "timely-rate-control.h"

#include "fabric-packet.h"
#include "rdma-host-node.h"

#include <algorithm>

namespace ns3
{
namespace ecngym
{

TimelyRateControl::TimelyRateControl(const TimelyConfig* cfg)
    : m_cfg(cfg)
{
}

void
TimelyRateControl::Start(QueuePair& qp, int64_t nowNs)
{
    qp.rateBps = qp.lineRateBps;
    m_curRateBps = qp.lineRateBps;
}

void
TimelyRateControl::OnAckFeedback(QueuePair& qp, const FabricPacket& ack, int64_t nowNs)
{
    if (ack.seq <= m_lastUpdateSeq)
    {
        return; // TIMELY reacts once per window of data
    }
    const uint64_t nextSeq = qp.sndNxt;
    const int64_t rtt = nowNs - ack.sendNs;
    if (m_lastUpdateSeq != 0)
    {
        const double newDiff = static_cast<double>(rtt - m_lastRttNs);
        const double rttDiff = (1 - m_cfg->alpha) * m_rttDiffNs + m_cfg->alpha * newDiff;
        const double gradient = rttDiff / static_cast<double>(m_cfg->minRttNs);
        bool increase = false;
        double c = 0;
        if (rtt < m_cfg->tLowNs)
        {
            increase = true;
        }
        else if (rtt > m_cfg->tHighNs)
        {
            c = 1 - m_cfg->beta * (1 - static_cast<double>(m_cfg->tHighNs) / static_cast<double>(rtt));
        }
        else if (gradient <= 0)
        {
            increase = true;
        }
        else
        {
            c = std::max(0.0, 1 - m_cfg->beta * gradient);
        }
        if (increase)
        {
            const double step = m_incStage < m_cfg->haiAfter ? m_cfg->aiRateBps : m_cfg->haiRateBps;
            qp.rateBps = std::min(qp.lineRateBps, m_curRateBps + step);
            ++m_incStage;
        }
        else
        {
            qp.rateBps = std::max(m_cfg->minRateBps, m_curRateBps * c);
            m_incStage = 0;
        }
        m_curRateBps = qp.rateBps;
        m_rttDiffNs = rttDiff;
        qp.host->OnRateChange(qp);
    }
    if (nextSeq > m_lastUpdateSeq)
    {
        m_lastUpdateSeq = nextSeq;
        m_lastRttNs = rtt;
    }
}

} // namespace ecngym
} // namespace ns3
