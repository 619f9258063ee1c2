/* SPDX-License-Identifier: GPL-2.0-only */
#include "port-aqm-policy.h"

namespace ns3
{
namespace ecngym
{

NS_OBJECT_ENSURE_REGISTERED(PortAqmPolicy);

TypeId
PortAqmPolicy::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::ecngym::PortAqmPolicy").SetParent<Object>().SetGroupName("Ecngym");
    return tid;
}

} // namespace ecngym
} // namespace ns3
