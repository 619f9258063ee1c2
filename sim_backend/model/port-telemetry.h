/*
 * ecngym fabric: per-port counters read by the control plane once per interval.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_PORT_TELEMETRY_H
#define ECNGYM_PORT_TELEMETRY_H

#include <cstdint>

namespace ns3
{
namespace ecngym
{

/**
 * @brief Counters of one egress port over the current telemetry interval.
 *
 * Every field is reset when the control plane reads the interval (FabricNetDevice::ReadInterval),
 * except the running state (current queue, pause state) which carries over.
 */
struct PortTelemetry
{
    uint64_t txBytes{0};          //!< bytes put on the wire (all packet kinds)
    uint64_t txDataBytes{0};      //!< wire bytes of data packets
    uint64_t txDataPackets{0};    //!< data packets sent
    uint64_t txControlPackets{0}; //!< ACK / NACK / CNP / PFC packets sent
    uint64_t enqueuedDataPackets{0}; //!< data packets that joined a data queue of this port
    double queueByteNs{0};        //!< integral of data-queue bytes over time (byte·ns)
    uint64_t maxQueueBytes{0};    //!< maximum data-queue occupancy seen in the interval
    uint64_t ecnMarked{0};        //!< data packets CE-marked by this port's AQM policy
    uint64_t pfcPauseSent{0};     //!< PAUSE frames sent out of this port (to its upstream)
    uint64_t pfcPauseReceived{0}; //!< PAUSE frames received on this port (from downstream)
    int64_t pausedNs{0};          //!< time with at least one data priority paused
    uint64_t drops{0};            //!< data packets dropped that were headed to this port
    uint64_t distinctFlows{0};    //!< distinct flows whose data left through this port
};

/**
 * @brief Fabric-wide cumulative counters (never reset), read by the benchmark.
 */
struct FabricCounters
{
    uint64_t dataPacketHops{0};    //!< one data packet crossing one link
    uint64_t controlPacketHops{0}; //!< one ACK / NACK / CNP / PFC frame crossing one link
    uint64_t drops{0};             //!< data packets dropped anywhere
    uint64_t retransmittedBytes{0};
    uint64_t retransmitTimeouts{0}; //!< go-back-N timeouts that fired (a sender resent from snd_una)
};

} // namespace ecngym
} // namespace ns3

#endif
