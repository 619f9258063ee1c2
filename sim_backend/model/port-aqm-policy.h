/*
 * ecngym fabric: the interface every per-port AQM / ECN marking policy implements.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_PORT_AQM_POLICY_H
#define ECNGYM_PORT_AQM_POLICY_H

#include "fabric-packet.h"

#include "ns3/object.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ns3
{
namespace ecngym
{

/**
 * @brief What a port AQM policy sees when it decides about one packet (data or control).
 *
 * Filled in one place (SwitchNode::MakeAqmContext) for every hook. The packet itself carries its
 * kind, flow, size and the time it joined its current queue (FabricPacket::enqueueNs).
 */
struct AqmContext
{
    int64_t nowNs{0};           //!< current simulation time
    uint32_t portId{0};         //!< fabric-wide id of the port whose policy is called
    uint64_t queueBytes{0};     //!< bytes in the packet's queue at that port (without the packet)
    uint64_t portDataBytes{0};  //!< bytes in all data queues of the port (without the packet)
    double linkRateBps{0};      //!< the port's egress line rate
};

/** @brief A policy's decision about a packet. */
enum class AqmVerdict : uint8_t
{
    Enqueue = 0, //!< accept / forward the packet (possibly CE-marked)
    Drop = 1,    //!< drop it (a data packet is counted as a drop at this port)
    Hold = 2,    //!< (ingress hook only) the policy keeps the packet and releases it later
};

/**
 * @brief What a policy may do with the port it is installed on, for packets it held.
 */
class AqmPortAccess
{
  public:
    virtual ~AqmPortAccess() = default;

    /**
     * @brief Forward a packet the policy held at ingress, as if it had just arrived.
     * @param p the packet (ownership passes back to the switch)
     */
    virtual void ForwardHeld(FabricPacket* p) = 0;

    /**
     * @brief Drop a packet the policy held (returned to the pool).
     * @param p the packet
     */
    virtual void DropHeld(FabricPacket* p) = 0;
};

/**
 * @brief One quantity a policy reports per interval (PortAqmPolicy::ReadTelemetry), declared once.
 *
 * The Python policy list, the env's observation features and their reference pages are read from
 * these declarations (``_fabric.aqm_telemetry``).
 */
struct AqmTelemetryInfo
{
    const char* name; //!< the key ReadTelemetry reports, "<policy>.<quantity>" ("pred.flow_count")
    const char* unit; //!< e.g. "packets", "flows", "ns", "per MB", "0/1"
    /**
     * How an observation maps it into [0, 1] (envs/observation.py): "share:<key>" min(x / max(y, 1),
     * 1) with y the port's telemetry <key> (a mark count over the packets it could mark);
     * "saturate:<scale>" x / (x + scale); "fraction_of:<scale>" min(x / scale, 1); "queue_time" a
     * time as the bytes the port sends in it, on the queue features' mapping; "flag" min(x, 1).
     * A scale is a number or the name of a setting (flow_scale, viq_capacity_packets).
     */
    const char* normaliser;
    const char* help; //!< what it counts
};

/**
 * @brief A port AQM policy: hooks at enqueue and dequeue of every packet of one switch egress
 *        port, data and control (ACK, NACK, CNP; PFC frames are link-level and skip it), and at
 *        the arrival of every control packet on the port's ingress side.
 *
 * Policies are ns-3 Objects chosen per port at run time by TypeId name, their tunables TypeId
 * attributes with checkers (the ranges the Python layer reports), the way ns-3's
 * TrafficControlHelper::SetRootQueueDisc("ns3::RedQueueDisc", ...) works. A policy may set the CE
 * bit of ECN-capable packets, drop at enqueue, hold control packets at ingress and release them
 * later (R-AQM), and count what it did in its own telemetry (ReadTelemetry).
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
     * @brief A packet is about to join one of the port's queues.
     * @param ctx state of the queue the packet joins, before it joins
     * @param p the packet; the policy may set p.ce (only if p.ecnCapable)
     * @return Enqueue or Drop
     */
    virtual AqmVerdict OnEnqueue(const AqmContext& ctx, FabricPacket& p) = 0;

    /**
     * @brief A packet left one of the port's queues and is about to be transmitted.
     * @param ctx state of the queue after the packet left; p.enqueueNs gives its sojourn time
     * @param p the packet; the policy may set p.ce (only if p.ecnCapable)
     */
    virtual void OnDequeue(const AqmContext& ctx, FabricPacket& p) = 0;

    /**
     * @brief A control packet (ACK, NACK, CNP) arrived on this port's ingress side, before it is
     *        routed. Called only if WantsIngress() was true when the policy was installed.
     * @param ctx state of this port's egress queues
     * @param p the packet
     * @return Enqueue (forward now), Hold (the policy keeps it) or Drop
     */
    virtual AqmVerdict OnIngress(const AqmContext& ctx, FabricPacket& p)
    {
        return AqmVerdict::Enqueue;
    }

    /** @return whether the switch must call OnIngress for this port's arriving control packets */
    virtual bool WantsIngress() const
    {
        return false;
    }

    /**
     * @brief Seed the policy's private random stream (for deterministic runs).
     * @param seed a 64-bit seed
     */
    virtual void SetStreamSeed(uint64_t seed) = 0;

    /**
     * @brief Called once when the policy is installed on a port.
     * @param access the switch side, for held packets
     * @param portId fabric-wide port id
     * @param linkRateBps the port's line rate
     */
    virtual void Attach(AqmPortAccess* access, uint32_t portId, double linkRateBps)
    {
        m_access = access;
    }

    /**
     * @brief Called when the policy is replaced: release (forward) everything it holds.
     */
    virtual void Detach()
    {
        m_access = nullptr;
    }

    /**
     * @brief Check that the attributes are consistent with each other.
     * @return an empty string, or what is wrong (naming the attributes)
     */
    virtual std::string CheckConsistency() const
    {
        return {};
    }

    /**
     * @brief The quantities ReadTelemetry reports, in its order.
     * @return one declaration per quantity (none by default)
     */
    virtual std::vector<AqmTelemetryInfo> DescribeTelemetry() const
    {
        return {};
    }

    /**
     * @brief The attributes an env's action tunes when it names none (ecngym.sim_backend.aqm's
     *        ACTION_PARAMS, the observation's tuned-setting features and the AQM reference page
     *        are read from it): the knobs the policy's paper tunes.
     * @return attribute names (none by default: an action then has to name its parameters)
     */
    virtual std::vector<std::string> DescribeActionAttributes() const
    {
        return {};
    }

    /**
     * @brief The attributes that are the port's RED marking curve, Kmin, Kmax and Pmax, in that
     *        order: what the env's ``kmin``, ``kmax`` and ``pmax`` observation features read
     *        (envs/scenario.py), and what the env's default feature list shows on this policy's
     *        ports.
     * @return three attribute names (Kmin in bytes, Kmax in bytes, Pmax), or none (the default:
     *         the policy has no such curve, and those features are refused on its ports)
     */
    virtual std::vector<std::string> DescribeMarkingCurve() const
    {
        return {};
    }

    /**
     * @brief Hand back this policy's telemetry of the interval and start a new interval.
     * @param out (name, value) pairs, the names and order of DescribeTelemetry
     */
    virtual void ReadTelemetry(std::vector<std::pair<const char*, double>>& out)
    {
    }

  protected:
    void DoDispose() override
    {
        m_access = nullptr;
        Object::DoDispose();
    }

    AqmPortAccess* m_access{nullptr}; //!< the switch side (set by Attach)
};

} // namespace ecngym
} // namespace ns3

#endif
