/* SPDX-License-Identifier: GPL-2.0-only */
#include "red-aqm-policy.h"

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/uinteger.h"

namespace ns3
{
namespace ecngym
{

NS_OBJECT_ENSURE_REGISTERED(RedAqmPolicy);

TypeId
RedAqmPolicy::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::ecngym::RedAqmPolicy")
            .SetParent<PortAqmPolicy>()
            .SetGroupName("Ecngym")
            .AddConstructor<RedAqmPolicy>()
            .AddAttribute("KminBytes",
                          "Queue length (bytes) above which marking starts",
                          UintegerValue(5000),
                          MakeUintegerAccessor(&RedAqmPolicy::m_kminBytes),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("KmaxBytes",
                          "Queue length (bytes) above which every packet is marked",
                          UintegerValue(200000),
                          MakeUintegerAccessor(&RedAqmPolicy::m_kmaxBytes),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("Pmax",
                          "Marking probability at Kmax",
                          DoubleValue(0.01),
                          MakeDoubleAccessor(&RedAqmPolicy::m_pmax),
                          MakeDoubleChecker<double>(0.0, 1.0))
            .AddAttribute("MarkAtDequeue",
                          "Decide on the queue a packet leaves behind (true) or joins (false)",
                          BooleanValue(false),
                          MakeBooleanAccessor(&RedAqmPolicy::m_markAtDequeue),
                          MakeBooleanChecker());
    return tid;
}

RedAqmPolicy::RedAqmPolicy() = default;

double
RedAqmPolicy::MarkingProbability(uint64_t queueBytes) const
{
    if (queueBytes > m_kmaxBytes)
    {
        return 1.0;
    }
    if (queueBytes > m_kminBytes)
    {
        return m_pmax * static_cast<double>(queueBytes - m_kminBytes) /
               static_cast<double>(m_kmaxBytes - m_kminBytes);
    }
    return 0.0;
}

void
RedAqmPolicy::MaybeMark(uint64_t queueBytes, FabricPacket& p)
{
    if (!p.ecnCapable || queueBytes <= m_kminBytes)
    {
        return;
    }
    const double prob = MarkingProbability(queueBytes);
    if (prob >= 1.0 || m_rng.Uniform() < prob)
    {
        p.ce = true;
    }
}

AqmVerdict
RedAqmPolicy::OnEnqueue(const AqmContext& ctx, FabricPacket& p)
{
    if (!m_markAtDequeue)
    {
        MaybeMark(ctx.queueBytes, p);
    }
    return AqmVerdict::Enqueue;
}

void
RedAqmPolicy::OnDequeue(const AqmContext& ctx, FabricPacket& p)
{
    if (m_markAtDequeue)
    {
        MaybeMark(ctx.queueBytes, p);
    }
}

std::string
RedAqmPolicy::CheckConsistency() const
{
    if (m_kminBytes > m_kmaxBytes)
    {
        return "KmaxBytes (" + std::to_string(m_kmaxBytes) + ") must be >= KminBytes (" +
               std::to_string(m_kminBytes) + ")";
    }
    return {};
}

void
RedAqmPolicy::SetStreamSeed(uint64_t seed)
{
    m_rng.Seed(seed);
}

std::vector<std::string>
RedAqmPolicy::DescribeActionAttributes() const
{
    // the whole marking curve
    return {"KminBytes", "KmaxBytes", "Pmax"};
}

std::vector<std::string>
RedAqmPolicy::DescribeMarkingCurve() const
{
    return {"KminBytes", "KmaxBytes", "Pmax"};
}

} // namespace ecngym
} // namespace ns3
