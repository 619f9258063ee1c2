/* SPDX-License-Identifier: GPL-2.0-only */
#include "hpcc-rate-control.h"

#include "fabric-packet.h"
#include "rdma-host-node.h"

#include <algorithm>
#include <cmath>

namespace ns3
{
namespace ecngym
{

HpccRateControl::HpccRateControl(const HpccConfig* cfg)
    : m_cfg(cfg)
{
}

void
HpccRateControl::Start(QueuePair& qp, int64_t nowNs)
{
    qp.rateBps = qp.lineRateBps;
    m_curRateBps = qp.lineRateBps;
}

void
HpccRateControl::OnAckFeedback(QueuePair& qp, const FabricPacket& ack, int64_t nowNs)
{
    if (ack.seq > m_lastUpdateSeq)
    {
        UpdateRate(qp, ack.ints, false); // a full RTT of feedback: commit
    }
    else if (m_cfg->fastReact)
    {
        UpdateRate(qp, ack.ints, true);
    }
}

void
HpccRateControl::UpdateRate(QueuePair& qp, const IntStack& ints, bool fastReact)
{
    const uint64_t nextSeq = qp.sndNxt;
    if (m_lastUpdateSeq == 0)
    {
        // First RTT: only record the hops.
        m_lastUpdateSeq = nextSeq;
        for (uint32_t i = 0; i < ints.nhop && i < kIntMaxHops; ++i)
        {
            m_hop[i] = ints.hop[i];
        }
        return;
    }
    const uint32_t multi = m_cfg->intMulti;
    if (ints.nhop <= kIntMaxHops)
    {
        double maxU = 0;
        uint64_t dt = 0;
        bool updatedAny = false;
        for (uint32_t i = 0; i < ints.nhop; ++i)
        {
            const IntHop& now = ints.hop[i];
            if (m_cfg->sampleFeedback && fastReact && now.Qlen(multi) == 0)
            {
                continue;
            }
            updatedAny = true;
            const uint64_t tau = now.TimeDelta(m_hop[i]);
            const double lineRate = m_cfg->linkRates[now.RateIndex()];
            const double txRate = static_cast<double>(now.BytesDelta(m_hop[i], multi)) * 8 / (tau * 1e-9);
            const double u = txRate / lineRate +
                             static_cast<double>(std::min(now.Qlen(multi), m_hop[i].Qlen(multi))) *
                                 qp.lineRateBps / lineRate / static_cast<double>(qp.nicWindowBytes);
            if (u > maxU)
            {
                maxU = u;
                dt = tau;
            }
            m_hop[i] = now;
        }
        if (updatedAny)
        {
            const uint64_t baseRtt = static_cast<uint64_t>(qp.ccBaseRttNs);
            dt = std::min(dt, baseRtt);
            m_u = (m_u * static_cast<double>(baseRtt - dt) + maxU * static_cast<double>(dt)) /
                  static_cast<double>(baseRtt);
            const double k = m_u / m_cfg->targetUtil;
            double newRate;
            uint32_t newStage;
            if (k >= 1 || m_incStage >= m_cfg->miThresh)
            {
                newRate = std::floor(m_curRateBps / k) + m_cfg->aiRateBps;
                newStage = 0;
            }
            else
            {
                newRate = m_curRateBps + m_cfg->aiRateBps;
                newStage = m_incStage + 1;
            }
            newRate = std::min(qp.lineRateBps, std::max(m_cfg->minRateBps, newRate));
            qp.host->ChangePacingRate(qp, newRate);
            if (!fastReact)
            {
                m_curRateBps = newRate;
                m_incStage = newStage;
            }
        }
    }
    if (!fastReact && nextSeq > m_lastUpdateSeq)
    {
        m_lastUpdateSeq = nextSeq;
    }
}

} // namespace ecngym
} // namespace ns3
