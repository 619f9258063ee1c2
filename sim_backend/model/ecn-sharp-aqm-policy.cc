/* SPDX-License-Identifier: GPL-2.0-only */
#include "ecn-sharp-aqm-policy.h"

#include "ns3/enum.h"
#include "ns3/uinteger.h"

#include <cmath>

namespace ns3
{
namespace ecngym
{

NS_OBJECT_ENSURE_REGISTERED(EcnSharpAqmPolicy);

TypeId
EcnSharpAqmPolicy::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::ecngym::EcnSharpAqmPolicy")
            .SetParent<PortAqmPolicy>()
            .SetGroupName("Ecngym")
            .AddConstructor<EcnSharpAqmPolicy>()
            .AddAttribute("InsTargetNs",
                          "ins_target: mark a packet whose sojourn exceeds it (lambda x p90 RTT)",
                          UintegerValue(80000),
                          MakeUintegerAccessor(&EcnSharpAqmPolicy::m_insTargetNs),
                          MakeUintegerChecker<uint64_t>(0, 1000000000000ULL))
            .AddAttribute("PstTargetNs",
                          "pst_target: persistent-queue sojourn target (>= lambda x mean RTT)",
                          UintegerValue(10000),
                          MakeUintegerAccessor(&EcnSharpAqmPolicy::m_pstTargetNs),
                          MakeUintegerChecker<uint64_t>(0, 1000000000000ULL))
            .AddAttribute("PstIntervalNs",
                          "pst_interval: observation window and initial marking gap (~ p90 RTT)",
                          UintegerValue(150000),
                          MakeUintegerAccessor(&EcnSharpAqmPolicy::m_pstIntervalNs),
                          MakeUintegerChecker<uint64_t>(1, 1000000000000ULL))
            .AddAttribute("ControlLaw",
                          "marking-next schedule: RepoSqrt (authors' code) or PaperLinear (Alg. 1)",
                          EnumValue(ControlLaw::RepoSqrt),
                          MakeEnumAccessor<ControlLaw>(&EcnSharpAqmPolicy::m_law),
                          MakeEnumChecker(ControlLaw::RepoSqrt, "RepoSqrt", ControlLaw::PaperLinear,
                                          "PaperLinear"));
    return tid;
}

EcnSharpAqmPolicy::EcnSharpAqmPolicy() = default;

std::string
EcnSharpAqmPolicy::CheckConsistency() const
{
    return {};
}

void
EcnSharpAqmPolicy::SetStreamSeed(uint64_t seed)
{
    // deterministic: no random decisions
}

AqmVerdict
EcnSharpAqmPolicy::OnEnqueue(const AqmContext& ctx, FabricPacket& p)
{
    return AqmVerdict::Enqueue;
}

bool
EcnSharpAqmPolicy::Persistent(QueueState& s, int64_t sojournNs, int64_t nowNs) const
{
    // IsPersistentQueueBuildups (Alg. 1): every sojourn >= target for longer than the interval.
    if (sojournNs < static_cast<int64_t>(m_pstTargetNs))
    {
        s.aboveValid = false;
        return false;
    }
    if (!s.aboveValid)
    {
        s.aboveValid = true;
        s.firstAboveNs = nowNs;
        return false;
    }
    return nowNs > s.firstAboveNs + static_cast<int64_t>(m_pstIntervalNs);
}

bool
EcnSharpAqmPolicy::ShouldPersistentMark(QueueState& s, int64_t sojournNs, int64_t nowNs) const
{
    const bool detected = Persistent(s, sojournNs, nowNs);
    const double interval = static_cast<double>(m_pstIntervalNs);
    if (s.marking)
    {
        if (!detected)
        {
            s.marking = false;
            return false;
        }
        const bool due = m_law == ControlLaw::RepoSqrt ? nowNs >= s.nextNs : nowNs > s.nextNs;
        if (!due)
        {
            return false;
        }
        ++s.count;
        if (m_law == ControlLaw::RepoSqrt)
        {
            s.nextNs = nowNs + static_cast<int64_t>(interval / std::sqrt(static_cast<double>(s.count)));
        }
        else
        {
            s.nextNs += static_cast<int64_t>(interval / s.count);
        }
        return true;
    }
    if (detected)
    {
        s.marking = true;
        s.count = 1;
        s.nextNs = nowNs + static_cast<int64_t>(m_pstIntervalNs);
        return true;
    }
    return false;
}

void
EcnSharpAqmPolicy::OnDequeue(const AqmContext& ctx, FabricPacket& p)
{
    if (p.kind != PacketKind::Data)
    {
        return;
    }
    const int64_t sojourn = ctx.nowNs - p.enqueueNs;
    m_sojournMinNs = std::min(m_sojournMinNs, sojourn);
    m_sojournSumNs += static_cast<double>(sojourn);
    ++m_dequeued;
    const bool ins = sojourn > static_cast<int64_t>(m_insTargetNs);
    const bool pst = ShouldPersistentMark(m_queues[p.queue], sojourn, ctx.nowNs);
    if ((ins || pst) && p.ecnCapable && !p.ce)
    {
        p.ce = true;
        ++(ins ? m_markedIns : m_markedPst);
    }
}

std::vector<AqmTelemetryInfo>
EcnSharpAqmPolicy::DescribeTelemetry() const
{
    return {
        {"ecn_sharp.sojourn_min_ns", "ns", "queue_time", "least sojourn time of the data packets dequeued in the interval (NaN if none)"},
        {"ecn_sharp.sojourn_mean_ns", "ns", "queue_time", "mean sojourn time of the data packets dequeued in the interval (NaN if none)"},
        {"ecn_sharp.marked_instantaneous", "packets", "share:tx_data_packets", "data packets the instantaneous rule marked"},
        {"ecn_sharp.marked_persistent", "packets", "share:tx_data_packets", "data packets the persistent-queue rule marked"},
        {"ecn_sharp.persistent_state", "0/1", "flag", "1 while persistent-queue marking is on"},
    };
}

void
EcnSharpAqmPolicy::ReadTelemetry(std::vector<std::pair<const char*, double>>& out)
{
    const bool any = m_dequeued > 0;
    out.emplace_back("ecn_sharp.sojourn_min_ns", any ? static_cast<double>(m_sojournMinNs) : std::nan(""));
    out.emplace_back("ecn_sharp.sojourn_mean_ns", any ? m_sojournSumNs / m_dequeued : std::nan(""));
    out.emplace_back("ecn_sharp.marked_instantaneous", static_cast<double>(m_markedIns));
    out.emplace_back("ecn_sharp.marked_persistent", static_cast<double>(m_markedPst));
    bool marking = false;
    for (const QueueState& s : m_queues)
    {
        marking = marking || s.marking;
    }
    out.emplace_back("ecn_sharp.persistent_state", marking ? 1.0 : 0.0);
    m_sojournMinNs = std::numeric_limits<int64_t>::max();
    m_sojournSumNs = 0;
    m_dequeued = 0;
    m_markedIns = 0;
    m_markedPst = 0;
}

std::vector<std::string>
EcnSharpAqmPolicy::DescribeActionAttributes() const
{
    // the two sojourn targets (ECN# §3; docs: algorithms/ecn-sharp.md §2)
    return {"InsTargetNs", "PstTargetNs"};
}

} // namespace ecngym
} // namespace ns3
