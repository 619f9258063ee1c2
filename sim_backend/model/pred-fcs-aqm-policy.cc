/* SPDX-License-Identifier: GPL-2.0-only */
#include "pred-fcs-aqm-policy.h"

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>

namespace ns3
{
namespace ecngym
{

NS_OBJECT_ENSURE_REGISTERED(PredFcsAqmPolicy);

TypeId
PredFcsAqmPolicy::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::ecngym::PredFcsAqmPolicy")
            .SetParent<PortAqmPolicy>()
            .SetGroupName("Ecngym")
            .AddConstructor<PredFcsAqmPolicy>()
            .AddAttribute("LambdaQla",
                          "lambda_QLA: RED slope per flow, marking probability per MB above "
                          "KminBytes (PRED §II-A; docs: algorithms/pred.md §1.2); PRED's QLA sets it at run time",
                          DoubleValue(0.1),
                          MakeDoubleAccessor(&PredFcsAqmPolicy::m_lambdaQla),
                          MakeDoubleChecker<double>(0.0, 1.0e6))
            .AddAttribute("KminBytes",
                          "minK: queue (bytes) below which nothing is marked",
                          UintegerValue(10000),
                          MakeUintegerAccessor(&PredFcsAqmPolicy::m_minKBytes),
                          MakeUintegerChecker<uint64_t>(0, 1ULL << 40))
            .AddAttribute("KmaxBytes",
                          "maxK: queue (bytes) at or above which every packet is marked (safety "
                          "limit, 500 KB in the paper)",
                          UintegerValue(500000),
                          MakeUintegerAccessor(&PredFcsAqmPolicy::m_maxKBytes),
                          MakeUintegerChecker<uint64_t>(1, 1ULL << 40))
            .AddAttribute("FcsPeriodNs",
                          "T_FCS: flow-counting period in ns (1.25 RTT in the paper)",
                          UintegerValue(100000),
                          MakeUintegerAccessor(&PredFcsAqmPolicy::m_periodNs),
                          MakeUintegerChecker<uint64_t>(1, 1000000000000ULL))
            .AddAttribute("Scaling",
                          "f(N): N (the paper's), SqrtN or NSquared",
                          EnumValue(Scaling::Linear),
                          MakeEnumAccessor<Scaling>(&PredFcsAqmPolicy::m_scaling),
                          MakeEnumChecker(Scaling::Linear, "N", Scaling::Sqrt, "SqrtN",
                                          Scaling::Square, "NSquared"))
            .AddAttribute("CounterMode",
                          "Exact (per-period flow set) or Hashed (P4 bitmap, collisions)",
                          EnumValue(CounterMode::Exact),
                          MakeEnumAccessor<CounterMode>(&PredFcsAqmPolicy::m_counterMode),
                          MakeEnumChecker(CounterMode::Exact, "Exact", CounterMode::Hashed,
                                          "Hashed"))
            .AddAttribute("IndexSizeBits",
                          "Hashed mode: the bitmap has 2^IndexSizeBits slots",
                          UintegerValue(7),
                          MakeUintegerAccessor(&PredFcsAqmPolicy::m_indexSizeBits),
                          MakeUintegerChecker<uint32_t>(1, 20))
            .AddAttribute("P4Faithful",
                          "Do not count the packet that rolls the period over (Alg. 1's quirk)",
                          BooleanValue(false),
                          MakeBooleanAccessor(&PredFcsAqmPolicy::m_p4Faithful),
                          MakeBooleanChecker());
    return tid;
}

PredFcsAqmPolicy::PredFcsAqmPolicy() = default;

std::string
PredFcsAqmPolicy::CheckConsistency() const
{
    if (m_minKBytes >= m_maxKBytes)
    {
        return "KmaxBytes (" + std::to_string(m_maxKBytes) + ") must be > KminBytes (" +
               std::to_string(m_minKBytes) + ")";
    }
    return {};
}

void
PredFcsAqmPolicy::SetStreamSeed(uint64_t seed)
{
    m_rng.Seed(seed);
}

void
PredFcsAqmPolicy::RollOver(int64_t nowNs)
{
    // Alg. 1: a new period starts at the first packet after the old one expired. A gap of more
    // than one whole period without packets leaves nothing to carry over.
    m_nLast = (nowNs - m_periodStartNs > 2 * static_cast<int64_t>(m_periodNs)) ? 0 : m_nNow;
    m_nNow = 0;
    m_periodStartNs = nowNs;
    ++m_period;
}

void
PredFcsAqmPolicy::CountFlow(uint32_t flowId)
{
    if (m_counterMode == CounterMode::Hashed)
    {
        const std::size_t slots = std::size_t{1} << m_indexSizeBits;
        if (m_bitmap.size() != slots)
        {
            m_bitmap.assign(slots, 0);
        }
        const uint64_t h = SplitMix64((static_cast<uint64_t>(flowId) << 32) ^ m_period) | 1ULL;
        uint64_t& slot = m_bitmap[h & (slots - 1)];
        if (slot != h)
        {
            slot = h;
            ++m_nNow;
        }
        return;
    }
    if (m_seenUsed * 2 >= m_seen.size())
    {
        std::vector<std::pair<uint32_t, uint32_t>> old(std::max<std::size_t>(64, m_seen.size() * 2));
        old.swap(m_seen);
        m_seenUsed = 0;
        for (const auto& e : old)
        {
            if (e.first != 0)
            {
                std::size_t i = SplitMix64(e.first) & (m_seen.size() - 1);
                while (m_seen[i].first != 0)
                {
                    i = (i + 1) & (m_seen.size() - 1);
                }
                m_seen[i] = e;
                ++m_seenUsed;
            }
        }
    }
    const uint32_t key = flowId + 1;
    std::size_t i = SplitMix64(key) & (m_seen.size() - 1);
    while (m_seen[i].first != 0 && m_seen[i].first != key)
    {
        i = (i + 1) & (m_seen.size() - 1);
    }
    if (m_seen[i].first == 0)
    {
        m_seen[i].first = key;
        ++m_seenUsed;
    }
    else if (m_seen[i].second == m_period)
    {
        return;
    }
    m_seen[i].second = m_period;
    ++m_nNow;
}

void
PredFcsAqmPolicy::CountsAt(int64_t nowNs, uint32_t& nLast, uint32_t& nNow) const
{
    // As the next packet would see them: expired periods roll over (PRED §IV-A; docs: algorithms/pred.md §3.2).
    const int64_t age = nowNs - m_periodStartNs;
    if (!m_started || age > 2 * static_cast<int64_t>(m_periodNs))
    {
        nLast = 0;
        nNow = 0;
    }
    else if (age > static_cast<int64_t>(m_periodNs))
    {
        nLast = m_nNow;
        nNow = 0;
    }
    else
    {
        nLast = m_nLast;
        nNow = m_nNow;
    }
}

uint32_t
PredFcsAqmPolicy::FlowCountAt(int64_t nowNs) const
{
    uint32_t nLast;
    uint32_t nNow;
    CountsAt(nowNs, nLast, nNow);
    return std::max(nLast, nNow);
}

double
PredFcsAqmPolicy::EffectiveLambda(uint32_t n) const
{
    const double x = n;
    switch (m_scaling)
    {
    case Scaling::Sqrt:
        return std::sqrt(x) * m_lambdaQla;
    case Scaling::Square:
        return x * x * m_lambdaQla;
    default:
        return x * m_lambdaQla;
    }
}

AqmVerdict
PredFcsAqmPolicy::OnEnqueue(const AqmContext& ctx, FabricPacket& p)
{
    if (p.kind != PacketKind::Data)
    {
        return AqmVerdict::Enqueue;
    }
    if (!m_started)
    {
        m_started = true;
        m_periodStartNs = ctx.nowNs;
        CountFlow(p.flowId);
    }
    else if (ctx.nowNs - m_periodStartNs > static_cast<int64_t>(m_periodNs))
    {
        RollOver(ctx.nowNs);
        if (!m_p4Faithful)
        {
            CountFlow(p.flowId);
        }
    }
    else
    {
        CountFlow(p.flowId);
    }
    if (!p.ecnCapable || ctx.queueBytes < m_minKBytes)
    {
        return AqmVerdict::Enqueue;
    }
    double prob = 1.0;
    if (ctx.queueBytes < m_maxKBytes)
    {
        prob = EffectiveLambda(std::max(m_nLast, m_nNow)) *
               static_cast<double>(ctx.queueBytes - m_minKBytes) * 1e-6;
    }
    if (prob >= 1.0 || (prob > 0.0 && m_rng.Uniform() < prob))
    {
        p.ce = true;
        ++m_marked;
    }
    return AqmVerdict::Enqueue;
}

void
PredFcsAqmPolicy::OnDequeue(const AqmContext& ctx, FabricPacket& p)
{
}

std::vector<AqmTelemetryInfo>
PredFcsAqmPolicy::DescribeTelemetry() const
{
    return {
        {"pred.flow_count", "flows", "saturate:flow_scale", "the flow count N now"},
        {"pred.flows_last_period", "flows", "saturate:flow_scale", "flows of the last FCS period (n_last)"},
        {"pred.lambda_eff", "per MB", "saturate:1", "the effective RED slope lambda_eff = f(N) lambda_qla"},
        {"pred.marked", "packets", "share:enqueued_data_packets", "data packets PRED marked in the interval"},
    };
}

void
PredFcsAqmPolicy::ReadTelemetry(std::vector<std::pair<const char*, double>>& out)
{
    const int64_t now = Simulator::Now().GetTimeStep();
    uint32_t nLast;
    uint32_t nNow;
    CountsAt(now, nLast, nNow);
    const uint32_t n = std::max(nLast, nNow);
    out.emplace_back("pred.flow_count", n);
    out.emplace_back("pred.flows_last_period", nLast);
    out.emplace_back("pred.lambda_eff", EffectiveLambda(n));
    out.emplace_back("pred.marked", static_cast<double>(m_marked));
    m_marked = 0;
}

std::vector<std::string>
PredFcsAqmPolicy::DescribeActionAttributes() const
{
    // the slope PRED's QLA sets at run time (PRED §IV-B; docs: algorithms/pred.md §3.3)
    return {"LambdaQla"};
}

} // namespace ecngym
} // namespace ns3
