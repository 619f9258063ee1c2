/* SPDX-License-Identifier: GPL-2.0-only */
#include "tcp-host-options.h"

#include "ns3/boolean.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <stdexcept>

namespace ns3
{
namespace ecngym
{

NS_OBJECT_ENSURE_REGISTERED(TcpHostOptions);

namespace
{
/** Longest time attribute: 1000 s (a timer beyond it is a unit mistake). */
constexpr uint64_t kMaxTimerNs = 1000000000000ULL;
} // namespace

TypeId
TcpHostOptions::GetTypeId()
{
    const TcpHostConfig d{};
    static TypeId tid =
        TypeId("ns3::ecngym::TcpHostOptions")
            .SetParent<Object>()
            .SetGroupName("Ecngym")
            .AddConstructor<TcpHostOptions>()
            .AddAttribute("SlowStart",
                          "Start a connection at InitialCwndPackets and grow the window by the bytes "
                          "each ACK acknowledges while it is below the slow-start threshold (RFC 5681 "
                          "§3.1); false: start at the lean model's initial window, one MSS per window",
                          BooleanValue(d.slowStart),
                          MakeBooleanAccessor(&TcpHostOptions::m_slowStart),
                          MakeBooleanChecker())
            .AddAttribute("InitialCwndPackets",
                          "Initial congestion window with SlowStart, in MSS (Linux: 10, RFC 6928)",
                          UintegerValue(d.initialCwndPackets),
                          MakeUintegerAccessor(&TcpHostOptions::m_initialCwndPackets),
                          MakeUintegerChecker<uint32_t>(1, 1000))
            .AddAttribute("SsthreshBytes",
                          "Initial slow-start threshold in bytes with SlowStart (0 = unbounded, as "
                          "Linux's TCP_INFINITE_SSTHRESH)",
                          UintegerValue(d.ssthreshBytes),
                          MakeUintegerAccessor(&TcpHostOptions::m_ssthreshBytes),
                          MakeUintegerChecker<uint64_t>(0, 1ULL << 40))
            .AddAttribute("Handshake",
                          "Open each connection with SYN / SYN-ACK / ACK through the switches; the "
                          "data starts when the SYN-ACK arrives",
                          BooleanValue(d.handshake),
                          MakeBooleanAccessor(&TcpHostOptions::m_handshake),
                          MakeBooleanChecker())
            .AddAttribute("RtoEstimate",
                          "Retransmission timeout from the RTT estimate (RFC 6298: SRTT, RTTVAR, "
                          "RTO = SRTT + 4 RTTVAR within [MinRtoNs, MaxRtoNs], doubled per timeout); "
                          "false: the fixed retransmit timeout",
                          BooleanValue(d.rtoEstimate),
                          MakeBooleanAccessor(&TcpHostOptions::m_rtoEstimate),
                          MakeBooleanChecker())
            .AddAttribute("MinRtoNs",
                          "Lower bound of the estimated RTO, ns (Linux: 200 ms)",
                          UintegerValue(d.minRtoNs),
                          MakeUintegerAccessor(&TcpHostOptions::m_minRtoNs),
                          MakeUintegerChecker<uint64_t>(1, kMaxTimerNs))
            .AddAttribute("InitialRtoNs",
                          "RTO before the first RTT sample, also the SYN's, ns (RFC 6298: 1 s)",
                          UintegerValue(d.initialRtoNs),
                          MakeUintegerAccessor(&TcpHostOptions::m_initialRtoNs),
                          MakeUintegerChecker<uint64_t>(1, kMaxTimerNs))
            .AddAttribute("MaxRtoNs",
                          "Upper bound of the RTO and of its exponential backoff, ns (Linux: 120 s)",
                          UintegerValue(d.maxRtoNs),
                          MakeUintegerAccessor(&TcpHostOptions::m_maxRtoNs),
                          MakeUintegerChecker<uint64_t>(1, kMaxTimerNs))
            .AddAttribute("DelayedAck",
                          "The receiver acknowledges every second packet, or the first unacknowledged "
                          "one after DelayedAckTimeoutNs, and sends an ACK at once when the CE "
                          "state changes (DCTCP, RFC 8257 §3.2)",
                          BooleanValue(d.delayedAck),
                          MakeBooleanAccessor(&TcpHostOptions::m_delayedAck),
                          MakeBooleanChecker())
            .AddAttribute("DelayedAckTimeoutNs",
                          "Delayed-ACK timer, ns (Linux's minimum: 40 ms)",
                          UintegerValue(d.delayedAckTimeoutNs),
                          MakeUintegerAccessor(&TcpHostOptions::m_delayedAckTimeoutNs),
                          MakeUintegerChecker<uint64_t>(1, kMaxTimerNs))
            .AddAttribute("CwndLimitedGrowth",
                          "Grow the window only while it limits the sender, as Linux's "
                          "tcp_is_cwnd_limited: the window filled in the current window of data, or "
                          "(in slow start) it is below twice the most bytes in flight in it. Without "
                          "it a flow the NIC's line-rate pacing limits grows its window by every ACK, "
                          "without bound in slow start",
                          BooleanValue(d.cwndLimitedGrowth),
                          MakeBooleanAccessor(&TcpHostOptions::m_cwndLimitedGrowth),
                          MakeBooleanChecker());
    return tid;
}

TcpHostOptions::TcpHostOptions() = default;

std::string
TcpHostOptions::Inconsistency() const
{
    if (m_minRtoNs > m_initialRtoNs)
    {
        return "MinRtoNs (" + std::to_string(m_minRtoNs) + ") must be <= InitialRtoNs (" +
               std::to_string(m_initialRtoNs) + ")";
    }
    if (m_initialRtoNs > m_maxRtoNs)
    {
        return "InitialRtoNs (" + std::to_string(m_initialRtoNs) + ") must be <= MaxRtoNs (" +
               std::to_string(m_maxRtoNs) + ")";
    }
    return "";
}

TcpHostConfig
TcpHostOptions::ToConfig() const
{
    TcpHostConfig c;
    c.slowStart = m_slowStart;
    c.initialCwndPackets = m_initialCwndPackets;
    c.ssthreshBytes = m_ssthreshBytes;
    c.handshake = m_handshake;
    c.rtoEstimate = m_rtoEstimate;
    c.minRtoNs = static_cast<int64_t>(m_minRtoNs);
    c.initialRtoNs = static_cast<int64_t>(m_initialRtoNs);
    c.maxRtoNs = static_cast<int64_t>(m_maxRtoNs);
    c.delayedAck = m_delayedAck;
    c.delayedAckTimeoutNs = static_cast<int64_t>(m_delayedAckTimeoutNs);
    c.cwndLimitedGrowth = m_cwndLimitedGrowth;
    return c;
}

TcpHostConfig
MakeTcpHostConfig(const std::vector<std::string>& names, const std::vector<std::string>& values)
{
    if (names.size() != values.size())
    {
        throw std::invalid_argument("tcp host options: names and values differ in length");
    }
    Ptr<TcpHostOptions> o = CreateObject<TcpHostOptions>();
    const TypeId tid = TcpHostOptions::GetTypeId();
    for (std::size_t i = 0; i < names.size(); ++i)
    {
        TypeId::AttributeInformation info;
        if (!tid.LookupAttributeByName(names[i], &info))
        {
            throw std::invalid_argument("tcp host options: no attribute " + names[i]);
        }
        if (!o->SetAttributeFailSafe(names[i], StringValue(values[i])))
        {
            throw std::invalid_argument("tcp host options: " + names[i] + " = '" + values[i] +
                                        "' is refused by its checker (" +
                                        info.checker->GetUnderlyingTypeInformation() + ")");
        }
    }
    const std::string why = o->Inconsistency();
    if (!why.empty())
    {
        throw std::invalid_argument("tcp host options: " + why);
    }
    return o->ToConfig();
}

} // namespace ecngym
} // namespace ns3
