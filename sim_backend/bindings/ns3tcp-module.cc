/*
 * ecngym: the Python module `ecngym.sim_backend._ns3tcp` (nanobind), a reference run on ns-3's
 * own TCP/IP stack (ns3-tcp-reference.h). Arrays in, a dict of arrays out; Python checks the
 * inputs with named fields (ecngym.sim_backend.ns3_tcp), C++ re-checks and raises ValueError.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "../helper/ns3-tcp-reference.h"

#include "numpy-conversions.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <vector>

namespace nb = nanobind;
using namespace nb::literals;
using namespace ns3::ecngym;
using namespace ns3::ecngym::numpy;

namespace
{

nb::dict
Run(const ArrayIn<uint8_t>& isSwitch,
    const ArrayIn<uint32_t>& linkA,
    const ArrayIn<uint32_t>& linkB,
    const ArrayIn<double>& rateBps,
    const ArrayIn<int64_t>& delayNs,
    const ArrayIn<uint32_t>& src,
    const ArrayIn<uint32_t>& dst,
    const ArrayIn<uint64_t>& sizeBytes,
    const ArrayIn<int64_t>& startNs,
    const TcpReferenceSettings& settings)
{
    TcpReferenceResult r;
    {
        std::vector<uint8_t> sw = FromNumpy(isSwitch);
        std::vector<uint32_t> a = FromNumpy(linkA), b = FromNumpy(linkB), s = FromNumpy(src), d = FromNumpy(dst);
        std::vector<double> rate = FromNumpy(rateBps);
        std::vector<int64_t> delay = FromNumpy(delayNs), start = FromNumpy(startNs);
        std::vector<uint64_t> size = FromNumpy(sizeBytes);
        nb::gil_scoped_release release;
        r = RunTcpReference(sw, a, b, rate, delay, s, d, size, start, settings);
    }
    nb::dict out;
    out["finish_ns"] = ToNumpy(std::move(r.finishNs));
    out["established_ns"] = ToNumpy(std::move(r.establishedNs));
    out["rto_count"] = ToNumpy(std::move(r.rtoCount));
    out["fast_recovery_count"] = ToNumpy(std::move(r.fastRecoveryCount));
    out["min_cwnd_bytes"] = ToNumpy(std::move(r.minCwndBytes));
    out["port_node"] = ToNumpy(std::move(r.portNode));
    out["port_peer"] = ToNumpy(std::move(r.portPeer));
    out["peak_queue_bytes"] = ToNumpy(std::move(r.peakQueueBytes));
    out["mean_queue_bytes"] = ToNumpy(std::move(r.meanQueueBytes));
    out["marked_packets"] = ToNumpy(std::move(r.markedPackets));
    out["dropped_packets"] = ToNumpy(std::move(r.droppedPackets));
    out["tx_bytes"] = ToNumpy(std::move(r.txBytes));
    out["window_start_ns"] = r.windowStartNs;
    out["end_ns"] = r.endNs;
    out["events"] = r.events;
    out["packet_hops"] = r.packetHops;
    return out;
}

} // namespace

NB_MODULE(_ns3tcp, m)
{
    m.doc() = "A reference run on ns-3's own TCP/IP stack (TcpDctcp, RedQueueDisc); use "
              "ecngym.sim_backend.ns3_tcp";
    nb::class_<TcpReferenceSettings>(m, "Settings")
        .def(nb::init<>())
        .def_rw("segment_bytes", &TcpReferenceSettings::segmentBytes)
        .def_rw("initial_cwnd_segments", &TcpReferenceSettings::initialCwndSegments)
        .def_rw("min_rto_ns", &TcpReferenceSettings::minRtoNs)
        .def_rw("clock_granularity_ns", &TcpReferenceSettings::clockGranularityNs)
        .def_rw("conn_timeout_ns", &TcpReferenceSettings::connTimeoutNs)
        .def_rw("delack_count", &TcpReferenceSettings::delAckCount)
        .def_rw("delack_timeout_ns", &TcpReferenceSettings::delAckTimeoutNs)
        .def_rw("snd_buf_bytes", &TcpReferenceSettings::sndBufBytes)
        .def_rw("rcv_buf_bytes", &TcpReferenceSettings::rcvBufBytes)
        .def_rw("timestamps", &TcpReferenceSettings::timestamps)
        .def_rw("sack", &TcpReferenceSettings::sack)
        .def_rw("classic_recovery", &TcpReferenceSettings::classicRecovery)
        .def_rw("dctcp_g", &TcpReferenceSettings::dctcpG)
        .def_rw("dctcp_initial_alpha", &TcpReferenceSettings::dctcpInitialAlpha)
        .def_rw("k_bytes", &TcpReferenceSettings::kBytes)
        .def_rw("buffer_bytes", &TcpReferenceSettings::bufferBytes)
        .def_rw("window_floor_segments", &TcpReferenceSettings::windowFloorSegments)
        .def_rw("host_marking", &TcpReferenceSettings::hostMarking)
        .def_rw("device_queue_packets", &TcpReferenceSettings::deviceQueuePackets)
        .def_rw("rng_seed", &TcpReferenceSettings::rngSeed)
        .def_rw("rng_run", &TcpReferenceSettings::rngRun)
        .def_rw("stop_ns", &TcpReferenceSettings::stopNs);
    m.def("run", &Run, "is_switch"_a, "link_a"_a, "link_b"_a, "rate_bps"_a, "delay_ns"_a, "src"_a,
          "dst"_a, "size_bytes"_a, "start_ns"_a, "settings"_a,
          "Build and run the topology and flows on ns-3's TCP stack; return a dict of arrays.");
}
