/* SPDX-License-Identifier: GPL-2.0-only */
#include "dctcp-rate-control.h"

#include "fabric-packet.h"
#include "rdma-host-node.h"

#include <algorithm>

namespace ns3
{
namespace ecngym
{

DctcpRateControl::DctcpRateControl(const DctcpRateConfig* cfg)
    : m_cfg(cfg)
{
}

void
DctcpRateControl::Start(QueuePair& qp, int64_t nowNs)
{
    qp.rateBps = qp.lineRateBps;
    m_alpha = m_cfg->initialAlpha;
}

void
DctcpRateControl::OnAckFeedback(QueuePair& qp, const FabricPacket& ack, int64_t nowNs)
{
    const uint64_t ackSeq = ack.seq;
    bool newBatch = false;
    m_ecnCount += ack.ce ? 1 : 0;
    if (ackSeq > m_lastUpdateSeq)
    {
        // A full window of feedback is in: update alpha.
        newBatch = true;
        if (m_lastUpdateSeq == 0)
        {
            m_lastUpdateSeq = qp.sndNxt;
            m_batchPackets = qp.sndNxt / m_cfg->mtuBytes + 1;
        }
        else
        {
            const double frac =
                std::min(1.0, static_cast<double>(m_ecnCount) / static_cast<double>(m_batchPackets));
            m_alpha = (1 - m_cfg->g) * m_alpha + m_cfg->g * frac;
            m_lastUpdateSeq = qp.sndNxt;
            m_ecnCount = 0;
            m_batchPackets = (qp.sndNxt - ackSeq) / m_cfg->mtuBytes + 1;
        }
    }
    if (m_inCwr && ackSeq > m_highSeq)
    {
        m_inCwr = false;
    }
    const double before = qp.rateBps;
    if (ack.ce && !m_inCwr)
    {
        qp.rateBps = std::max(m_cfg->minRateBps, qp.rateBps * (1 - m_alpha / 2));
        m_inCwr = true;
        m_highSeq = qp.sndNxt;
    }
    if (!m_inCwr && newBatch)
    {
        qp.rateBps = std::min(qp.lineRateBps, qp.rateBps + m_cfg->aiRateBps);
    }
    if (qp.rateBps != before)
    {
        qp.host->OnRateChange(qp);
    }
}

} // namespace ecngym
} // namespace ns3
