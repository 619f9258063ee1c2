/* SPDX-License-Identifier: GPL-2.0-only */
#include "fabric-packet.h"

#include <cstddef>

namespace ns3
{
namespace ecngym
{

namespace
{
constexpr std::size_t kChunkPackets = 4096;
}

PacketPool::~PacketPool()
{
    for (FabricPacket* chunk : m_chunks)
    {
        delete[] chunk;
    }
}

void
PacketPool::Grow()
{
    auto* chunk = new FabricPacket[kChunkPackets];
    m_chunks.push_back(chunk);
    for (std::size_t i = 0; i < kChunkPackets; ++i)
    {
        chunk[i].next = m_free;
        m_free = &chunk[i];
    }
}

} // namespace ecngym
} // namespace ns3
