/*
 * ecngym fabric: hardware-style DCTCP on the RDMA NIC (window-based, per-packet ECN echo).
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_DCTCP_WINDOW_CONTROL_H
#define ECNGYM_DCTCP_WINDOW_CONTROL_H

#include "congestion-control.h"
#include "tcp-host-options.h"

namespace ns3
{
namespace ecngym
{

/**
 * @brief DCTCP parameters (Alizadeh et al., SIGCOMM 2010), NIC style: no slow start.
 */
struct DctcpConfig
{
    double g{1.0 / 16};            //!< alpha EWMA gain
    double initialAlpha{1.0};      //!< alpha at flow start
    uint64_t initialWindowBytes{0}; //!< initial window; 0 = the path's bandwidth-delay product
    uint64_t minWindowBytes{1000}; //!< window floor (one MTU payload)
    uint32_t mssBytes{1000};       //!< additive increase per window of ACKs
    /**
     * Persistent connections (off by default): the flows of one host pair are carried by a pool of
     * connections, as the HKUST-SING TrafficGenerator's client keeps them (PRED; docs: algorithms/pred.md §5.1,
     * ref [40]): a flow takes the first idle connection of its pair, keeping that connection's
     * window and alpha, or opens a new one when all are busy. A connection's window then grows
     * only while it limited the sender (Linux's tcp_is_cwnd_limited), so one that carries only
     * flows shorter than its window does not grow it without bound.
     */
    bool persistentConnections{false};
    /** The Linux-like options (all off: the NIC-style model above). */
    TcpHostConfig tcp;
};

/**
 * @brief DCTCP sender: window W, once per window of data
 *   alpha <- (1-g) alpha + g F   (F = fraction of bytes acknowledged with ECN echo),
 * one cut W <- W (1 - alpha/2) per window with an echo, else W += MSS per window (congestion
 * avoidance). The NIC paces each queue pair at line rate within the window.
 *
 * With TcpHostConfig::slowStart, W starts at initialCwndPackets MSS and grows by the bytes each
 * ACK acknowledges while below ssthresh (RFC 5681 §3.1); an echo's cut also sets ssthresh to the
 * cut window (Linux's dctcp_ssthresh), a loss halves it (at least 2 MSS) and a timeout restarts
 * from one MSS. With TcpHostConfig::rtoEstimate it keeps the RFC 6298 estimator and sets qp.rtoNs.
 * With TcpHostConfig::cwndLimitedGrowth the window grows only while it limits the sender (Linux's
 * tcp_is_cwnd_limited): a flow that the NIC's line-rate pacing limits does not grow it.
 */
class DctcpWindowControl : public CongestionControl
{
  public:
    /** @param cfg shared parameters (must outlive this object) */
    explicit DctcpWindowControl(const DctcpConfig* cfg);

    void Start(QueuePair& qp, int64_t nowNs) override;

    /**
     * @brief A new flow starts on this (persistent, idle) connection: it keeps the window, alpha
     *        and the marks of the unfinished observation window; sequence-based state restarts
     *        with the flow's byte numbering (the next ACK closes the carried observation window).
     * @param qp the new flow's queue pair
     * @param nowNs current time
     */
    void Resume(QueuePair& qp, int64_t nowNs);

    void OnDataSent(QueuePair& qp, uint32_t payloadBytes, int64_t nowNs) override;
    void OnAck(QueuePair& qp, uint64_t newlyAckedBytes, bool ecnEcho, int64_t nowNs) override;

    /**
     * @brief (TcpHostConfig::rtoEstimate) Take the RTT sample an ACK that acknowledged new data
     *        carries (the echoed send time, as a TCP timestamp echo).
     */
    void OnAckFeedback(QueuePair& qp, const FabricPacket& ack, int64_t nowNs) override;

    /**
     * @brief A loss was detected (a NACK, or a retransmission timeout), after snd_nxt was rewound.
     *        Only the Linux-like options react (the NIC-style model keeps its window).
     * @param qp the queue pair
     * @param timeout whether the retransmission timer fired (else a NACK)
     * @param nowNs current time
     */
    void OnLoss(QueuePair& qp, bool timeout, int64_t nowNs);

    /**
     * @brief (TcpHostConfig::rtoEstimate) Feed one RTT sample to the RFC 6298 estimator and set
     *        qp.rtoNs = SRTT + 4 RTTVAR within [minRto, maxRto].
     * @param qp the queue pair
     * @param rttNs the sample
     */
    void OnRttSample(QueuePair& qp, int64_t rttNs);

    /** @return the smoothed RTT (ns; 0 before the first sample) */
    double GetSrttNs() const
    {
        return m_srttNs;
    }

    /** @return the slow-start threshold (bytes; +inf = unbounded) */
    double GetSsthreshBytes() const
    {
        return m_ssthreshBytes;
    }

    /** @return current alpha */
    double GetAlpha() const
    {
        return m_alpha;
    }

    double AlphaEstimate() const override
    {
        return m_alpha;
    }

  private:
    const DctcpConfig* m_cfg;
    double m_alpha{1.0};
    double m_windowBytes{0};
    uint64_t m_windowEnd{0};   //!< snd_nxt when the current observation window began
    uint64_t m_ackedBytes{0};
    uint64_t m_markedBytes{0};
    bool m_inCwr{false};
    uint64_t m_cwrEnd{0};
    bool m_windowLimited{false}; //!< the window limited the sender in this observation window
    // (cwndLimitedGrowth) Linux's tcp_cwnd_validate state: whether the window limited the sender,
    // and the most bytes in flight, in the window of data that began at m_cwndUsageSeq's send
    bool m_isCwndLimited{false};
    uint64_t m_maxInflightBytes{0};
    uint64_t m_cwndUsageSeq{0};
    double m_ssthreshBytes{0};   //!< slow-start threshold (slowStart)
    double m_srttNs{0};          //!< RFC 6298 SRTT (0 = no sample yet)
    double m_rttvarNs{0};        //!< RFC 6298 RTTVAR
    int64_t m_rtoNs{0};          //!< the RTO the last sample gave (rtoEstimate)
    bool m_sampleDue{false};     //!< the last ACK acknowledged new data: its echo is a sample
};

} // namespace ecngym
} // namespace ns3

#endif
