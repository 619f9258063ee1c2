/*
 * ecngym fabric: the lean packet descriptor that travels through the fabric.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_FABRIC_PACKET_H
#define ECNGYM_FABRIC_PACKET_H

#include "int-telemetry.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace ns3
{
namespace ecngym
{

class FabricNetDevice;

/**
 * @brief What a fabric packet is; decides its queue and who consumes it.
 */
enum class PacketKind : uint8_t
{
    Data = 0, //!< RoCEv2 data segment of a queue pair
    Ack = 1,  //!< cumulative acknowledgement (may echo CE)
    Nack = 2, //!< go-back-N negative acknowledgement
    Cnp = 3,  //!< congestion notification packet (DCQCN notification point)
    Pfc = 4,  //!< IEEE 802.1Qbb PAUSE (or RESUME when pauseNs == 0); hop-by-hop, never forwarded
};

/**
 * @brief A packet descriptor.
 *
 * The fabric does not carry ns3::Packet objects: their byte buffers, header serialisation and tag
 * lists cost more than the whole forwarding decision (profiled in DESIGN.md, "Speed budget").
 * Instead each packet is a small plain struct from a free-list pool, moved (never copied) from
 * queue to channel to queue. The wire size is still accounted exactly (headers included).
 */
struct alignas(64) FabricPacket
{
    // --- first cache line: everything a switch reads or writes per hop (issue 12: at k = 16 the
    // ~45 k packets in flight are cold when they arrive or leave a queue, so every line counts) ---
    FabricPacket* next{nullptr}; //!< intrusive FIFO link (egress queue or pool)
    PacketKind kind{PacketKind::Data};
    uint8_t queue{0};          //!< egress queue / PFC priority (0 = strict-priority control)
    bool ecnCapable{false};    //!< ECT: may be CE-marked
    bool ce{false};            //!< congestion experienced (data) / ECN echo (ACK)
    uint16_t ingressPort{0};   //!< switch-local ingress port, for shared-buffer accounting
    uint16_t hop{0};           //!< number of switches crossed so far
    uint32_t wireBytes{0};     //!< size on the wire, headers included
    uint32_t flowId{0};        //!< index of the flow (queue pair) in the flow table
    uint32_t dstHost{0};       //!< destination host index
    uint32_t flowHash{0};      //!< per-flow ECMP hash input (EcmpHash::Salted)
    int64_t enqueueNs{0};      //!< time it joined its current egress queue
    /** The HPCC ECMP hash's three input words in this packet's direction (EcmpHash::Hpcc: source
     *  and destination address, the two ports), copied from the queue pair when the packet is
     *  built, so that forwarding reads no flow state. */
    uint32_t ecmpWords[3]{0, 0, 0};
    uint8_t flowQueue{0};      //!< the flow's data priority (where ACKs go with ackInFlowQueue)
    /** The port it is on its way to (set when it leaves a port): its arrival event is the packet
     *  itself (FabricSimulatorImpl::SchedulePacketArrival), no separate event object to touch. */
    FabricNetDevice* arrivalPort{nullptr};
    // --- beyond the first cache line: what the hosts (and a few AQM policies) use ---
    uint32_t payloadBytes{0};  //!< data payload (0 for control packets)
    uint32_t srcHost{0};       //!< source host index
    uint64_t seq{0};           //!< data: first byte; ACK/NACK: next expected byte
    union
    {
        int64_t pauseNs{0}; //!< PFC: pause duration (0 = resume)
        uint64_t rwndBytes; //!< ACK: receive window a switch rewrote into it (0 = the receiver's:
                            //!< unbounded); R-AQM's HSCC-style compensation (R-AQM §IV-D; docs: algorithms/r-aqm.md §3.4)
    };
    int64_t sendNs{0};         //!< data: time its NIC built it; ACK: the echoed data send time
    IntStack ints;             //!< data: INT records pushed by switches (HPCC); ACK: their echo

    /**
     * @brief Set ecmpWords for a packet travelling from (srcAddr, srcPort) to (dstAddr, dstPort):
     *        the HPCC model's hash words, the two ports packed source-low, destination-high.
     */
    void SetEcmpWords(uint32_t srcAddr, uint32_t dstAddr, uint16_t srcPort, uint16_t dstPort)
    {
        ecmpWords[0] = srcAddr;
        ecmpWords[1] = dstAddr;
        ecmpWords[2] = srcPort | (static_cast<uint32_t>(dstPort) << 16);
    }
};

static_assert(offsetof(FabricPacket, payloadBytes) == 64, "a packet's per-hop fields fit one cache line");
static_assert(sizeof(FabricPacket) % 64 == 0, "a packet starts on a cache line");
static_assert(std::is_trivially_copyable_v<FabricPacket>, "PacketPool::Allocate() clears a packet with memset");
static_assert(offsetof(FabricPacket, ints) + sizeof(IntStack) <= sizeof(FabricPacket) &&
                  offsetof(FabricPacket, ints) > offsetof(FabricPacket, sendNs),
              "the INT stack is the packet's last field (PacketPool::Allocate() clears the rest)");

/**
 * @brief Free-list allocator for FabricPacket.
 *
 * Packets are recycled instead of freed; the pool only grows (bounded by the peak number of
 * packets in flight) and is released when the fabric is destroyed.
 */
class PacketPool
{
  public:
    PacketPool() = default;
    PacketPool(const PacketPool&) = delete;
    PacketPool& operator=(const PacketPool&) = delete;
    ~PacketPool();

    /** @return a zero-initialised packet */
    FabricPacket* Allocate()
    {
        if (m_free == nullptr)
        {
            Grow();
        }
        FabricPacket* p = m_free;
        m_free = p->next;
        if (m_carriesInt)
        {
            *p = FabricPacket{};
        }
        else
        {
            // Every field but the INT stack, which nothing writes in such a fabric, so that it is
            // still the zeroes Grow() left there: a packet's third cache line stays untouched
            // (issue 12: ~93,000 packets in flight at k = 16, each line of them counts).
            // (FabricPacket{} is all zeroes: every member's default is 0, false, nullptr or Data.)
            std::memset(static_cast<void*>(p), 0, offsetof(FabricPacket, ints));
        }
        ++m_live;
        return p;
    }

    /**
     * @brief Say whether this fabric's switches push INT records into data packets (HPCC). If
     *        not, Allocate() leaves each packet's INT stack as it is: empty, as nothing writes it.
     * @param carriesInt whether any packet's INT stack is ever written
     */
    void SetCarriesInt(bool carriesInt)
    {
        m_carriesInt = carriesInt;
    }

    /** @param p a packet from Allocate() that nobody references any more */
    void Release(FabricPacket* p)
    {
        p->next = m_free;
        m_free = p;
        --m_live;
    }

    /** @return packets allocated and not yet released */
    int64_t GetLive() const
    {
        return m_live;
    }

  private:
    void Grow();

    FabricPacket* m_free{nullptr};
    std::vector<FabricPacket*> m_chunks;
    bool m_carriesInt{true}; //!< zero the INT stack in Allocate()
    int64_t m_live{0};
};

} // namespace ecngym
} // namespace ns3

#endif
