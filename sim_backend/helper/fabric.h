/*
 * ecngym fabric: builds a fabric from a node / link / flow description and drives it.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_FABRIC_H
#define ECNGYM_FABRIC_H

#include "attribute-reflection.h"

#include "../model/fabric-config.h"
#include "../model/path-facts.h"
#include "../model/rdma-host-node.h"
#include "../model/switch-node.h"

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace ns3
{
namespace ecngym
{

/**
 * @brief Rows of a telemetry block: one row per quantity, one column per port.
 *
 * Every entry is 64 bits; the rows of kind 'f' hold a double's bit pattern and those of kind 'i'
 * an int64_t (the Python side views the one block as uint64, int64 and float64, so one
 * allocation carries a whole interval). Row names are the keys of Fabric.read_telemetry().
 */
enum TelemetryRow : std::size_t
{
    kTelTxBytes,             //!< bytes put on the wire (all packet kinds)
    kTelTxDataBytes,         //!< wire bytes of data packets
    kTelTxDataPackets,       //!< data packets sent
    kTelTxControlPackets,    //!< ACK / NACK / CNP / PFC packets sent
    kTelEnqueuedDataPackets, //!< data packets that joined a data queue of the port
    kTelMeanQueueBytes,      //!< (f) time-average of data-queue bytes over the interval
    kTelMaxQueueBytes,       //!< largest data-queue occupancy in the interval
    kTelQueueBytes,          //!< data-queue bytes now
    kTelEcnMarked,           //!< data packets CE-marked
    kTelPfcPauseSent,        //!< PAUSE frames sent
    kTelPfcPauseReceived,    //!< PAUSE frames received
    kTelPausedNs,            //!< (i) time with a data priority paused
    kTelDrops,               //!< data packets dropped that were headed to the port
    kTelDistinctFlows,       //!< distinct flows whose data left through the port
    kTelUtilization,         //!< (f) tx bytes x 8 / (line rate x interval); 0 for an empty interval
    kTelemetryRows
};

/** @brief Name (the Python key) and kind ('u' uint64, 'i' int64, 'f' double) of a telemetry row. */
struct TelemetryRowInfo
{
    const char* name;
    char kind;
};

/** @brief The rows of a telemetry block, in TelemetryRow order. */
extern const TelemetryRowInfo kTelemetryRowInfo[kTelemetryRows];

/** @brief Per-port telemetry of one interval. */
struct TelemetrySnapshot
{
    int64_t intervalStartNs{0};
    int64_t intervalEndNs{0};
    /// kTelemetryRows x ports, row-major (see TelemetryRow)
    std::vector<uint64_t> block;
    /// per-policy telemetry: (name, one value per port; NaN where the port runs another policy)
    std::vector<std::pair<std::string, std::vector<double>>> aqm;
};

/** @brief Per-flow results (struct of arrays). */
struct FlowRecords
{
    std::vector<uint32_t> src, dst;
    std::vector<uint64_t> sizeBytes;
    std::vector<int64_t> startNs, finishNs;
    std::vector<double> idealFctNs;
    std::vector<int64_t> baseRttNs;
    std::vector<double> ccUtilisation;     //!< the congestion control's utilisation estimate (NaN: none)
    std::vector<uint64_t> deliveredBytes, retransmittedBytes;
    std::vector<uint8_t> finished;
    std::vector<double> rateBps;           //!< current pacing rate
    std::vector<uint64_t> inflightBytes;   //!< sent and not yet acknowledged
    std::vector<uint64_t> windowBytes;     //!< current window (0 = none)
    std::vector<int32_t> connection;       //!< persistent connection of its host pair (-1 = none)
    std::vector<double> ccAlpha;           //!< the congestion control's alpha (DCTCP; NaN: none)
    std::vector<int64_t> rtoNs;            //!< retransmission timeout now (the fixed one, or the
                                           //!< RFC 6298 estimate with TcpHostConfig::rtoEstimate)
};

/**
 * @brief One packet-level fabric on ns-3's simulator.
 *
 * ns-3's Simulator is a process-wide singleton, so at most one Fabric exists at a time; Destroy()
 * (or the destructor) tears it down with Simulator::Destroy(), after which a new Fabric can be
 * built in the same process.
 */
class Fabric
{
  public:
    /**
     * @brief Create an empty fabric.
     * @param cfg all parameters
     * @throws std::runtime_error if another Fabric is alive in this process
     */
    explicit Fabric(const FabricConfig& cfg);
    ~Fabric();
    Fabric(const Fabric&) = delete;
    Fabric& operator=(const Fabric&) = delete;

    /**
     * @brief Build nodes, links and shortest-path ECMP routes.
     * @param isSwitch one entry per node: 1 = switch, 0 = host (hosts are numbered in node order)
     * @param linkA first end of each link (node index)
     * @param linkB second end of each link
     * @param rateBps rate of each link
     * @param delayNs one-way delay of each link
     * @throws std::invalid_argument on a malformed topology (naming the link or node)
     */
    void Build(const std::vector<uint8_t>& isSwitch,
               const std::vector<uint32_t>& linkA,
               const std::vector<uint32_t>& linkB,
               const std::vector<double>& rateBps,
               const std::vector<int64_t>& delayNs);

    /**
     * @brief Set each node's id in the topology file it came from (call before Build).
     *
     * The HPCC model derives a host's IP from its node id, seeds each switch's ECMP hash with the
     * switch's node id and lists next hops in node-id order; files may number switches between
     * hosts, which our numbering (hosts first) does not. Default: node n has id n.
     * @param ids one distinct id per node (in our numbering)
     * @throws std::runtime_error if Build() was already called
     */
    void SetNodeIds(const std::vector<uint32_t>& ids);

    /**
     * @brief Load the flow table (flows start at their start time, in order).
     * @throws std::invalid_argument naming the first bad row
     */
    void SetFlows(const std::vector<uint32_t>& src,
                  const std::vector<uint32_t>& dst,
                  const std::vector<uint64_t>& sizeBytes,
                  const std::vector<int64_t>& startNs,
                  const std::vector<uint8_t>& queue,
                  const std::vector<uint16_t>& dstPort);

    /**
     * @brief Give flows an extra base delay (RTT variation): each flow's receiver sends its ACKs,
     *        NACKs and CNPs that much later; its base RTT and ideal FCT include it.
     * @param extraDelayNs one entry per flow, >= 0
     * @throws std::invalid_argument on a wrong length or a negative delay
     * @throws std::runtime_error if flows are not set or one has started
     */
    void SetFlowExtraDelay(const std::vector<int64_t>& extraDelayNs);

    /**
     * @brief Replace the flows that have not started yet: drop every one of them and add these.
     *
     * For a branch of a running episode that plays a forecast of the traffic instead of the
     * trace's own future. The flows started so far keep their ids and state; the dropped ones
     * leave the table (the flow records no longer show them); the new ones get the next ids in
     * the given order and each the per-flow set-up SetFlows gives (addresses, ECMP hash, path
     * facts, NIC window; extraDelayNs as SetFlowExtraDelay). Needs a flow table whose started
     * flows are its first rows (flows loaded in start order, as a Trace is), so that no started
     * flow's id changes.
     * @param src source host of each new flow
     * @param dst destination host of each
     * @param sizeBytes size of each (> 0)
     * @param startNs start time of each (>= NowNs())
     * @param queue priority of each (data queues 1 .. numQueues - 1)
     * @param dstPort destination port of each
     * @param extraDelayNs extra base delay of each (>= 0), or empty for none
     * @return the number of flows dropped
     * @throws std::invalid_argument naming the first bad row (flows[i]: the field)
     * @throws std::runtime_error before Build(), or if a started flow has a later row than a
     *         pending one
     */
    uint64_t ReplacePendingFlows(const std::vector<uint32_t>& src,
                                 const std::vector<uint32_t>& dst,
                                 const std::vector<uint64_t>& sizeBytes,
                                 const std::vector<int64_t>& startNs,
                                 const std::vector<uint8_t>& queue,
                                 const std::vector<uint16_t>& dstPort,
                                 const std::vector<int64_t>& extraDelayNs);

    /**
     * @brief Advance simulated time to `untilNs` (events at exactly untilNs are not run).
     * @param untilNs absolute simulation time in ns (>= Now())
     */
    void RunUntil(int64_t untilNs);

    /**
     * @brief Run until every flow has finished or `limitNs` is reached.
     * @param limitNs absolute time limit in ns
     * @return whether every flow finished
     */
    bool RunToCompletion(int64_t limitNs);

    /** @return current simulation time in ns */
    int64_t NowNs() const;

    /** @return telemetry of every port since the previous read, and start a new interval */
    TelemetrySnapshot ReadTelemetry();

    /**
     * @brief Set numeric attributes of one AQM policy type on switch ports, one row per port.
     *
     * The typed bulk form of SetAqm (per-step actuation: no attribute strings), with its
     * checks: each value against its attribute's checker (an unsigned integer must be whole, a
     * boolean 0 or 1: never rounded), then each port's merged setting against
     * PortAqmPolicy::CheckConsistency. All or nothing. A port already running the type keeps
     * its policy object and state; any other port gets a fresh instance with these values.
     * @param portIds fabric-wide port ids (must be switch ports)
     * @param typeName TypeId name, e.g. "ns3::ecngym::RedAqmPolicy"
     * @param names attribute names (unsigned-integer, real or boolean attributes)
     * @param values row-major portIds.size() x names.size() values
     * @throws std::invalid_argument naming the port row, attribute and value on any error
     */
    void SetAqmValues(const std::vector<uint32_t>& portIds,
                      const std::string& typeName,
                      const std::vector<std::string>& names,
                      const double* values);

    /**
     * @brief Read numeric attributes of one AQM policy type on switch ports (the reverse of
     * SetAqmValues; NaN in the rows of ports running another policy).
     * @param portIds fabric-wide port ids (must be switch ports)
     * @param typeName TypeId name
     * @param names attribute names (unsigned-integer, real or boolean attributes)
     * @param out row-major portIds.size() x names.size() values (unsigned integers above 2^53
     *            rounded to the nearest double)
     */
    void GetAqmValues(const std::vector<uint32_t>& portIds,
                      const std::string& typeName,
                      const std::vector<std::string>& names,
                      double* out) const;

    /**
     * @brief Install a port AQM policy, chosen by TypeId name, on switch ports, effective now.
     *
     * All or nothing: each value is checked against its checker, then the whole setting
     * against PortAqmPolicy::CheckConsistency, and a refusal changes no port. A port already
     * running this type keeps its policy object (and its state: flow counts, held ACKs) and
     * takes the new values in place, checked with its own other parameters (a refusal restores
     * the ports set so far); any other port gets a fresh policy, the setting checked on a
     * scratch instance with the defaults first.
     * @param portIds fabric-wide port ids (must be switch ports)
     * @param typeName TypeId name, e.g. "ns3::ecngym::PredFcsAqmPolicy"
     * @param names attribute names
     * @param values attribute values, serialised as ns-3 attribute strings
     * @throws std::invalid_argument naming the type, attribute and value on any error
     */
    void SetAqm(const std::vector<uint32_t>& portIds,
                const std::string& typeName,
                const std::vector<std::string>& names,
                const std::vector<std::string>& values);

    /**
     * @brief Read one port's AQM policy.
     * @param portId a switch port
     * @param names filled with its attribute names
     * @param values filled with their values (serialised)
     * @return its TypeId name
     */
    std::string GetAqm(uint32_t portId,
                       std::vector<std::string>& names,
                       std::vector<std::string>& values) const;

    /**
     * @brief Set PFC alpha and headroom of switches while running.
     * @param switchIds indices among switches
     */
    void SetPfc(const std::vector<uint32_t>& switchIds,
                const std::vector<double>& alpha,
                const std::vector<uint64_t>& headroomBytes);

    /**
     * @brief Set the PFC alpha and headroom of single switch ingress ports.
     * @param portIds fabric-wide port ids (must be switch ports)
     * @param alpha dynamic-threshold factor of each port (> 0)
     * @param headroomBytes headroom of each port (per priority)
     */
    void SetPortPfc(const std::vector<uint32_t>& portIds,
                    const std::vector<double>& alpha,
                    const std::vector<uint64_t>& headroomBytes);

    /** @brief Read back every port's PFC alpha and headroom (0 for host ports). */
    void GetPortPfc(std::vector<double>& alpha, std::vector<uint64_t>& headroomBytes) const;

    /** @return the flows' records */
    FlowRecords GetFlowRecords() const;

    /** @return the flows themselves, in flow-table order (read-only; FlowSlowdownTracker reads them) */
    const std::deque<QueuePair>& Flows() const
    {
        return m_ctx->flows;
    }

    /** @return cumulative counters */
    const FabricCounters& GetCounters() const
    {
        return m_ctx->counters;
    }

    /** @return simulator events executed so far */
    uint64_t GetEventCount() const;

    /** @return flows finished so far */
    uint64_t GetFlowsCompleted() const
    {
        return m_ctx->flowsCompleted;
    }

    /** @return packets allocated and not yet released (in queues or on links) */
    int64_t GetPacketsInFlight() const
    {
        return m_ctx->pool.GetLive();
    }

    /**
     * @brief Record (or stop recording) every PFC frame a port receives, from now.
     * @param on true: record; false: stop (what was recorded is kept)
     */
    void LogPfcEvents(bool on);

    /** @return the PFC frames recorded so far, in arrival order */
    const std::vector<FabricNetDevice::PfcEvent>& PfcEvents() const
    {
        return m_pfcLog;
    }

    // Port metadata, one entry per port.
    std::vector<uint32_t> PortNode() const;
    std::vector<uint32_t> PortPeerNode() const;
    std::vector<uint16_t> PortLocalIndex() const;
    std::vector<uint8_t> PortIsSwitch() const;
    std::vector<double> PortRateBps() const;
    std::vector<uint32_t> PortSwitchIndex() const; //!< index among switches, or UINT32_MAX

    /** @return the number of hosts */
    uint32_t NumHosts() const
    {
        return static_cast<uint32_t>(m_hosts.size());
    }

    /** @return the number of switches */
    uint32_t NumSwitches() const
    {
        return static_cast<uint32_t>(m_switches.size());
    }

    /** @brief Tear down the simulation (Simulator::Destroy); the object is unusable after. */
    void Destroy();

    /**
     * @brief Throw std::runtime_error if Destroy() was called. The Python bindings call it before
     *        every method (one guard, see fabric-module.cc), so no call can reach freed state.
     */
    void CheckAlive() const;

    /** @return whether Destroy() was called */
    bool IsDestroyed() const
    {
        return m_destroyed;
    }

  private:
    /** @brief Check cfg's birth AQM policy and set the factory every switch port's first one comes from. */
    void ConfigureAqmBirth();
    SwitchNode* SwitchOfPort(uint32_t portId, std::size_t i, const char* what) const;
    void ComputeRoutes();
    /**
     * @brief The routed path from one host to another: the first shortest one in port order,
     *        which is the first of the ECMP next hops at every switch (every one has the same
     *        hop count), and the one MaxBaseRttNs finds from the links alone.
     * @param srcHost the source host
     * @param dstHost the destination host (a path must join them)
     * @return its sums, hop by hop
     */
    PathSum RoutedPath(uint32_t srcHost, uint32_t dstHost) const;
    void ComputePathFacts(QueuePair& qp) const;
    void PairRttAndBdp(uint32_t srcHost, uint32_t dstHost, int64_t& rttNs, uint64_t& bdpBytes) const;
    void SetWindows();
    /** @brief Set one flow's NIC window and congestion-control base RTT (SetWindows' rule). */
    void SetWindow(QueuePair& qp);
    /**
     * @brief Check rows of a flow table (SetFlows' and ReplacePendingFlows' rules).
     * @throws std::invalid_argument naming the first bad row
     */
    void CheckFlowRows(const std::vector<uint32_t>& src,
                       const std::vector<uint32_t>& dst,
                       const std::vector<uint64_t>& sizeBytes,
                       const std::vector<int64_t>& startNs,
                       const std::vector<uint8_t>& queue,
                       const std::vector<uint16_t>& dstPort) const;
    /**
     * @brief Give a new flow its identity, addresses and path facts (not its window).
     * @param pairFlows (src, dst) -> flows of that pair so far (HPCC source ports), updated
     */
    void InitFlow(QueuePair& qp,
                  uint32_t flowId,
                  uint32_t src,
                  uint32_t dst,
                  uint64_t sizeBytes,
                  int64_t startNs,
                  uint8_t queue,
                  uint16_t dstPort,
                  std::unordered_map<uint64_t, uint32_t>& pairFlows) const;
    /** @brief Schedule StartDueFlows for the next pending flow, if any (from now). */
    void ScheduleNextStart();
    void StartDueFlows();

    /**
     * @brief One value per port (the Port* metadata columns).
     * @param of the value of port i
     * @return of(0), ..., of(ports - 1)
     */
    template <typename T, typename F>
    std::vector<T> PortColumn(F of) const
    {
        std::vector<T> v(m_ports.size());
        for (std::size_t i = 0; i < v.size(); ++i)
        {
            v[i] = of(i);
        }
        return v;
    }

    std::unique_ptr<FabricContext> m_ctx;
    std::vector<uint8_t> m_isSwitch;
    std::vector<uint32_t> m_nodeToHost;   //!< node -> host index (or UINT32_MAX)
    std::vector<uint32_t> m_nodeToSwitch; //!< node -> switch index (or UINT32_MAX)
    std::vector<uint32_t> m_hostNode;     //!< host index -> node
    std::vector<uint32_t> m_nodeId;       //!< node -> its id in the topology file (SetNodeIds)
    std::vector<FabricNetDevice::PfcEvent> m_pfcLog; //!< LogPfcEvents
    std::vector<Ptr<RdmaHostNode>> m_hosts;
    std::vector<Ptr<SwitchNode>> m_switches;
    std::vector<Ptr<FabricNetDevice>> m_ports; //!< by fabric-wide port id
    std::vector<uint32_t> m_portNode;
    std::vector<std::vector<uint32_t>> m_nodePorts; //!< node -> its port ids, local order
    std::vector<std::vector<uint32_t>> m_hopsToHost; //!< [host][node] = hops (BFS)
    std::vector<uint32_t> m_flowOrder;  //!< flows sorted by start time
    std::size_t m_nextFlow{0};
    EventId m_startEvent;               //!< the scheduled StartDueFlows
    bool m_windowBoundsSet{false};      //!< the global NIC window's bounds below are computed
    int64_t m_windowMaxRttNs{0};        //!< largest pair RTT (FabricConfig::windowGlobal)
    uint64_t m_windowMaxBdpBytes{0};    //!< largest pair BDP (FabricConfig::windowGlobal)
    int64_t m_intervalStartNs{0};
    bool m_built{false};
    bool m_destroyed{false};
};

/**
 * @brief Measure this machine's bare ns-3 event-loop rate: trivial self-rescheduling events on
 *        the given scheduler. The limit the fabric's speed is read against.
 * @param events number of events to run
 * @param schedulerTypeId the event scheduler (an ns-3 TypeId name, as FabricConfig's)
 * @return events per wall-clock second
 * @throws std::runtime_error if a Fabric is alive (the simulator is a process-wide singleton)
 * @throws std::invalid_argument if schedulerTypeId names no event scheduler
 */
double MeasureBareEventRate(uint64_t events, const std::string& schedulerTypeId);

/**
 * @brief Describe a port AQM policy type (its attributes and their checkers).
 * @param typeName TypeId name
 * @return one entry per attribute, own and inherited
 * @throws std::invalid_argument if the name is not a PortAqmPolicy type
 */
std::vector<AttributeDescription> DescribeAqmType(const std::string& typeName);

/**
 * @brief The telemetry a port AQM policy type declares (PortAqmPolicy::DescribeTelemetry).
 * @param typeName TypeId name
 * @return one entry per quantity, in ReadTelemetry's order
 * @throws std::invalid_argument if the name is not a PortAqmPolicy type
 */
std::vector<AqmTelemetryInfo> DescribeAqmTelemetry(const std::string& typeName);

/**
 * @brief The attributes an action tunes by default of a port AQM policy type
 *        (PortAqmPolicy::DescribeActionAttributes).
 * @param typeName TypeId name
 * @return attribute names (empty if the type declares none)
 * @throws std::invalid_argument if the name is not a PortAqmPolicy type
 * @throws std::logic_error if the type declares a name that is not one of its attributes
 */
std::vector<std::string> DescribeAqmActionAttributes(const std::string& typeName);

/**
 * @brief The attributes a port AQM policy type declares as its RED marking curve (Kmin, Kmax,
 *        Pmax; PortAqmPolicy::DescribeMarkingCurve).
 * @param typeName TypeId name
 * @return three attribute names, or none if the type declares no curve
 * @throws std::invalid_argument if the name is not a PortAqmPolicy type
 * @throws std::logic_error if the type declares a name that is not one of its attributes, or a
 *         number of names other than 0 or 3
 */
std::vector<std::string> DescribeAqmMarkingCurve(const std::string& typeName);

/**
 * @brief Check a full policy setting on a scratch instance (the check Fabric::SetAqm runs first).
 * @param typeName TypeId name
 * @param names attribute names
 * @param values attribute values (ns-3 attribute strings)
 * @return "" if every value is allowed and the policy's consistency rule holds, else the reason
 * @throws std::invalid_argument if the name is not a PortAqmPolicy type
 */
std::string CheckAqmSetting(const std::string& typeName,
                            const std::vector<std::string>& names,
                            const std::vector<std::string>& values);

} // namespace ecngym
} // namespace ns3

#endif
