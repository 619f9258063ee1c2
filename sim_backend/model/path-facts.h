/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Path facts: a path's base RTT and bandwidth-delay product, the one definition every part of the
 * fabric and the env uses, with the roundings the existing outputs depend on.
 */
#ifndef ECNGYM_PATH_FACTS_H
#define ECNGYM_PATH_FACTS_H

#include <cstdint>
#include <limits>
#include <vector>

namespace ns3
{
namespace ecngym
{

/**
 * @brief Bandwidth-delay product in bytes: rate x delay / 8e9, in this order.
 *
 * The one home of this arithmetic in C++; its Python twin, ecngym.units.bdp_bytes, evaluates the
 * same operations in the same order, so both sides get the same bits.
 *
 * @param rateBps the rate (bit/s)
 * @param rttNs the delay (ns)
 * @return the product (bytes, not rounded)
 */
inline double
BdpBytes(double rateBps, double rttNs)
{
    return rateBps * rttNs / 8e9;
}

/**
 * @brief The HPCC model's BDP (third.cc: rtt x bw / 1e9 / 8 in 64-bit integers, truncating).
 *
 * The integer form of BdpBytes, for the NIC window W the HPCC model derives from its own pair
 * RTT; the product is taken in 128 bits, so a long path at a high rate does not wrap.
 *
 * @param rttNs the delay (ns)
 * @param rateBps the rate, whole bit/s
 * @return the product (bytes, truncated)
 */
inline uint64_t
BdpBytesWhole(uint64_t rttNs, uint64_t rateBps)
{
    return static_cast<uint64_t>(static_cast<unsigned __int128>(rttNs) * rateBps / 1000000000ULL / 8);
}

/**
 * @brief Where a path's base RTT is rounded to whole ns.
 *
 * Every variant is one definition (Li et al., "HPCC: High Precision Congestion Control",
 * SIGCOMM 2019, §5, the base RTT of its slowdowns): 2 x the path's one-way propagation delay plus
 * one MTU payload's serialisation at every hop of the data path. The ACK's serialisation is not
 * counted, nor are headers. They differ only in the rounding, when a hop's serialisation is not a
 * whole number of ns (a 3 Gbit/s link: 2666.67 ns per 1000 B), and each is kept because results
 * are defined by it:
 */
enum class RttRounding : uint8_t
{
    /**
     * Each hop's serialisation truncated to whole ns on the link rate truncated to whole bit/s,
     * integer sums: the HPCC model's CalculateRoute (third.cc). Congestion control's base RTT
     * (HPCC's T) and the NIC window (its BDP) use it, so a run's windows match the model's
     * reference runs to the byte.
     */
    PerHopTruncated,
    /**
     * The propagation summed in whole ns, the serialisation summed in double and rounded once,
     * half away from zero: what the fabric reports (a flow's base_rtt_ns, its ideal FCT, hence
     * every slowdown), so that a path of fractional hops is not short by up to a ns per hop.
     */
    RoundedOnce,
    /**
     * Each hop's 2 x delay + serialisation added to one double in path order, rounded once, half
     * to even: the env's base RTT (its unit "rtt" of durations, its step mapping's BDP), first
     * computed in Python (round() rounds half to even). Every scenario given in RTTs and every
     * published result of the env depends on these bits.
     */
    RunningHalfEven,
};

/**
 * @brief One path's sums, taken hop by hop from the source host's port.
 *
 * Then() extends the path by one link; the sums of every rounding are kept, so one walk of the
 * path serves each.
 */
class PathSum
{
  public:
    /**
     * @brief This path and one more hop.
     * @param delayNs the link's one-way propagation delay (ns, >= 0)
     * @param rateBps the link's rate (bit/s, >= 1)
     * @param mtuPayloadBytes the payload whose serialisation each hop adds
     * @return the longer path
     */
    PathSum Then(int64_t delayNs, double rateBps, uint32_t mtuPayloadBytes) const;

    /**
     * @param rounding where to round (see RttRounding)
     * @return the path's base RTT (ns)
     */
    int64_t BaseRttNs(RttRounding rounding) const;

    /** @return the lowest link rate on the path (bit/s; +inf for no hop) */
    double BottleneckBps() const
    {
        return m_bottleneckBps;
    }

  private:
    int64_t m_delayNs{0};                //!< one-way propagation
    double m_serialisationNs{0};         //!< sum of payload x 8e9 / rate
    uint64_t m_wholeSerialisationNs{0};  //!< sum of payload x 8e9 / whole rate, each truncated
    double m_runningNs{0};               //!< sum of (2 x delay + payload x 8e9 / rate), in order
    double m_bottleneckBps{std::numeric_limits<double>::infinity()}; //!< lowest rate
};

/**
 * @brief The largest base RTT between two hosts of a topology, from its links alone (no Fabric).
 *
 * Each pair's path is the fabric's routed one: the shortest in hops (hosts do not forward), the
 * first one in port order (a node's ports in link order) where several are. A breadth-first
 * search from each host finds all of them; a host with one link to a switch shares the search of
 * that switch with every host whose link to it has the same delay and rate (the sums are the same
 * to the bit), so a fat tree of k = 32 takes one search per edge switch, not per host.
 *
 * @param numHosts hosts are nodes 0 .. numHosts - 1, switches the rest
 * @param linkA one end of each link
 * @param linkB the other end
 * @param delayNs each link's one-way delay (ns)
 * @param rateBps each link's rate (bit/s)
 * @param mtuPayloadBytes the payload whose serialisation each hop adds
 * @param rounding where to round (see RttRounding)
 * @return the largest over every ordered pair of hosts that a path joins (0 if none)
 * @throws std::invalid_argument if the link arrays differ in length, a delay is negative or a rate
 *         not >= 1 bit/s
 */
int64_t MaxBaseRttNs(uint32_t numHosts,
                     const std::vector<uint32_t>& linkA,
                     const std::vector<uint32_t>& linkB,
                     const std::vector<int64_t>& delayNs,
                     const std::vector<double>& rateBps,
                     uint32_t mtuPayloadBytes,
                     RttRounding rounding);

} // namespace ecngym
} // namespace ns3

#endif
