/*
 * ecngym fabric: every parameter of a fabric, and the state its nodes share.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_FABRIC_CONFIG_H
#define ECNGYM_FABRIC_CONFIG_H

#include "dcqcn-rate-control.h"
#include "dctcp-rate-control.h"
#include "dctcp-window-control.h"
#include "hpcc-rate-control.h"
#include "timely-rate-control.h"
#include "fabric-packet.h"
#include "port-telemetry.h"
#include "queue-pair.h"
#include "shared-buffer-mmu.h"

#include "ns3/object-factory.h"

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace ns3
{
namespace ecngym
{

/** @brief The NIC's congestion control. */
enum class CcKind : uint8_t
{
    Dcqcn = 0,     //!< DcqcnRateControl
    Dctcp = 1,     //!< DctcpWindowControl (window-based, ours)
    DctcpRate = 2, //!< DctcpRateControl (the HPCC model's CC_MODE 8)
    Timely = 3,    //!< TimelyRateControl (CC_MODE 7)
    Hpcc = 4,      //!< HpccRateControl (CC_MODE 3)
};

/** Padding bytes of the HPCC model's minimum-size (60 B) ACK, which its feedback header fills first. */
constexpr uint32_t kAckPaddingBytes = 10;

/** @return wire bytes a data packet carries for its congestion control's feedback (INT, timestamp) */
inline uint32_t
DataFeedbackBytes(CcKind cc)
{
    return cc == CcKind::Hpcc ? kIntStackWireBytes : (cc == CcKind::Timely ? kTimestampWireBytes : 0);
}

/** @return extra wire bytes of an ACK echoing that feedback (92 B HPCC ACKs, 60 B TIMELY ones) */
inline uint32_t
AckFeedbackBytes(CcKind cc)
{
    const uint32_t b = DataFeedbackBytes(cc);
    return b > kAckPaddingBytes ? b - kAckPaddingBytes : 0;
}

/**
 * @brief How the receiver returns ECN marks to the sender.
 */
enum class EcnFeedback : uint8_t
{
    Cnp = 0,     //!< notification point sends at most one CNP per flow per cnpIntervalNs
    AckEcho = 1, //!< every ACK echoes CE; each echo is a notification (HPCC model)
};

/** @brief How switches pick one of several equal-cost next hops for a flow. */
enum class EcmpHash : uint8_t
{
    Salted = 0, //!< SplitMix64 of a per-flow hash and a per-switch salt drawn from the seed
    Hpcc = 1,   //!< the HPCC model's: MurmurHash3 of its IPs and ports, seeded by the node id
};

/**
 * @brief All parameters of one fabric.
 *
 * The NIC's, congestion controls' and buffer's knobs and the choices (cc, ecmpHash, ...) are set
 * through the attributes of their FabricParameters sections (fabric-parameters.h,
 * MakeFabricConfig), whose checkers bound them (an enumeration's checker names its choices); the
 * ports' first AQM policy is checked by Fabric::Build against its attributes' checkers.
 */
struct FabricConfig
{
    uint64_t seed{1};
    uint8_t numQueues{8};               //!< per port, including control queue 0
    uint32_t mtuPayloadBytes{1000};     //!< data payload per packet
    uint32_t dataHeaderBytes{52};       //!< wire overhead per data packet
    uint32_t ackBytes{60};              //!< wire size of ACK / NACK
    uint32_t cnpBytes{64};              //!< wire size of a CNP
    uint32_t pfcFrameBytes{64};         //!< wire size of a PFC frame
    uint32_t ackIntervalPackets{1};     //!< ACK coalescing: one ACK per this many data packets
    EcnFeedback ecnFeedback{EcnFeedback::Cnp};
    int64_t cnpIntervalNs{50000};       //!< notification point CNP pacing per flow
    int64_t retransmitTimeoutNs{1000000}; //!< go-back-N retransmission timeout
    /**
     * NIC pacing wake-up as in the HPCC model's ns-3.36 port (the reference runs): when no queue
     * pair may send yet, the NIC schedules no wake-up while one of its queue pairs has sent all its
     * bytes and awaits ACKs (its last send time counts as "already due"); a paced queue pair then
     * waits for the next ACK or completion. false = wake exactly at the earliest pacing time.
     */
    bool hpccNicWake{false};
    /**
     * Where switches queue ACKs and NACKs. false: the strict-priority control queue 0. true: the
     * data queue of the flow's priority, behind its data and charged to the shared buffer like
     * data, as the HPCC model's switch does unless its AckHighPrio attribute is set (its reference
     * driver, third.cc, never sets it: its ACK_HIGH_PRIO key only raises the NIC's ACK queue).
     */
    bool ackInFlowQueue{false};
    /**
     * ECMP hash. Hpcc reproduces the reference runs' path choices: each host has the IP
     * 0x0b000001 + (node / 256) << 16 + (node % 256) << 8, flows of one host pair take source
     * ports 10000, 10001, ... in flow-table order, the destination port is the flow table's (100 by
     * default, as HPCC's traffic generator writes; its incast flows use 200), ACKs hash the
     * reversed tuple, and next hops are ordered by their node index.
     */
    EcmpHash ecmpHash{EcmpHash::Salted};
    /**
     * Truncate serialisation and pacing times to whole ns per packet, as ns-3.36's
     * DataRate::CalculateBytesTxTime does in the HPCC model's port (false: exact on average).
     */
    bool truncateTxTime{false};
    uint32_t pauseQuanta{65535};        //!< PFC pause time in 512-bit quanta
    CcKind cc{CcKind::Dcqcn};
    DcqcnConfig dcqcn;
    DctcpConfig dctcp;
    DctcpRateConfig dctcpRate;
    TimelyConfig timely;
    HpccConfig hpcc;
    /**
     * The HPCC model's NIC window (HAS_WIN): each queue pair may have at most its base-RTT BDP
     * unacknowledged, the largest over all host pairs when windowGlobal (GLOBAL_T 1), scaled by
     * rate / line rate when varWindow (VAR_WIN 1). HPCC needs it.
     */
    bool nicWindow{false};
    bool varWindow{true};
    bool windowGlobal{true};
    SharedBufferMmu::Config mmu;
    /**
     * The port AQM policy every switch egress port is born with: a TypeId name (a constructible
     * PortAqmPolicy subclass) and the attributes that differ from its defaults (names and ns-3
     * attribute strings, one entry each), checked by Fabric::Build before any port exists.
     */
    std::string aqmTypeId{"ns3::ecngym::RedAqmPolicy"};
    std::vector<std::string> aqmAttributeNames;
    std::vector<std::string> aqmAttributeValues;
    /**
     * The simulator's event scheduler (an ns-3 TypeId name, a Scheduler subclass). Every scheduler
     * runs events in the same order (timestamp, then insertion uid), so the choice changes speed,
     * never results.
     */
    std::string schedulerTypeId{"ns3::ecngym::TimingWheelScheduler"};
};

/**
 * @brief What the nodes of one fabric share: parameters, packet pool, flows, counters.
 */
struct FabricContext
{
    FabricConfig cfg;
    PacketPool pool;
    FabricCounters counters;
    /// the flow table, indexed by flow id; a deque so that flows added while running
    /// (Fabric::ReplacePendingFlows) leave every started flow where hosts, congestion controls
    /// and scheduled events point to it
    std::deque<QueuePair> flows;
    uint64_t epoch{1};           //!< telemetry interval number (distinct-flow stamps)
    uint64_t flowsStarted{0};
    uint64_t flowsCompleted{0};
    bool stopWhenAllComplete{false};
    ObjectFactory aqmFactory; //!< makes each switch port's first AQM policy (cfg.aqmTypeId, checked)
};

} // namespace ecngym
} // namespace ns3

#endif
