/*
 * ecngym fabric: an output-queued switch with a shared-buffer MMU, PFC, ECN and ECMP.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_SWITCH_NODE_H
#define ECNGYM_SWITCH_NODE_H

#include "fabric-config.h"
#include "fabric-net-device.h"
#include "port-aqm-policy.h"
#include "shared-buffer-mmu.h"

#include "ns3/event-id.h"
#include "ns3/node.h"

#include <vector>

namespace ns3
{
namespace ecngym
{

/**
 * @brief A datacenter switch.
 *
 * Forwarding: per-destination-host next-hop sets (all shortest paths), one chosen per flow by a
 * salted hash (ECMP). Data packets are charged to the shared buffer by ingress (port, priority)
 * (SharedBufferMmu), pass the egress port's AQM policy at enqueue and dequeue, and may trigger
 * PFC PAUSE towards their ingress port; control packets skip the MMU and use the strict-priority
 * queue, except ACKs / NACKs when FabricConfig::ackInFlowQueue is set: those take the data path
 * (MMU, the flow's data queue) as in the HPCC model. Every packet but PFC frames passes its egress
 * port's AQM policy at enqueue and dequeue; control packets also pass the ingress hook of the
 * port they arrive on when that port's policy asks for it (R-AQM holds ACKs there).
 */
class SwitchNode : public Node, public FabricPortOwner, public AqmPortAccess
{
  public:
    /**
     * @brief Get the type ID.
     * @return the object TypeId
     */
    static TypeId GetTypeId();

    SwitchNode();

    /**
     * @brief Set up the switch once all its ports exist.
     * @param switchIndex index among switches
     * @param nodeIndex index among all nodes (the HPCC ECMP hash seed)
     * @param ctx the fabric's shared state
     * @param ports the switch's ports, in local-index order
     */
    void Setup(uint32_t switchIndex,
               uint32_t nodeIndex,
               FabricContext* ctx,
               std::vector<Ptr<FabricNetDevice>> ports);

    /**
     * @brief Install the forwarding table.
     * @param routes for each destination host, the local indices of the next-hop ports
     */
    void SetRoutes(std::vector<std::vector<uint16_t>> routes);

    /**
     * @param port local port index
     * @return the AQM policy of that egress port
     */
    PortAqmPolicy* GetAqm(uint16_t port) const
    {
        return PeekPointer(m_ports[port].aqm);
    }

    /**
     * @brief Replace the AQM policy of one port, effective from now: the old policy releases
     *        what it holds (Detach) and the new one is attached and seeded.
     * @param port local port index
     * @param policy the new policy
     */
    void SetAqm(uint16_t port, Ptr<PortAqmPolicy> policy);

    /**
     * @param port a port of this switch
     * @return the seed of that port's AQM policy stream (a function of the fabric seed and the
     *         port id only, so a policy installed later draws the same stream)
     */
    uint64_t AqmSeed(const FabricNetDevice* port) const;

    /** @return the shared-buffer MMU */
    SharedBufferMmu& Mmu()
    {
        return m_mmu;
    }

    /** @return index among switches */
    uint32_t GetSwitchIndex() const
    {
        return m_switchIndex;
    }

    void ReceivePacket(FabricNetDevice* port, FabricPacket* p) override;
    void NotifyDequeue(FabricNetDevice* port, FabricPacket* p) override;
    void NotifyControlDequeue(FabricNetDevice* port, FabricPacket* p) override;
    void ForwardHeld(FabricPacket* p) override;
    void DropHeld(FabricPacket* p) override;

  protected:
    void DoDispose() override;

  private:
    uint16_t Route(const FabricPacket* p) const;
    void Forward(FabricPacket* p);
    AqmContext MakeAqmContext(const FabricNetDevice* port, uint8_t queue) const;
    void CountDrop(FabricNetDevice* egress, const FabricPacket* p);
    void CheckPause(uint16_t inPort, uint8_t queue);
    void CheckResume(uint16_t inPort, uint8_t queue);
    void RefreshPause(uint16_t inPort, uint8_t queue);
    void SendPauseAndArmRefresh(uint16_t inPort, uint8_t queue);
    void SendPfc(uint16_t inPort, uint8_t queue, bool pause);
    int64_t PauseDurationNs(uint16_t inPort) const;

    FabricContext* m_ctx{nullptr};
    uint32_t m_switchIndex{0};
    uint32_t m_nodeIndex{0};
    uint64_t m_hashSalt{0};
    /// A port as the forwarding path reads it: the device and its egress AQM policy side by
    /// side, so that one load of the routed port's slot finds both (on a large fabric each
    /// was a cache miss of its own, the second waiting on the first).
    struct PortSlot
    {
        Ptr<FabricNetDevice> device;
        Ptr<PortAqmPolicy> aqm;
    };

    std::vector<PortSlot> m_ports;     //!< by local port index
    std::vector<uint8_t> m_aqmIngress; //!< per port: its policy wants the ingress hook
    // Forwarding table, compact: a switch has few distinct next-hop sets (a fat-tree edge switch
    // sends every remote host up the same k/2 ports), so each destination host maps to the index
    // of its set (2 bytes per host, not a vector each: at k = 16 the table is 640 KB instead of
    // ~16 MB, and stays in cache). The sets lie at a fixed stride, each its port count and then
    // its ports, so one read gives both (not an offset table, then the ports).
    std::vector<uint16_t> m_routeSet; //!< destination host -> index of its next-hop set
    std::vector<uint16_t> m_sets;     //!< set i at i x m_setStride: count, then the port indices
    uint32_t m_setStride{1};          //!< 1 + the largest set's size
    SharedBufferMmu m_mmu;
    // PFC state per (ingress port, queue), split so that the per-packet check reads one byte per
    // (port, queue) (a switch's flags share one or two cache lines) and not the refresh timers
    std::vector<uint8_t> m_paused;        //!< XOFF sent and not yet undone
    std::vector<EventId> m_pauseRefresh;  //!< the pending XOFF refresh
    std::vector<uint32_t> m_intRateIndex; //!< per port: its rate's index in cfg.hpcc.linkRates
};

} // namespace ecngym
} // namespace ns3

#endif
