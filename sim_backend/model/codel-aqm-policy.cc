/* SPDX-License-Identifier: GPL-2.0-only */
#include "codel-aqm-policy.h"

#include "ns3/uinteger.h"

#include <cmath>

namespace ns3
{
namespace ecngym
{

NS_OBJECT_ENSURE_REGISTERED(CodelAqmPolicy);

TypeId
CodelAqmPolicy::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::ecngym::CodelAqmPolicy")
            .SetParent<PortAqmPolicy>()
            .SetGroupName("Ecngym")
            .AddConstructor<CodelAqmPolicy>()
            .AddAttribute("TargetNs",
                          "target: acceptable standing sojourn time",
                          UintegerValue(10000),
                          MakeUintegerAccessor(&CodelAqmPolicy::m_targetNs),
                          MakeUintegerChecker<uint64_t>(0, 1000000000000ULL))
            .AddAttribute("IntervalNs",
                          "interval: how long the sojourn must stay above target (~ an RTT)",
                          UintegerValue(150000),
                          MakeUintegerAccessor(&CodelAqmPolicy::m_intervalNs),
                          MakeUintegerChecker<uint64_t>(1, 1000000000000ULL));
    return tid;
}

CodelAqmPolicy::CodelAqmPolicy() = default;

void
CodelAqmPolicy::SetStreamSeed(uint64_t seed)
{
    // deterministic: no random decisions
}

AqmVerdict
CodelAqmPolicy::OnEnqueue(const AqmContext& ctx, FabricPacket& p)
{
    return AqmVerdict::Enqueue;
}

int64_t
CodelAqmPolicy::ControlLaw(int64_t t, uint32_t count) const
{
    return t + static_cast<int64_t>(static_cast<double>(m_intervalNs) /
                                    std::sqrt(static_cast<double>(count)));
}

void
CodelAqmPolicy::OnDequeue(const AqmContext& ctx, FabricPacket& p)
{
    if (p.kind != PacketKind::Data)
    {
        return;
    }
    QueueState& s = m_queues[p.queue];
    const int64_t now = ctx.nowNs;
    const int64_t sojourn = now - p.enqueueNs;
    const int64_t interval = static_cast<int64_t>(m_intervalNs);
    // RFC 8289 dodequeue: "ok to mark" once above target (with more than a packet queued) for a
    // whole interval.
    bool okToMark = false;
    if (sojourn < static_cast<int64_t>(m_targetNs) || ctx.queueBytes < p.wireBytes)
    {
        s.firstAboveNs = 0;
    }
    else if (s.firstAboveNs == 0)
    {
        s.firstAboveNs = now + interval;
    }
    else if (now >= s.firstAboveNs)
    {
        okToMark = true;
    }
    bool mark = false;
    if (s.marking)
    {
        if (!okToMark)
        {
            s.marking = false;
        }
        else if (now >= s.markNextNs)
        {
            ++s.count;
            s.markNextNs = ControlLaw(s.markNextNs, s.count);
            mark = true;
        }
    }
    else if (okToMark)
    {
        s.marking = true;
        const uint32_t delta = s.count - s.lastCount;
        s.count = (delta > 1 && now - s.markNextNs < 16 * interval) ? delta : 1;
        s.lastCount = s.count;
        s.markNextNs = ControlLaw(now, s.count);
        mark = true;
    }
    if (mark && p.ecnCapable && !p.ce)
    {
        p.ce = true;
        ++m_marked;
    }
}

std::vector<AqmTelemetryInfo>
CodelAqmPolicy::DescribeTelemetry() const
{
    return {
        {"codel.marked", "packets", "share:tx_data_packets", "data packets CoDel marked in the interval"},
        {"codel.marking_state", "0/1", "flag", "1 while CoDel's marking state is on"},
    };
}

void
CodelAqmPolicy::ReadTelemetry(std::vector<std::pair<const char*, double>>& out)
{
    bool marking = false;
    for (const QueueState& s : m_queues)
    {
        marking = marking || s.marking;
    }
    out.emplace_back("codel.marked", static_cast<double>(m_marked));
    out.emplace_back("codel.marking_state", marking ? 1.0 : 0.0);
    m_marked = 0;
}

std::vector<std::string>
CodelAqmPolicy::DescribeActionAttributes() const
{
    // the target and the interval, the two settings of RFC 8289 (§4.2, §4.3)
    return {"TargetNs", "IntervalNs"};
}

} // namespace ecngym
} // namespace ns3
