/*
 * ecngym fabric: PRED's Flow Concurrent Stabilizer (FCS) as a port AQM policy.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_PRED_FCS_AQM_POLICY_H
#define ECNGYM_PRED_FCS_AQM_POLICY_H

#include "fast-random.h"
#include "port-aqm-policy.h"

#include <vector>

namespace ns3
{
namespace ecngym
{

/**
 * @brief PRED FCS (Li et al., ToN 2025, §IV-A, Alg. 1; docs: algorithms/pred.md §3.1, §3.2).
 *
 * Per egress port, the number n of distinct flows whose data passes the port is counted within
 * each period of FcsPeriodNs (T_FCS = 1.25 RTT); N = max(n_last, n) is re-evaluated per packet
 * and the RED slope applied at enqueue on the instantaneous queue q (bytes) is
 *   lambda_eff = f(N) * LambdaQla,  f(N) in {N (the paper's), sqrt(N), N^2},
 *   p(q) = 0 for q < KminBytes;  min(1, lambda_eff * (q - KminBytes) / 1e6) for q < KmaxBytes;
 *          1 for q >= KmaxBytes,
 * i.e. lambda in probability per MB above minK (PRED §II-A; docs: algorithms/pred.md §1.2 [OURS]). LambdaQla is what
 * PRED's QLA (the control plane) sets at run time. The period rolls over on the first packet
 * after it expired (Alg. 1). Counting is exact (a per-period flow set, the collision-free bitmap
 * of PRED §IV-A; docs: algorithms/pred.md §3.2 [OURS]) or Hashed: a bitmap of 2^IndexSizeBits slots holding
 * Hash(flow, period), read-and-overwritten per packet (Alg. 1), with its collision noise.
 * P4Faithful=true also copies Alg. 1's quirk that the rollover packet itself is not counted.
 * Only ECN-capable data packets are marked; only data packets are counted.
 *
 * Telemetry (read_telemetry keys "pred.*"): flow_count (N now), flows_last_period (n_last),
 * lambda_eff (f(N) * LambdaQla now, per MB), marked (packets CE-marked in the interval).
 */
class PredFcsAqmPolicy : public PortAqmPolicy
{
  public:
    /** @brief f(N), the concurrency multiplier (PRED §IV-A; docs: algorithms/pred.md §3.2). */
    enum class Scaling : uint8_t
    {
        Linear = 0, //!< f(N) = N (the paper's choice)
        Sqrt = 1,   //!< f(N) = sqrt(N)
        Square = 2, //!< f(N) = N^2
    };

    /** @brief How distinct flows are counted. */
    enum class CounterMode : uint8_t
    {
        Exact = 0,  //!< exact per-period set of flows
        Hashed = 1, //!< the P4 bitmap of 2^IndexSizeBits hash slots
    };

    /**
     * @brief Get the type ID.
     * @return the object TypeId
     */
    static TypeId GetTypeId();

    PredFcsAqmPolicy();

    AqmVerdict OnEnqueue(const AqmContext& ctx, FabricPacket& p) override;
    void OnDequeue(const AqmContext& ctx, FabricPacket& p) override;
    void SetStreamSeed(uint64_t seed) override;
    std::string CheckConsistency() const override;
    std::vector<AqmTelemetryInfo> DescribeTelemetry() const override;
    std::vector<std::string> DescribeActionAttributes() const override;
    void ReadTelemetry(std::vector<std::pair<const char*, double>>& out) override;

    /**
     * @param nowNs the current time
     * @return N = max(n_last, n) as of nowNs (periods that expired without packets rolled over)
     */
    uint32_t FlowCountAt(int64_t nowNs) const;

    /**
     * @param n the concurrency estimate N
     * @return f(N) * LambdaQla (per MB)
     */
    double EffectiveLambda(uint32_t n) const;

  private:
    void CountsAt(int64_t nowNs, uint32_t& nLast, uint32_t& nNow) const;
    void RollOver(int64_t nowNs);
    void CountFlow(uint32_t flowId);

    double m_lambdaQla{0.1};
    uint64_t m_minKBytes{10000};
    uint64_t m_maxKBytes{500000};
    uint64_t m_periodNs{100000};
    Scaling m_scaling{Scaling::Linear};
    CounterMode m_counterMode{CounterMode::Exact};
    uint32_t m_indexSizeBits{7};
    bool m_p4Faithful{false};

    int64_t m_periodStartNs{0};
    uint32_t m_period{1}; //!< period sequence number (salts the hash, stamps the exact set)
    uint32_t m_nNow{0};
    uint32_t m_nLast{0};
    bool m_started{false};
    /// exact mode: open-addressing table of (flowId + 1, last period seen)
    std::vector<std::pair<uint32_t, uint32_t>> m_seen;
    std::size_t m_seenUsed{0};
    std::vector<uint64_t> m_bitmap; //!< hashed mode
    uint64_t m_marked{0};
    FastRandom m_rng;
};

} // namespace ecngym
} // namespace ns3

#endif
