/*
 * ecngym fabric: DCQCN reaction point (rate-based, on CNPs or CE-echoing ACKs).
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_DCQCN_RATE_CONTROL_H
#define ECNGYM_DCQCN_RATE_CONTROL_H

#include "congestion-control.h"

#include "ns3/event-id.h"

namespace ns3
{
namespace ecngym
{

/**
 * @brief DCQCN parameters (Zhu et al., SIGCOMM 2015; Mellanox CX-4 timers as in the HPCC model).
 *
 * Two fabric presets set it (FabricConfig.preset): `dcqcn_paper` (55/50/55 us timers, F = 5, 10 MB
 * byte counter, immediate cut on a CNP) and `hpcc` (Mellanox CX-4 style: 1/4/300 us, F = 1, no byte
 * counter, cut at the next rate-decrease tick), the latter matching the HPCC reference runs.
 */
struct DcqcnConfig
{
    double g{1.0 / 256};              //!< alpha EWMA gain
    double initialAlpha{1.0};         //!< alpha at flow start / first CNP
    int64_t alphaIntervalNs{1000};    //!< alpha update period
    int64_t decreaseIntervalNs{4000}; //!< rate-decrease check period (Mellanox mode)
    int64_t increaseTimerNs{300000};  //!< rate-increase timer
    uint64_t byteCounterBytes{0};     //!< rate-increase byte counter (0 = off)
    uint32_t fastRecoverySteps{1};    //!< F
    double aiRateBps{20e6};           //!< additive-increase step
    double haiRateBps{200e6};         //!< hyper-increase step
    double minRateBps{1e9};           //!< rate floor
    double rateOnFirstCnp{1.0};       //!< rate multiplier applied on the first CNP (Mellanox)
    bool clampTargetRate{false};      //!< always set Rt = Rc on a decrease
    bool cutOnCnp{false};             //!< paper mode: cut at each CNP (else at decrease ticks)
};

/**
 * @brief DCQCN reaction point of one queue pair.
 *
 * Decrease: Rt <- Rc; Rc <- max(Rmin, Rc (1 - alpha/2)). alpha <- (1-g) alpha + g in each alpha
 * interval with a notification, (1-g) alpha in one without. Increase (timer or byte counter
 * stage s): fast recovery Rc <- (Rt + Rc)/2 while s < F; then additive (Rt += R_AI) and hyper
 * (Rt += R_HAI) increase, each followed by Rc <- (Rt + Rc)/2, Rt capped at line rate.
 *
 * alpha is kept lazily: the periodic updates are applied in closed form when alpha is needed,
 * which is exactly equivalent to a 1 us timer per queue pair but costs no events.
 */
class DcqcnRateControl : public CongestionControl
{
  public:
    /** @param cfg shared parameters (must outlive this object) */
    explicit DcqcnRateControl(const DcqcnConfig* cfg);

    void Start(QueuePair& qp, int64_t nowNs) override;
    void OnCongestionNotification(QueuePair& qp, int64_t nowNs) override;
    void OnDataSent(QueuePair& qp, uint32_t payloadBytes, int64_t nowNs) override;
    void Stop() override;

    /** @return current alpha (brought up to date to now) */
    double GetAlpha(int64_t nowNs);

    /** @return the target rate Rt */
    double GetTargetRateBps() const
    {
        return m_targetRateBps;
    }

  private:
    void CatchUpAlpha(int64_t nowNs);
    void DecreaseTick();
    void Decrease(int64_t nowNs);
    void IncreaseTimer();
    void Increase();
    void RestartIncrease(int64_t nowNs);

    const DcqcnConfig* m_cfg;
    QueuePair* m_qp{nullptr};
    double m_targetRateBps{0};
    double m_alpha{1.0};
    bool m_firstCnp{true};
    int64_t m_alphaAnchorNs{0};
    int64_t m_alphaTicksDone{0};
    bool m_alphaCnpFlag{false};
    bool m_decreaseCnpFlag{false};
    EventId m_decreaseEvent;
    EventId m_increaseEvent;
    uint32_t m_timerStage{0};
    uint32_t m_byteStage{0};
    uint64_t m_bytesSinceIncrease{0};
};

} // namespace ecngym
} // namespace ns3

#endif
