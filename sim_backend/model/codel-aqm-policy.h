/*
 * ecngym fabric: CoDel in ECN-marking mode as a port AQM policy.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_CODEL_AQM_POLICY_H
#define ECNGYM_CODEL_AQM_POLICY_H

#include "fabric-net-device.h"
#include "port-aqm-policy.h"

#include <array>

namespace ns3
{
namespace ecngym
{

/**
 * @brief CoDel marking ECN instead of dropping, the baseline of ECN#; docs: algorithms/ecn-sharp.md §4 and
 *        PRED §VI-A; docs: algorithms/pred.md §4.2 (Nichols and Jacobson; RFC 8289's control law).
 *
 * At dequeue of every data packet: while the sojourn time stays >= TargetNs (and more than one
 * packet is queued) for a whole IntervalNs, the queue is persistent; CoDel then enters its
 * marking state, marks one packet and the next ones at gaps of IntervalNs / sqrt(count), and
 * leaves the state at the first packet below target. On re-entry soon after leaving, count
 * resumes from its last episode (count - 2, RFC 8289). No instantaneous rule: this is why it
 * reacts slowly to incast (ECN# §3.5; docs: algorithms/ecn-sharp.md §2.6). One state per data queue; nothing is dropped
 * by the policy (losses come from the buffer).
 *
 * Telemetry ("codel.*"): marked, marking_state (1 if any queue is in its marking state).
 */
class CodelAqmPolicy : public PortAqmPolicy
{
  public:
    /**
     * @brief Get the type ID.
     * @return the object TypeId
     */
    static TypeId GetTypeId();

    CodelAqmPolicy();

    AqmVerdict OnEnqueue(const AqmContext& ctx, FabricPacket& p) override;
    void OnDequeue(const AqmContext& ctx, FabricPacket& p) override;
    void SetStreamSeed(uint64_t seed) override;
    std::vector<AqmTelemetryInfo> DescribeTelemetry() const override;
    std::vector<std::string> DescribeActionAttributes() const override;
    void ReadTelemetry(std::vector<std::pair<const char*, double>>& out) override;

  private:
    struct QueueState
    {
        int64_t firstAboveNs{0}; //!< 0 = not above target
        bool marking{false};
        uint32_t count{0};
        uint32_t lastCount{0};
        int64_t markNextNs{0};
    };

    int64_t ControlLaw(int64_t t, uint32_t count) const;

    uint64_t m_targetNs{10000};
    uint64_t m_intervalNs{150000};
    std::array<QueueState, kMaxQueues> m_queues{};
    uint64_t m_marked{0};
};

} // namespace ecngym
} // namespace ns3

#endif
