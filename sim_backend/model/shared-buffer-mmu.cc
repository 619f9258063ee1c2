/* SPDX-License-Identifier: GPL-2.0-only */
#include "shared-buffer-mmu.h"

#include <algorithm>

namespace ns3
{
namespace ecngym
{

void
SharedBufferMmu::Setup(uint32_t numPorts, uint8_t numQueues, const Config& config)
{
    m_cfg = config;
    m_numPorts = numPorts;
    m_numQueues = numQueues;
    m_queues.assign(static_cast<std::size_t>(numPorts) * numQueues, QueueUse{});
    m_sharedUsed = 0;
    m_usedBytes = 0;
    SetPfcParameters(config.alpha, config.headroomBytes);
}

void
SharedBufferMmu::SetPfcParameters(double alpha, uint64_t headroomBytes)
{
    m_cfg.alpha = alpha;
    m_cfg.headroomBytes = headroomBytes;
    m_portAlpha.assign(m_numPorts, alpha);
    m_portHeadroom.assign(m_numPorts, headroomBytes);
    m_totalHeadroomBytes = m_numPorts * headroomBytes;
}

void
SharedBufferMmu::SetPortPfcParameters(uint16_t port, double alpha, uint64_t headroomBytes)
{
    m_totalHeadroomBytes = m_totalHeadroomBytes - m_portHeadroom[port] + headroomBytes;
    m_portAlpha[port] = alpha;
    m_portHeadroom[port] = headroomBytes;
}

uint64_t
SharedBufferMmu::GetPfcThreshold(uint16_t port) const
{
    const uint64_t fixed = m_totalHeadroomBytes + m_numPorts * m_cfg.reserveBytes + m_sharedUsed;
    if (fixed >= m_cfg.bufferBytes)
    {
        return 0;
    }
    return static_cast<uint64_t>(m_portAlpha[port] * static_cast<double>(m_cfg.bufferBytes - fixed));
}

bool
SharedBufferMmu::Admit(uint16_t port, uint8_t queue, uint32_t bytes)
{
    if (m_usedBytes + bytes > m_cfg.bufferBytes)
    {
        return false;
    }
    const std::size_t i = Index(port, queue);
    const uint64_t newIngress = m_queues[i].ingressBytes + bytes;
    if (newIngress <= m_cfg.reserveBytes)
    {
        m_queues[i].ingressBytes = newIngress;
        m_usedBytes += bytes;
        return true;
    }
    const uint64_t threshold = GetPfcThreshold(port);
    const uint64_t newShared = newIngress - m_cfg.reserveBytes;
    if (newShared <= threshold)
    {
        m_sharedUsed += newShared - SharedUse(i);
        m_queues[i].ingressBytes = newIngress;
        m_usedBytes += bytes;
        return true;
    }
    if (m_cfg.pfcEnabled && m_queues[i].headroomBytes + bytes <= m_portHeadroom[port])
    {
        m_queues[i].headroomBytes += bytes;
        m_usedBytes += bytes;
        return true;
    }
    return false;
}

void
SharedBufferMmu::Release(uint16_t port, uint8_t queue, uint32_t bytes)
{
    const std::size_t i = Index(port, queue);
    // Headroom drains first: it holds the most recent arrivals of a paused (port, priority), and
    // emptying it is what allows XON.
    const uint64_t fromHeadroom = std::min<uint64_t>(m_queues[i].headroomBytes, bytes);
    m_queues[i].headroomBytes -= fromHeadroom;
    const uint64_t rest = bytes - fromHeadroom;
    if (rest > 0)
    {
        const uint64_t before = SharedUse(i);
        m_queues[i].ingressBytes -= std::min<uint64_t>(m_queues[i].ingressBytes, rest);
        m_sharedUsed -= before - SharedUse(i);
    }
    m_usedBytes -= bytes;
}

bool
SharedBufferMmu::ShouldPause(uint16_t port, uint8_t queue) const
{
    if (!m_cfg.pfcEnabled)
    {
        return false;
    }
    const std::size_t i = Index(port, queue);
    return m_queues[i].headroomBytes > 0 || SharedUse(i) >= GetPfcThreshold(port);
}

bool
SharedBufferMmu::ShouldResume(uint16_t port, uint8_t queue) const
{
    const std::size_t i = Index(port, queue);
    const uint64_t shared = SharedUse(i);
    return m_queues[i].headroomBytes == 0 &&
           (shared == 0 || shared + m_cfg.resumeOffsetBytes <= GetPfcThreshold(port));
}

} // namespace ecngym
} // namespace ns3
