/*
 * ecngym: a reference run on ns-3's own TCP/IP stack (TcpDctcp over RedQueueDisc), not our fabric.
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The same topology tables and flow table the fabric takes are built from the ns3 wheel's stock
 * modules: PointToPoint links, the internet stack with global routing, RedQueueDisc step marking
 * (UseEcn, MinTh = MaxTh = K, Gentle off, QW = 1: the instantaneous queue, as DCTCP needs) on every
 * switch egress, a FIFO queue disc on hosts, and one TcpDctcp socket per flow (SYN / SYN-ACK,
 * slow start, RTO estimation, delayed ACKs as ns-3 implements them) into a PacketSink per receiver.
 * Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, §3.1 (marking) and §3.2 (the sender).
 */
#ifndef ECNGYM_NS3_TCP_REFERENCE_H
#define ECNGYM_NS3_TCP_REFERENCE_H

#include <cstdint>
#include <vector>

namespace ns3
{
namespace ecngym
{

/** The settings of one reference run (units: bytes, ns); Python checks them with named fields. */
struct TcpReferenceSettings
{
    uint32_t segmentBytes{1000};        //!< TcpSocket::SegmentSize (payload per segment)
    uint32_t initialCwndSegments{10};   //!< TcpSocket::InitialCwnd (Linux: 10, RFC 6928)
    int64_t minRtoNs{1000000};          //!< TcpSocketBase::MinRto
    int64_t clockGranularityNs{1000};   //!< TcpSocketBase::ClockGranularity (the RTO's G term)
    int64_t connTimeoutNs{1000000};     //!< TcpSocket::ConnTimeout (SYN / SYN-ACK retransmission)
    uint32_t delAckCount{2};            //!< TcpSocket::DelAckCount (segments per delayed ACK)
    int64_t delAckTimeoutNs{1000000};   //!< TcpSocket::DelAckTimeout
    uint32_t sndBufBytes{16u << 20};    //!< TcpSocket::SndBufSize
    uint32_t rcvBufBytes{16u << 20};    //!< TcpSocket::RcvBufSize (window scaling is on)
    bool timestamps{true};              //!< TcpSocketBase::Timestamp (12 B option per segment)
    bool sack{true};                    //!< TcpSocketBase::Sack
    bool classicRecovery{false};        //!< TcpL4Protocol::RecoveryType: TcpClassicRecovery, else PRR
    double dctcpG{1.0 / 16};            //!< TcpDctcp::DctcpShiftG
    double dctcpInitialAlpha{1.0};      //!< TcpDctcp::DctcpAlphaOnInit
    uint64_t kBytes{65000};             //!< RED MinTh = MaxTh (bytes) on every switch egress
    uint64_t bufferBytes{2000000};      //!< RED MaxSize (bytes) on every switch egress
    uint32_t windowFloorSegments{0};    //!< DCTCP's reduced window (ssthresh) at least this many
                                        //!< segments (Linux's dctcp_ssthresh: 2); 0 = TcpDctcp as is
    bool hostMarking{true};             //!< hosts' NIC queue disc: the same RED step marking, else FIFO
    uint32_t deviceQueuePackets{1};     //!< PointToPointNetDevice TxQueue below the queue disc
    uint32_t rngSeed{1};                //!< RngSeedManager::SetSeed
    uint64_t rngRun{1};                 //!< RngSeedManager::SetRun
    int64_t stopNs{1000000000};         //!< give up at this simulated time
};

/** What one reference run measured. */
struct TcpReferenceResult
{
    // per flow
    std::vector<int64_t> finishNs;           //!< sender got the ACK of the last byte; -1 if not
    std::vector<int64_t> establishedNs;      //!< the handshake completed at the sender; -1 if not
    std::vector<uint32_t> rtoCount;          //!< retransmission timeouts (entries into CA_LOSS)
    std::vector<uint32_t> fastRecoveryCount; //!< entries into CA_RECOVERY (3 dup ACKs / SACK)
    std::vector<uint32_t> minCwndBytes;      //!< smallest congestion window the flow had
    // per switch egress port (one per switch end of a link)
    std::vector<uint32_t> portNode;
    std::vector<uint32_t> portPeer;
    std::vector<uint64_t> peakQueueBytes;    //!< queue disc + device queue, peak
    std::vector<double> meanQueueBytes;      //!< time-average over [window start, end]
    std::vector<uint64_t> markedPackets;     //!< RED forced + unforced marks
    std::vector<uint64_t> droppedPackets;    //!< RED drops (buffer full or non-ECT above K)
    std::vector<uint64_t> txBytes;           //!< bytes sent on the port's link (all packets)
    // totals
    int64_t windowStartNs{0};
    int64_t endNs{0};
    uint64_t events{0};
    uint64_t packetHops{0}; //!< packets (data and control) that started on any link
};

/**
 * Build the topology and flows on ns-3's stock modules, run until every flow finished (or
 * settings.stopNs), destroy the simulation and return the measurements.
 *
 * Topology: node i is a host for isSwitch[i] == 0; link l joins linkA[l] and linkB[l] at rateBps[l]
 * with delayNs[l]. Flows: src / dst host node indices, sizes in bytes, start times in ns.
 */
TcpReferenceResult RunTcpReference(const std::vector<uint8_t>& isSwitch,
                                   const std::vector<uint32_t>& linkA,
                                   const std::vector<uint32_t>& linkB,
                                   const std::vector<double>& rateBps,
                                   const std::vector<int64_t>& delayNs,
                                   const std::vector<uint32_t>& src,
                                   const std::vector<uint32_t>& dst,
                                   const std::vector<uint64_t>& sizeBytes,
                                   const std::vector<int64_t>& startNs,
                                   const TcpReferenceSettings& settings);

} // namespace ecngym
} // namespace ns3

#endif
