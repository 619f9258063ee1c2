/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Fabric's telemetry: per-port counters per interval (and each policy's own), flow records, PFC
 * event log.
 */
#include "fabric.h"
#include "fabric-internal.h"

#include "ns3/simulator.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

namespace ns3
{
namespace ecngym
{

const TelemetryRowInfo kTelemetryRowInfo[kTelemetryRows] = {
    {"tx_bytes", 'u'},
    {"tx_data_bytes", 'u'},
    {"tx_data_packets", 'u'},
    {"tx_control_packets", 'u'},
    {"enqueued_data_packets", 'u'},
    {"mean_queue_bytes", 'f'},
    {"max_queue_bytes", 'u'},
    {"queue_bytes", 'u'},
    {"ecn_marked_packets", 'u'},
    {"pfc_pause_sent", 'u'},
    {"pfc_pause_received", 'u'},
    {"paused_ns", 'i'},
    {"drops", 'u'},
    {"distinct_flows", 'u'},
    {"utilization", 'f'},
};

TelemetrySnapshot
Fabric::ReadTelemetry()
{
    CheckAlive();
    TelemetrySnapshot s;
    const int64_t now = NowNs();
    s.intervalStartNs = m_intervalStartNs;
    s.intervalEndNs = now;
    const int64_t spanNs = now - m_intervalStartNs;
    const double span = static_cast<double>(spanNs);
    const std::size_t n = m_ports.size();
    s.block.resize(kTelemetryRows * n);
    uint64_t* row[kTelemetryRows];
    for (std::size_t r = 0; r < kTelemetryRows; ++r)
    {
        row[r] = s.block.data() + r * n;
    }
    for (std::size_t i = 0; i < n; ++i)
    {
        const PortTelemetry t = m_ports[i]->ReadInterval();
        row[kTelTxBytes][i] = t.txBytes;
        row[kTelTxDataBytes][i] = t.txDataBytes;
        row[kTelTxDataPackets][i] = t.txDataPackets;
        row[kTelTxControlPackets][i] = t.txControlPackets;
        row[kTelEnqueuedDataPackets][i] = t.enqueuedDataPackets;
        row[kTelMeanQueueBytes][i] = std::bit_cast<uint64_t>(span > 0 ? t.queueByteNs / span : 0.0);
        row[kTelMaxQueueBytes][i] = t.maxQueueBytes;
        row[kTelQueueBytes][i] = m_ports[i]->GetDataQueueBytes();
        row[kTelEcnMarked][i] = t.ecnMarked;
        row[kTelPfcPauseSent][i] = t.pfcPauseSent;
        row[kTelPfcPauseReceived][i] = t.pfcPauseReceived;
        row[kTelPausedNs][i] = std::bit_cast<uint64_t>(t.pausedNs);
        row[kTelDrops][i] = t.drops;
        row[kTelDistinctFlows][i] = t.distinctFlows;
        // bits sent / bits the line could send (this operation order is the documented formula)
        const double util = spanNs > 0 ? static_cast<double>(t.txBytes) * 8e9 /
                                             (m_ports[i]->GetRateBps() * span)
                                       : 0.0;
        row[kTelUtilization][i] = std::bit_cast<uint64_t>(util);
    }
    // Per-policy telemetry, one array per name (first seen order: deterministic).
    std::vector<std::pair<const char*, double>> buf;
    for (std::size_t i = 0; i < n; ++i)
    {
        if (!m_isSwitch[m_portNode[i]])
        {
            continue;
        }
        SwitchNode* sw = PeekPointer(m_switches[m_nodeToSwitch[m_portNode[i]]]);
        buf.clear();
        sw->GetAqm(m_ports[i]->GetLocalIndex())->ReadTelemetry(buf);
        for (const auto& [name, value] : buf)
        {
            auto it = std::find_if(s.aqm.begin(), s.aqm.end(),
                                   [&](const auto& e) { return e.first == name; });
            if (it == s.aqm.end())
            {
                s.aqm.emplace_back(name, std::vector<double>(n, std::nan("")));
                it = s.aqm.end() - 1;
            }
            it->second[i] = value;
        }
    }
    m_intervalStartNs = now;
    ++m_ctx->epoch;
    return s;
}

FlowRecords
Fabric::GetFlowRecords() const
{
    FlowRecords r;
    const std::size_t n = m_ctx->flows.size();
    r.src.resize(n);
    r.dst.resize(n);
    r.sizeBytes.resize(n);
    r.startNs.resize(n);
    r.finishNs.resize(n);
    r.idealFctNs.resize(n);
    r.baseRttNs.resize(n);
    r.ccUtilisation.resize(n);
    r.deliveredBytes.resize(n);
    r.retransmittedBytes.resize(n);
    r.finished.resize(n);
    r.rateBps.resize(n);
    r.inflightBytes.resize(n);
    r.windowBytes.resize(n);
    r.connection.resize(n);
    r.rtoNs.resize(n);
    r.ccAlpha.resize(n);
    for (std::size_t i = 0; i < n; ++i)
    {
        const QueuePair& qp = m_ctx->flows[i];
        r.src[i] = qp.srcHost;
        r.dst[i] = qp.dstHost;
        r.sizeBytes[i] = qp.sizeBytes;
        r.startNs[i] = qp.startNs;
        r.finishNs[i] = qp.finishNs;
        r.idealFctNs[i] = qp.idealFctNs;
        r.baseRttNs[i] = qp.baseRttNs;
        r.ccUtilisation[i] =
            qp.cc ? qp.cc->UtilisationEstimate() : std::numeric_limits<double>::quiet_NaN();
        r.deliveredBytes[i] = qp.rcvNxt;
        r.retransmittedBytes[i] = qp.retransmittedBytes;
        r.finished[i] = qp.finished ? 1 : 0;
        r.rateBps[i] = qp.rateBps;
        r.inflightBytes[i] = qp.sndNxt - qp.sndUna;
        r.windowBytes[i] = qp.EffectiveWindow();
        r.connection[i] = qp.connection;
        r.rtoNs[i] = qp.rtoNs;
        r.ccAlpha[i] = qp.cc ? qp.cc->AlphaEstimate() : std::numeric_limits<double>::quiet_NaN();
    }
    return r;
}

void
Fabric::LogPfcEvents(bool on)
{
    for (auto& port : m_ports)
    {
        port->SetPfcLog(on ? &m_pfcLog : nullptr);
    }
}

} // namespace ecngym
} // namespace ns3
