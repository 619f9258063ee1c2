/* SPDX-License-Identifier: GPL-2.0-only */
#include "dctcp-window-control.h"

#include <algorithm>

namespace ns3
{
namespace ecngym
{

DctcpWindowControl::DctcpWindowControl(const DctcpConfig* cfg)
    : m_cfg(cfg)
{
}

void
DctcpWindowControl::Start(QueuePair& qp, int64_t nowNs)
{
    qp.rateBps = qp.lineRateBps;
    m_alpha = m_cfg->initialAlpha;
    const double bdp = qp.lineRateBps * static_cast<double>(qp.baseRttNs) / 8e9;
    m_windowBytes = m_cfg->initialWindowBytes > 0 ? static_cast<double>(m_cfg->initialWindowBytes)
                                                  : std::max(bdp, double(m_cfg->minWindowBytes));
    qp.windowBytes = static_cast<uint64_t>(m_windowBytes);
    m_windowEnd = 0;
}

void
DctcpWindowControl::Resume(QueuePair& qp, int64_t nowNs)
{
    qp.rateBps = qp.lineRateBps;
    qp.windowBytes = static_cast<uint64_t>(m_windowBytes);
    m_windowEnd = 0;
    m_inCwr = false;
    m_cwrEnd = 0;
    m_windowLimited = false;
}

void
DctcpWindowControl::OnDataSent(QueuePair& qp, uint32_t payloadBytes, int64_t nowNs)
{
    if (m_cfg->persistentConnections && qp.IsWindowBound())
    {
        m_windowLimited = true;
    }
}

void
DctcpWindowControl::OnAck(QueuePair& qp, uint64_t newlyAckedBytes, bool ecnEcho, int64_t nowNs)
{
    // (persistent connections) grow only if the window limited the sender in this observation
    // window: Linux's tcp_is_cwnd_limited, evaluated before the window rolls over
    const bool mayGrow = !m_cfg->persistentConnections || m_windowLimited;
    m_ackedBytes += newlyAckedBytes;
    if (ecnEcho)
    {
        m_markedBytes += newlyAckedBytes;
    }
    if (qp.sndUna > m_windowEnd)
    {
        // One observation window (about one RTT of data) has been acknowledged.
        const double frac =
            m_ackedBytes > 0 ? static_cast<double>(m_markedBytes) / m_ackedBytes : 0.0;
        m_alpha = (1 - m_cfg->g) * m_alpha + m_cfg->g * frac;
        m_ackedBytes = 0;
        m_markedBytes = 0;
        m_windowEnd = qp.sndNxt;
        m_windowLimited = false;
    }
    if (m_inCwr && qp.sndUna > m_cwrEnd)
    {
        m_inCwr = false;
    }
    if (ecnEcho && !m_inCwr)
    {
        m_windowBytes = std::max<double>(m_cfg->minWindowBytes, m_windowBytes * (1 - m_alpha / 2));
        m_inCwr = true;
        m_cwrEnd = qp.sndNxt;
    }
    else if (!ecnEcho && !m_inCwr && newlyAckedBytes > 0 && mayGrow)
    {
        m_windowBytes += static_cast<double>(m_cfg->mssBytes) * newlyAckedBytes / m_windowBytes;
    }
    qp.windowBytes = static_cast<uint64_t>(m_windowBytes);
}

} // namespace ecngym
} // namespace ns3
