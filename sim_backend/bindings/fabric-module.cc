/*
 * ecngym fabric: the Python module `ecngym.sim_backend._fabric` (nanobind).
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * A thin layer: arrays in, arrays out. Validation with user-facing messages and human units lives
 * in ecngym.sim_backend (Python); C++ re-checks invariants and raises ValueError / RuntimeError.
 */
#include "../helper/attribute-reflection.h"
#include "../helper/fabric.h"
#include "../helper/port-feature-kernel.h"
#include "../helper/scheduler-check.h"

#include "../model/fabric-parameters.h"
#include "../model/fabric-simulator-impl.h"
#include "../model/port-aqm-policy.h"
#include "../model/tcp-host-options.h"

#include "ns3/simulator-impl.h"
#include "ns3/simulator.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <stdexcept>
#include <vector>

namespace nb = nanobind;
using namespace nb::literals;
using namespace ns3::ecngym;

namespace
{

template <typename T>
using Array1 = nb::ndarray<nb::numpy, T, nb::ndim<1>>;

template <typename T>
using ArrayIn = nb::ndarray<const T, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

/** Move a vector into a NumPy array that owns it. */
template <typename T>
Array1<T>
ToNumpy(std::vector<T>&& v)
{
    auto* heap = new std::vector<T>(std::move(v));
    nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
    return Array1<T>(heap->data(), {heap->size()}, owner);
}

template <typename T>
std::vector<T>
FromNumpy(const ArrayIn<T>& a)
{
    return std::vector<T>(a.data(), a.data() + a.shape(0));
}

/**
 * Telemetry as (interval_start_ns, interval_end_ns, block, aqm): block is the kTelemetryRows x
 * ports uint64 array of TelemetryRow (one allocation; TELEMETRY_ROWS names its rows and their
 * kinds), aqm a dict of the per-policy arrays (empty when every port runs RED).
 */
nb::tuple
TelemetryToTuple(TelemetrySnapshot&& s)
{
    const std::size_t ports = s.block.size() / kTelemetryRows;
    auto* heap = new std::vector<uint64_t>(std::move(s.block));
    nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<uint64_t>*>(p); });
    nb::ndarray<nb::numpy, uint64_t, nb::ndim<2>, nb::c_contig> block(
        heap->data(), {static_cast<std::size_t>(kTelemetryRows), ports}, owner);
    nb::dict aqm;
    for (auto& [name, values] : s.aqm)
    {
        aqm[name.c_str()] = ToNumpy(std::move(values));
    }
    return nb::make_tuple(s.intervalStartNs, s.intervalEndNs, block, aqm);
}

template <typename T, std::size_t Dims>
using ArrayOut = nb::ndarray<T, nb::ndim<Dims>, nb::c_contig, nb::device::cpu>;

/** Raise ValueError unless array ``name`` has ``shape``. */
template <typename A>
void
CheckShape(const A& a, std::initializer_list<std::size_t> shape, const char* name)
{
    std::size_t d = 0;
    for (std::size_t want : shape)
    {
        if (a.shape(d++) != want)
        {
            throw nb::value_error((std::string("PortFeatureKernel.step: ") + name + " has the wrong shape").c_str());
        }
    }
}

/** One feature column as Python gives it: (op, row_a, kind_a, row_b, kind_b, scale, cap, scale_by_span). */
using ColumnTuple =
    std::tuple<PortFeatureKernel::ColumnOp, int32_t, std::string, int32_t, std::string, double, double, bool>;

char
KindOf(const std::string& kind)
{
    if (kind.size() != 1)
    {
        throw nb::value_error("PortFeatureKernel: a row's kind is one of 'u', 'i', 'f'");
    }
    return kind[0];
}

/** The attributes of a TypeId as a list of dicts: name, help, initial, checker. */
nb::list
Describe(const ns3::TypeId& tid)
{
    nb::list out;
    for (const AttributeDescription& a : DescribeAttributes(tid))
    {
        nb::dict d;
        d["name"] = a.name;
        d["help"] = a.help;
        d["initial"] = a.initial;
        d["checker"] = a.checker;
        out.append(d);
    }
    return out;
}

nb::dict
FlowsToDict(FlowRecords&& r)
{
    nb::dict d;
    d["src"] = ToNumpy(std::move(r.src));
    d["dst"] = ToNumpy(std::move(r.dst));
    d["size_bytes"] = ToNumpy(std::move(r.sizeBytes));
    d["start_ns"] = ToNumpy(std::move(r.startNs));
    d["finish_ns"] = ToNumpy(std::move(r.finishNs));
    d["ideal_fct_ns"] = ToNumpy(std::move(r.idealFctNs));
    d["base_rtt_ns"] = ToNumpy(std::move(r.baseRttNs));
    d["cc_utilisation"] = ToNumpy(std::move(r.ccUtilisation));
    d["delivered_bytes"] = ToNumpy(std::move(r.deliveredBytes));
    d["retransmitted_bytes"] = ToNumpy(std::move(r.retransmittedBytes));
    d["finished"] = ToNumpy(std::move(r.finished));
    d["rate_bps"] = ToNumpy(std::move(r.rateBps));
    d["inflight_bytes"] = ToNumpy(std::move(r.inflightBytes));
    d["window_bytes"] = ToNumpy(std::move(r.windowBytes));
    d["connection"] = ToNumpy(std::move(r.connection));
    d["rto_ns"] = ToNumpy(std::move(r.rtoNs));
    d["cc_alpha"] = ToNumpy(std::move(r.ccAlpha));
    return d;
}

/**
 * Registers the methods of the Python class ``Fabric`` so that each first calls
 * Fabric::CheckAlive(): the body of a method can never run on a destroyed fabric. It is the only
 * way methods are added (see NB_MODULE below), so a new method cannot forget the check.
 */
class FabricMethods
{
  public:
    explicit FabricMethods(nb::class_<Fabric>& cls)
        : m_cls(cls)
    {
    }

    /** Add method ``name``; ``body`` is a captureless function taking the fabric first. */
    template <typename R, typename Self, typename... Args, typename... Extra>
    FabricMethods& Def(const char* name, R (*body)(Self&, Args...), const Extra&... extra)
    {
        m_cls.def(name, Guarded(body), extra...);
        return *this;
    }

    /** Add read-only property ``name``. */
    template <typename R, typename Self>
    FabricMethods& Prop(const char* name, R (*getter)(Self&))
    {
        m_cls.def_prop_ro(name, Guarded(getter));
        return *this;
    }

  private:
    template <typename R, typename Self, typename... Args>
    static auto Guarded(R (*body)(Self&, Args...))
    {
        return [body](Self& f, Args... args) -> R {
            f.CheckAlive();
            return body(f, std::forward<Args>(args)...);
        };
    }

    nb::class_<Fabric>& m_cls;
};

} // namespace

NB_MODULE(_fabric, m)
{
    m.doc() = "ecngym's packet-level RoCEv2 / DCTCP fabric on ns-3 (low-level bindings; use "
              "ecngym.sim_backend.Fabric)";

    // the rows of read_telemetry()'s block: (key, kind) with kind 'u' uint64, 'i' int64, 'f' float64
    nb::list rows;
    for (const TelemetryRowInfo& r : kTelemetryRowInfo)
    {
        rows.append(nb::make_tuple(r.name, std::string(1, r.kind)));
    }
    m.attr("TELEMETRY_ROWS") = nb::tuple(rows);

    // the env's per-step arithmetic (ecngym.envs.step_kernel builds the program)
    nb::enum_<PortFeatureKernel::ColumnOp>(m, "ColumnOp")
        .value("KEEP", PortFeatureKernel::ColumnOp::Keep)
        .value("SCALE_MIN", PortFeatureKernel::ColumnOp::ScaleMin)
        .value("RATIO_MIN", PortFeatureKernel::ColumnOp::RatioMin)
        .value("SATURATE", PortFeatureKernel::ColumnOp::Saturate)
        .value("STEP_MAP", PortFeatureKernel::ColumnOp::StepMap);
    nb::enum_<PortFeatureKernel::RewardOp>(m, "RewardOp")
        .value("ZERO", PortFeatureKernel::RewardOp::Zero)
        .value("ACC", PortFeatureKernel::RewardOp::Acc)
        .value("PRED", PortFeatureKernel::RewardOp::Pred);
    nb::class_<PortFeatureKernel>(m, "PortFeatureKernel")
        .def(
            "__init__",
            [](PortFeatureKernel* self,
               const std::vector<ColumnTuple>& columns,
               const std::vector<double>& breakpoints,
               const std::vector<double>& levels,
               bool shared,
               std::size_t history) {
                std::vector<PortFeatureKernel::Column> cols;
                for (const auto& [op, rowA, kindA, rowB, kindB, scale, cap, bySpan] : columns)
                {
                    cols.push_back({op, rowA, KindOf(kindA), rowB, KindOf(kindB), scale, cap, bySpan});
                }
                new (self) PortFeatureKernel(std::move(cols), breakpoints, levels, shared, history);
            },
            "columns"_a, "breakpoints"_a, "levels"_a, "shared_breakpoints"_a, "history"_a)
        .def(
            "set_reward",
            [](PortFeatureKernel& k,
               PortFeatureKernel::RewardOp op,
               int32_t rowU,
               const std::string& kindU,
               int32_t rowQ,
               const std::string& kindQ,
               int32_t rowTx,
               const std::string& kindTx,
               double weight,
               double oneMinusWeight,
               double qMax,
               double qSpan,
               const std::vector<double>& goodput) {
                k.SetReward(op, rowU, KindOf(kindU), rowQ, KindOf(kindQ),
                            rowTx, KindOf(kindTx), weight, oneMinusWeight, qMax, qSpan, goodput);
            },
            "op"_a, "row_u"_a, "kind_u"_a, "row_q"_a, "kind_q"_a, "row_tx"_a, "kind_tx"_a, "weight"_a,
            "one_minus_weight"_a, "q_max"_a, "q_span"_a, "goodput_per_byte"_a)
        .def("set_stat_rows", &PortFeatureKernel::SetStatRows, "rows"_a)
        .def(
            "step",
            [](const PortFeatureKernel& k,
               nb::ndarray<const uint64_t, nb::ndim<2>, nb::c_contig, nb::device::cpu> block,
               ArrayIn<int64_t> ports,
               int64_t spanNs,
               double spanFraction,
               ArrayOut<double, 2> frame,
               ArrayOut<float, 3> hist,
               ArrayOut<double, 1> reward,
               ArrayOut<uint64_t, 2> stats) {
                const std::size_t n = ports.shape(0);
                CheckShape(frame, {n, k.GetColumns()}, "frame");
                CheckShape(hist, {n, k.GetHistory(), k.GetColumns()}, "hist");
                CheckShape(reward, {n}, "reward");
                CheckShape(stats, {k.GetStatRows(), n}, "stats");
                try
                {
                    k.Step(block.data(), block.shape(0), block.shape(1), ports.data(), n, spanNs, spanFraction,
                           frame.data(), hist.data(), reward.data(), stats.data());
                }
                catch (const std::exception& e)
                {
                    throw nb::value_error(e.what());
                }
            },
            "block"_a, "ports"_a, "span_ns"_a, "span_fraction"_a, "frame"_a, "hist"_a, "reward"_a, "stats"_a);

    nb::enum_<CcKind>(m, "CcKind")
        .value("DCQCN", CcKind::Dcqcn)
        .value("DCTCP", CcKind::Dctcp)
        .value("DCTCP_RATE", CcKind::DctcpRate)
        .value("TIMELY", CcKind::Timely)
        .value("HPCC", CcKind::Hpcc);
    nb::enum_<EcnFeedback>(m, "EcnFeedback")
        .value("CNP", EcnFeedback::Cnp)
        .value("ACK_ECHO", EcnFeedback::AckEcho);

    nb::enum_<EcmpHash>(m, "EcmpHash").value("SALTED", EcmpHash::Salted).value("HPCC", EcmpHash::Hpcc);

    nb::enum_<RttRounding>(m, "RttRounding", "Where a path's base RTT is rounded to whole ns (path-facts.h).")
        .value("PER_HOP_TRUNCATED", RttRounding::PerHopTruncated)
        .value("ROUNDED_ONCE", RttRounding::RoundedOnce)
        .value("RUNNING_HALF_EVEN", RttRounding::RunningHalfEven);
    m.def(
        "max_base_rtt_ns",
        [](uint32_t numHosts,
           ArrayIn<uint32_t> a,
           ArrayIn<uint32_t> b,
           ArrayIn<int64_t> delay,
           ArrayIn<double> rate,
           uint32_t mtuPayloadBytes,
           RttRounding rounding) {
            return MaxBaseRttNs(numHosts, FromNumpy(a), FromNumpy(b), FromNumpy(delay), FromNumpy(rate),
                                mtuPayloadBytes, rounding);
        },
        "num_hosts"_a, "link_a"_a, "link_b"_a, "delay_ns"_a, "rate_bps"_a, "mtu_payload_bytes"_a, "rounding"_a,
        "The largest base RTT (ns) between two hosts of a topology, from its links alone (no fabric): "
        "2 x propagation + one MTU payload's serialisation per hop on the routed path, rounded as "
        "`rounding` says; ValueError on link arrays of different lengths or a bad delay or rate.");

    nb::class_<TcpHostConfig>(m, "TcpHostConfig")
        .def(nb::init<>())
        .def_ro("slow_start", &TcpHostConfig::slowStart)
        .def_ro("initial_cwnd_packets", &TcpHostConfig::initialCwndPackets)
        .def_ro("ssthresh_bytes", &TcpHostConfig::ssthreshBytes)
        .def_ro("handshake", &TcpHostConfig::handshake)
        .def_ro("rto_estimate", &TcpHostConfig::rtoEstimate)
        .def_ro("min_rto_ns", &TcpHostConfig::minRtoNs)
        .def_ro("initial_rto_ns", &TcpHostConfig::initialRtoNs)
        .def_ro("max_rto_ns", &TcpHostConfig::maxRtoNs)
        .def_ro("delayed_ack", &TcpHostConfig::delayedAck)
        .def_ro("delayed_ack_timeout_ns", &TcpHostConfig::delayedAckTimeoutNs);

    m.def(
        "describe_tcp_host",
        []() {
            return Describe(TcpHostOptions::GetTypeId());
        },
        "The Linux-like options of the DCTCP host model (TcpHostOptions' attributes): name, help, "
        "initial value, checker range.");
    m.def(
        "make_tcp_host_config",
        [](const std::vector<std::string>& names, const std::vector<std::string>& values) {
            try
            {
                return MakeTcpHostConfig(names, values);
            }
            catch (const std::invalid_argument& e)
            {
                throw nb::value_error(e.what());
            }
        },
        "names"_a,
        "values"_a,
        "Build the options from TcpHostOptions attribute strings; ValueError naming the attribute "
        "if its checker or the options' consistency rule refuses them.");

    m.def("fabric_section_types",
          &FabricSectionTypes,
          "The TypeId names of the fabric's knob sections (FabricParameters: the NIC, each congestion "
          "control, the buffer), in registration order.");
    m.def(
        "describe_fabric_section",
        [](const std::string& typeName) {
            ns3::TypeId tid;
            if (!ns3::TypeId::LookupByNameFailSafe(typeName, &tid) ||
                !tid.IsChildOf(FabricParameters::GetTypeId()))
            {
                throw nb::value_error(("fabric: " + typeName + " is not a fabric section type").c_str());
            }
            return Describe(tid);
        },
        "type_name"_a,
        "The knobs of one fabric section: name, help, initial value, checker range.");
    m.def(
        "make_fabric_config",
        [](const std::vector<std::tuple<std::string, std::vector<std::string>, std::vector<std::string>>>& given) {
            std::vector<FabricSection> sections;
            for (const auto& [type, names, values] : given)
            {
                sections.push_back({type, names, values});
            }
            try
            {
                return MakeFabricConfig(sections);
            }
            catch (const std::invalid_argument& e)
            {
                throw nb::value_error(e.what());
            }
        },
        "sections"_a,
        "Build a FabricConfig from (section TypeId name, attribute names, attribute strings); "
        "ValueError naming the attribute whose checker refuses its value. The fields of no section "
        "(cc, seed, ECN ...) keep their defaults: set them on the result.");

    nb::class_<FabricConfig>(m, "FabricConfig")
        .def(nb::init<>())
        .def_rw("seed", &FabricConfig::seed)
        .def_rw("num_queues", &FabricConfig::numQueues)
        .def_rw("ecn_feedback", &FabricConfig::ecnFeedback)
        .def_rw("hpcc_nic_wake", &FabricConfig::hpccNicWake)
        .def_rw("ack_in_flow_queue", &FabricConfig::ackInFlowQueue)
        .def_rw("ecmp_hash", &FabricConfig::ecmpHash)
        .def_rw("truncate_tx_time", &FabricConfig::truncateTxTime)
        .def_rw("cc", &FabricConfig::cc)
        .def_prop_rw(
            "tcp_host",
            [](const FabricConfig& c) { return c.dctcp.tcp; },
            [](FabricConfig& c, const TcpHostConfig& t) { c.dctcp.tcp = t; })
        .def_ro("mtu_payload_bytes", &FabricConfig::mtuPayloadBytes)
        .def_rw("nic_window", &FabricConfig::nicWindow)
        .def_rw("var_window", &FabricConfig::varWindow)
        .def_rw("window_global", &FabricConfig::windowGlobal)
        .def_rw("aqm_type_id", &FabricConfig::aqmTypeId)
        .def_rw("aqm_attribute_names", &FabricConfig::aqmAttributeNames)
        .def_rw("aqm_attribute_values", &FabricConfig::aqmAttributeValues)
        .def_rw("scheduler_type_id", &FabricConfig::schedulerTypeId);

    m.def("bare_event_loop_rate",
          &MeasureBareEventRate,
          "events"_a,
          "scheduler_type_id"_a = FabricConfig{}.schedulerTypeId,
          "Events per second of a bare ns-3 event loop (self-rescheduling no-op events) on the "
          "given event scheduler (an ns-3 TypeId name).",
          nb::call_guard<nb::gil_scoped_release>());

    m.attr("TIMING_WHEEL_LOOKAHEAD_MIN_EVENTS") = TimingWheelScheduler::kDefaultLookaheadMinEvents;
    m.def("check_scheduler_against_stock",
          &CheckSchedulerAgainstStock,
          "scheduler_type_id"_a,
          "horizon_bits"_a,
          "operations"_a,
          "seed"_a,
          "lookahead_min_events"_a = 0,
          "scrambled_uids"_a = false,
          "Drive the scheduler and ns-3's PriorityQueueScheduler with one random call sequence and "
          "compare every answer; returns the events removed in order, raises RuntimeError on the "
          "first difference. lookahead_min_events > 0: the timing wheel's LookaheadMinEvents, its "
          "removals through RemoveNextAhead and the event it reports ahead checked too; scrambled_uids: "
          "unique uids in no particular order instead of increasing ones.",
          nb::call_guard<nb::gil_scoped_release>());

    m.def(
        "describe_aqm",
        [](const std::string& typeName) {
            nb::list out;
            for (const AqmAttributeInfo& a : DescribeAqmType(typeName))
            {
                nb::dict d;
                d["name"] = a.name;
                d["help"] = a.help;
                d["initial"] = a.initial;
                d["checker"] = a.checker;
                out.append(d);
            }
            return out;
        },
        "type_name"_a,
        "The attributes of a port AQM policy type: name, help, initial value, checker range.");

    m.def(
        "aqm_types",
        []() {
            nb::list out;
            const ns3::TypeId base = PortAqmPolicy::GetTypeId();
            for (uint16_t i = 0; i < ns3::TypeId::GetRegisteredN(); ++i)
            {
                const ns3::TypeId tid = ns3::TypeId::GetRegistered(i);
                if (tid != base && tid.IsChildOf(base) && tid.HasConstructor())
                {
                    out.append(tid.GetName());
                }
            }
            return out;
        },
        "The TypeId names of every port AQM policy compiled in (the constructible children of "
        "PortAqmPolicy), in registration order.");

    m.def(
        "aqm_telemetry",
        [](const std::string& typeName) {
            nb::list out;
            for (const AqmTelemetryInfo& t : DescribeAqmTelemetry(typeName))
            {
                nb::dict d;
                d["name"] = t.name;
                d["unit"] = t.unit;
                d["normaliser"] = t.normaliser;
                d["help"] = t.help;
                out.append(d);
            }
            return out;
        },
        "type_name"_a,
        "The per-interval telemetry a port AQM policy type declares: name, unit, normaliser, help.");

    m.def("check_aqm",
          &CheckAqmSetting,
          "type_name"_a,
          "names"_a,
          "values"_a,
          "Check a port AQM policy setting on a scratch instance: \"\" if good, else the reason.");

    // Every method and property of Fabric is registered through FabricMethods, whose Def() /
    // Prop() run Fabric::CheckAlive() first: a call after destroy() is a clear RuntimeError,
    // never a read of freed state. Only destroy() itself (idempotent) bypasses it.
    nb::class_<Fabric> fabric(m, "Fabric");
    fabric.def(nb::init<const FabricConfig&>(), "config"_a)
        .def("destroy", &Fabric::Destroy)
        .def_prop_ro("alive", [](const Fabric& f) { return !f.IsDestroyed(); });
    FabricMethods(fabric)
        .Def(
            "build",
            +[](Fabric& f,
               ArrayIn<uint8_t> isSwitch,
               ArrayIn<uint32_t> a,
               ArrayIn<uint32_t> b,
               ArrayIn<double> rate,
               ArrayIn<int64_t> delay) {
                f.Build(FromNumpy(isSwitch), FromNumpy(a), FromNumpy(b), FromNumpy(rate),
                        FromNumpy(delay));
            },
            "is_switch"_a, "link_a"_a, "link_b"_a, "rate_bps"_a, "delay_ns"_a)
        .Def("log_pfc_events", +[](Fabric& f, bool on) { f.LogPfcEvents(on); }, "on"_a)
        .Def("pfc_events",
             +[](Fabric& f) {
                 const auto& log = f.PfcEvents();
                 std::vector<int64_t> t(log.size());
                 std::vector<uint32_t> port(log.size());
                 std::vector<uint8_t> pause(log.size());
                 for (std::size_t i = 0; i < log.size(); ++i)
                 {
                     t[i] = log[i].timeNs;
                     port[i] = log[i].portId;
                     pause[i] = log[i].pause;
                 }
                 nb::dict d;
                 d["time_ns"] = ToNumpy(std::move(t));
                 d["port"] = ToNumpy(std::move(port));
                 d["pause"] = ToNumpy(std::move(pause));
                 return d;
             })
        .Def(
            "set_node_ids",
            +[](Fabric& f, ArrayIn<uint32_t> ids) { f.SetNodeIds(FromNumpy(ids)); },
            "node_ids"_a)
        .Def(
            "set_flows",
            +[](Fabric& f,
               ArrayIn<uint32_t> src,
               ArrayIn<uint32_t> dst,
               ArrayIn<uint64_t> size,
               ArrayIn<int64_t> start,
               ArrayIn<uint8_t> queue,
               ArrayIn<uint16_t> dport) {
                f.SetFlows(FromNumpy(src), FromNumpy(dst), FromNumpy(size), FromNumpy(start),
                           FromNumpy(queue), FromNumpy(dport));
            },
            "src"_a, "dst"_a, "size_bytes"_a, "start_ns"_a, "priority"_a, "dport"_a)
        .Def("set_flow_extra_delay",
             +[](Fabric& f, ArrayIn<int64_t> extra) { f.SetFlowExtraDelay(FromNumpy(extra)); },
             "extra_delay_ns"_a)
        .Def("run_until", +[](Fabric& f, int64_t untilNs) { f.RunUntil(untilNs); }, "until_ns"_a,
             nb::call_guard<nb::gil_scoped_release>())
        .Def("run_to_completion",
             +[](Fabric& f, int64_t limitNs) { return f.RunToCompletion(limitNs); }, "limit_ns"_a,
             nb::call_guard<nb::gil_scoped_release>())
        .Prop("now_ns", +[](const Fabric& f) { return f.NowNs(); })
        .Def("read_telemetry", +[](Fabric& f) { return TelemetryToTuple(f.ReadTelemetry()); })
        .Def(
            "set_aqm_values",
            +[](Fabric& f,
               ArrayIn<uint32_t> ports,
               const std::string& typeName,
               const std::vector<std::string>& names,
               nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu> values) {
                if (values.shape(0) != ports.shape(0) || values.shape(1) != names.size())
                {
                    throw std::invalid_argument(
                        "set_aqm_values: values must have one row per port and one column per name");
                }
                f.SetAqmValues(FromNumpy(ports), typeName, names, values.data());
            },
            "port_ids"_a, "type_name"_a, "names"_a, "values"_a,
            "Set numeric attributes of one AQM policy type, one row of values per port (all or "
            "nothing; ports running another policy get a fresh instance).")
        .Def("get_aqm_values",
             +[](const Fabric& f,
                 ArrayIn<uint32_t> ports,
                 const std::string& typeName,
                 const std::vector<std::string>& names) {
                 auto* heap = new std::vector<double>(ports.shape(0) * names.size());
                 nb::capsule owner(heap, [](void* p) noexcept {
                     delete static_cast<std::vector<double>*>(p);
                 });
                 f.GetAqmValues(FromNumpy(ports), typeName, names, heap->data());
                 return nb::ndarray<nb::numpy, double, nb::ndim<2>, nb::c_contig>(
                     heap->data(), {ports.shape(0), names.size()}, owner);
             },
             "port_ids"_a, "type_name"_a, "names"_a,
             "Numeric attributes of one AQM policy type per port (NaN where a port runs another).")
        .Def("set_aqm",
             +[](Fabric& f,
                 const std::vector<uint32_t>& ports,
                 const std::string& typeName,
                 const std::vector<std::string>& names,
                 const std::vector<std::string>& values) {
                 f.SetAqm(ports, typeName, names, values);
             },
             "port_ids"_a, "type_name"_a, "names"_a, "values"_a)
        .Def("get_aqm",
             +[](const Fabric& f, uint32_t port) {
                 std::vector<std::string> names, values;
                 std::string type = f.GetAqm(port, names, values);
                 nb::dict attrs;
                 for (std::size_t k = 0; k < names.size(); ++k)
                 {
                     attrs[names[k].c_str()] = values[k];
                 }
                 return nb::make_tuple(type, attrs);
             },
             "port_id"_a)
        .Def(
            "set_pfc",
            +[](Fabric& f, ArrayIn<uint32_t> sw, ArrayIn<double> alpha, ArrayIn<uint64_t> hdrm) {
                f.SetPfc(FromNumpy(sw), FromNumpy(alpha), FromNumpy(hdrm));
            },
            "switch_ids"_a, "alpha"_a, "headroom_bytes"_a)
        .Def(
            "set_port_pfc",
            +[](Fabric& f, ArrayIn<uint32_t> ports, ArrayIn<double> alpha, ArrayIn<uint64_t> hdrm) {
                f.SetPortPfc(FromNumpy(ports), FromNumpy(alpha), FromNumpy(hdrm));
            },
            "port_ids"_a, "alpha"_a, "headroom_bytes"_a)
        .Def("get_port_pfc",
             +[](const Fabric& f) {
                 std::vector<double> alpha;
                 std::vector<uint64_t> hdrm;
                 f.GetPortPfc(alpha, hdrm);
                 nb::dict d;
                 d["alpha"] = ToNumpy(std::move(alpha));
                 d["headroom_bytes"] = ToNumpy(std::move(hdrm));
                 return d;
             })
        .Def("flow_records", +[](const Fabric& f) { return FlowsToDict(f.GetFlowRecords()); })
        .Def("counters",
             +[](const Fabric& f) {
                 const FabricCounters& c = f.GetCounters();
                 nb::dict d;
                 d["data_packet_hops"] = c.dataPacketHops;
                 d["control_packet_hops"] = c.controlPacketHops;
                 d["drops"] = c.drops;
                 d["retransmitted_bytes"] = c.retransmittedBytes;
                 d["retransmit_timeouts"] = c.retransmitTimeouts;
                 d["events"] = f.GetEventCount();
                 d["flows_completed"] = f.GetFlowsCompleted();
                 d["packets_in_flight"] = f.GetPacketsInFlight();
                 return d;
             })
        .Def("port_info",
             +[](const Fabric& f) {
                 nb::dict d;
                 d["node"] = ToNumpy(f.PortNode());
                 d["peer_node"] = ToNumpy(f.PortPeerNode());
                 d["local_index"] = ToNumpy(f.PortLocalIndex());
                 d["is_switch"] = ToNumpy(f.PortIsSwitch());
                 d["rate_bps"] = ToNumpy(f.PortRateBps());
                 d["switch_index"] = ToNumpy(f.PortSwitchIndex());
                 return d;
             })
        .Def("event_list",
             +[](const Fabric& f) {
                 // what the event list holds now (FabricSimulatorImpl only; {} on stock ns-3)
                 nb::dict d;
                 const FabricSimulatorImpl* sim = FabricSimulatorImpl::Active();
                 if (sim != nullptr)
                 {
                     d["pending_events"] = sim->GetPendingEventCount();
                     if (const TimingWheelScheduler* wheel = sim->GetWheel())
                     {
                         d["wheel_events"] = wheel->GetWheelEventCount();
                         d["far_events"] = wheel->GetFarEventCount();
                         d["far_cancelled_events"] = wheel->CountCancelledFarEvents();
                     }
                 }
                 return d;
             })
        .Prop("simulator_impl",
              +[](const Fabric& f) {
                  // the ns-3 simulator core running this fabric (FabricSimulatorImpl with the timing
                  // wheel, DefaultSimulatorImpl with a stock scheduler)
                  return ns3::Simulator::GetImplementation()->GetInstanceTypeId().GetName();
              })
        .Prop("num_hosts", +[](const Fabric& f) { return f.NumHosts(); })
        .Prop("num_switches", +[](const Fabric& f) { return f.NumSwitches(); });
}
