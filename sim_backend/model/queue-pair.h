/*
 * ecngym fabric: the state of one flow (an RDMA queue pair), sender and receiver side.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_QUEUE_PAIR_H
#define ECNGYM_QUEUE_PAIR_H

#include "ns3/event-id.h"

#include <array>
#include <cstdint>
#include <limits>
#include <memory>

namespace ns3
{
namespace ecngym
{

class CongestionControl;
class RdmaHostNode;

/** Egress hops a flow may cross (host NIC + switches), for the per-port distinct-flow count. */
constexpr uint16_t kMaxHops = 8;

/**
 * @brief One flow = one reliable-connection queue pair, with both ends' state.
 */
struct QueuePair
{
    // --- identity (from the flow table) ---
    uint32_t flowId{0};
    uint32_t srcHost{0};
    uint32_t dstHost{0};
    uint64_t sizeBytes{0};
    int64_t startNs{0};
    uint8_t queue{3};
    uint32_t flowHash{0};
    // HPCC-style addressing, for EcmpHash::Hpcc (see FabricConfig::ecmpHash)
    uint32_t srcAddr{0};
    uint32_t dstAddr{0};
    uint16_t srcPort{0};
    uint16_t dstPort{0};
    int32_t connection{-1};    //!< persistent connection of the host pair carrying it (its index in
                               //!< the pair's pool; -1 = the flow is its own connection)

    // --- path facts (for the ideal FCT) ---
    double lineRateBps{0};     //!< sender NIC line rate
    double bottleneckBps{0};   //!< slowest link on the path
    int64_t baseRttNs{0};      //!< HPCC definition: 2 x propagation + per-hop MTU serialisation
                               //!< (+ extraDelayNs)
    int64_t extraDelayNs{0};   //!< extra base delay of the flow (host processing, RTT variation):
                               //!< the receiver sends each ACK / NACK / CNP this much later
    double idealFctNs{0};      //!< FCT alone on an empty fabric

    // --- sender ---
    RdmaHostNode* host{nullptr};
    std::unique_ptr<CongestionControl> cc;
    double rateBps{0};         //!< pacing rate set by congestion control
    uint64_t windowBytes{0};   //!< max bytes in flight set by congestion control (0 = no window)
    uint64_t rwndBytes{0};     //!< receive window of the last ACK (0 = unbounded; a switch may lower it)
    uint64_t nicWindowBytes{0}; //!< the HPCC model's NIC window W (its BDP; 0 = none)
    bool varWindow{false};     //!< scale nicWindowBytes by rate / line rate (VAR_WIN)
    int64_t ccBaseRttNs{0};    //!< base RTT congestion control uses (HPCC's T)
    uint32_t lastPacketWireBytes{0}; //!< size of the last data packet sent (HPCC's re-pacing)
    uint64_t sndNxt{0};        //!< next byte to send
    uint64_t sndUna{0};        //!< first unacknowledged byte
    uint64_t maxSent{0};       //!< highest byte ever sent (retransmission accounting)
    int64_t nextSendNs{0};     //!< pacing: earliest time of the next packet
    int64_t lastProgressNs{0}; //!< last time snd_una advanced (retransmission timer)
    int64_t rtoNs{0};          //!< retransmission timeout now (FabricConfig::retransmitTimeoutNs, or
                               //!< the RFC 6298 estimate with TcpHostConfig::rtoEstimate)
    bool rtoArmed{false};
    EventId rtoEvent;
    /** TcpHostConfig::handshake: 0 = none or done, 1 = SYN sent (no data before the SYN-ACK),
     *  2 = SYN-ACK received, the handshake's ACK on its way to the receiver */
    uint8_t handshakePhase{0};
    bool started{false};
    bool finished{false};
    int64_t finishNs{-1};
    uint64_t retransmittedBytes{0};

    // --- receiver ---
    uint64_t rcvNxt{0};        //!< next expected byte (bytes delivered in order)
    uint32_t unackedPackets{0};
    bool ceSinceAck{false};
    bool ceState{false};        //!< (delayed ACK) DCTCP receiver's CE state (RFC 8257 §3.2)
    int64_t delAckEchoNs{0};    //!< (delayed ACK) send time of the first unacknowledged packet
    EventId delAckEvent;        //!< (delayed ACK) the delayed-ACK timer
    int64_t lastCnpNs{std::numeric_limits<int64_t>::min() / 2};
    uint64_t lastNackSeq{std::numeric_limits<uint64_t>::max()};

    // --- telemetry: per-hop stamp for the distinct-flow count of each egress port ---
    std::array<uint64_t, kMaxHops> portStamp{};

    /**
     * @return the bytes this queue pair may have unacknowledged now (0 = unbounded): the smaller of
     *         the last ACK's receive window and SenderWindow()
     */
    uint64_t EffectiveWindow() const
    {
        const uint64_t w = SenderWindow();
        return rwndBytes != 0 && (w == 0 || rwndBytes < w) ? rwndBytes : w;
    }

    /**
     * @return the sender's own bound (0 = unbounded): the smaller of the congestion control's
     *         window and the NIC window, the latter W x R / R_line (at least 1 byte) with a
     *         variable window, as the HPCC model's RdmaQueuePair::GetWin
     */
    uint64_t SenderWindow() const
    {
        if (nicWindowBytes == 0)
        {
            return windowBytes;
        }
        uint64_t w = nicWindowBytes;
        if (varWindow)
        {
            w = static_cast<uint64_t>(static_cast<unsigned __int128>(nicWindowBytes) *
                                      static_cast<uint64_t>(rateBps) /
                                      static_cast<uint64_t>(lineRateBps));
            w = w == 0 ? 1 : w;
        }
        return windowBytes == 0 ? w : (w < windowBytes ? w : windowBytes);
    }

    /** @return whether the window forbids sending more now */
    bool IsWindowBound() const
    {
        const uint64_t w = EffectiveWindow();
        return w != 0 && sndNxt - sndUna >= w;
    }
};

} // namespace ecngym
} // namespace ns3

#endif
