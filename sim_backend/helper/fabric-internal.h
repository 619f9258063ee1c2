/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the files of Fabric (fabric*.cc) share and nothing else includes.
 */
#ifndef ECNGYM_FABRIC_INTERNAL_H
#define ECNGYM_FABRIC_INTERNAL_H

#include <cstdint>
#include <limits>
#include <string>

namespace ns3
{
namespace ecngym
{

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max(); //!< no node / switch / host index

/**
 * @brief The name of one entry of an argument, for error messages.
 * @param what the argument's name
 * @param i the entry's index
 * @return e.g. "port_ids[3]"
 */
inline std::string
Where(const char* what, std::size_t i)
{
    return std::string(what) + "[" + std::to_string(i) + "]";
}

} // namespace ecngym
} // namespace ns3

#endif
