/*
 * ecngym fabric: the Python module `ecngym.sim_backend._fabric` (nanobind).
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * A thin layer: arrays in, arrays out. Validation with user-facing messages and human units lives
 * in ecngym.sim_backend (Python); C++ re-checks invariants and raises ValueError / RuntimeError.
 */
#include "../helper/attribute-reflection.h"
#include "../helper/fabric.h"
#include "../helper/flow-slowdown-tracker.h"
#include "../../envs/kernel/port-feature-kernel.h"
#include "../helper/scheduler-check.h"

#include "../model/fabric-parameters.h"
#include "../model/fabric-simulator-impl.h"
#include "../model/port-aqm-policy.h"
#include "../model/tcp-host-options.h"

#include "numpy-conversions.h"

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
using namespace ns3::ecngym::numpy;

namespace
{

/**
 * Telemetry as (interval_start_ns, interval_end_ns, block, aqm): block is the kTelemetryRows x
 * ports uint64 array of TelemetryRow (one allocation; TELEMETRY_ROWS names its rows and their
 * kinds), aqm a dict of the per-policy arrays (empty when every port runs RED).
 */
nb::tuple
TelemetryToTuple(TelemetrySnapshot&& s)
{
    const std::size_t ports = s.block.size() / kTelemetryRows;
    auto block = ToNumpy(std::move(s.block), static_cast<std::size_t>(kTelemetryRows), ports);
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
            throw nb::value_error((std::string("PortFeatureKernel: ") + name + " has the wrong shape").c_str());
        }
    }
}

char
KindOf(const std::string& kind)
{
    if (kind.size() != 1)
    {
        throw nb::value_error("PortFeatureKernel: an operand's kind is one character ('u', 'i', 'f', 'p' or 's')");
    }
    return kind[0];
}

/** The per-policy arrays a kernel program reads, as the kernel takes them (each one per port of the block). */
std::vector<const double*>
PolicyArrays(const std::vector<ArrayIn<double>>& arrays, std::size_t totalPorts)
{
    std::vector<const double*> out;
    for (const auto& a : arrays)
    {
        if (a.shape(0) != totalPorts)
        {
            throw nb::value_error("PortFeatureKernel: a per-policy array needs one value per port of the block");
        }
        out.push_back(a.data());
    }
    return out;
}

/** The block and the per-policy arrays as the kernel reads them (the arrays' pointers kept in \p keep). */
PortFeatureKernel::Telemetry
KernelTelemetry(const nb::ndarray<const uint64_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>& block,
                const std::vector<ArrayIn<double>>& policy,
                std::vector<const double*>& keep)
{
    keep = PolicyArrays(policy, block.shape(1));
    return {block.data(), block.shape(0), block.shape(1), keep.data(), keep.size()};
}

/** Run a kernel call, its exceptions as ValueError. */
template <typename F>
void
KernelCall(F&& call)
{
    try
    {
        call();
    }
    catch (const std::exception& e)
    {
        throw nb::value_error(e.what());
    }
}

/** Attributes (DescribeAttributes) as a list of dicts: name, help, initial, checker. */
nb::list
Describe(const std::vector<AttributeDescription>& attributes)
{
    nb::list out;
    for (const AttributeDescription& a : attributes)
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
    // the devices' queue count (fabric.num_queues' upper bound): read by Python, never copied there
    m.attr("MAX_QUEUES") = static_cast<int>(kMaxQueues);

    // the env's per-step arithmetic, its features' and rewards' one definition
    // (ecngym.envs.observation and ecngym.envs.reward compile the program, ecngym.envs.step_kernel runs it)
    using Kernel = PortFeatureKernel;
    using Block = nb::ndarray<const uint64_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
    nb::enum_<Kernel::ColumnOp>(m, "ColumnOp")
        .value("SCALE_MIN", Kernel::ColumnOp::ScaleMin)
        .value("DIV_MIN", Kernel::ColumnOp::DivMin)
        .value("RATIO_MIN", Kernel::ColumnOp::RatioMin)
        .value("SATURATE", Kernel::ColumnOp::Saturate)
        .value("STEP_MAP", Kernel::ColumnOp::StepMap)
        .value("COPY", Kernel::ColumnOp::Copy)
        .value("UNIT", Kernel::ColumnOp::Unit)
        .value("ZERO", Kernel::ColumnOp::Zero);
    nb::enum_<Kernel::RewardOp>(m, "RewardOp")
        .value("ZERO", Kernel::RewardOp::Zero)
        .value("ACC", Kernel::RewardOp::Acc)
        .value("PRED", Kernel::RewardOp::Pred);
    nb::class_<Kernel::Column>(m, "FeatureColumn",
                               "One feature column of a PortFeatureKernel program (port-feature-kernel.h: "
                               "PortFeatureKernel::Column).")
        .def(
            "__init__",
            [](Kernel::Column* self,
               Kernel::ColumnOp op,
               int32_t rowA,
               const std::string& kindA,
               int32_t rowB,
               const std::string& kindB,
               double scale,
               double cap,
               double offset,
               bool scaleBySpan,
               bool finiteA,
               std::vector<double> portScale) {
                new (self) Kernel::Column{op, rowA, KindOf(kindA), rowB, KindOf(kindB), scale, cap, offset,
                                          scaleBySpan, finiteA, std::move(portScale)};
            },
            "op"_a, "row_a"_a = 0, "kind_a"_a = "f", "row_b"_a = 0, "kind_b"_a = "f", "scale"_a = 1.0,
            "cap"_a = 1.0, "offset"_a = 0.0, "scale_by_span"_a = false, "finite_a"_a = false,
            "port_scale"_a = std::vector<double>{})
        .def_prop_ro("op", [](const Kernel::Column& c) { return c.op; })
        .def_prop_ro("operand_a", [](const Kernel::Column& c) { return nb::make_tuple(c.rowA, std::string(1, c.kindA)); })
        .def_prop_ro("operand_b", [](const Kernel::Column& c) { return nb::make_tuple(c.rowB, std::string(1, c.kindB)); });
    nb::class_<FlowSlowdownTracker>(m, "FlowSlowdownTracker",
                                    "Running sums of one fabric's flow slowdowns (flow-slowdown-tracker.h); made "
                                    "by Fabric.flow_slowdown_tracker, read by Fabric.flow_slowdowns.");
    nb::class_<Kernel>(m, "PortFeatureKernel")
        .def(nb::init<std::vector<Kernel::Column>, std::vector<double>, std::vector<double>, bool, std::size_t>(),
             "columns"_a, "breakpoints"_a, "levels"_a, "shared_breakpoints"_a, "history"_a)
        .def(
            "set_reward",
            [](Kernel& k,
               Kernel::RewardOp op,
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
        .def("set_stat_rows", &Kernel::SetStatRows, "rows"_a)
        .def(
            "set_setting",
            [](Kernel& k, nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu> values) {
                const double* v = values.data();
                KernelCall([&] {
                    k.SetSetting(std::vector<double>(v, v + values.shape(0) * values.shape(1)), values.shape(1));
                });
            },
            "values"_a, "The controlled ports' current setting, (ports, columns) float64: what 's' operands read.")
        .def(
            "step",
            [](const Kernel& k,
               Block block,
               const std::vector<ArrayIn<double>>& policy,
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
                std::vector<const double*> keep;
                const Kernel::Telemetry t = KernelTelemetry(block, policy, keep);
                KernelCall([&] {
                    k.Step(t, ports.data(), n, spanNs, spanFraction, frame.data(), hist.data(), reward.data(),
                           stats.data());
                });
            },
            "block"_a, "policy"_a, "ports"_a, "span_ns"_a, "span_fraction"_a, "frame"_a, "hist"_a, "reward"_a,
            "stats"_a)
        .def(
            "reset",
            [](const Kernel& k,
               Block block,
               const std::vector<ArrayIn<double>>& policy,
               ArrayIn<int64_t> ports,
               ArrayOut<double, 2> frame,
               ArrayOut<float, 3> hist) {
                const std::size_t n = ports.shape(0);
                CheckShape(frame, {n, k.GetColumns()}, "frame");
                CheckShape(hist, {n, k.GetHistory(), k.GetColumns()}, "hist");
                std::vector<const double*> keep;
                const Kernel::Telemetry t = KernelTelemetry(block, policy, keep);
                KernelCall([&] { k.Reset(t, ports.data(), n, frame.data(), hist.data()); });
            },
            "block"_a, "policy"_a, "ports"_a, "frame"_a, "hist"_a)
        .def(
            "reward",
            [](const Kernel& k, Block block, ArrayIn<int64_t> ports, double spanFraction, ArrayOut<double, 1> reward) {
                const std::size_t n = ports.shape(0);
                CheckShape(reward, {n}, "reward");
                const Kernel::Telemetry t{block.data(), block.shape(0), block.shape(1), nullptr, 0};
                KernelCall([&] { k.Reward(t, ports.data(), n, spanFraction, reward.data()); });
            },
            "block"_a, "ports"_a, "span_fraction"_a, "reward"_a);
    m.def(
        "pred_phi",
        [](ArrayIn<double> queue, double qLeft, double qMax) {
            std::vector<double> out(queue.shape(0));
            const double span = qMax - qLeft;
            for (std::size_t i = 0; i < out.size(); ++i)
            {
                out[i] = Kernel::PredPhi(queue.data()[i], qMax, span);
            }
            return ToNumpy(std::move(out));
        },
        "queue_bytes"_a, "q_left_bytes"_a, "q_max_bytes"_a,
        "PRED's queue term Phi (PRED Sec. IV-B): 1 up to q_left, linear down to 0 at q_max (the pred reward's).");

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
        .def_ro("delayed_ack_timeout_ns", &TcpHostConfig::delayedAckTimeoutNs)
        .def_ro("cwnd_limited_growth", &TcpHostConfig::cwndLimitedGrowth);

    m.def(
        "describe_tcp_host",
        []() {
            return Describe(DescribeAttributes(TcpHostOptions::GetTypeId()));
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
            return Describe(DescribeAttributes(tid));
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
        "(seed, queues, the first AQM policy ...) keep their defaults: set them on the result.");

    nb::class_<FabricConfig>(m, "FabricConfig")
        .def(nb::init<>())
        .def_rw("seed", &FabricConfig::seed)
        .def_rw("num_queues", &FabricConfig::numQueues)
        .def_prop_rw(
            "tcp_host",
            [](const FabricConfig& c) { return c.dctcp.tcp; },
            [](FabricConfig& c, const TcpHostConfig& t) { c.dctcp.tcp = t; })
        .def_ro("mtu_payload_bytes", &FabricConfig::mtuPayloadBytes)
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
        [](const std::string& typeName) { return Describe(DescribeAqmType(typeName)); },
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

    m.def("aqm_action_attributes",
          &DescribeAqmActionAttributes,
          "type_name"_a,
          "The attributes an env's action tunes by default, as a port AQM policy type declares them "
          "(empty: an action names its own).");

    m.def("aqm_marking_curve",
          &DescribeAqmMarkingCurve,
          "type_name"_a,
          "The attributes that are a port AQM policy type's RED marking curve, (Kmin, Kmax, Pmax), "
          "as it declares them (empty: it has none).");

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
        .Def(
            "replace_pending_flows",
            +[](Fabric& f,
               ArrayIn<uint32_t> src,
               ArrayIn<uint32_t> dst,
               ArrayIn<uint64_t> size,
               ArrayIn<int64_t> start,
               ArrayIn<uint8_t> queue,
               ArrayIn<uint16_t> dport,
               ArrayIn<int64_t> extra) {
                return f.ReplacePendingFlows(FromNumpy(src), FromNumpy(dst), FromNumpy(size),
                                             FromNumpy(start), FromNumpy(queue), FromNumpy(dport),
                                             FromNumpy(extra));
            },
            "src"_a, "dst"_a, "size_bytes"_a, "start_ns"_a, "priority"_a, "dport"_a,
            "extra_delay_ns"_a)
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
                 std::vector<double> values(ports.shape(0) * names.size());
                 f.GetAqmValues(FromNumpy(ports), typeName, names, values.data());
                 return ToNumpy(std::move(values), ports.shape(0), names.size());
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
        .Def(
            "flow_slowdown_tracker",
            +[](const Fabric& f, uint64_t minSize, uint64_t maxSize) {
                return FlowSlowdownTracker(f.Flows(), minSize, maxSize);
            },
            "min_size_bytes"_a, "max_size_bytes"_a,
            "A FlowSlowdownTracker of this fabric's flows with min_size_bytes <= size < max_size_bytes.")
        .Def(
            "flow_slowdowns",
            +[](const Fabric& f, FlowSlowdownTracker& tracker) {
                const FlowSlowdownTracker::Totals t = tracker.Update(f.Flows(), f.NowNs());
                return nb::make_tuple(t.finishedSum, t.finished, t.runningSum, t.running);
            },
            "tracker"_a,
            "(finished_sum, finished, running_sum, running): the tracked flows' slowdowns now "
            "(flow-slowdown-tracker.h).")
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
