/* SPDX-License-Identifier: GPL-2.0-only */
#include "fabric-parameters.h"

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/integer.h"
#include "ns3/uinteger.h"

#include <limits>

namespace ns3
{
namespace ecngym
{

NS_OBJECT_ENSURE_REGISTERED(FabricParameters);
NS_OBJECT_ENSURE_REGISTERED(NicParameters);
NS_OBJECT_ENSURE_REGISTERED(DcqcnParameters);
NS_OBJECT_ENSURE_REGISTERED(DctcpParameters);
NS_OBJECT_ENSURE_REGISTERED(DctcpRateParameters);
NS_OBJECT_ENSURE_REGISTERED(TimelyParameters);
NS_OBJECT_ENSURE_REGISTERED(HpccParameters);
NS_OBJECT_ENSURE_REGISTERED(WindowParameters);
NS_OBJECT_ENSURE_REGISTERED(BufferParameters);

namespace
{
/** Longest duration: 2^62 ns (~146 years), so that a sum of two stays below 2^63. */
constexpr int64_t kMaxTimeNs = int64_t{1} << 62;
/** Largest size: 2^53 bytes (exact as a double). */
constexpr uint64_t kMaxBytes = uint64_t{1} << 53;
/** Rates lie in [1 bit/s, 1 Pbit/s]: the fabric divides by the whole-bit/s rate. */
constexpr double kMinRateBps = 1.0;
constexpr double kMaxRateBps = 1e15;
/** The lower bound of a double checker that means "> 0". */
constexpr double kPositive = std::numeric_limits<double>::min();

Ptr<const AttributeChecker>
RateChecker()
{
    return MakeDoubleChecker<double>(kMinRateBps, kMaxRateBps);
}

Ptr<const AttributeChecker>
TimeChecker(int64_t minNs)
{
    return MakeIntegerChecker<int64_t>(minNs, kMaxTimeNs);
}
} // namespace

TypeId
FabricParameters::GetTypeId()
{
    static TypeId tid = TypeId("ns3::ecngym::FabricParameters").SetParent<Object>().SetGroupName("Ecngym");
    return tid;
}

TypeId
NicParameters::GetTypeId()
{
    const FabricConfig d{};
    static TypeId tid =
        TypeId("ns3::ecngym::NicParameters")
            .SetParent<FabricParameters>()
            .SetGroupName("Ecngym")
            .AddConstructor<NicParameters>()
            .AddAttribute("MtuPayloadBytes",
                          "Payload bytes per data packet",
                          UintegerValue(d.mtuPayloadBytes),
                          MakeUintegerAccessor(&FabricConfig::mtuPayloadBytes),
                          MakeUintegerChecker<uint32_t>(64, 9000))
            .AddAttribute("DataHeaderBytes",
                          "Wire overhead per data packet (RoCEv2 headers)",
                          UintegerValue(d.dataHeaderBytes),
                          MakeUintegerAccessor(&FabricConfig::dataHeaderBytes),
                          MakeUintegerChecker<uint32_t>(0, 512))
            .AddAttribute("AckSizeBytes",
                          "Wire size of an ACK / NACK",
                          UintegerValue(d.ackBytes),
                          MakeUintegerAccessor(&FabricConfig::ackBytes),
                          MakeUintegerChecker<uint32_t>(1, 1500))
            .AddAttribute("CnpSizeBytes",
                          "Wire size of a CNP",
                          UintegerValue(d.cnpBytes),
                          MakeUintegerAccessor(&FabricConfig::cnpBytes),
                          MakeUintegerChecker<uint32_t>(1, 1500))
            .AddAttribute("PfcFrameSizeBytes",
                          "Wire size of a PFC frame",
                          UintegerValue(d.pfcFrameBytes),
                          MakeUintegerAccessor(&FabricConfig::pfcFrameBytes),
                          MakeUintegerChecker<uint32_t>(1, 1500))
            .AddAttribute("AckIntervalPackets",
                          "One ACK per this many in-order data packets (and for the last one)",
                          UintegerValue(d.ackIntervalPackets),
                          MakeUintegerAccessor(&FabricConfig::ackIntervalPackets),
                          MakeUintegerChecker<uint32_t>(1, 1U << 20))
            .AddAttribute("CnpIntervalNs",
                          "Minimum gap between two CNPs of one flow (CNP feedback), ns",
                          IntegerValue(d.cnpIntervalNs),
                          MakeIntegerAccessor(&FabricConfig::cnpIntervalNs),
                          TimeChecker(0))
            .AddAttribute("RetransmitTimeoutNs",
                          "Go-back-N timeout without progress, ns",
                          IntegerValue(d.retransmitTimeoutNs),
                          MakeIntegerAccessor(&FabricConfig::retransmitTimeoutNs),
                          TimeChecker(1))
            .AddAttribute("Cc",
                          "Host congestion control: dcqcn, dctcp (window-based), dctcp_rate (the HPCC "
                          "model's rate-based DCTCP, CC_MODE 8), timely (CC_MODE 7) or hpcc (CC_MODE 3). "
                          "DCQCN with a BDP window (the HPCC model's dcqcn_vwin) is dcqcn with "
                          "window.enabled",
                          EnumValue<CcKind>(d.cc),
                          MakeEnumAccessor<CcKind>(&FabricConfig::cc),
                          MakeEnumChecker(CcKind::Dcqcn, "dcqcn",
                                          CcKind::Dctcp, "dctcp",
                                          CcKind::DctcpRate, "dctcp_rate",
                                          CcKind::Timely, "timely",
                                          CcKind::Hpcc, "hpcc"))
            .AddAttribute("EcnFeedback",
                          "How a CE mark reaches the sender: cnp (the notification point sends CNPs, "
                          "at most one per flow per cnp_interval) or ack_echo (every ACK echoes CE, as "
                          "the HPCC model does). DCTCP always reads the echo on ACKs",
                          EnumValue<EcnFeedback>(d.ecnFeedback),
                          MakeEnumAccessor<EcnFeedback>(&FabricConfig::ecnFeedback),
                          MakeEnumChecker(EcnFeedback::Cnp, "cnp", EcnFeedback::AckEcho, "ack_echo"))
            .AddAttribute("NicPacingWake",
                          "exact (the NIC wakes at the earliest pacing time of its queue pairs) or hpcc "
                          "(as the HPCC model's ns-3.36 port: no wake-up is scheduled while a queue pair "
                          "has sent everything and awaits ACKs; paced queue pairs then wait for the next "
                          "ACK or completion; the hpcc preset's, to match the reference runs)",
                          EnumValue<bool>(d.hpccNicWake),
                          MakeEnumAccessor<bool>(&FabricConfig::hpccNicWake),
                          MakeEnumChecker(false, "exact", true, "hpcc"))
            .AddAttribute("SwitchAckQueue",
                          "Where switches queue ACKs / NACKs: control (the strict-priority queue 0, "
                          "with CNPs and PFC frames) or flow (the data queue of the flow's priority, "
                          "FIFO behind data and charged to the shared buffer, as the HPCC model's "
                          "switch does: its AckHighPrio attribute defaults to 0 and its reference "
                          "driver never sets it; ACK_HIGH_PRIO there only raises the NIC's ACK queue). "
                          "Hosts always send ACKs first",
                          EnumValue<bool>(d.ackInFlowQueue),
                          MakeEnumAccessor<bool>(&FabricConfig::ackInFlowQueue),
                          MakeEnumChecker(false, "control", true, "flow"))
            .AddAttribute("EcmpHash",
                          "salted (a per-flow hash mixed with a per-switch salt from seed) or hpcc (the "
                          "HPCC model's MurmurHash3 of (source IP, destination IP, ports) seeded by the "
                          "switch's node id, with its addressing: host IP 11.0.x.1 from the node id, "
                          "source ports 10000, 10001, ... per host pair in flow-table order, "
                          "destination port 100; next hops in node order). hpcc reproduces the "
                          "reference runs' paths; it does not depend on seed",
                          EnumValue<EcmpHash>(d.ecmpHash),
                          MakeEnumAccessor<EcmpHash>(&FabricConfig::ecmpHash),
                          MakeEnumChecker(EcmpHash::Salted, "salted", EcmpHash::Hpcc, "hpcc"))
            .AddAttribute("TxTimeRounding",
                          "carry (a packet's serialisation time is rounded to the ns clock and the "
                          "remainder carried to the next packet: the exact line rate on average) or "
                          "truncate (each serialisation and pacing time is truncated to whole ns, as "
                          "ns-3.36's DataRate::CalculateBytesTxTime does in the HPCC model: 1052 B take "
                          "84 ns at 100 Gbps instead of 84.16, so links run ~0.2% fast)",
                          EnumValue<bool>(d.truncateTxTime),
                          MakeEnumAccessor<bool>(&FabricConfig::truncateTxTime),
                          MakeEnumChecker(false, "carry", true, "truncate"));
    return tid;
}

void
NicParameters::ApplyTo(FabricConfig& cfg) const
{
    // the whole config: MakeFabricConfig applies this section first, the others then replace theirs
    cfg = static_cast<const FabricConfig&>(*this);
    cfg.dctcp.mssBytes = mtuPayloadBytes;
    cfg.dctcpRate.mtuBytes = mtuPayloadBytes;
}

TypeId
DcqcnParameters::GetTypeId()
{
    const DcqcnConfig d{};
    static TypeId tid =
        TypeId("ns3::ecngym::DcqcnParameters")
            .SetParent<FabricParameters>()
            .SetGroupName("Ecngym")
            .AddConstructor<DcqcnParameters>()
            .AddAttribute("G",
                          "EWMA gain of alpha (DCQCN, Zhu et al., SIGCOMM 2015, §3.1)",
                          DoubleValue(d.g),
                          MakeDoubleAccessor(&DcqcnConfig::g),
                          MakeDoubleChecker<double>(kPositive, 1.0))
            .AddAttribute("InitialAlpha",
                          "alpha at a flow's start",
                          DoubleValue(d.initialAlpha),
                          MakeDoubleAccessor(&DcqcnConfig::initialAlpha),
                          MakeDoubleChecker<double>(0.0, 1.0))
            .AddAttribute("AlphaIntervalNs",
                          "alpha update period, ns",
                          IntegerValue(d.alphaIntervalNs),
                          MakeIntegerAccessor(&DcqcnConfig::alphaIntervalNs),
                          TimeChecker(1))
            .AddAttribute("DecreaseIntervalNs",
                          "Rate-decrease check period, ns (cut at the next tick after a notification "
                          "unless CutOnCnp)",
                          IntegerValue(d.decreaseIntervalNs),
                          MakeIntegerAccessor(&DcqcnConfig::decreaseIntervalNs),
                          TimeChecker(1))
            .AddAttribute("IncreaseTimerNs",
                          "Rate-increase timer, ns",
                          IntegerValue(d.increaseTimerNs),
                          MakeIntegerAccessor(&DcqcnConfig::increaseTimerNs),
                          TimeChecker(1))
            .AddAttribute("ByteCounterBytes",
                          "Rate-increase byte counter, bytes (0 = off: the timer alone)",
                          UintegerValue(d.byteCounterBytes),
                          MakeUintegerAccessor(&DcqcnConfig::byteCounterBytes),
                          MakeUintegerChecker<uint64_t>(0, kMaxBytes))
            .AddAttribute("FastRecoverySteps",
                          "F: increase stages of fast recovery before additive increase",
                          UintegerValue(d.fastRecoverySteps),
                          MakeUintegerAccessor(&DcqcnConfig::fastRecoverySteps),
                          MakeUintegerChecker<uint32_t>(0, 1000))
            .AddAttribute("AiRateBps",
                          "Additive-increase step R_AI, bit/s",
                          DoubleValue(d.aiRateBps),
                          MakeDoubleAccessor(&DcqcnConfig::aiRateBps),
                          RateChecker())
            .AddAttribute("HaiRateBps",
                          "Hyper-increase step R_HAI, bit/s",
                          DoubleValue(d.haiRateBps),
                          MakeDoubleAccessor(&DcqcnConfig::haiRateBps),
                          RateChecker())
            .AddAttribute("MinRateBps",
                          "Rate floor, bit/s",
                          DoubleValue(d.minRateBps),
                          MakeDoubleAccessor(&DcqcnConfig::minRateBps),
                          RateChecker())
            .AddAttribute("RateOnFirstCnp",
                          "Rate multiplier applied on a flow's first notification",
                          DoubleValue(d.rateOnFirstCnp),
                          MakeDoubleAccessor(&DcqcnConfig::rateOnFirstCnp),
                          MakeDoubleChecker<double>(kPositive, 1.0))
            .AddAttribute("ClampTargetRate",
                          "Always set the target rate to the current rate on a decrease",
                          BooleanValue(d.clampTargetRate),
                          MakeBooleanAccessor(&DcqcnConfig::clampTargetRate),
                          MakeBooleanChecker())
            .AddAttribute("CutOnCnp",
                          "Cut the rate at each notification (the paper); false: at the next "
                          "rate-decrease tick",
                          BooleanValue(d.cutOnCnp),
                          MakeBooleanAccessor(&DcqcnConfig::cutOnCnp),
                          MakeBooleanChecker());
    return tid;
}

void
DcqcnParameters::ApplyTo(FabricConfig& cfg) const
{
    cfg.dcqcn = *this;
}

TypeId
DctcpParameters::GetTypeId()
{
    const DctcpConfig d{};
    static TypeId tid =
        TypeId("ns3::ecngym::DctcpParameters")
            .SetParent<FabricParameters>()
            .SetGroupName("Ecngym")
            .AddConstructor<DctcpParameters>()
            .AddAttribute("G",
                          "EWMA gain of alpha (DCTCP, Alizadeh et al., SIGCOMM 2010, §3.1)",
                          DoubleValue(d.g),
                          MakeDoubleAccessor(&DctcpConfig::g),
                          MakeDoubleChecker<double>(kPositive, 1.0))
            .AddAttribute("InitialAlpha",
                          "alpha at a connection's start",
                          DoubleValue(d.initialAlpha),
                          MakeDoubleAccessor(&DctcpConfig::initialAlpha),
                          MakeDoubleChecker<double>(0.0, 1.0))
            .AddAttribute("InitialWindowBytes",
                          "Initial window, bytes (0 = the path's bandwidth-delay product)",
                          UintegerValue(d.initialWindowBytes),
                          MakeUintegerAccessor(&DctcpConfig::initialWindowBytes),
                          MakeUintegerChecker<uint64_t>(0, kMaxBytes))
            .AddAttribute("MinWindowBytes",
                          "Window floor, bytes (one or two MSS)",
                          UintegerValue(d.minWindowBytes),
                          MakeUintegerAccessor(&DctcpConfig::minWindowBytes),
                          MakeUintegerChecker<uint64_t>(1, kMaxBytes))
            .AddAttribute("PersistentConnections",
                          "Flows of one host pair share a pool of connections that keep their window "
                          "and alpha between flows; false: every flow is a fresh connection",
                          BooleanValue(d.persistentConnections),
                          MakeBooleanAccessor(&DctcpConfig::persistentConnections),
                          MakeBooleanChecker());
    return tid;
}

void
DctcpParameters::ApplyTo(FabricConfig& cfg) const
{
    const uint32_t mss = cfg.dctcp.mssBytes;
    const TcpHostConfig tcp = cfg.dctcp.tcp;
    cfg.dctcp = *this;
    cfg.dctcp.mssBytes = mss;
    cfg.dctcp.tcp = tcp;
}

TypeId
DctcpRateParameters::GetTypeId()
{
    const DctcpRateConfig d{};
    static TypeId tid =
        TypeId("ns3::ecngym::DctcpRateParameters")
            .SetParent<FabricParameters>()
            .SetGroupName("Ecngym")
            .AddConstructor<DctcpRateParameters>()
            .AddAttribute("G",
                          "EWMA gain of alpha",
                          DoubleValue(d.g),
                          MakeDoubleAccessor(&DctcpRateConfig::g),
                          MakeDoubleChecker<double>(kPositive, 1.0))
            .AddAttribute("InitialAlpha",
                          "alpha at a flow's start",
                          DoubleValue(d.initialAlpha),
                          MakeDoubleAccessor(&DctcpRateConfig::initialAlpha),
                          MakeDoubleChecker<double>(0.0, 1.0))
            .AddAttribute("AiRateBps",
                          "Rate added once per window of data outside CWR, bit/s (the HPCC model's "
                          "run.py: one 1 KB MTU per 13 us RTT)",
                          DoubleValue(d.aiRateBps),
                          MakeDoubleAccessor(&DctcpRateConfig::aiRateBps),
                          RateChecker())
            .AddAttribute("MinRateBps",
                          "Rate floor, bit/s",
                          DoubleValue(d.minRateBps),
                          MakeDoubleAccessor(&DctcpRateConfig::minRateBps),
                          RateChecker());
    return tid;
}

void
DctcpRateParameters::ApplyTo(FabricConfig& cfg) const
{
    const uint32_t mtu = cfg.dctcpRate.mtuBytes;
    cfg.dctcpRate = *this;
    cfg.dctcpRate.mtuBytes = mtu;
}

TypeId
TimelyParameters::GetTypeId()
{
    const TimelyConfig d{};
    static TypeId tid =
        TypeId("ns3::ecngym::TimelyParameters")
            .SetParent<FabricParameters>()
            .SetGroupName("Ecngym")
            .AddConstructor<TimelyParameters>()
            .AddAttribute("Alpha",
                          "EWMA weight of the newest RTT difference (TIMELY, Mittal et al., SIGCOMM "
                          "2015, Alg. 1)",
                          DoubleValue(d.alpha),
                          MakeDoubleAccessor(&TimelyConfig::alpha),
                          MakeDoubleChecker<double>(0.0, 1.0))
            .AddAttribute("Beta",
                          "Multiplicative-decrease factor",
                          DoubleValue(d.beta),
                          MakeDoubleAccessor(&TimelyConfig::beta),
                          MakeDoubleChecker<double>(0.0, 1.0))
            .AddAttribute("TLowNs",
                          "RTT below which the rate always increases, ns",
                          IntegerValue(d.tLowNs),
                          MakeIntegerAccessor(&TimelyConfig::tLowNs),
                          TimeChecker(0))
            .AddAttribute("THighNs",
                          "RTT above which the rate decreases by beta (1 - T_high / RTT), ns "
                          "(at least TLowNs)",
                          IntegerValue(d.tHighNs),
                          MakeIntegerAccessor(&TimelyConfig::tHighNs),
                          TimeChecker(0))
            .AddAttribute("MinRttNs",
                          "Normaliser of the RTT gradient, ns",
                          IntegerValue(d.minRttNs),
                          MakeIntegerAccessor(&TimelyConfig::minRttNs),
                          TimeChecker(1))
            .AddAttribute("AiRateBps",
                          "Additive step, bit/s",
                          DoubleValue(d.aiRateBps),
                          MakeDoubleAccessor(&TimelyConfig::aiRateBps),
                          RateChecker())
            .AddAttribute("HaiRateBps",
                          "Step from the HaiAfter-th consecutive increase on, bit/s",
                          DoubleValue(d.haiRateBps),
                          MakeDoubleAccessor(&TimelyConfig::haiRateBps),
                          RateChecker())
            .AddAttribute("HaiAfter",
                          "Consecutive increases before the larger step",
                          UintegerValue(d.haiAfter),
                          MakeUintegerAccessor(&TimelyConfig::haiAfter),
                          MakeUintegerChecker<uint32_t>(0, 1U << 20))
            .AddAttribute("MinRateBps",
                          "Rate floor, bit/s",
                          DoubleValue(d.minRateBps),
                          MakeDoubleAccessor(&TimelyConfig::minRateBps),
                          RateChecker());
    return tid;
}

void
TimelyParameters::ApplyTo(FabricConfig& cfg) const
{
    cfg.timely = *this;
}

TypeId
HpccParameters::GetTypeId()
{
    const HpccConfig d{};
    static TypeId tid =
        TypeId("ns3::ecngym::HpccParameters")
            .SetParent<FabricParameters>()
            .SetGroupName("Ecngym")
            .AddConstructor<HpccParameters>()
            .AddAttribute("TargetUtil",
                          "eta: target link utilisation (HPCC, Li et al., SIGCOMM 2019, §3.3)",
                          DoubleValue(d.targetUtil),
                          MakeDoubleAccessor(&HpccConfig::targetUtil),
                          MakeDoubleChecker<double>(kPositive, 1.0))
            .AddAttribute("AiRateBps",
                          "W_AI expressed as a rate step, bit/s",
                          DoubleValue(d.aiRateBps),
                          MakeDoubleAccessor(&HpccConfig::aiRateBps),
                          RateChecker())
            .AddAttribute("MiThresh",
                          "maxStage: additive steps before a multiplicative one",
                          UintegerValue(d.miThresh),
                          MakeUintegerAccessor(&HpccConfig::miThresh),
                          MakeUintegerChecker<uint32_t>(0, 1U << 20))
            .AddAttribute("FastReact",
                          "React on every ACK (commit once per RTT)",
                          BooleanValue(d.fastReact),
                          MakeBooleanAccessor(&HpccConfig::fastReact),
                          MakeBooleanChecker())
            .AddAttribute("SampleFeedback",
                          "On per-ACK reactions, skip hops with an empty queue",
                          BooleanValue(d.sampleFeedback),
                          MakeBooleanAccessor(&HpccConfig::sampleFeedback),
                          MakeBooleanChecker())
            .AddAttribute("IntMulti",
                          "INT byte / queue-length unit multiplier",
                          UintegerValue(d.intMulti),
                          MakeUintegerAccessor(&HpccConfig::intMulti),
                          MakeUintegerChecker<uint32_t>(1, 1U << 10))
            .AddAttribute("MinRateBps",
                          "Rate floor, bit/s",
                          DoubleValue(d.minRateBps),
                          MakeDoubleAccessor(&HpccConfig::minRateBps),
                          RateChecker());
    return tid;
}

void
HpccParameters::ApplyTo(FabricConfig& cfg) const
{
    cfg.hpcc = *this;
}

TypeId
WindowParameters::GetTypeId()
{
    const FabricConfig d{};
    static TypeId tid =
        TypeId("ns3::ecngym::WindowParameters")
            .SetParent<FabricParameters>()
            .SetGroupName("Ecngym")
            .AddConstructor<WindowParameters>()
            .AddAttribute("Enabled",
                          "A queue pair may have at most W bytes unacknowledged, W = the base-RTT BDP "
                          "(HAS_WIN; sending stays paced). HPCC needs it; the window-based dctcp keeps "
                          "its own",
                          BooleanValue(d.nicWindow),
                          MakeBooleanAccessor(&WindowParameters::m_enabled),
                          MakeBooleanChecker())
            .AddAttribute("Variable",
                          "Scale W by rate / line rate (VAR_WIN 1)",
                          BooleanValue(d.varWindow),
                          MakeBooleanAccessor(&WindowParameters::m_variable),
                          MakeBooleanChecker())
            .AddAttribute("Scope",
                          "global: W is the largest BDP over all host pairs (GLOBAL_T 1); pair: the "
                          "queue pair's own pair's",
                          EnumValue<bool>(d.windowGlobal),
                          MakeEnumAccessor<bool>(&WindowParameters::m_global),
                          MakeEnumChecker(true, "global", false, "pair"));
    return tid;
}

void
WindowParameters::ApplyTo(FabricConfig& cfg) const
{
    cfg.nicWindow = m_enabled;
    cfg.varWindow = m_variable;
    cfg.windowGlobal = m_global;
}

TypeId
BufferParameters::GetTypeId()
{
    const SharedBufferMmu::Config d{};
    static TypeId tid =
        TypeId("ns3::ecngym::BufferParameters")
            .SetParent<FabricParameters>()
            .SetGroupName("Ecngym")
            .AddConstructor<BufferParameters>()
            .AddAttribute("BufferBytes",
                          "Packet buffer of each switch, bytes",
                          UintegerValue(d.bufferBytes),
                          MakeUintegerAccessor(&SharedBufferMmu::Config::bufferBytes),
                          MakeUintegerChecker<uint64_t>(1, kMaxBytes))
            .AddAttribute("ReserveBytes",
                          "Guaranteed bytes per (ingress port, priority), at most the buffer",
                          UintegerValue(d.reserveBytes),
                          MakeUintegerAccessor(&SharedBufferMmu::Config::reserveBytes),
                          MakeUintegerChecker<uint64_t>(0, kMaxBytes))
            .AddAttribute("HeadroomBytes",
                          "PFC headroom per ingress port, at most the buffer",
                          UintegerValue(d.headroomBytes),
                          MakeUintegerAccessor(&SharedBufferMmu::Config::headroomBytes),
                          MakeUintegerChecker<uint64_t>(0, kMaxBytes))
            .AddAttribute("ResumeOffsetBytes",
                          "XON hysteresis below the dynamic threshold, at most the buffer",
                          UintegerValue(d.resumeOffsetBytes),
                          MakeUintegerAccessor(&SharedBufferMmu::Config::resumeOffsetBytes),
                          MakeUintegerChecker<uint64_t>(0, kMaxBytes))
            .AddAttribute("PfcAlpha",
                          "Dynamic-threshold factor alpha (smaller: PFC triggers earlier)",
                          DoubleValue(d.alpha),
                          MakeDoubleAccessor(&SharedBufferMmu::Config::alpha),
                          MakeDoubleChecker<double>(kPositive, 64.0))
            .AddAttribute("PfcEnabled",
                          "Lossless (PFC) or lossy (drop above the threshold)",
                          BooleanValue(d.pfcEnabled),
                          MakeBooleanAccessor(&SharedBufferMmu::Config::pfcEnabled),
                          MakeBooleanChecker())
            .AddAttribute("PauseQuanta",
                          "PFC pause time in 512-bit quanta",
                          UintegerValue(FabricConfig{}.pauseQuanta),
                          MakeUintegerAccessor(&BufferParameters::m_pauseQuanta),
                          MakeUintegerChecker<uint32_t>(1, 65535));
    return tid;
}

void
BufferParameters::ApplyTo(FabricConfig& cfg) const
{
    cfg.mmu = *this;
    cfg.pauseQuanta = m_pauseQuanta;
}

} // namespace ecngym
} // namespace ns3
