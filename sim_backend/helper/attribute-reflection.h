/*
 * ecngym fabric: reading and setting ns-3 attributes by name, for the Python side (the AQM
 * policies' parameters, the fabric's knobs), and building a FabricConfig from its sections.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_ATTRIBUTE_REFLECTION_H
#define ECNGYM_ATTRIBUTE_REFLECTION_H

#include "../model/fabric-config.h"

#include "ns3/object-base.h"
#include "ns3/type-id.h"

#include <string>
#include <vector>

namespace ns3
{
namespace ecngym
{

/** @brief One attribute of a TypeId, as Python reads it. */
struct AttributeDescription
{
    std::string name;    //!< TypeId attribute name (CamelCase)
    std::string help;    //!< its description
    std::string initial; //!< default value as an attribute string (doubles with every digit)
    std::string checker; //!< the checker's type information ("uint64_t 0:100", "N|SqrtN", ...)
};

/**
 * @brief Describe every attribute of @p tid (its own and its parents').
 * @param tid the type
 * @return name, help, default and checker range of each attribute, in declaration order
 */
std::vector<AttributeDescription> DescribeAttributes(const TypeId& tid);

/**
 * @brief Set attributes of @p object from attribute strings, checked by their checkers.
 * @param object the object
 * @param what the prefix of error messages ("aqm: ns3::ecngym::RedAqmPolicy")
 * @param names attribute names
 * @param values their values as attribute strings
 * @throws std::invalid_argument naming the attribute on an unknown name, a malformed number or a
 *         value its checker refuses
 */
void SetAttributeStrings(ObjectBase& object,
                         const std::string& what,
                         const std::vector<std::string>& names,
                         const std::vector<std::string>& values);

/** @brief One section of a FabricConfig as attribute strings (a FabricParameters TypeId). */
struct FabricSection
{
    std::string typeName;            //!< "ns3::ecngym::DcqcnParameters", ...
    std::vector<std::string> names;  //!< attribute names
    std::vector<std::string> values; //!< attribute strings
};

/**
 * @brief Build a FabricConfig from its sections' attributes; the fields no section sets keep
 *        their defaults (the caller sets them).
 * @param sections the sections given (each at most once; the others keep their defaults)
 * @return the config
 * @throws std::invalid_argument naming the type and attribute of a refused value
 */
FabricConfig MakeFabricConfig(const std::vector<FabricSection>& sections);

/** @return the TypeId names of every FabricParameters section, in registration order */
std::vector<std::string> FabricSectionTypes();

} // namespace ecngym
} // namespace ns3

#endif
