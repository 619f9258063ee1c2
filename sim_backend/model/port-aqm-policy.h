/*
 * ecngym fabric: the interface every per-port AQM / ECN marking policy implements.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_PORT_AQM_POLICY_H
#define ECNGYM_PORT_AQM_POLICY_H

#include "fabric-packet.h"

#include "ns3/object.h"

#include <cstdint>

namespace ns3
{
namespace ecngym
{

/**
 * @brief What a port AQM policy sees when it decides about one data packet.
 */
struct AqmContext
{
    int64_t nowNs{0};           //!< current simulation time
    uint32_t portId{0};         //!< fabric-wide egress port id
    uint64_t queueBytes{0};     //!< bytes in the packet's egress queue (without the packet itself)
    uint64_t portDataBytes{0};  //!< bytes in all data queues of the port (without the packet)
    double linkRateBps{0};      //!< egress line rate
};

/** @brief The policy's decision at enqueue. */
enum class AqmVerdict : uint8_t
{
    Enqueue = 0, //!< accept the packet (possibly CE-marked)
    Drop = 1,    //!< drop it (counted as a drop at this port)
};

/**
 * @brief A port AQM policy: hooks at enqueue and dequeue of every data packet of one egress port.
 *
 * A policy sees the packet (flow, size, kind, enqueue time), the queue state and now, and may set
 * the packet's CE bit or drop it at enqueue. RED/ECN (DCTCP step marking included) is the first;
 * the interface also carries what PRED's per-port flow counter, ECN#'s sojourn-time marking
 * (now - enqueueNs at dequeue), CoDel and R-AQM's ACK pacing need.
 */
class PortAqmPolicy : public Object
{
  public:
    /**
     * @brief Get the type ID.
     * @return the object TypeId
     */
    static TypeId GetTypeId();

    /**
     * @brief A data packet is about to join its egress queue.
     * @param ctx queue state before the packet joins
     * @param p the packet; the policy may set p.ce (only if p.ecnCapable)
     * @return whether to enqueue or drop the packet
     */
    virtual AqmVerdict OnEnqueue(const AqmContext& ctx, FabricPacket& p) = 0;

    /**
     * @brief A data packet left its egress queue and is about to be transmitted.
     * @param ctx queue state after the packet left
     * @param p the packet; the policy may set p.ce (only if p.ecnCapable)
     */
    virtual void OnDequeue(const AqmContext& ctx, FabricPacket& p) = 0;

    /**
     * @brief Seed the policy's private random stream (for deterministic runs).
     * @param seed a 64-bit seed
     */
    virtual void SetStreamSeed(uint64_t seed) = 0;
};

} // namespace ecngym
} // namespace ns3

#endif
