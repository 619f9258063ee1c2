/* SPDX-License-Identifier: GPL-2.0-only */
#include "path-facts.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>

namespace ns3
{
namespace ecngym
{

PathSum
PathSum::Then(int64_t delayNs, double rateBps, uint32_t mtuPayloadBytes) const
{
    PathSum p = *this;
    const double serialisationNs = mtuPayloadBytes * 8e9 / rateBps;
    p.m_delayNs += delayNs;
    p.m_serialisationNs += serialisationNs;
    p.m_wholeSerialisationNs +=
        mtuPayloadBytes * 1000000000ULL * 8 / static_cast<uint64_t>(rateBps);
    p.m_runningNs = m_runningNs + static_cast<double>(2 * delayNs) + serialisationNs;
    p.m_bottleneckBps = std::min(m_bottleneckBps, rateBps);
    return p;
}

int64_t
PathSum::BaseRttNs(RttRounding rounding) const
{
    switch (rounding)
    {
    case RttRounding::PerHopTruncated:
        return static_cast<int64_t>(static_cast<uint64_t>(m_delayNs) * 2 + m_wholeSerialisationNs);
    case RttRounding::RoundedOnce:
        return 2 * m_delayNs + static_cast<int64_t>(std::llround(m_serialisationNs));
    case RttRounding::RunningHalfEven:
        // nearbyint rounds in the default mode, to nearest, ties to even (as Python's round())
        return static_cast<int64_t>(std::nearbyint(m_runningNs));
    }
    throw std::invalid_argument("rounding: not a RttRounding");
}

int64_t
MaxBaseRttNs(uint32_t numHosts,
             const std::vector<uint32_t>& linkA,
             const std::vector<uint32_t>& linkB,
             const std::vector<int64_t>& delayNs,
             const std::vector<double>& rateBps,
             uint32_t mtuPayloadBytes,
             RttRounding rounding)
{
    const std::size_t nLinks = linkA.size();
    if (linkB.size() != nLinks || delayNs.size() != nLinks || rateBps.size() != nLinks)
    {
        throw std::invalid_argument("links: link_a, link_b, delay_ns and rate_bps differ in length");
    }
    std::size_t nNodes = numHosts;
    for (std::size_t l = 0; l < nLinks; ++l)
    {
        if (delayNs[l] < 0 || !(rateBps[l] >= 1))
        {
            throw std::invalid_argument("links[" + std::to_string(l) +
                                        "]: delay must be >= 0 ns and rate >= 1 bit/s");
        }
        nNodes = std::max<std::size_t>(nNodes, std::max(linkA[l], linkB[l]) + std::size_t{1});
    }
    struct Hop
    {
        uint32_t peer;
        int64_t delayNs;
        double rateBps;
    };
    std::vector<std::vector<Hop>> ports(nNodes); // each node's links, in link order
    for (std::size_t l = 0; l < nLinks; ++l)
    {
        ports[linkA[l]].push_back({linkB[l], delayNs[l], rateBps[l]});
        ports[linkB[l]].push_back({linkA[l], delayNs[l], rateBps[l]});
    }

    // Breadth-first from root (whose path so far is rootPath): every node keeps the path that
    // reached it first, which is the first shortest one in port order; hosts other than the root
    // do not forward. Fills reachedHosts with the hosts found (the root too, if a host).
    std::vector<PathSum> path(nNodes);
    std::vector<uint32_t> seenIn(nNodes, 0);
    uint32_t search = 0;
    std::vector<uint32_t> frontier;
    std::vector<uint32_t> next;
    std::vector<uint32_t> reachedHosts;
    const auto searchFrom = [&](uint32_t root, const PathSum& rootPath) {
        ++search;
        seenIn[root] = search;
        path[root] = rootPath;
        frontier.assign(1, root);
        reachedHosts.clear();
        if (root < numHosts)
        {
            reachedHosts.push_back(root);
        }
        while (!frontier.empty())
        {
            next.clear();
            for (uint32_t u : frontier)
            {
                if (u != root && u < numHosts)
                {
                    continue;
                }
                for (const Hop& hop : ports[u])
                {
                    if (seenIn[hop.peer] != search)
                    {
                        seenIn[hop.peer] = search;
                        path[hop.peer] = path[u].Then(hop.delayNs, hop.rateBps, mtuPayloadBytes);
                        next.push_back(hop.peer);
                        if (hop.peer < numHosts)
                        {
                            reachedHosts.push_back(hop.peer);
                        }
                    }
                }
            }
            frontier.swap(next);
        }
    };

    // (switch, delay, rate) of a host's one link -> the two largest RTTs to the hosts its switch
    // reaches, and the host of the largest: a host behind that link takes the largest unless it
    // is its own (a round trip through its link, which its own search would not count)
    struct Shared
    {
        int64_t top{-1};
        uint32_t topHost{0};
        int64_t second{0};
    };
    std::map<std::tuple<uint32_t, int64_t, double>, Shared> shared;
    int64_t worst = 0;
    for (uint32_t src = 0; src < numHosts; ++src)
    {
        if (ports[src].size() != 1 || ports[src][0].peer < numHosts)
        {
            searchFrom(src, PathSum());
            for (uint32_t h : reachedHosts)
            {
                worst = std::max(worst, path[h].BaseRttNs(rounding));
            }
            continue;
        }
        const Hop& link = ports[src][0];
        const auto key = std::make_tuple(link.peer, link.delayNs, link.rateBps);
        auto it = shared.find(key);
        if (it == shared.end())
        {
            searchFrom(link.peer, PathSum().Then(link.delayNs, link.rateBps, mtuPayloadBytes));
            Shared s;
            for (uint32_t h : reachedHosts)
            {
                const int64_t rtt = path[h].BaseRttNs(rounding);
                if (rtt > s.top)
                {
                    s.second = std::max(s.second, s.top);
                    s.top = rtt;
                    s.topHost = h;
                }
                else
                {
                    s.second = std::max(s.second, rtt);
                }
            }
            it = shared.emplace(key, s).first;
        }
        worst = std::max(worst, it->second.topHost == src ? it->second.second : it->second.top);
    }
    return worst;
}

} // namespace ecngym
} // namespace ns3
