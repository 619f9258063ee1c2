/*
 * ecngym fabric: the two per-packet simulator events, without per-event heap allocations.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_FABRIC_EVENTS_H
#define ECNGYM_FABRIC_EVENTS_H

#include "fabric-packet.h"
#include "fabric-simulator-impl.h"

#include "ns3/event-impl.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/simulator.h"

#include <cstddef>
#include <new>

namespace ns3
{
namespace ecngym
{

class FabricNetDevice;

/**
 * @brief Free list of fixed-size blocks for the fabric's own event objects.
 *
 * A packet crossing a link costs up to two simulator events (its arrival at the far end, the end
 * of its serialisation: FabricNetDevice::TryTransmit() schedules the latter only if something
 * may be sent then). Scheduled through Simulator::Schedule(delay, &Class::Method, args...) each
 * takes two heap allocations (the EventImpl and its std::function's bound arguments) and two
 * frees; these events instead recycle their memory here. The simulator runs on one thread, and the
 * list only grows up to the peak number of pending events.
 * @tparam kSize block size in bytes
 */
template <std::size_t kSize>
class EventBlockPool
{
  public:
    /** @return a block of kSize bytes */
    static void* Allocate()
    {
        if (s_free == nullptr)
        {
            return ::operator new(kSize);
        }
        Block* b = s_free;
        s_free = b->next;
        return b;
    }

    /** @param p a block from Allocate() */
    static void Release(void* p)
    {
        Block* b = static_cast<Block*>(p);
        b->next = s_free;
        s_free = b;
    }

  private:
    struct Block
    {
        Block* next;
    };

    static_assert(kSize >= sizeof(Block), "block too small");
    static inline Block* s_free{nullptr};
};

/**
 * @brief Base of pooled events: class-specific operator new / delete use EventBlockPool.
 * @tparam Derived the concrete event class (CRTP)
 */
template <typename Derived>
class PooledEvent : public EventImpl
{
  public:
    /**
     * @param size the object size (sizeof(Derived))
     * @return memory for one event
     */
    static void* operator new(std::size_t size)
    {
        return EventBlockPool<sizeof(Derived)>::Allocate();
    }

    /**
     * @param p memory from operator new
     * @param size the object size
     */
    static void operator delete(void* p, std::size_t size)
    {
        EventBlockPool<sizeof(Derived)>::Release(p);
    }
};

/** @brief A packet arrives at the far end of a link: FabricNetDevice::Receive(packet). */
class PacketArrivalEvent : public PooledEvent<PacketArrivalEvent>
{
  public:
    /**
     * @param device the receiving port
     * @param packet the packet
     */
    PacketArrivalEvent(FabricNetDevice* device, FabricPacket* packet)
        : m_device(device),
          m_packet(packet)
    {
    }

  protected:
    void Notify() override;

  private:
    FabricNetDevice* m_device;
    FabricPacket* m_packet;
};

/** @brief A port finished serialising a packet: FabricNetDevice::TransmitComplete(). */
class TransmitCompleteEvent : public PooledEvent<TransmitCompleteEvent>
{
  public:
    /** @param device the transmitting port */
    explicit TransmitCompleteEvent(FabricNetDevice* device)
        : m_device(device)
    {
    }

  protected:
    void Notify() override;

  private:
    FabricNetDevice* m_device;
};

/**
 * @brief Schedule a pooled event after a delay.
 * @param delayNs delay in ns
 * @param event a newly created event (the simulator takes ownership)
 */
inline void
SchedulePooled(int64_t delayNs, EventImpl* event)
{
    Simulator::Schedule(NanoSeconds(delayNs), Ptr<EventImpl>(event, false));
}

/**
 * @brief Schedule the arrival of a packet at a port after a delay.
 * @param delayNs delay in ns
 * @param device the receiving port
 * @param packet the packet
 */
inline void
SchedulePacketArrival(int64_t delayNs, FabricNetDevice* device, FabricPacket* packet)
{
    if (FabricSimulatorImpl* sim = FabricSimulatorImpl::Active())
    {
        packet->arrivalPort = device;
        sim->SchedulePacketArrival(delayNs, packet);
        return;
    }
    SchedulePooled(delayNs, new PacketArrivalEvent(device, packet));
}

/**
 * @brief Schedule the end of a port's serialisation of a packet.
 * @param delayNs delay in ns
 * @param device the transmitting port
 */
inline void
ScheduleTransmitComplete(int64_t delayNs, FabricNetDevice* device)
{
    if (FabricSimulatorImpl* sim = FabricSimulatorImpl::Active())
    {
        sim->ScheduleTransmitComplete(delayNs, device);
        return;
    }
    SchedulePooled(delayNs, new TransmitCompleteEvent(device));
}

} // namespace ecngym
} // namespace ns3

#endif
