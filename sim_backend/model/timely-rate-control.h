/*
 * ecngym fabric: TIMELY (RTT-gradient rate control) as the HPCC model runs it (CC_MODE 7).
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_TIMELY_RATE_CONTROL_H
#define ECNGYM_TIMELY_RATE_CONTROL_H

#include "congestion-control.h"

namespace ns3
{
namespace ecngym
{

/**
 * @brief TIMELY parameters (Mittal et al. SIGCOMM 2015); alpha, beta, T_low, T_high and the
 *        minimum RTT are the HPCC model's attribute defaults, the rates its RATE_AI / RATE_HAI.
 */
struct TimelyConfig
{
    double alpha{0.875};        //!< EWMA weight of the newest RTT difference
    double beta{0.8};           //!< multiplicative-decrease factor
    int64_t tLowNs{50000};      //!< below: always increase
    int64_t tHighNs{500000};    //!< above: decrease by beta (1 - T_high / RTT)
    int64_t minRttNs{20000};    //!< normalises the gradient
    double aiRateBps{100e6};    //!< additive step
    double haiRateBps{500e6};   //!< step from the `haiAfter`-th consecutive increase on
    uint32_t haiAfter{5};       //!< consecutive increases before the larger step
    double minRateBps{1e9};     //!< rate floor
};

/**
 * @brief TIMELY sender (rdma-hw's CC_MODE 7).
 *
 * Each data packet carries its send time, its ACK echoes it, RTT = ACK arrival - send time. Once
 * per window of data (an ACK beyond the sequence sent at the previous update), with the previous
 * update's RTT:
 *   rtt_diff <- (1 - alpha) rtt_diff + alpha (RTT - previous RTT),  gradient = rtt_diff / minRtt;
 *   RTT < T_low: increase; RTT > T_high: R <- R (1 - beta (1 - T_high / RTT));
 *   else increase if gradient <= 0, else R <- R max(0, 1 - beta gradient).
 * An increase adds aiRateBps (haiRateBps from the haiAfter-th consecutive one), capped at line
 * rate; R never falls below minRateBps. ECN marks are ignored; the first window only records RTT.
 */
class TimelyRateControl : public CongestionControl
{
  public:
    /** @param cfg shared parameters (must outlive this object) */
    explicit TimelyRateControl(const TimelyConfig* cfg);

    void Start(QueuePair& qp, int64_t nowNs) override;
    void OnAckFeedback(QueuePair& qp, const FabricPacket& ack, int64_t nowNs) override;

    /** @return the RTT of the last rate update (ns) */
    int64_t GetLastRttNs() const
    {
        return m_lastRttNs;
    }

  private:
    const TimelyConfig* m_cfg;
    double m_curRateBps{0};
    uint64_t m_lastUpdateSeq{0};
    uint32_t m_incStage{0};
    int64_t m_lastRttNs{0};
    double m_rttDiffNs{0};
};

} // namespace ecngym
} // namespace ns3

#endif
