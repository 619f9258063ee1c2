/*
 * ecngym fabric: R-AQM, reverse-ACK active queue management, as a port AQM policy.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_R_AQM_POLICY_H
#define ECNGYM_R_AQM_POLICY_H

#include "port-aqm-policy.h"

#include "ns3/event-id.h"

#include <deque>

namespace ns3
{
namespace ecngym
{

/**
 * @brief R-AQM (§IV; docs: algorithms/r-aqm.md §3, §8; Du et al., IEEE/ACM ToN 2022, §IV, Algorithm 1).
 *
 * Installed on port P, it watches P's egress data queue Q_out and holds the pure ACKs that arrive
 * on P's ingress side (the ACKs of the flows P's egress sends data for) in a virtual input queue
 * (VIQ) of ViqCapacityPackets (overflow drops the ACK). A token bucket (depth BucketDepth) gains
 * one token per data packet P sends (its egress rate), or one per packet time at line rate while P
 * sends nothing (R-AQM §IV-C; docs: algorithms/r-aqm.md §3.3 [OURS], so held ACKs never stall). Each new token runs Algorithm 1:
 * in state s with (alpha_s, n_s), if tokens >= alpha_s, spend alpha_s and release n_s ACKs.
 * States (R-AQM §IV-C; docs: algorithms/r-aqm.md §3.3, [OURS] reconstruction of Fig. 5): Q_out growing over the last WindowNs
 * (T) -> Congested (CS); declining over T -> Draining (DS); otherwise Q_out > KmaxBytes -> CS,
 * Q_out < KminBytes -> DS, else Normal (NS). The trend is sampled every T/4: growing (declining)
 * means four successive samples each above (below) the previous by more than
 * TrendToleranceBytes. With an empty VIQ in NS or DS an arriving ACK passes at once if a token is
 * there (spending alpha_s / n_s), else it is held. A released ACK older than StaleNs (5 ms, the
 * smallest recommended RTO_min) is dropped (§3.4). Compensation (§3.4): EcnEchoBytes > 0 sets
 * the ECN echo of a released ACK when Q_out + VIQ length exceed it (the VIQ counted as one data
 * packet per held ACK: the data its sender has in flight; BECN-like, the DCTCP case), and
 * RwndThresholdBytes > 0 rewrites its receive window to one MSS (the largest payload seen at
 * this port) when that backlog exceeds it (HSCC-like, the paper's NewReno case): the sender's
 * window becomes the smaller of its own and the last ACK's, so it keeps one segment in flight
 * until an unrewritten ACK reopens it. Only ACKs are held (NACKs and CNPs pass). The port's own ECN marking
 * of data (R-AQM runs beside the senders' DCTCP, "R-AQM (ECN)") is EcnThresholdBytes: step marking at
 * enqueue when the data queue exceeds it (0: no data marking).
 *
 * Telemetry ("r_aqm.*"): viq_packets (now), viq_max_packets (in the interval), state (now:
 * 0 NS, 1 DS, 2 CS), held, released, expired (stale drops), overflow_drops, echo_marked,
 * data_marked, rwnd_clamped.
 */
class RAqmPolicy : public PortAqmPolicy
{
  public:
    /** @brief The R-AQM state. */
    enum class State : uint8_t
    {
        Normal = 0,
        Draining = 1,
        Congested = 2,
    };

    /**
     * @brief Get the type ID.
     * @return the object TypeId
     */
    static TypeId GetTypeId();

    RAqmPolicy();

    AqmVerdict OnEnqueue(const AqmContext& ctx, FabricPacket& p) override;
    void OnDequeue(const AqmContext& ctx, FabricPacket& p) override;
    AqmVerdict OnIngress(const AqmContext& ctx, FabricPacket& p) override;

    bool WantsIngress() const override
    {
        return true;
    }

    void SetStreamSeed(uint64_t seed) override;
    void Attach(AqmPortAccess* access, uint32_t portId, double linkRateBps) override;
    void Detach() override;
    std::string CheckConsistency() const override;
    std::vector<AqmTelemetryInfo> DescribeTelemetry() const override;
    std::vector<std::string> DescribeActionAttributes() const override;
    void ReadTelemetry(std::vector<std::pair<const char*, double>>& out) override;

    /** @return the current state */
    State GetState() const
    {
        return m_state;
    }

  protected:
    void DoDispose() override;

  private:
    void Sample(int64_t nowNs);
    void UpdateState();
    double Alpha() const;
    uint32_t Count() const;
    void AddToken(int64_t nowNs);
    void Release(FabricPacket* p, int64_t nowNs);
    void ArmIdleTimer();
    void IdleTick();

    // attributes
    uint64_t m_kminBytes{21040};
    uint64_t m_kmaxBytes{42080};
    uint64_t m_windowNs{3000};
    double m_alpha1{1.0};
    double m_alpha2{1.0};
    double m_alpha3{10.0};
    uint32_t m_n1{1};
    uint32_t m_n2{2};
    uint32_t m_n3{1};
    uint32_t m_viqCapacity{500};
    double m_bucketDepth{10.0};
    uint64_t m_staleNs{5000000};
    uint64_t m_ecnEchoBytes{0};
    uint64_t m_ecnKBytes{0};
    uint64_t m_rwndThresholdBytes{0};
    uint64_t m_trendToleranceBytes{0};

    // state
    double m_linkRateBps{0};
    State m_state{State::Normal};
    double m_tokens{0};
    uint64_t m_qOutBytes{0};
    std::deque<FabricPacket*> m_viq;
    uint64_t m_viqBytes{0};
    int64_t m_nextSampleNs{0};
    uint64_t m_lastSample{0};
    int m_upStreak{0};
    int m_downStreak{0};
    int64_t m_lastDepartureNs{0};
    uint32_t m_lastDataWireBytes{1052};
    uint64_t m_mssBytes{1}; //!< largest data payload seen here: the MSS an rwnd rewrite grants
    EventId m_idle;

    // telemetry of the interval
    uint64_t m_viqMax{0};
    uint64_t m_held{0};
    uint64_t m_released{0};
    uint64_t m_expired{0};
    uint64_t m_overflow{0};
    uint64_t m_echoMarked{0};
    uint64_t m_dataMarked{0};
    uint64_t m_rwndClamped{0};
};

} // namespace ecngym
} // namespace ns3

#endif
