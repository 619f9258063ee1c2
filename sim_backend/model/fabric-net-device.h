/*
 * ecngym fabric: an output-queued port with a strict-priority control queue and PFC.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_FABRIC_NET_DEVICE_H
#define ECNGYM_FABRIC_NET_DEVICE_H

#include "fabric-channel.h"
#include "fabric-packet.h"
#include "port-telemetry.h"

#include "ns3/event-id.h"
#include "ns3/mac48-address.h"
#include "ns3/net-device.h"
#include "ns3/node.h"

#include <array>

namespace ns3
{
namespace ecngym
{

class FabricNetDevice;
class TransmitCompleteEvent;

/** Most queues (priorities) a port has: queue 0 is the control queue, 1..7 carry data. */
constexpr uint8_t kMaxQueues = 8;

/**
 * @brief What a FabricNetDevice needs from the node that owns it (switch or RDMA host).
 */
class FabricPortOwner
{
  public:
    virtual ~FabricPortOwner() = default;

    /**
     * @brief A packet arrived on a port (PFC frames are consumed by the port and never get here).
     * @param port the receiving port
     * @param p the packet; the owner takes ownership
     */
    virtual void ReceivePacket(FabricNetDevice* port, FabricPacket* p) = 0;

    /**
     * @brief The port is idle and its queues hold nothing it may send: offer a data packet.
     *
     * Hosts generate data packets here, at the moment the wire is free, which is how a NIC's
     * queue-pair scheduler works (and keeps no packets queued in the NIC).
     * @param port the idle port
     * @return a data packet to send now, or nullptr
     */
    virtual FabricPacket* PullData(FabricNetDevice* port)
    {
        return nullptr;
    }

    /**
     * @brief Whether PullData() may offer a packet, or change any state, before the owner next
     *        calls the port's TryTransmit() (an owner that overrides PullData() must say so).
     *
     * A port whose queues hold nothing that may leave and whose owner says false here does
     * nothing at the end of its serialisation, so it schedules that event only once a packet
     * waits for the wire.
     * @return false if PullData() would return nullptr and change nothing until then
     */
    virtual bool MayOfferData() const
    {
        return false;
    }

    /**
     * @brief A data packet left one of the port's queues and is about to be serialised.
     * @param port the port
     * @param p the packet (still owned by the port)
     */
    virtual void NotifyDequeue(FabricNetDevice* port, FabricPacket* p)
    {
    }

    /**
     * @brief A control packet (not a PFC frame) left the control queue and is about to be
     *        serialised.
     * @param port the port
     * @param p the packet (still owned by the port)
     */
    virtual void NotifyControlDequeue(FabricNetDevice* port, FabricPacket* p)
    {
    }
};

/**
 * @brief A full-duplex port: output queues, serialisation at line rate, PFC pause state.
 *
 * Queue 0 is served with strict priority (ACK, NACK, CNP, PFC); data queues 1..n-1 are served
 * round-robin, skipping any queue paused by PFC. A PAUSE frame for priority q received on this port
 * stops queue q until its pause time expires or a RESUME arrives.
 */
class FabricNetDevice : public NetDevice
{
  public:
    /**
     * @brief Get the type ID.
     * @return the object TypeId
     */
    static TypeId GetTypeId();

    FabricNetDevice();

    /**
     * @brief Set up the port.
     * @param owner the node logic that receives and offers packets
     * @param portId fabric-wide port id (index into telemetry arrays)
     * @param localIndex the port's index on its node
     * @param rateBps line rate in bits per second
     * @param numQueues number of queues including the control queue (2..8)
     * @param counters fabric-wide cumulative counters
     * @param pool the fabric's packet pool (PFC frames are released here)
     */
    void Setup(FabricPortOwner* owner,
               uint32_t portId,
               uint16_t localIndex,
               double rateBps,
               uint8_t numQueues,
               FabricCounters* counters,
               PacketPool* pool);

    /** @param channel the link this port transmits on */
    void SetChannel(Ptr<FabricChannel> channel);

    /**
     * @brief Choose how a packet's serialisation time is rounded to the nanosecond clock.
     * @param truncate true: each packet's time is truncated to whole ns, as ns-3.36's
     *        DataRate::CalculateBytesTxTime does in the HPCC model (a 1052 B packet takes 84 ns at
     *        100 Gbps, so the link runs ~0.2% fast); false: the sub-ns remainder is carried to the
     *        next packet (the exact line rate on average)
     */
    void SetTruncateTxTime(bool truncate)
    {
        m_truncateTxTime = truncate;
    }

    /**
     * @brief Append a packet to queue p->queue and start transmitting if idle.
     * @param p the packet (ownership passes to the port)
     */
    void Enqueue(FabricPacket* p);

    /**
     * @brief Put a PFC frame at the head of the control queue.
     * @param p the PFC frame
     */
    void EnqueuePfcFrame(FabricPacket* p);

    /** @brief Start serialising the next eligible packet if the wire is idle. */
    void TryTransmit();

    /**
     * @brief Called by the channel when a packet arrives at this port.
     * @param p the packet
     */
    void Receive(FabricPacket* p);

    /** One PFC frame received by a port (the HPCC model's PFC_OUTPUT_FILE line). */
    struct PfcEvent
    {
        int64_t timeNs;  //!< arrival time
        uint32_t portId; //!< the receiving (paused / resumed) port
        uint8_t pause;   //!< 1: pause (time > 0), 0: resume
    };

    /**
     * @brief Append every PFC frame this port receives to @p log (nullptr: record nothing).
     * @param log the fabric's event log
     */
    void SetPfcLog(std::vector<PfcEvent>* log)
    {
        m_pfcLog = log;
    }

    /** @return fabric-wide id of this port */
    uint32_t GetPortId() const
    {
        return m_portId;
    }

    /** @return index of this port on its node */
    uint16_t GetLocalIndex() const
    {
        return m_localIndex;
    }

    /** @return line rate in bits per second */
    double GetRateBps() const
    {
        return m_rateBps;
    }

    /**
     * @brief Tell the port where its switch's forwarding table lies (a hint for
     *        PrefetchForward(); nullptr for a host's port).
     * @param routeSet the switch's destination host -> next-hop set index table
     * @param sets the switch's next-hop sets
     */
    void SetRouteHint(const uint16_t* routeSet, const uint16_t* sets)
    {
        m_routeSetHint = routeSet;
        m_setsHint = sets;
    }

    /**
     * @brief Start loading what forwarding a packet arriving at this port will read first: its
     *        switch's table entry for the packet's destination and the next-hop sets. Changes
     *        no state (issue 12: the simulator calls it one event ahead on a large fabric).
     * @param p a packet whose arrival at this port is about to run
     */
    void PrefetchForward(const FabricPacket* p) const
    {
        if (m_routeSetHint != nullptr)
        {
            __builtin_prefetch(m_routeSetHint + p->dstHost);
            __builtin_prefetch(m_setsHint);
        }
    }

    /** @return the device at the other end of the link */
    FabricNetDevice* GetPeer() const
    {
        return m_peer;
    }

    /** @param peer the device at the other end of the link */
    void SetPeer(FabricNetDevice* peer)
    {
        m_peer = peer;
    }

    /** @return the attached channel */
    FabricChannel* GetFabricChannel() const
    {
        return PeekPointer(m_channel);
    }

    /**
     * @param queue a queue index
     * @return bytes waiting in that queue
     */
    uint64_t GetQueueBytes(uint8_t queue) const
    {
        return m_queues[queue].bytes;
    }

    /** @return bytes waiting in all queues, the control queue included (what HPCC's INT reports) */
    uint64_t GetTotalQueueBytes() const
    {
        return m_dataBytes + m_queues[0].bytes;
    }

    /** @return bytes of every packet this port has started to send, since it was built */
    uint64_t GetTxBytesTotal() const
    {
        return m_txBytesTotal;
    }

    /** @return bytes waiting in all data queues */
    uint64_t GetDataQueueBytes() const
    {
        return m_dataBytes;
    }

    /**
     * @param queue a data queue index
     * @return whether the downstream has paused that queue
     */
    bool IsPaused(uint8_t queue) const
    {
        return m_paused[queue];
    }

    /** @return whether a packet is being serialised */
    bool IsBusy() const;

    /** @return the interval counters (mutable: the owner adds marks, drops, PFC sent) */
    PortTelemetry& Telemetry()
    {
        return m_tel;
    }

    /**
     * @brief Close the current interval: finish the time integrals at now and hand back the
     *        counters, then start a new interval.
     * @return the counters of the interval that just ended
     */
    PortTelemetry ReadInterval();

    /**
     * @brief Count a data packet of a flow leaving through this port, for the distinct-flow count.
     * @param stamp the flow's stamp slot for this hop (fabric-owned)
     * @param epoch the current telemetry epoch
     */
    void CountFlow(uint64_t* stamp, uint64_t epoch)
    {
        const uint64_t key = (static_cast<uint64_t>(m_portId) << 32) | (epoch & 0xffffffffULL);
        if (*stamp != key)
        {
            *stamp = key;
            ++m_tel.distinctFlows;
        }
    }

    /** @return bytes of the packets queued at this port and never sent (for conservation) */
    uint64_t DrainQueues(PacketPool& pool);

    // ns3::NetDevice interface. The fabric forwards FabricPackets, not ns3::Packets, so Send()
    // and friends refuse (return false) instead of silently dropping.
    void SetIfIndex(const uint32_t index) override;
    uint32_t GetIfIndex() const override;
    Ptr<Channel> GetChannel() const override;
    void SetAddress(Address address) override;
    Address GetAddress() const override;
    bool SetMtu(const uint16_t mtu) override;
    uint16_t GetMtu() const override;
    bool IsLinkUp() const override;
    void AddLinkChangeCallback(Callback<void> callback) override;
    bool IsBroadcast() const override;
    Address GetBroadcast() const override;
    bool IsMulticast() const override;
    Address GetMulticast(Ipv4Address multicastGroup) const override;
    Address GetMulticast(Ipv6Address addr) const override;
    bool IsBridge() const override;
    bool IsPointToPoint() const override;
    bool Send(Ptr<Packet> packet, const Address& dest, uint16_t protocolNumber) override;
    bool SendFrom(Ptr<Packet> packet,
                  const Address& source,
                  const Address& dest,
                  uint16_t protocolNumber) override;
    Ptr<Node> GetNode() const override;
    void SetNode(Ptr<Node> node) override;
    bool NeedsArp() const override;
    void SetReceiveCallback(NetDevice::ReceiveCallback cb) override;
    void SetPromiscReceiveCallback(PromiscReceiveCallback cb) override;
    bool SupportsSendFrom() const override;

  protected:
    void DoDispose() override;

  private:
    friend class TransmitCompleteEvent;
    friend class FabricSimulatorImpl;

    struct Fifo
    {
        FabricPacket* head{nullptr};
        FabricPacket* tail{nullptr};
        uint64_t bytes{0};
    };

    FabricPacket* DequeueEligible();
    bool StillSerialising();
    void TransmitComplete();
    void HandlePfc(FabricPacket* p);
    void Unpause(uint8_t queue);
    void AdvanceQueueIntegral(int64_t nowNs)
    {
        m_tel.queueByteNs += static_cast<double>(m_dataBytes) * (nowNs - m_lastQueueChangeNs);
        m_lastQueueChangeNs = nowNs;
    }

    // Members in the order a packet-hop touches them (issue 12: at k = 16 a port's state is cold
    // when its next packet comes, so the per-packet fields share as few cache lines as possible):
    // first the scalars of Receive / Enqueue / DequeueEligible / TryTransmit, then the telemetry
    // counters (hot ones first in PortTelemetry), then the queues, then what is used rarely.
    FabricPortOwner* m_owner{nullptr};
    const uint16_t* m_routeSetHint{nullptr}; //!< see SetRouteHint()
    const uint16_t* m_setsHint{nullptr};     //!< see SetRouteHint()
    FabricNetDevice* m_peer{nullptr};
    FabricCounters* m_counters{nullptr};
    int64_t m_linkDelayNs{0}; //!< the channel's propagation delay
    uint64_t m_dataBytes{0};
    uint64_t m_txBytesTotal{0};
    int64_t m_lastQueueChangeNs{0};
    double m_psPerByte{0};   //!< serialisation time of one byte, picoseconds
    int64_t m_residualPs{0}; //!< sub-nanosecond serialisation time carried to the next packet
    uint64_t m_rateBpsInt{0}; //!< line rate as an integer (truncated serialisation times)
    double m_rateBps{0};
    uint32_t m_portId{0};
    uint16_t m_localIndex{0};
    bool m_truncateTxTime{false};
    uint8_t m_numQueues{2};
    uint8_t m_rrNext{1};
    bool m_busy{false};
    uint8_t m_pausedMask{0};   //!< bit q: queue q is paused
    uint8_t m_nonEmptyMask{0}; //!< bit q: queue q holds a packet
    /** != 0: the end of the serialisation in progress is not scheduled yet; it has this uid ... */
    uint32_t m_txEndUid{0};
    int64_t m_txEndNs{0}; //!< ... and this time (ns)
    PortTelemetry m_tel;
    std::array<Fifo, kMaxQueues> m_queues;
    // rarely used: PFC state, setup, the ns-3 NetDevice interface
    std::array<bool, kMaxQueues> m_paused{};
    uint8_t m_pausedCount{0};
    int64_t m_pausedSinceNs{0};
    std::array<EventId, kMaxQueues> m_pauseExpiry;
    PacketPool* m_pool{nullptr};
    std::vector<PfcEvent>* m_pfcLog{nullptr};
    Ptr<FabricChannel> m_channel;
    Ptr<Node> m_node;
    uint32_t m_ifIndex{0};
    Mac48Address m_address;
};

} // namespace ecngym
} // namespace ns3

#endif
