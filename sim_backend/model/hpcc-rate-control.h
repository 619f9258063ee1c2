/*
 * ecngym fabric: HPCC, high-precision congestion control from in-band telemetry (CC_MODE 3).
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_HPCC_RATE_CONTROL_H
#define ECNGYM_HPCC_RATE_CONTROL_H

#include "congestion-control.h"
#include "int-telemetry.h"

#include <vector>

namespace ns3
{
namespace ecngym
{

/**
 * @brief HPCC parameters (Li et al. SIGCOMM 2019, Alg. 1; the HPCC model's U_TARGET, MI_THRESH,
 *        FAST_REACT, SAMPLE_FEEDBACK, INT_MULTI, RATE_AI, MIN_RATE).
 */
struct HpccConfig
{
    double targetUtil{0.95};   //!< eta
    double aiRateBps{40e6};    //!< W_AI expressed as a rate step
    uint32_t miThresh{0};      //!< maxStage: additive steps before a multiplicative one
    bool fastReact{true};      //!< react on every ACK (commit once per RTT)
    bool sampleFeedback{false}; //!< on per-ACK reactions, skip hops with an empty queue
    uint32_t intMulti{1};      //!< INT byte / queue-length unit multiplier
    double minRateBps{1e9};    //!< rate floor
    std::vector<double> linkRates; //!< the fabric's link rates, by INT rate index
};

/**
 * @brief HPCC sender with one rate per queue pair (the model's MULTI_RATE 0).
 *
 * Switches push (time, tx bytes, queue length, link rate) into each data packet at dequeue; the
 * receiver echoes the stack on the ACK. Per ACK, for each hop i against the previous record of
 * that hop: u_i = txRate_i / B_i + min(q_i, q_i') R_line / (B_i W), the most utilised hop gives U
 * and its interval tau; u <- (u (T - tau) + U tau) / T with tau <= T (T the base RTT). With
 * k = u / eta: R = R_c / k + R_AI if k >= 1 or the increase stage reached miThresh, else
 * R = R_c + R_AI; bounded to [minRate, line rate]. The rate is applied on every ACK (fast react)
 * but R_c and the stage are committed only once per RTT (an ACK beyond the sequence sent at the
 * previous commit). The first ACK only records the hops. The NIC window W (BDP, variable with the
 * rate) bounds bytes in flight.
 */
class HpccRateControl : public CongestionControl
{
  public:
    /** @param cfg shared parameters (must outlive this object) */
    explicit HpccRateControl(const HpccConfig* cfg);

    void Start(QueuePair& qp, int64_t nowNs) override;
    void OnAckFeedback(QueuePair& qp, const FabricPacket& ack, int64_t nowNs) override;

    /** @return the smoothed utilisation estimate u of the most utilised hop (1 until the first update) */
    double UtilisationEstimate() const override
    {
        return m_u;
    }

  private:
    void UpdateRate(QueuePair& qp, const IntStack& ints, bool fastReact);

    const HpccConfig* m_cfg;
    double m_curRateBps{0};
    uint64_t m_lastUpdateSeq{0};
    uint32_t m_incStage{0};
    double m_u{1.0};
    IntHop m_hop[kIntMaxHops];
};

} // namespace ecngym
} // namespace ns3

#endif
