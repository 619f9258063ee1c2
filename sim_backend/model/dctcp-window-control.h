/*
 * ecngym fabric: hardware-style DCTCP on the RDMA NIC (window-based, per-packet ECN echo).
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_DCTCP_WINDOW_CONTROL_H
#define ECNGYM_DCTCP_WINDOW_CONTROL_H

#include "congestion-control.h"

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
};

/**
 * @brief DCTCP sender: window W, once per window of data
 *   alpha <- (1-g) alpha + g F   (F = fraction of bytes acknowledged with ECN echo),
 * one cut W <- W (1 - alpha/2) per window with an echo, else W += MSS per window (congestion
 * avoidance). The NIC paces each queue pair at line rate within the window.
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

    /** @return current alpha */
    double GetAlpha() const
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
};

} // namespace ecngym
} // namespace ns3

#endif
