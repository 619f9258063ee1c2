/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Fabric's life cycle and run loop: the simulator set-up, flow starts, running to a time or to
 * completion, tear-down.
 */
#include "fabric.h"
#include "fabric-internal.h"

#include "../model/timing-wheel-scheduler.h"

#include "ns3/boolean.h"
#include "ns3/global-value.h"
#include "ns3/nstime.h"
#include "ns3/object-factory.h"
#include "ns3/scheduler.h"
#include "ns3/simulator.h"
#include "ns3/string.h"

#include <chrono>
#include <stdexcept>
#include <string>

namespace ns3
{
namespace ecngym
{

namespace
{
bool g_fabricAlive = false;

void
StopSimulator()
{
    Simulator::Stop();
}

uint64_t g_bareEventsLeft = 0;

void
BareTick()
{
    if (--g_bareEventsLeft > 0)
    {
        Simulator::Schedule(NanoSeconds(1), &BareTick);
    }
}

/**
 * @brief Make the simulator use the named event scheduler.
 * @param typeId an ns-3 TypeId name of a Scheduler subclass
 * @throws std::invalid_argument if there is no such scheduler
 */
void
UseScheduler(const std::string& typeId)
{
    TypeId tid;
    if (!TypeId::LookupByNameFailSafe(typeId, &tid) || !tid.IsChildOf(Scheduler::GetTypeId()) ||
        !tid.HasConstructor())
    {
        throw std::invalid_argument("scheduler: " + typeId + " is not an ns-3 event scheduler");
    }
    // The simulator core: ours with the timing wheel, ns-3's DefaultSimulatorImpl with the stock
    // schedulers (so that comparing schedulers compares against stock ns-3 as a whole). ns-3 reads
    // the type when it creates the implementation, after Simulator::Destroy() has deleted the last
    // one; no fabric is alive here, so nothing else uses the simulator.
    Simulator::Destroy();
    GlobalValue::Bind("SimulatorImplementationType",
                      StringValue(tid == TimingWheelScheduler::GetTypeId()
                                      ? "ns3::ecngym::FabricSimulatorImpl"
                                      : "ns3::DefaultSimulatorImpl"));
    ObjectFactory scheduler;
    scheduler.SetTypeId(tid);
    if (tid == TimingWheelScheduler::GetTypeId())
    {
        // The model reads the time from it (TimingWheelScheduler::NowNs()).
        scheduler.Set("PublishClock", BooleanValue(true));
    }
    Simulator::SetScheduler(scheduler);
}
} // namespace

Fabric::Fabric(const FabricConfig& cfg)
{
    if (g_fabricAlive)
    {
        throw std::runtime_error(
            "a Fabric already exists in this process: ns-3's simulator is a process-wide "
            "singleton; destroy the old fabric first (or use one process per fabric)");
    }
    if (Time::GetResolution() != Time::NS)
    {
        throw std::runtime_error("the fabric needs ns-3's default nanosecond time resolution");
    }
    UseScheduler(cfg.schedulerTypeId);
    g_fabricAlive = true;
    m_ctx = std::make_unique<FabricContext>();
    m_ctx->cfg = cfg;
    // only HPCC's switches write INT records (SwitchNode::NotifyDequeue)
    m_ctx->pool.SetCarriesInt(cfg.cc == CcKind::Hpcc);
}

Fabric::~Fabric()
{
    Destroy();
}

void
Fabric::CheckAlive() const
{
    if (m_destroyed)
    {
        throw std::runtime_error("this Fabric has been destroyed");
    }
}

void
Fabric::StartDueFlows()
{
    const int64_t now = NowNs();
    while (m_nextFlow < m_flowOrder.size() &&
           m_ctx->flows[m_flowOrder[m_nextFlow]].startNs <= now)
    {
        QueuePair& qp = m_ctx->flows[m_flowOrder[m_nextFlow++]];
        m_hosts[qp.srcHost]->StartFlow(qp);
    }
    if (m_nextFlow < m_flowOrder.size())
    {
        Simulator::Schedule(NanoSeconds(m_ctx->flows[m_flowOrder[m_nextFlow]].startNs - now),
                            &Fabric::StartDueFlows,
                            this);
    }
}

int64_t
Fabric::NowNs() const
{
    return Simulator::Now().GetTimeStep();
}

void
Fabric::RunUntil(int64_t untilNs)
{
    CheckAlive();
    const int64_t now = NowNs();
    if (untilNs < now)
    {
        throw std::invalid_argument("until_ns (" + std::to_string(untilNs) +
                                    ") is before the current time (" + std::to_string(now) + ")");
    }
    if (untilNs == now)
    {
        return;
    }
    // Our own stop event (not Simulator::Stop(delay)) so that it can be cancelled when the run
    // ends early, leaving no stale stop behind for the next call.
    EventId stop = Simulator::Schedule(NanoSeconds(untilNs - now), &StopSimulator);
    Simulator::Run();
    stop.Cancel();
}

bool
Fabric::RunToCompletion(int64_t limitNs)
{
    CheckAlive();
    if (m_ctx->flowsCompleted == m_ctx->flows.size())
    {
        return true;
    }
    m_ctx->stopWhenAllComplete = true;
    RunUntil(std::max(limitNs, NowNs()));
    m_ctx->stopWhenAllComplete = false;
    return m_ctx->flowsCompleted == m_ctx->flows.size();
}

uint64_t
Fabric::GetEventCount() const
{
    return Simulator::GetEventCount();
}

double
MeasureBareEventRate(uint64_t events, const std::string& schedulerTypeId)
{
    if (g_fabricAlive)
    {
        throw std::runtime_error("cannot measure the bare event loop while a Fabric is alive");
    }
    if (events == 0)
    {
        throw std::invalid_argument("events must be > 0");
    }
    UseScheduler(schedulerTypeId);
    g_bareEventsLeft = events;
    Simulator::Schedule(NanoSeconds(1), &BareTick);
    const auto start = std::chrono::steady_clock::now();
    Simulator::Run();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    Simulator::Destroy();
    return static_cast<double>(events) / seconds;
}

void
Fabric::Destroy()
{
    if (m_destroyed)
    {
        return;
    }
    m_destroyed = true;
    Simulator::Destroy();
    for (QueuePair& qp : m_ctx->flows)
    {
        qp.cc.reset();
    }
    m_ports.clear();
    m_hosts.clear();
    m_switches.clear();
    m_ctx.reset();
    g_fabricAlive = false;
}

} // namespace ecngym
} // namespace ns3
