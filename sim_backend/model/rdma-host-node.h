/*
 * ecngym fabric: a host with an RDMA NIC (queue pairs, pacing, go-back-N, CNP generation).
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_RDMA_HOST_NODE_H
#define ECNGYM_RDMA_HOST_NODE_H

#include "fabric-config.h"
#include "fabric-net-device.h"

#include "ns3/node.h"

#include <memory>
#include <unordered_map>
#include <vector>

namespace ns3
{
namespace ecngym
{

/**
 * @brief A server with one RoCEv2 NIC port.
 *
 * Sender: one queue pair per flow, started at line rate; when the wire is free the NIC picks the
 * next queue pair round-robin (in start order, after the one served last) among those whose
 * pacing time has come and whose window allows, and builds one MTU-sized packet; as in the HPCC
 * model's NIC, finished queue pairs leave the round-robin list lazily. Go-back-N: a NACK or a retransmission timeout rewinds snd_nxt
 * to snd_una. Receiver: in-order delivery, one ACK per `ackIntervalPackets` packets (and for the
 * last one), CE echoed on ACKs, CNPs at most once per `cnpIntervalNs` per flow (CNP mode), a NACK
 * on the first out-of-order packet.
 *
 * Under DCTCP, the Linux-like options (DctcpConfig::tcp) add: a SYN (a data-queue packet without
 * payload, not ECN-capable) answered by a SYN-ACK (an ACK of byte 0) and the sender's ACK, the data
 * starting when the SYN-ACK arrives; the RFC 6298 retransmission timeout with backoff; delayed ACKs
 * with DCTCP's CE-state rule.
 */
class RdmaHostNode : public Node, public FabricPortOwner
{
  public:
    /**
     * @brief Get the type ID.
     * @return the object TypeId
     */
    static TypeId GetTypeId();

    RdmaHostNode();

    /**
     * @brief Set up the host.
     * @param hostIndex index of this host in the flow table's host numbering
     * @param ctx the fabric's shared state
     */
    void Setup(uint32_t hostIndex, FabricContext* ctx);

    /** @param port the NIC port */
    void SetPort(Ptr<FabricNetDevice> port)
    {
        m_port = port;
    }

    /** @return the NIC port */
    FabricNetDevice* GetPort() const
    {
        return PeekPointer(m_port);
    }

    /** @return index of this host */
    uint32_t GetHostIndex() const
    {
        return m_hostIndex;
    }

    /**
     * @brief Start sending a flow now.
     * @param qp the flow (sender side is this host)
     */
    void StartFlow(QueuePair& qp);

    /**
     * @brief Congestion control changed qp.rateBps: re-pace and make sure the NIC wakes up.
     * @param qp the queue pair
     */
    void OnRateChange(QueuePair& qp);

    /**
     * @brief Change a queue pair's rate and re-pace its next packet (the HPCC model's
     *        RdmaHw::ChangeRate, used by HPCC): the next send time moves by the difference of the
     *        last packet's serialisation time at the new and the old rate, and a pending NIC wake-up
     *        is brought forward to it.
     * @param qp the queue pair
     * @param newRateBps the new rate
     */
    void ChangePacingRate(QueuePair& qp, double newRateBps);

    void ReceivePacket(FabricNetDevice* port, FabricPacket* p) override;
    FabricPacket* PullData(FabricNetDevice* port) override;

    /**
     * @return whether a queue pair may send (PullData() scans them): every queue pair joins the
     *         list with a call of the port's TryTransmit()
     */
    bool MayOfferData() const override
    {
        return !m_active.empty();
    }

  protected:
    void DoDispose() override;

  private:
    void ReceiveData(FabricPacket* p);
    void ReceiveAck(FabricPacket* p);
    void ReceiveNack(FabricPacket* p);
    void SendControl(PacketKind kind, const QueuePair& qp, uint64_t seq, bool ce, const FabricPacket* data);
    int64_t TxTimeNs(uint32_t bytes, double rateBps) const;
    void FinishFlow(QueuePair& qp);
    bool TakeConnection(QueuePair& qp, int64_t nowNs);
    /** @brief Send the SYN (PacketKind::Data) or the sender's ACK of the SYN-ACK (PacketKind::Ack). */
    void SendHandshake(const QueuePair& qp, PacketKind kind);
    bool ReceiveHandshakeAck(QueuePair& qp, FabricPacket* p);
    void ReceiveInOrderDelayed(QueuePair& qp, FabricPacket* p);
    void SendDelayedAck(QueuePair& qp, FabricPacket* p);
    void DelayedAckTimeout(QueuePair* qp);
    void ArmRetransmitTimer(QueuePair& qp, int64_t delayNs);
    void RetransmitTimeout(QueuePair* qp);
    void ScheduleWakeForPacing(FabricNetDevice* port, int64_t now);
    void ScheduleWake(int64_t atNs);
    void Wake();
    void EnqueueControl(FabricPacket* c);

    FabricContext* m_ctx{nullptr};
    Ptr<FabricNetDevice> m_port;
    uint32_t m_hostIndex{0};
    std::vector<QueuePair*> m_active; //!< flows this host sends, in start order (finished ones
                                      //!< linger until a scan compacts them out)
    uint32_t m_rrLast{0};             //!< index in m_active of the queue pair served last
    /** @brief A persistent connection to one peer (DctcpConfig::persistentConnections). */
    struct Connection
    {
        std::unique_ptr<CongestionControl> cc; //!< its congestion state while idle (null while busy)
        bool busy{false};
    };
    /** persistent connections by destination host, in the order they were opened */
    std::unordered_map<uint32_t, std::vector<Connection>> m_connections;
    EventId m_wakeEvent;
    int64_t m_wakeAtNs{-1};
    // The Linux-like options of the DCTCP host model (TcpHostConfig), resolved once in Setup
    bool m_handshake{false};  //!< SYN / SYN-ACK / ACK before a connection's data
    bool m_delayedAck{false}; //!< the receiver delays ACKs (RFC 8257 §3.2's ECE rule)
    bool m_tcpLoss{false};    //!< losses reach DctcpWindowControl::OnLoss (slow start, RTO backoff)
};

} // namespace ecngym
} // namespace ns3

#endif
