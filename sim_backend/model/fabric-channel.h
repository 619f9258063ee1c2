/*
 * ecngym fabric: a full-duplex point-to-point link.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_FABRIC_CHANNEL_H
#define ECNGYM_FABRIC_CHANNEL_H

#include "fabric-packet.h"

#include "ns3/channel.h"
#include "ns3/ptr.h"

namespace ns3
{
namespace ecngym
{

class FabricNetDevice;

/**
 * @brief A full-duplex point-to-point link between two FabricNetDevices.
 *
 * A packet handed to Transmit() arrives at the other end after its serialisation time (computed
 * by the sender) plus the propagation delay.
 */
class FabricChannel : public Channel
{
  public:
    /**
     * @brief Get the type ID.
     * @return the object TypeId
     */
    static TypeId GetTypeId();

    FabricChannel();

    /**
     * @brief Connect the two ends.
     * @param a one device
     * @param b the other device
     * @param delayNs one-way propagation delay in nanoseconds
     */
    void Attach(Ptr<FabricNetDevice> a, Ptr<FabricNetDevice> b, int64_t delayNs);

    /**
     * @brief Put a packet on the wire.
     * @param p the packet (ownership passes to the receiving device)
     * @param sender the transmitting end
     * @param txNs serialisation time of the packet at the sender, in nanoseconds
     */
    void Transmit(FabricPacket* p, const FabricNetDevice* sender, int64_t txNs);

    /** @return the one-way propagation delay in nanoseconds */
    int64_t GetDelayNs() const
    {
        return m_delayNs;
    }

    std::size_t GetNDevices() const override;
    Ptr<NetDevice> GetDevice(std::size_t i) const override;

  protected:
    void DoDispose() override;

  private:
    Ptr<FabricNetDevice> m_ends[2];
    int64_t m_delayNs{0};
};

} // namespace ecngym
} // namespace ns3

#endif
