/*
 * ecngym fabric: a small, fast, seedable random stream for per-packet decisions.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_FAST_RANDOM_H
#define ECNGYM_FAST_RANDOM_H

#include <cstdint>

namespace ns3
{
namespace ecngym
{

/**
 * @brief SplitMix64 step: turns any 64-bit value into a well-mixed one (seeding, hashing).
 * @param x the input
 * @return the mixed value
 */
inline uint64_t
SplitMix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/**
 * @brief MurmurHash3 (x86, 32-bit) of three 32-bit words: the ECMP hash of the HPCC model's
 *        switches, which hash (source IP, destination IP, source port | destination port << 16)
 *        with the switch's node id as the seed.
 * @param w0 first word
 * @param w1 second word
 * @param w2 third word
 * @param seed the seed
 * @return the 32-bit hash
 */
inline uint32_t
Murmur3Of3Words(uint32_t w0, uint32_t w1, uint32_t w2, uint32_t seed)
{
    const uint32_t words[3] = {w0, w1, w2};
    uint32_t h = seed;
    for (uint32_t k : words)
    {
        k *= 0xcc9e2d51U;
        k = (k << 15) | (k >> 17);
        k *= 0x1b873593U;
        h ^= k;
        h = (h << 13) | (h >> 19);
        h = h * 5 + 0xe6546b64U;
    }
    h ^= 12U; // key length in bytes
    h ^= h >> 16;
    h *= 0x85ebca6bU;
    h ^= h >> 13;
    h *= 0xc2b2ae35U;
    h ^= h >> 16;
    return h;
}

/**
 * @brief xoshiro256** generator.
 *
 * ns-3's MRG32k3a streams are heavier than a marking decision warrants (one draw per packet per
 * congested port); this generator is tiny and statistically strong, and each port gets its own
 * stream derived from the fabric seed, so results do not depend on event interleaving elsewhere.
 */
class FastRandom
{
  public:
    /** @param seed any 64-bit value */
    explicit FastRandom(uint64_t seed = 1)
    {
        Seed(seed);
    }

    /** @param seed any 64-bit value */
    void Seed(uint64_t seed)
    {
        uint64_t x = seed;
        for (auto& s : m_s)
        {
            x = SplitMix64(x);
            s = x;
        }
    }

    /** @return a uniform 64-bit integer */
    uint64_t Next()
    {
        const uint64_t result = Rotl(m_s[1] * 5, 7) * 9;
        const uint64_t t = m_s[1] << 17;
        m_s[2] ^= m_s[0];
        m_s[3] ^= m_s[1];
        m_s[1] ^= m_s[2];
        m_s[0] ^= m_s[3];
        m_s[2] ^= t;
        m_s[3] = Rotl(m_s[3], 45);
        return result;
    }

    /** @return a uniform double in [0, 1) */
    double Uniform()
    {
        return static_cast<double>(Next() >> 11) * 0x1.0p-53;
    }

  private:
    static uint64_t Rotl(uint64_t x, int k)
    {
        return (x << k) | (x >> (64 - k));
    }

    uint64_t m_s[4];
};

} // namespace ecngym
} // namespace ns3

#endif
