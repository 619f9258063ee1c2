/* SPDX-License-Identifier: GPL-2.0-only */
#include "fabric-channel.h"

#include "fabric-net-device.h"

namespace ns3
{
namespace ecngym
{

NS_OBJECT_ENSURE_REGISTERED(FabricChannel);

TypeId
FabricChannel::GetTypeId()
{
    static TypeId tid = TypeId("ns3::ecngym::FabricChannel")
                            .SetParent<Channel>()
                            .SetGroupName("Ecngym")
                            .AddConstructor<FabricChannel>();
    return tid;
}

FabricChannel::FabricChannel() = default;

void
FabricChannel::Attach(Ptr<FabricNetDevice> a, Ptr<FabricNetDevice> b, int64_t delayNs)
{
    m_ends[0] = a;
    m_ends[1] = b;
    m_delayNs = delayNs;
}

std::size_t
FabricChannel::GetNDevices() const
{
    return 2;
}

Ptr<NetDevice>
FabricChannel::GetDevice(std::size_t i) const
{
    return m_ends[i];
}

void
FabricChannel::DoDispose()
{
    m_ends[0] = nullptr;
    m_ends[1] = nullptr;
    Channel::DoDispose();
}

} // namespace ecngym
} // namespace ns3
