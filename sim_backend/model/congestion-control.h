/*
 * ecngym fabric: the per-queue-pair congestion control interface of the RDMA NIC.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_CONGESTION_CONTROL_H
#define ECNGYM_CONGESTION_CONTROL_H

#include "queue-pair.h"

#include <cstdint>
#include <limits>

namespace ns3
{
namespace ecngym
{

struct FabricPacket;

/**
 * @brief Reaction-point congestion control of one queue pair.
 *
 * An implementation sets qp.rateBps (pacing rate) and/or qp.windowBytes (bytes in flight, 0 = no
 * window) and calls qp.host->OnRateChange(qp) when it changes the rate outside a callback.
 */
class CongestionControl
{
  public:
    virtual ~CongestionControl() = default;

    /**
     * @brief The flow starts: set the initial rate and window (line-rate start).
     * @param qp the queue pair
     * @param nowNs current time
     */
    virtual void Start(QueuePair& qp, int64_t nowNs) = 0;

    /**
     * @brief A congestion notification arrived: a CNP, or a CE-echoing ACK in ACK-echo mode.
     * @param qp the queue pair
     * @param nowNs current time
     */
    virtual void OnCongestionNotification(QueuePair& qp, int64_t nowNs)
    {
    }

    /**
     * @brief An ACK arrived.
     * @param qp the queue pair (snd_una already advanced)
     * @param newlyAckedBytes bytes this ACK acknowledged for the first time
     * @param ecnEcho whether the ACK echoes a CE mark
     * @param nowNs current time
     */
    virtual void OnAck(QueuePair& qp, uint64_t newlyAckedBytes, bool ecnEcho, int64_t nowNs)
    {
    }

    /**
     * @brief An ACK arrived that carries in-band feedback: its sequence number, its CE echo, the
     *        send time it echoes (TIMELY) and the INT records it echoes (HPCC). Called after OnAck,
     *        before the flow may finish.
     * @param qp the queue pair (snd_una already advanced)
     * @param ack the ACK
     * @param nowNs current time
     */
    virtual void OnAckFeedback(QueuePair& qp, const FabricPacket& ack, int64_t nowNs)
    {
    }

    /**
     * @brief A data packet was sent (byte counters).
     * @param qp the queue pair
     * @param payloadBytes its payload
     * @param nowNs current time
     */
    virtual void OnDataSent(QueuePair& qp, uint32_t payloadBytes, int64_t nowNs)
    {
    }

    /** @brief The flow is finished: cancel every pending timer. */
    virtual void Stop()
    {
    }

    /**
     * @return the control's own estimate of its bottleneck's utilisation (HPCC's smoothed U), NaN
     *         for a control that keeps none
     */
    virtual double UtilisationEstimate() const
    {
        return std::numeric_limits<double>::quiet_NaN();
    }

    /** @return the control's congestion estimate alpha (DCTCP's), NaN for a control that keeps none */
    virtual double AlphaEstimate() const
    {
        return std::numeric_limits<double>::quiet_NaN();
    }
};

} // namespace ecngym
} // namespace ns3

#endif
