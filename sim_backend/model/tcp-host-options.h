/*
 * ecngym fabric: the Linux-like options of the DCTCP host model (slow start, handshake, RTO
 * estimate, delayed ACKs), as TypeId attributes.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_TCP_HOST_OPTIONS_H
#define ECNGYM_TCP_HOST_OPTIONS_H

#include "ns3/object.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{
namespace ecngym
{

/**
 * @brief The Linux-like options of the DCTCP host model, as the hot path reads them.
 *
 * Every option off (the default) is the lean NIC-style model: a flow starts at its initial
 * window, grows one MSS per window, no handshake, the fixed FabricConfig::retransmitTimeoutNs and
 * one ACK per FabricConfig::ackIntervalPackets packets. Filled from TcpHostOptions' attributes.
 */
struct TcpHostConfig
{
    bool slowStart{false};           //!< start at initialCwndPackets and slow-start to ssthreshBytes
    uint32_t initialCwndPackets{10}; //!< initial window in MSS (Linux's IW10, RFC 6928)
    uint64_t ssthreshBytes{0};       //!< initial slow-start threshold (0 = unbounded, as Linux)
    bool handshake{false};           //!< SYN / SYN-ACK / ACK before the data
    bool rtoEstimate{false};         //!< RFC 6298 RTO from SRTT / RTTVAR, with backoff
    int64_t minRtoNs{200000000};     //!< lower bound of the estimated RTO (Linux TCP_RTO_MIN)
    int64_t initialRtoNs{1000000000}; //!< RTO before the first sample, and the SYN's (RFC 6298 §2.1)
    int64_t maxRtoNs{120000000000};  //!< upper bound of the RTO and its backoff (Linux TCP_RTO_MAX)
    bool delayedAck{false};          //!< ACK every second packet, or after delayedAckTimeoutNs
    int64_t delayedAckTimeoutNs{40000000}; //!< delayed-ACK timer (Linux TCP_DELACK_MIN)
    /** grow the window only while it limits the sender (Linux's tcp_is_cwnd_limited) */
    bool cwndLimitedGrowth{false};

    /** @return whether any option is on (false: the lean NIC-style model) */
    bool AnyOn() const
    {
        return slowStart || handshake || rtoEstimate || delayedAck || cwndLimitedGrowth;
    }
};

/**
 * @brief The Linux-like options of the DCTCP host model as ns-3 attributes with checkers: the one
 *        home of their defaults and allowed ranges (the Python FabricConfig reads them from here).
 */
class TcpHostOptions : public Object
{
  public:
    /**
     * @brief Get the type ID.
     * @return the object TypeId
     */
    static TypeId GetTypeId();

    TcpHostOptions();

    /**
     * @brief Check the options' consistency (min RTO <= initial RTO <= max RTO).
     * @return "" if consistent, else the reason, naming the attributes
     */
    std::string Inconsistency() const;

    /** @return the options as the hot path reads them */
    TcpHostConfig ToConfig() const;

  private:
    bool m_slowStart;
    uint32_t m_initialCwndPackets;
    uint64_t m_ssthreshBytes;
    bool m_handshake;
    bool m_rtoEstimate;
    uint64_t m_minRtoNs;
    uint64_t m_initialRtoNs;
    uint64_t m_maxRtoNs;
    bool m_delayedAck;
    uint64_t m_delayedAckTimeoutNs;
    bool m_cwndLimitedGrowth;
};

/**
 * @brief Build the hot path's options from attribute strings (validated by TcpHostOptions'
 *        checkers, then by its consistency rule).
 * @param names attribute names (CamelCase)
 * @param values their values as ns-3 attribute strings
 * @return the options
 * @throws std::invalid_argument naming the attribute on an unknown name, a value its checker
 *         refuses, or inconsistent options
 */
TcpHostConfig MakeTcpHostConfig(const std::vector<std::string>& names,
                                const std::vector<std::string>& values);

} // namespace ecngym
} // namespace ns3

#endif
