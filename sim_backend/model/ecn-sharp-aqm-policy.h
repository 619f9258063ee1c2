/*
 * ecngym fabric: ECN# (ECN-sharp), sojourn-time marking for RTT variation, as a port AQM policy.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_ECN_SHARP_AQM_POLICY_H
#define ECNGYM_ECN_SHARP_AQM_POLICY_H

#include "fabric-net-device.h"
#include "port-aqm-policy.h"

#include <array>
#include <limits>

namespace ns3
{
namespace ecngym
{

/**
 * @brief ECN# (Zhang, Bai, Chen, IEEE TCC 2022, §3, Algorithm 1; docs: algorithms/ecn-sharp.md §2).
 *
 * At dequeue of every data packet, with sojourn = now - enqueue time:
 *  - instantaneous rule: mark if sojourn > InsTargetNs (from a high-percentile RTT);
 *  - persistent rule: the queue is "persistent" once every packet's sojourn stayed >= PstTargetNs
 *    for longer than PstIntervalNs; then one packet is marked, and more at shrinking gaps
 *    (the marking-next schedule) until a packet's sojourn falls below PstTargetNs.
 * Both rules run on every packet (the persistent state stays current when rule 1 marked). The
 * schedule is ControlLaw = RepoSqrt (the authors' ns-3 code: next = now + interval / sqrt(count),
 * mark when now >= next; the default, ECN# §3.2; docs: algorithms/ecn-sharp.md §2.4 [OURS]) or PaperLinear (Alg. 1:
 * next += interval / count, mark when now > next). One state per data queue (§2.6 multi-queue).
 * Only ECN-capable packets are marked; nothing is dropped.
 *
 * Telemetry ("ecn_sharp.*"): sojourn_min_ns, sojourn_mean_ns (over data packets dequeued in the
 * interval; NaN if none), marked_instantaneous, marked_persistent (packets whose mark came from
 * that rule; a packet both rules mark counts as instantaneous), persistent_state (1 if any queue
 * is in a persistent-marking episode now).
 */
class EcnSharpAqmPolicy : public PortAqmPolicy
{
  public:
    /** @brief The persistent rule's marking schedule. */
    enum class ControlLaw : uint8_t
    {
        RepoSqrt = 0,    //!< next = now + interval / sqrt(count); mark when now >= next
        PaperLinear = 1, //!< next += interval / count; mark when now > next
    };

    /**
     * @brief Get the type ID.
     * @return the object TypeId
     */
    static TypeId GetTypeId();

    EcnSharpAqmPolicy();

    AqmVerdict OnEnqueue(const AqmContext& ctx, FabricPacket& p) override;
    void OnDequeue(const AqmContext& ctx, FabricPacket& p) override;
    void SetStreamSeed(uint64_t seed) override;
    std::string CheckConsistency() const override;
    std::vector<AqmTelemetryInfo> DescribeTelemetry() const override;
    std::vector<std::string> DescribeActionAttributes() const override;
    void ReadTelemetry(std::vector<std::pair<const char*, double>>& out) override;

  private:
    struct QueueState
    {
        bool aboveValid{false};
        int64_t firstAboveNs{0};
        bool marking{false};
        uint32_t count{0};
        int64_t nextNs{0};
    };

    bool Persistent(QueueState& s, int64_t sojournNs, int64_t nowNs) const;
    bool ShouldPersistentMark(QueueState& s, int64_t sojournNs, int64_t nowNs) const;

    uint64_t m_insTargetNs{80000};
    uint64_t m_pstTargetNs{10000};
    uint64_t m_pstIntervalNs{150000};
    ControlLaw m_law{ControlLaw::RepoSqrt};

    std::array<QueueState, kMaxQueues> m_queues{};
    int64_t m_sojournMinNs{std::numeric_limits<int64_t>::max()};
    double m_sojournSumNs{0};
    uint64_t m_dequeued{0};
    uint64_t m_markedIns{0};
    uint64_t m_markedPst{0};
};

} // namespace ecngym
} // namespace ns3

#endif
