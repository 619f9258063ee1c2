/*
 * ecngym fabric: in-band network telemetry (INT) records, as HPCC's switches push them.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_INT_TELEMETRY_H
#define ECNGYM_INT_TELEMETRY_H

#include <cstdint>

namespace ns3
{
namespace ecngym
{

/**
 * @brief One switch hop's INT record, packed into 64 bits as the HPCC model packs it.
 *
 * Fields (the HPCC model's IntHop, Li et al. SIGCOMM 2019 §4.1): the dequeue time in ns modulo
 * 2^24, the port's transmitted bytes in units of 128 x multi modulo 2^20, the port's queue length
 * in units of 80 x multi (17 bits), and the port's line rate as an index into the fabric's table of
 * link rates (3 bits; the model's fixed table is 25/50/100/200/400 Gbps, ours is the rates the
 * topology has). Deltas of time and bytes wrap as in the model.
 */
struct IntHop
{
    static constexpr uint32_t kTimeBits = 24;
    static constexpr uint32_t kBytesBits = 20;
    static constexpr uint32_t kQlenBits = 17;
    static constexpr uint64_t kByteUnit = 128;
    static constexpr uint64_t kQlenUnit = 80;

    uint64_t word{0};

    /** @brief Pack a record (units and wrap as the model's IntHop::Set). */
    void Set(uint64_t timeNs, uint64_t txBytes, uint64_t qlenBytes, uint32_t rateIndex, uint32_t multi)
    {
        const uint64_t t = timeNs & ((1ULL << kTimeBits) - 1);
        const uint64_t b = (txBytes / (kByteUnit * multi)) & ((1ULL << kBytesBits) - 1);
        uint64_t q = qlenBytes / (kQlenUnit * multi);
        q = q & ((1ULL << kQlenBits) - 1);
        word = t | (b << kTimeBits) | (q << (kTimeBits + kBytesBits)) |
               (static_cast<uint64_t>(rateIndex) << (kTimeBits + kBytesBits + kQlenBits));
    }

    uint64_t Time() const
    {
        return word & ((1ULL << kTimeBits) - 1);
    }

    uint64_t BytesField() const
    {
        return (word >> kTimeBits) & ((1ULL << kBytesBits) - 1);
    }

    /** @return queue length in bytes (quantised) */
    uint64_t Qlen(uint32_t multi) const
    {
        return ((word >> (kTimeBits + kBytesBits)) & ((1ULL << kQlenBits) - 1)) * kQlenUnit * multi;
    }

    uint32_t RateIndex() const
    {
        return static_cast<uint32_t>(word >> (kTimeBits + kBytesBits + kQlenBits));
    }

    /** @return ns since the older record `b` (one wrap of the 24-bit clock allowed) */
    uint64_t TimeDelta(const IntHop& b) const
    {
        const uint64_t t = Time(), u = b.Time();
        return t >= u ? t - u : t + (1ULL << kTimeBits) - u;
    }

    /** @return bytes sent since the older record `b` (one wrap allowed) */
    uint64_t BytesDelta(const IntHop& b, uint32_t multi) const
    {
        const uint64_t x = BytesField(), y = b.BytesField();
        return (x >= y ? x - y : x + (1ULL << kBytesBits) - y) * kByteUnit * multi;
    }
};

/** Most hops an INT stack records (the model's IntHeader::maxHop). */
constexpr uint32_t kIntMaxHops = 5;

/**
 * @brief The INT records a data packet collects (and its ACK echoes back): 5 x 8 + 2 = 42 bytes on
 *        the wire in the HPCC model.
 */
struct IntStack
{
    IntHop hop[kIntMaxHops];
    uint16_t nhop{0};

    /** @brief Append a hop record (the model overwrites slot nhop % 5 beyond five hops). */
    void Push(uint64_t timeNs, uint64_t txBytes, uint64_t qlenBytes, uint32_t rateIndex, uint32_t multi)
    {
        hop[nhop % kIntMaxHops].Set(timeNs, txBytes, qlenBytes, rateIndex, multi);
        ++nhop;
    }
};

/** Wire bytes of the INT stack in each data packet (HPCC) and of TIMELY's timestamp. */
constexpr uint32_t kIntStackWireBytes = kIntMaxHops * 8 + 2;
constexpr uint32_t kTimestampWireBytes = 8;

} // namespace ecngym
} // namespace ns3

#endif
