/*
 * ecngym fabric: DCTCP as the HPCC model runs it on the RDMA NIC (rate-based, CC_MODE 8).
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_DCTCP_RATE_CONTROL_H
#define ECNGYM_DCTCP_RATE_CONTROL_H

#include "congestion-control.h"

namespace ns3
{
namespace ecngym
{

/**
 * @brief Parameters of the HPCC model's rate-based DCTCP (its `EWMA_GAIN`, `DCTCP_RATE_AI`,
 *        `MIN_RATE`; shared/reference/hpcc-model/README.md, "dctcp").
 */
struct DctcpRateConfig
{
    double g{1.0 / 16};         //!< alpha EWMA gain
    double initialAlpha{1.0};   //!< alpha at flow start
    double aiRateBps{615e6};    //!< rate added once per window of data outside CWR
    double minRateBps{1e9};     //!< rate floor
    uint32_t mtuBytes{1000};    //!< payload per packet (the batch size unit)
};

/**
 * @brief DCTCP in the HPCC model's NIC (Alizadeh et al. SIGCOMM 2010, as rdma-hw's CC_MODE 8).
 *
 * The switch marks above K (step marking), the receiver echoes CE on every ACK. Once per window of
 * data (an ACK beyond the sequence sent at the previous update):
 * alpha <- (1 - g) alpha + g F, F = min(1, marked ACKs / packets of that window). A marked ACK
 * outside CWR cuts R <- max(Rmin, R (1 - alpha/2)) and enters CWR until everything sent so far is
 * acknowledged; outside CWR each new window adds `aiRateBps`. The NIC window (FabricConfig) caps
 * bytes in flight; sending is paced at R. The counts follow the model exactly (its first window
 * counts marks without resetting, its batch sizes in packets are bytes / MTU + 1).
 */
class DctcpRateControl : public CongestionControl
{
  public:
    /** @param cfg shared parameters (must outlive this object) */
    explicit DctcpRateControl(const DctcpRateConfig* cfg);

    void Start(QueuePair& qp, int64_t nowNs) override;
    void OnAckFeedback(QueuePair& qp, const FabricPacket& ack, int64_t nowNs) override;

    /** @return current alpha */
    double GetAlpha() const
    {
        return m_alpha;
    }

  private:
    const DctcpRateConfig* m_cfg;
    double m_alpha{1.0};
    uint64_t m_lastUpdateSeq{0};
    uint64_t m_batchPackets{0};
    uint64_t m_ecnCount{0};
    bool m_inCwr{false};
    uint64_t m_highSeq{0};
};

} // namespace ecngym
} // namespace ns3

#endif
