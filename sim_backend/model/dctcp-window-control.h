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
};

} // namespace ecngym
} // namespace ns3

#endif
