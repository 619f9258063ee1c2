/*
 * ecngym fabric: the two per-packet simulator events, without per-event heap allocations.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_FABRIC_EVENTS_H
#define ECNGYM_FABRIC_EVENTS_H

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
struct FabricPacket;

/**
 * @brief Free list of fixed-size blocks for the fabric's own event objects.
 *
 * Every packet crossing a link costs two simulator events (its arrival at the far end, the end of
 * its serialisation). Scheduled through Simulator::Schedule(delay, &Class::Method, args...) each
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
 * @brief An OwnedEvent class with its free list: objects are built once and reused.
 * @tparam Derived the event class
 */
template <typename Derived>
class RecycledEvent : public OwnedEvent
{
  public:
    /** @return an object to arm and schedule (from the free list, or a new one) */
    static Derived* Acquire()
    {
        if (s_free == nullptr)
        {
            return new Derived();
        }
        Derived* e = s_free;
        s_free = e->m_nextFree;
        return e;
    }

    void Discard() override
    {
        Recycle();
    }

  protected:
    /** @brief Put this object back on the free list (done before the action runs, so that the
     *         action's own events reuse it while it is still in cache). */
    void Recycle()
    {
        m_nextFree = s_free;
        s_free = static_cast<Derived*>(this);
    }

  private:
    Derived* m_nextFree{nullptr};
    static inline Derived* s_free{nullptr};
};

/** @brief PacketArrivalEvent as an owned event (FabricSimulatorImpl). */
class OwnedPacketArrival : public RecycledEvent<OwnedPacketArrival>
{
  public:
    /**
     * @param device the receiving port
     * @param packet the packet
     */
    void Arm(FabricNetDevice* device, FabricPacket* packet)
    {
        m_device = device;
        m_packet = packet;
    }

    void Fire() override;

  private:
    FabricNetDevice* m_device{nullptr};
    FabricPacket* m_packet{nullptr};
};

/** @brief TransmitCompleteEvent as an owned event (FabricSimulatorImpl). */
class OwnedTransmitComplete : public RecycledEvent<OwnedTransmitComplete>
{
  public:
    /** @param device the transmitting port */
    void Arm(FabricNetDevice* device)
    {
        m_device = device;
    }

    void Fire() override;

  private:
    FabricNetDevice* m_device{nullptr};
};

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
        OwnedPacketArrival* e = OwnedPacketArrival::Acquire();
        e->Arm(device, packet);
        sim->ScheduleOwned(delayNs, e);
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
        OwnedTransmitComplete* e = OwnedTransmitComplete::Acquire();
        e->Arm(device);
        sim->ScheduleOwned(delayNs, e);
        return;
    }
    SchedulePooled(delayNs, new TransmitCompleteEvent(device));
}

} // namespace ecngym
} // namespace ns3

#endif
