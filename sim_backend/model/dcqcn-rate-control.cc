/* SPDX-License-Identifier: GPL-2.0-only */
#include "dcqcn-rate-control.h"

#include "rdma-host-node.h"

#include "ns3/simulator.h"

#include <algorithm>
#include <cmath>

namespace ns3
{
namespace ecngym
{

DcqcnRateControl::DcqcnRateControl(const DcqcnConfig* cfg)
    : m_cfg(cfg)
{
}

void
DcqcnRateControl::Start(QueuePair& qp, int64_t nowNs)
{
    m_qp = &qp;
    qp.rateBps = qp.lineRateBps;
    qp.windowBytes = 0;
    m_targetRateBps = qp.lineRateBps;
    m_alpha = m_cfg->initialAlpha;
    m_alphaAnchorNs = nowNs;
}

void
DcqcnRateControl::CatchUpAlpha(int64_t nowNs)
{
    if (m_firstCnp)
    {
        return; // no alpha timer runs before the first notification
    }
    const int64_t ticks = (nowNs - m_alphaAnchorNs) / m_cfg->alphaIntervalNs - m_alphaTicksDone;
    if (ticks <= 0)
    {
        return;
    }
    m_alpha = (1 - m_cfg->g) * m_alpha + (m_alphaCnpFlag ? m_cfg->g : 0.0);
    m_alphaCnpFlag = false;
    if (ticks > 1)
    {
        m_alpha *= std::pow(1 - m_cfg->g, static_cast<double>(ticks - 1));
    }
    m_alphaTicksDone += ticks;
}

double
DcqcnRateControl::GetAlpha(int64_t nowNs)
{
    CatchUpAlpha(nowNs);
    return m_alpha;
}

void
DcqcnRateControl::OnCongestionNotification(QueuePair& qp, int64_t nowNs)
{
    if (m_cfg->cutOnCnp)
    {
        // DCQCN paper: cut with the current alpha, then raise alpha; the alpha-decay timer restarts.
        if (!m_firstCnp)
        {
            CatchUpAlpha(nowNs);
        }
        m_firstCnp = false;
        Decrease(nowNs);
        m_alpha = (1 - m_cfg->g) * m_alpha + m_cfg->g;
        m_alphaAnchorNs = nowNs;
        m_alphaTicksDone = 0;
        m_alphaCnpFlag = false;
        qp.host->OnRateChange(qp);
        return;
    }
    // Mellanox mode: flag the notification; alpha and the rate react at their next ticks.
    if (m_firstCnp)
    {
        m_firstCnp = false;
        m_alpha = m_cfg->initialAlpha;
        m_alphaAnchorNs = nowNs;
        m_alphaTicksDone = 0;
        m_alphaCnpFlag = false;
        m_targetRateBps = qp.rateBps = m_cfg->rateOnFirstCnp * qp.rateBps;
        qp.host->OnRateChange(qp);
    }
    else
    {
        CatchUpAlpha(nowNs);
        m_alphaCnpFlag = true;
    }
    m_decreaseCnpFlag = true;
    if (!m_decreaseEvent.IsPending())
    {
        // Decrease ticks lie on the grid anchor + 1 ns + k * interval (k >= 1): 1 ns after the
        // alpha tick of the same instant, so the cut uses the freshly updated alpha.
        const int64_t since = nowNs - m_alphaAnchorNs - 1;
        const int64_t k = (since < 0 ? 0 : since / m_cfg->decreaseIntervalNs) + 1;
        const int64_t tick = m_alphaAnchorNs + 1 + k * m_cfg->decreaseIntervalNs;
        m_decreaseEvent = Simulator::Schedule(NanoSeconds(tick - nowNs),
                                              &DcqcnRateControl::DecreaseTick,
                                              this);
    }
}

void
DcqcnRateControl::DecreaseTick()
{
    const int64_t now = Simulator::Now().GetTimeStep();
    if (!m_decreaseCnpFlag)
    {
        return;
    }
    CatchUpAlpha(now);
    m_decreaseCnpFlag = false;
    Decrease(now);
    m_qp->host->OnRateChange(*m_qp);
}

void
DcqcnRateControl::Decrease(int64_t nowNs)
{
    QueuePair& qp = *m_qp;
    if (m_cfg->clampTargetRate || m_cfg->cutOnCnp || m_timerStage != 0 || m_byteStage != 0)
    {
        m_targetRateBps = qp.rateBps;
    }
    qp.rateBps = std::max(m_cfg->minRateBps, qp.rateBps * (1 - m_alpha / 2));
    RestartIncrease(nowNs);
}

void
DcqcnRateControl::RestartIncrease(int64_t nowNs)
{
    m_timerStage = 0;
    m_byteStage = 0;
    m_bytesSinceIncrease = 0;
    m_increaseEvent.Cancel();
    m_increaseEvent = Simulator::Schedule(NanoSeconds(m_cfg->increaseTimerNs),
                                          &DcqcnRateControl::IncreaseTimer,
                                          this);
}

void
DcqcnRateControl::IncreaseTimer()
{
    Increase();
    ++m_timerStage;
    if (m_qp->rateBps < m_qp->lineRateBps)
    {
        m_increaseEvent = Simulator::Schedule(NanoSeconds(m_cfg->increaseTimerNs),
                                              &DcqcnRateControl::IncreaseTimer,
                                              this);
    }
}

void
DcqcnRateControl::OnDataSent(QueuePair& qp, uint32_t payloadBytes, int64_t nowNs)
{
    if (m_cfg->byteCounterBytes == 0 || m_firstCnp || qp.rateBps >= qp.lineRateBps)
    {
        return;
    }
    m_bytesSinceIncrease += payloadBytes;
    if (m_bytesSinceIncrease >= m_cfg->byteCounterBytes)
    {
        m_bytesSinceIncrease = 0;
        Increase();
        ++m_byteStage;
    }
}

void
DcqcnRateControl::Increase()
{
    QueuePair& qp = *m_qp;
    const uint32_t f = m_cfg->fastRecoverySteps;
    enum
    {
        FastRecovery,
        Additive,
        Hyper
    } phase;
    if (m_cfg->byteCounterBytes == 0)
    {
        // Timer only (HPCC / Mellanox): stage < F recovers, stage == F adds, later stages hyper.
        phase = m_timerStage < f ? FastRecovery : (m_timerStage == f ? Additive : Hyper);
    }
    else
    {
        // Timer and byte counter (DCQCN paper): both below F recover, both at/above F hyper.
        const uint32_t lo = std::min(m_timerStage, m_byteStage);
        const uint32_t hi = std::max(m_timerStage, m_byteStage);
        phase = hi < f ? FastRecovery : (lo >= f ? Hyper : Additive);
    }
    if (phase == Additive)
    {
        m_targetRateBps = std::min(qp.lineRateBps, m_targetRateBps + m_cfg->aiRateBps);
    }
    else if (phase == Hyper)
    {
        m_targetRateBps = std::min(qp.lineRateBps, m_targetRateBps + m_cfg->haiRateBps);
    }
    qp.rateBps = (qp.rateBps + m_targetRateBps) / 2;
    // Within 1e-4 of line rate the halving steps are indistinguishable from line rate; stopping
    // there ends the timer instead of firing it for the rest of the flow.
    if (qp.rateBps > qp.lineRateBps * (1 - 1e-4))
    {
        qp.rateBps = qp.lineRateBps;
    }
    qp.host->OnRateChange(qp);
}

void
DcqcnRateControl::Stop()
{
    m_decreaseEvent.Cancel();
    m_increaseEvent.Cancel();
}

} // namespace ecngym
} // namespace ns3
