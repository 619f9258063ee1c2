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
#include <numeric>
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
Fabric::ScheduleNextStart()
{
    if (m_nextFlow < m_flowOrder.size())
    {
        m_startEvent = Simulator::Schedule(
            NanoSeconds(m_ctx->flows[m_flowOrder[m_nextFlow]].startNs - NowNs()),
            &Fabric::StartDueFlows,
            this);
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
    ScheduleNextStart();
}

uint64_t
Fabric::ReplacePendingFlows(const std::vector<uint32_t>& src,
                            const std::vector<uint32_t>& dst,
                            const std::vector<uint64_t>& sizeBytes,
                            const std::vector<int64_t>& startNs,
                            const std::vector<uint8_t>& queue,
                            const std::vector<uint16_t>& dstPort,
                            const std::vector<int64_t>& extraDelayNs)
{
    CheckAlive();
    if (!m_built)
    {
        throw std::runtime_error("call Build() before ReplacePendingFlows()");
    }
    if (m_ctx->cfg.cc == CcKind::Hpcc && !m_ctx->cfg.nicWindow)
    {
        throw std::invalid_argument("HPCC needs the NIC window (its INT arithmetic divides by it)");
    }
    CheckFlowRows(src, dst, sizeBytes, startNs, queue, dstPort);
    const std::size_t n = src.size();
    if (!extraDelayNs.empty() && extraDelayNs.size() != n)
    {
        throw std::invalid_argument("extra_delay_ns: expected one entry per new flow (" +
                                    std::to_string(n) + ") or none, got " +
                                    std::to_string(extraDelayNs.size()));
    }
    for (std::size_t i = 0; i < extraDelayNs.size(); ++i)
    {
        if (extraDelayNs[i] < 0)
        {
            throw std::invalid_argument(Where("flows", i) + ": extra_delay_ns must be >= 0");
        }
    }
    // The started flows must be the table's first rows: their ids are in packets, timers and
    // the hosts' lists, so only rows after them can go.
    const std::size_t kept = m_nextFlow;
    for (std::size_t i = 0; i < kept; ++i)
    {
        if (m_flowOrder[i] >= kept)
        {
            throw std::runtime_error(
                "replace_pending_flows: flow " + std::to_string(m_flowOrder[i]) +
                " has started but a flow of an earlier row has not; the flow table must be in "
                "start order (as a Trace is) to replace its pending flows");
        }
    }
    const uint64_t dropped = m_ctx->flows.size() - kept;
    m_startEvent.Cancel();
    m_ctx->flows.resize(kept); // (a deque: the started flows stay where they are)
    std::unordered_map<uint64_t, uint32_t> pairFlows; // (src, dst) -> flows so far
    for (std::size_t i = 0; i < kept; ++i)
    {
        const QueuePair& qp = m_ctx->flows[i];
        ++pairFlows[(static_cast<uint64_t>(qp.srcHost) << 32) | qp.dstHost];
    }
    m_ctx->flows.resize(kept + n);
    for (std::size_t i = 0; i < n; ++i)
    {
        QueuePair& qp = m_ctx->flows[kept + i];
        InitFlow(qp,
                 static_cast<uint32_t>(kept + i),
                 src[i],
                 dst[i],
                 sizeBytes[i],
                 startNs[i],
                 queue[i],
                 dstPort[i],
                 pairFlows);
        SetWindow(qp);
        if (!extraDelayNs.empty())
        {
            qp.extraDelayNs = extraDelayNs[i];
            qp.baseRttNs += extraDelayNs[i];
            qp.idealFctNs += static_cast<double>(extraDelayNs[i]);
        }
    }
    m_flowOrder.resize(kept + n);
    std::iota(m_flowOrder.begin() + kept, m_flowOrder.end(), static_cast<uint32_t>(kept));
    std::stable_sort(m_flowOrder.begin() + kept, m_flowOrder.end(), [&](uint32_t a, uint32_t b) {
        return startNs[a - kept] < startNs[b - kept];
    });
    ScheduleNextStart();
    return dropped;
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
