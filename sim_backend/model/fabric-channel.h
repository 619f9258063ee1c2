/*
 * ecngym fabric: a full-duplex point-to-point link.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_FABRIC_CHANNEL_H
#define ECNGYM_FABRIC_CHANNEL_H

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
 * It holds the two ends and the propagation delay; a sending device schedules the packet's
 * arrival at its peer itself (FabricNetDevice caches the delay and the peer, so a packet-hop
 * touches no channel object).
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
