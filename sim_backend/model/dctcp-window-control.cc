/* SPDX-License-Identifier: GPL-2.0-only */
#include "dctcp-window-control.h"

#include "fabric-packet.h"
#include "path-facts.h"

#include <algorithm>
#include <cmath>
#include <limits>

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
    if (m_cfg->tcp.slowStart)
    {
        m_windowBytes = static_cast<double>(m_cfg->tcp.initialCwndPackets) * m_cfg->mssBytes;
        m_ssthreshBytes = m_cfg->tcp.ssthreshBytes > 0 ? static_cast<double>(m_cfg->tcp.ssthreshBytes)
                                                      : std::numeric_limits<double>::infinity();
    }
    else
    {
        const double bdp = BdpBytes(qp.lineRateBps, static_cast<double>(qp.baseRttNs));
        m_windowBytes = m_cfg->initialWindowBytes > 0
                            ? static_cast<double>(m_cfg->initialWindowBytes)
                            : std::max(bdp, double(m_cfg->minWindowBytes));
    }
    qp.windowBytes = static_cast<uint64_t>(m_windowBytes);
    m_windowEnd = 0;
    if (m_cfg->tcp.rtoEstimate)
    {
        m_rtoNs = m_cfg->tcp.initialRtoNs;
        qp.rtoNs = m_rtoNs;
    }
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
    m_cwndUsageSeq = 0; // the new flow's first send starts a new record (its byte numbering restarts)
    if (m_cfg->tcp.rtoEstimate)
    {
        qp.rtoNs = m_rtoNs; // the connection's estimate carries over, its backoff does not
    }
}

void
DctcpWindowControl::OnDataSent(QueuePair& qp, uint32_t payloadBytes, int64_t nowNs)
{
    if (m_cfg->tcp.cwndLimitedGrowth)
    {
        // Linux's tcp_cwnd_validate: a new window of data (snd_una passed the mark), or the window
        // limits this send, or (not limited so far) more in flight than the most so far, restarts
        // the record from this send
        const uint64_t inflight = qp.sndNxt - qp.sndUna;
        const bool limited = qp.IsWindowBound();
        if (qp.sndUna >= m_cwndUsageSeq || limited || (!m_isCwndLimited && inflight > m_maxInflightBytes))
        {
            m_isCwndLimited = limited;
            m_maxInflightBytes = inflight;
            m_cwndUsageSeq = qp.sndNxt;
        }
    }
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
    // (cwndLimitedGrowth) Linux's tcp_is_cwnd_limited: the window limited the sender, or in slow
    // start it is below twice the most bytes in flight
    const bool mayGrow =
        m_cfg->tcp.cwndLimitedGrowth
            ? m_isCwndLimited || (m_cfg->tcp.slowStart && m_windowBytes < m_ssthreshBytes &&
                                  m_windowBytes < 2.0 * static_cast<double>(m_maxInflightBytes))
            : !m_cfg->persistentConnections || m_windowLimited;
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
        if (m_cfg->tcp.slowStart)
        {
            // DCTCP's ssthresh is the reduced window (Linux's dctcp_ssthresh): a marked
            // connection leaves slow start
            m_ssthreshBytes = m_windowBytes;
        }
    }
    else if (!ecnEcho && !m_inCwr && newlyAckedBytes > 0 && mayGrow)
    {
        if (!m_cfg->tcp.slowStart)
        {
            m_windowBytes += static_cast<double>(m_cfg->mssBytes) * newlyAckedBytes / m_windowBytes;
        }
        else
        {
            // Linux's tcp_slow_start: grow by the bytes acknowledged up to ssthresh, the rest of
            // the ACK in congestion avoidance (RFC 5681 §3.1)
            double acked = static_cast<double>(newlyAckedBytes);
            if (m_windowBytes < m_ssthreshBytes)
            {
                const double step = std::min(acked, m_ssthreshBytes - m_windowBytes);
                m_windowBytes += step;
                acked -= step;
            }
            if (acked > 0)
            {
                m_windowBytes += static_cast<double>(m_cfg->mssBytes) * acked / m_windowBytes;
            }
        }
    }
    qp.windowBytes = static_cast<uint64_t>(m_windowBytes);
    m_sampleDue = newlyAckedBytes > 0;
}

void
DctcpWindowControl::OnAckFeedback(QueuePair& qp, const FabricPacket& ack, int64_t nowNs)
{
    if (m_cfg->tcp.rtoEstimate && m_sampleDue)
    {
        OnRttSample(qp, nowNs - ack.sendNs);
    }
}

void
DctcpWindowControl::OnRttSample(QueuePair& qp, int64_t rttNs)
{
    // RFC 6298 §2.2-2.3 (alpha = 1/8, beta = 1/4, K = 4; the clock granularity G is 1 ns)
    const double r = static_cast<double>(rttNs);
    if (m_srttNs == 0)
    {
        m_srttNs = r;
        m_rttvarNs = r / 2;
    }
    else
    {
        m_rttvarNs = 0.75 * m_rttvarNs + 0.25 * std::fabs(m_srttNs - r);
        m_srttNs = 0.875 * m_srttNs + 0.125 * r;
    }
    const double rto = m_srttNs + std::max(1.0, 4 * m_rttvarNs);
    m_rtoNs = std::clamp(static_cast<int64_t>(std::llround(rto)), m_cfg->tcp.minRtoNs, m_cfg->tcp.maxRtoNs);
    qp.rtoNs = m_rtoNs;
}

void
DctcpWindowControl::OnLoss(QueuePair& qp, bool timeout, int64_t nowNs)
{
    if (m_cfg->tcp.rtoEstimate && timeout)
    {
        // RFC 6298 §5.5: back off (the next sample recomputes it)
        qp.rtoNs = std::min(2 * qp.rtoNs, m_cfg->tcp.maxRtoNs);
    }
    if (!m_cfg->tcp.slowStart)
    {
        return;
    }
    // Linux's dctcp_react_to_loss / tcp_enter_loss: ssthresh = max(W / 2, 2 MSS); a timeout
    // restarts slow start from the loss window (one MSS), a NACK (fast retransmit) continues at
    // ssthresh once recovered
    const double mss = m_cfg->mssBytes;
    m_ssthreshBytes = std::max(m_windowBytes / 2, 2 * mss);
    if (timeout)
    {
        m_windowBytes = mss;
        m_inCwr = false;
    }
    else if (!m_inCwr)
    {
        m_windowBytes = std::max<double>(m_cfg->minWindowBytes, m_ssthreshBytes);
        m_inCwr = true;
        m_cwrEnd = qp.maxSent;
    }
    qp.windowBytes = static_cast<uint64_t>(m_windowBytes);
}

} // namespace ecngym
} // namespace ns3
