/* SPDX-License-Identifier: GPL-2.0-only */
#include "r-aqm-policy.h"

#include "ns3/double.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>

namespace ns3
{
namespace ecngym
{

NS_OBJECT_ENSURE_REGISTERED(RAqmPolicy);

TypeId
RAqmPolicy::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::ecngym::RAqmPolicy")
            .SetParent<PortAqmPolicy>()
            .SetGroupName("Ecngym")
            .AddConstructor<RAqmPolicy>()
            .AddAttribute("KminBytes",
                          "K_min: below it (queue steady) the state is Draining (0.5-1 BDP)",
                          UintegerValue(21040),
                          MakeUintegerAccessor(&RAqmPolicy::m_kminBytes),
                          MakeUintegerChecker<uint64_t>(0, 1ULL << 40))
            .AddAttribute("KmaxBytes",
                          "K_max: above it (queue steady) the state is Congested (2 BDP)",
                          UintegerValue(42080),
                          MakeUintegerAccessor(&RAqmPolicy::m_kmaxBytes),
                          MakeUintegerChecker<uint64_t>(0, 1ULL << 40))
            .AddAttribute("WindowNs",
                          "T: window over which a growing / declining queue sets the state "
                          "(0.2-0.6 RTT)",
                          UintegerValue(3000),
                          MakeUintegerAccessor(&RAqmPolicy::m_windowNs),
                          MakeUintegerChecker<uint64_t>(4, 1000000000000ULL))
            .AddAttribute("Alpha1", "tokens per emission in Normal state", DoubleValue(1.0),
                          MakeDoubleAccessor(&RAqmPolicy::m_alpha1),
                          MakeDoubleChecker<double>(0.01, 1000.0))
            .AddAttribute("N1", "ACKs per emission in Normal state", UintegerValue(1),
                          MakeUintegerAccessor(&RAqmPolicy::m_n1),
                          MakeUintegerChecker<uint32_t>(1, 1000))
            .AddAttribute("Alpha2", "tokens per emission in Draining state", DoubleValue(1.0),
                          MakeDoubleAccessor(&RAqmPolicy::m_alpha2),
                          MakeDoubleChecker<double>(0.01, 1000.0))
            .AddAttribute("N2", "ACKs per emission in Draining state", UintegerValue(2),
                          MakeUintegerAccessor(&RAqmPolicy::m_n2),
                          MakeUintegerChecker<uint32_t>(1, 1000))
            .AddAttribute("Alpha3", "tokens per emission in Congested state", DoubleValue(10.0),
                          MakeDoubleAccessor(&RAqmPolicy::m_alpha3),
                          MakeDoubleChecker<double>(0.01, 1000.0))
            .AddAttribute("N3", "ACKs per emission in Congested state", UintegerValue(1),
                          MakeUintegerAccessor(&RAqmPolicy::m_n3),
                          MakeUintegerChecker<uint32_t>(1, 1000))
            .AddAttribute("ViqCapacityPackets",
                          "VIQ size in ACKs (500 in the paper's simulations); overflow drops",
                          UintegerValue(500),
                          MakeUintegerAccessor(&RAqmPolicy::m_viqCapacity),
                          MakeUintegerChecker<uint32_t>(1, 10000000))
            .AddAttribute("BucketDepth",
                          "token bucket depth in tokens (must be >= every Alpha)",
                          DoubleValue(10.0),
                          MakeDoubleAccessor(&RAqmPolicy::m_bucketDepth),
                          MakeDoubleChecker<double>(0.01, 1000000.0))
            .AddAttribute("StaleNs",
                          "drop a released ACK held longer than this (5 ms: smallest RTO_min)",
                          UintegerValue(5000000),
                          MakeUintegerAccessor(&RAqmPolicy::m_staleNs),
                          MakeUintegerChecker<uint64_t>(1, 1000000000000ULL))
            .AddAttribute("EcnEchoBytes",
                          "set ECN echo on released ACKs while Q_out + VIQ bytes exceed it (0: off)",
                          UintegerValue(0),
                          MakeUintegerAccessor(&RAqmPolicy::m_ecnEchoBytes),
                          MakeUintegerChecker<uint64_t>(0, 1ULL << 40))
            .AddAttribute("RwndThresholdBytes",
                          "set the receive window of released ACKs to one MSS while Q_out + VIQ "
                          "bytes exceed it (HSCC-style compensation, R-AQM §IV-D; docs: algorithms/r-aqm.md §3.4; 0: off)",
                          UintegerValue(0),
                          MakeUintegerAccessor(&RAqmPolicy::m_rwndThresholdBytes),
                          MakeUintegerChecker<uint64_t>(0, 1ULL << 40))
            .AddAttribute("EcnThresholdBytes",
                          "step ECN marking of data at enqueue above this queue (DCTCP's K; 0: off)",
                          UintegerValue(0),
                          MakeUintegerAccessor(&RAqmPolicy::m_ecnKBytes),
                          MakeUintegerChecker<uint64_t>(0, 1ULL << 40))
            .AddAttribute("TrendToleranceBytes",
                          "a queue sample must differ from the previous by more than this to count "
                          "as growing / declining",
                          UintegerValue(0),
                          MakeUintegerAccessor(&RAqmPolicy::m_trendToleranceBytes),
                          MakeUintegerChecker<uint64_t>(0, 1ULL << 40));
    return tid;
}

RAqmPolicy::RAqmPolicy() = default;

std::string
RAqmPolicy::CheckConsistency() const
{
    if (m_kminBytes > m_kmaxBytes)
    {
        return "KmaxBytes (" + std::to_string(m_kmaxBytes) + ") must be >= KminBytes (" +
               std::to_string(m_kminBytes) + ")";
    }
    const double maxAlpha = std::max({m_alpha1, m_alpha2, m_alpha3});
    if (m_bucketDepth < maxAlpha)
    {
        return "BucketDepth (" + std::to_string(m_bucketDepth) +
               ") must be >= the largest of Alpha1, Alpha2, Alpha3 (" + std::to_string(maxAlpha) +
               "), or that state could never release an ACK";
    }
    return {};
}

void
RAqmPolicy::SetStreamSeed(uint64_t seed)
{
    // deterministic: no random decisions
}

void
RAqmPolicy::Attach(AqmPortAccess* access, uint32_t portId, double linkRateBps)
{
    PortAqmPolicy::Attach(access, portId, linkRateBps);
    m_linkRateBps = linkRateBps;
    m_tokens = m_bucketDepth;
    m_lastDepartureNs = Simulator::Now().GetTimeStep();
}

void
RAqmPolicy::Detach()
{
    // Replaced: what it holds goes on at once.
    m_idle.Cancel();
    const int64_t now = Simulator::Now().GetTimeStep();
    while (!m_viq.empty())
    {
        FabricPacket* p = m_viq.front();
        m_viq.pop_front();
        m_viqBytes -= p->wireBytes;
        Release(p, now);
    }
    PortAqmPolicy::Detach();
}

void
RAqmPolicy::DoDispose()
{
    m_idle.Cancel();
    m_viq.clear(); // the packets belong to the fabric's pool, freed with it
    PortAqmPolicy::DoDispose();
}

double
RAqmPolicy::Alpha() const
{
    return m_state == State::Normal ? m_alpha1 : m_state == State::Draining ? m_alpha2 : m_alpha3;
}

uint32_t
RAqmPolicy::Count() const
{
    return m_state == State::Normal ? m_n1 : m_state == State::Draining ? m_n2 : m_n3;
}

void
RAqmPolicy::Sample(int64_t nowNs)
{
    if (nowNs < m_nextSampleNs)
    {
        return;
    }
    m_nextSampleNs = nowNs + static_cast<int64_t>(m_windowNs / 4);
    const uint64_t q = m_qOutBytes;
    if (q > m_lastSample + m_trendToleranceBytes)
    {
        ++m_upStreak;
        m_downStreak = 0;
    }
    else if (q + m_trendToleranceBytes < m_lastSample)
    {
        ++m_downStreak;
        m_upStreak = 0;
    }
    else
    {
        m_upStreak = 0;
        m_downStreak = 0;
    }
    m_lastSample = q;
    UpdateState();
}

void
RAqmPolicy::UpdateState()
{
    if (m_upStreak >= 4)
    {
        m_state = State::Congested; // a burst: buffer ACKs whatever the queue length
    }
    else if (m_downStreak >= 4)
    {
        m_state = State::Draining; // the burst is over: release
    }
    else if (m_qOutBytes > m_kmaxBytes)
    {
        m_state = State::Congested;
    }
    else if (m_qOutBytes < m_kminBytes)
    {
        m_state = State::Draining;
    }
    else
    {
        m_state = State::Normal;
    }
}

void
RAqmPolicy::Release(FabricPacket* p, int64_t nowNs)
{
    if (nowNs - p->enqueueNs > static_cast<int64_t>(m_staleNs))
    {
        ++m_expired; // an old ACK after a timeout: would cause spurious retransmissions
        m_access->DropHeld(p);
        return;
    }
    // Q_out + VIQ length (R-AQM §IV-D; docs: algorithms/r-aqm.md §3.4), in data bytes: each held ACK stands for one data
    // packet its sender has in flight.
    const uint64_t backlog = m_qOutBytes + m_viq.size() * m_lastDataWireBytes;
    if (m_ecnEchoBytes > 0 && backlog > m_ecnEchoBytes && !p->ce)
    {
        p->ce = true;
        ++m_echoMarked;
    }
    // HSCC's rewrite: the sender may then have one segment unacknowledged (its window is the
    // smaller of its own and the ACK's), until an ACK without the rewrite reopens it
    if (m_rwndThresholdBytes > 0 && backlog > m_rwndThresholdBytes)
    {
        p->rwndBytes = m_mssBytes;
        ++m_rwndClamped;
    }
    ++m_released;
    m_access->ForwardHeld(p);
}

void
RAqmPolicy::AddToken(int64_t nowNs)
{
    m_tokens = std::min(m_bucketDepth, m_tokens + 1.0);
    // Algorithm 1 (viq_send), once per new token.
    if (!m_viq.empty() && m_tokens >= Alpha())
    {
        m_tokens -= Alpha();
        for (uint32_t k = Count(); k > 0 && !m_viq.empty(); --k)
        {
            FabricPacket* p = m_viq.front();
            m_viq.pop_front();
            m_viqBytes -= p->wireBytes;
            Release(p, nowNs);
        }
    }
}

void
RAqmPolicy::ArmIdleTimer()
{
    if (m_idle.IsPending() || m_viq.empty() || m_linkRateBps <= 0)
    {
        return;
    }
    const auto packetNs = static_cast<int64_t>(std::ceil(m_lastDataWireBytes * 8e9 / m_linkRateBps));
    m_idle = Simulator::Schedule(NanoSeconds(std::max<int64_t>(1, packetNs)), &RAqmPolicy::IdleTick, this);
}

void
RAqmPolicy::IdleTick()
{
    const int64_t now = Simulator::Now().GetTimeStep();
    const auto packetNs = static_cast<int64_t>(m_lastDataWireBytes * 8e9 / m_linkRateBps);
    if (now - m_lastDepartureNs >= packetNs)
    {
        // P sends nothing (empty or paused): tokens at line rate, as in the fluid model.
        m_lastDepartureNs = now;
        Sample(now);
        AddToken(now);
    }
    ArmIdleTimer();
}

AqmVerdict
RAqmPolicy::OnEnqueue(const AqmContext& ctx, FabricPacket& p)
{
    if (p.queue != 0)
    {
        m_qOutBytes = ctx.portDataBytes + p.wireBytes;
        Sample(ctx.nowNs);
    }
    if (m_ecnKBytes > 0 && p.ecnCapable && !p.ce && ctx.queueBytes > m_ecnKBytes)
    {
        p.ce = true;
        ++m_dataMarked;
    }
    return AqmVerdict::Enqueue;
}

void
RAqmPolicy::OnDequeue(const AqmContext& ctx, FabricPacket& p)
{
    if (p.queue == 0)
    {
        return;
    }
    m_qOutBytes = ctx.portDataBytes;
    if (p.kind == PacketKind::Data)
    {
        m_lastDataWireBytes = p.wireBytes;
        m_mssBytes = std::max(m_mssBytes, static_cast<uint64_t>(p.payloadBytes));
        m_lastDepartureNs = ctx.nowNs;
        Sample(ctx.nowNs);
        AddToken(ctx.nowNs); // the bucket fills at P's egress sending rate
    }
}

AqmVerdict
RAqmPolicy::OnIngress(const AqmContext& ctx, FabricPacket& p)
{
    if (p.kind != PacketKind::Ack)
    {
        return AqmVerdict::Enqueue;
    }
    m_qOutBytes = ctx.portDataBytes;
    Sample(ctx.nowNs);
    const double perAck = Alpha() / Count();
    if (m_viq.empty() && m_state != State::Congested && m_tokens >= perAck)
    {
        m_tokens -= perAck; // bypass: nothing waits, the state allows it, a token is there
        return AqmVerdict::Enqueue;
    }
    if (m_viq.size() >= m_viqCapacity)
    {
        ++m_overflow;
        return AqmVerdict::Drop;
    }
    p.enqueueNs = ctx.nowNs; // the hold time stamp (§3.4)
    m_viq.push_back(&p);
    m_viqBytes += p.wireBytes;
    m_viqMax = std::max<uint64_t>(m_viqMax, m_viq.size());
    ++m_held;
    ArmIdleTimer();
    return AqmVerdict::Hold;
}

std::vector<AqmTelemetryInfo>
RAqmPolicy::DescribeTelemetry() const
{
    return {
        {"r_aqm.viq_packets", "packets", "fraction_of:viq_capacity_packets", "ACKs in the virtual input queue now"},
        {"r_aqm.viq_max_packets", "packets", "fraction_of:viq_capacity_packets", "most ACKs in the virtual input queue in the interval"},
        {"r_aqm.state", "state", "fraction_of:2", "0 normal, 1 draining, 2 congested"},
        {"r_aqm.held", "packets", "saturate:viq_capacity_packets", "ACKs held in the interval"},
        {"r_aqm.released", "packets", "saturate:viq_capacity_packets", "ACKs released in the interval"},
        {"r_aqm.expired", "packets", "saturate:viq_capacity_packets", "held ACKs released on expiry (5 ms)"},
        {"r_aqm.overflow_drops", "packets", "saturate:viq_capacity_packets", "ACKs dropped on a full virtual input queue"},
        {"r_aqm.echo_marked", "packets", "share:r_aqm.released", "released ACKs given an ECN echo"},
        {"r_aqm.data_marked", "packets", "share:enqueued_data_packets", "data packets R-AQM's own step marking marked"},
        {"r_aqm.rwnd_clamped", "packets", "share:r_aqm.released", "released ACKs advertising a one-MSS window"},
    };
}

void
RAqmPolicy::ReadTelemetry(std::vector<std::pair<const char*, double>>& out)
{
    out.emplace_back("r_aqm.viq_packets", static_cast<double>(m_viq.size()));
    out.emplace_back("r_aqm.viq_max_packets", static_cast<double>(m_viqMax));
    out.emplace_back("r_aqm.state", static_cast<double>(m_state));
    out.emplace_back("r_aqm.held", static_cast<double>(m_held));
    out.emplace_back("r_aqm.released", static_cast<double>(m_released));
    out.emplace_back("r_aqm.expired", static_cast<double>(m_expired));
    out.emplace_back("r_aqm.overflow_drops", static_cast<double>(m_overflow));
    out.emplace_back("r_aqm.echo_marked", static_cast<double>(m_echoMarked));
    out.emplace_back("r_aqm.data_marked", static_cast<double>(m_dataMarked));
    out.emplace_back("r_aqm.rwnd_clamped", static_cast<double>(m_rwndClamped));
    m_viqMax = m_viq.size();
    m_held = m_released = m_expired = m_overflow = m_echoMarked = m_dataMarked = m_rwndClamped = 0;
}

std::vector<std::string>
RAqmPolicy::DescribeActionAttributes() const
{
    // the two queue thresholds of the state machine (R-AQM §IV; docs: algorithms/r-aqm.md §3)
    return {"KminBytes", "KmaxBytes"};
}

} // namespace ecngym
} // namespace ns3
