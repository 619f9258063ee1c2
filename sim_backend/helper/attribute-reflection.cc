/* SPDX-License-Identifier: GPL-2.0-only */
#include "attribute-reflection.h"

#include "../model/fabric-parameters.h"

#include "ns3/double.h"
#include "ns3/integer.h"
#include "ns3/object-factory.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <limits>
#include <sstream>
#include <stdexcept>

namespace ns3
{
namespace ecngym
{

namespace
{
/**
 * Whether @p text is a whole @p T as ns-3's number attribute values read it.
 *
 * ns-3's UintegerValue / IntegerValue / DoubleValue abort the process (NS_ABORT_MSG_UNLESS in
 * DeserializeFromString) on text they do not read to its end, so text is checked first.
 */
template <typename T>
bool
ReadsWhole(const std::string& text)
{
    std::istringstream iss(text);
    T value;
    iss >> value;
    return !iss.fail() && iss.eof();
}

/**
 * Whether @p text names one of the choices of an enumeration's checker (its type information,
 * "a|b|c"). ns-3's EnumChecker looks a name up without checking that it found one, so a name is
 * checked first.
 */
bool
NamesAChoice(const AttributeChecker& checker, const std::string& text)
{
    std::istringstream choices(checker.GetUnderlyingTypeInformation());
    std::string choice;
    while (std::getline(choices, choice, '|'))
    {
        if (choice == text)
        {
            return true;
        }
    }
    return false;
}

/** A double with every digit: a DoubleValue's own string has 6 significant digits. */
std::string
Exact(double v)
{
    std::ostringstream oss;
    oss.precision(std::numeric_limits<double>::max_digits10);
    oss << v;
    return oss.str();
}

TypeId
LookupSection(const std::string& typeName)
{
    TypeId tid;
    if (!TypeId::LookupByNameFailSafe(typeName, &tid) || !tid.IsChildOf(FabricParameters::GetTypeId()) ||
        !tid.HasConstructor())
    {
        throw std::invalid_argument("fabric: " + typeName + " is not a fabric section type");
    }
    return tid;
}
} // namespace

std::vector<AttributeDescription>
DescribeAttributes(const TypeId& tid)
{
    std::vector<AttributeDescription> out;
    for (std::size_t k = 0; k < tid.GetAttributeN(); ++k)
    {
        const TypeId::AttributeInformation info = tid.GetAttribute(k);
        const auto* d = dynamic_cast<const DoubleValue*>(PeekPointer(info.initialValue));
        out.push_back({info.name,
                       info.help,
                       d != nullptr ? Exact(d->Get()) : info.initialValue->SerializeToString(info.checker),
                       info.checker->GetUnderlyingTypeInformation()});
    }
    return out;
}

void
SetAttributeStrings(ObjectBase& object,
                    const std::string& what,
                    const std::vector<std::string>& names,
                    const std::vector<std::string>& values)
{
    if (names.size() != values.size())
    {
        throw std::invalid_argument(what + ": names and values differ in length");
    }
    for (std::size_t k = 0; k < names.size(); ++k)
    {
        TypeId::AttributeInformation info;
        if (!object.GetInstanceTypeId().LookupAttributeByName(names[k], &info))
        {
            throw std::invalid_argument(what + " has no attribute " + names[k]);
        }
        const Ptr<AttributeValue> kind = info.checker->Create();
        if ((DynamicCast<UintegerValue>(kind) && !ReadsWhole<uint64_t>(values[k])) ||
            (DynamicCast<IntegerValue>(kind) && !ReadsWhole<int64_t>(values[k])) ||
            (DynamicCast<DoubleValue>(kind) && !ReadsWhole<double>(values[k])))
        {
            throw std::invalid_argument(what + "::" + names[k] + " = '" + values[k] + "' is not a number (" +
                                        info.checker->GetUnderlyingTypeInformation() + ")");
        }
        const bool enumeration = info.checker->GetValueTypeName().rfind("ns3::EnumValue<", 0) == 0;
        Ptr<AttributeValue> v = enumeration && !NamesAChoice(*info.checker, values[k])
                                    ? nullptr
                                    : info.checker->CreateValidValue(StringValue(values[k]));
        if (v == nullptr || !object.SetAttributeFailSafe(names[k], *v))
        {
            throw std::invalid_argument(what + "::" + names[k] + " = " + values[k] +
                                        " is outside its allowed values (" +
                                        info.checker->GetUnderlyingTypeInformation() + ")");
        }
    }
}

FabricConfig
MakeFabricConfig(const std::vector<FabricSection>& sections)
{
    // the NIC section is the whole config (NicParameters::ApplyTo): it goes first, given or not
    std::vector<Ptr<FabricParameters>> made{CreateObject<NicParameters>()};
    std::vector<TypeId> types{NicParameters::GetTypeId()};
    std::vector<bool> given{false};
    for (const FabricSection& s : sections)
    {
        const TypeId tid = LookupSection(s.typeName);
        std::size_t i = 0;
        while (i < types.size() && types[i] != tid)
        {
            ++i;
        }
        if (i == types.size())
        {
            ObjectFactory f;
            f.SetTypeId(tid);
            made.push_back(f.Create<FabricParameters>());
            types.push_back(tid);
            given.push_back(false);
        }
        if (given[i])
        {
            throw std::invalid_argument("fabric: section " + s.typeName + " given twice");
        }
        given[i] = true;
        SetAttributeStrings(*made[i], "fabric: " + s.typeName, s.names, s.values);
    }
    FabricConfig cfg;
    for (const Ptr<FabricParameters>& p : made)
    {
        p->ApplyTo(cfg);
    }
    return cfg;
}

std::vector<std::string>
FabricSectionTypes()
{
    std::vector<std::string> out;
    const TypeId base = FabricParameters::GetTypeId();
    for (uint16_t i = 0; i < TypeId::GetRegisteredN(); ++i)
    {
        const TypeId tid = TypeId::GetRegistered(i);
        if (tid != base && tid.IsChildOf(base) && tid.HasConstructor())
        {
            out.push_back(tid.GetName());
        }
    }
    return out;
}

} // namespace ecngym
} // namespace ns3
