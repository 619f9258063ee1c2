/*
 * ecngym fabric: RED / ECN marking on the instantaneous egress queue.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_RED_AQM_POLICY_H
#define ECNGYM_RED_AQM_POLICY_H

#include "fast-random.h"
#include "port-aqm-policy.h"

namespace ns3
{
namespace ecngym
{

/**
 * @brief RED-style ECN marking as datacenter switches do it (WRED with ECN, no drops).
 *
 * With q the bytes of the packet's egress queue, the marking probability is
 *   p(q) = 0 for q <= Kmin;  Pmax (q - Kmin) / (Kmax - Kmin) for Kmin < q <= Kmax;  1 for q > Kmax.
 * Kmin = Kmax = K gives DCTCP's step marking (mark iff q > K). The decision is taken either at
 * enqueue (q = the queue the packet joins) or at dequeue (q = the queue it leaves behind, as the
 * HPCC model and Mellanox/Broadcom "mark on dequeue" do). Only ECN-capable packets are marked;
 * RED never drops here (losses come from the shared buffer).
 */
class RedAqmPolicy : public PortAqmPolicy
{
  public:
    /**
     * @brief Get the type ID.
     * @return the object TypeId
     */
    static TypeId GetTypeId();

    RedAqmPolicy();

    /**
     * @param queueBytes instantaneous queue in bytes
     * @return the marking probability p(q)
     */
    double MarkingProbability(uint64_t queueBytes) const;

    AqmVerdict OnEnqueue(const AqmContext& ctx, FabricPacket& p) override;
    void OnDequeue(const AqmContext& ctx, FabricPacket& p) override;
    void SetStreamSeed(uint64_t seed) override;
    std::string CheckConsistency() const override;
    std::vector<std::string> DescribeActionAttributes() const override;
    std::vector<std::string> DescribeMarkingCurve() const override;

  private:
    void MaybeMark(uint64_t queueBytes, FabricPacket& p);

    // set from the attributes' initial values at construction (GetTypeId: their one home)
    uint64_t m_kminBytes;
    uint64_t m_kmaxBytes;
    double m_pmax;
    bool m_markAtDequeue;
    FastRandom m_rng;
};

} // namespace ecngym
} // namespace ns3

#endif
