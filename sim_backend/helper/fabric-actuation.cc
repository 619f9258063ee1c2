/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Fabric's actuation: port AQM policies (chosen by TypeId, set from attribute strings or typed
 * bulk values, read back) and PFC parameters, all or nothing.
 */
#include "fabric.h"
#include "fabric-internal.h"

#include "attribute-reflection.h"

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/object-factory.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

namespace ns3
{
namespace ecngym
{

namespace
{
/**
 * The checks set_pfc and set_port_pfc share: the three arrays have one entry per id, every id
 * passes \p idError (an empty string) and every alpha is > 0, reported in index order.
 *
 * \param call the Python method's name, for the length error.
 * \param idsName the ids' argument name.
 * \param idError for an id, the reason it is refused, or "" if it is a valid one.
 */
template <typename IdError>
void
CheckPfcEntries(const char* call,
                const char* idsName,
                const std::vector<uint32_t>& ids,
                const std::vector<double>& alpha,
                const std::vector<uint64_t>& headroomBytes,
                IdError idError)
{
    const std::size_t n = ids.size();
    if (alpha.size() != n || headroomBytes.size() != n)
    {
        throw std::invalid_argument(std::string(call) + ": " + idsName + ", alpha, headroom differ in length");
    }
    for (std::size_t i = 0; i < n; ++i)
    {
        const std::string reason = idError(ids[i]);
        if (!reason.empty())
        {
            throw std::invalid_argument(Where(idsName, i) + ": " + reason);
        }
        if (!(alpha[i] > 0))
        {
            throw std::invalid_argument(Where("alpha", i) + ": must be > 0");
        }
    }
}
} // namespace

SwitchNode*
Fabric::SwitchOfPort(uint32_t portId, std::size_t i, const char* what) const
{
    if (portId >= m_ports.size() || !m_isSwitch[m_portNode[portId]])
    {
        throw std::invalid_argument(Where(what, i) + ": " + std::to_string(portId) +
                                    " is not a switch egress port");
    }
    return PeekPointer(m_switches[m_nodeToSwitch[m_portNode[portId]]]);
}

namespace
{
TypeId
LookupAqmType(const std::string& typeName)
{
    TypeId tid;
    if (!TypeId::LookupByNameFailSafe(typeName, &tid) ||
        !tid.IsChildOf(PortAqmPolicy::GetTypeId()) || !tid.HasConstructor())
    {
        throw std::invalid_argument("aqm: " + typeName + " is not a port AQM policy type");
    }
    return tid;
}

Ptr<PortAqmPolicy>
MakeAqm(const TypeId& tid)
{
    ObjectFactory f;
    f.SetTypeId(tid);
    return f.Create<PortAqmPolicy>();
}

void
ApplyAqmAttributes(PortAqmPolicy& policy,
                   const std::string& typeName,
                   const std::vector<std::string>& names,
                   const std::vector<std::string>& values)
{
    SetAttributeStrings(policy, "aqm: " + typeName, names, values);
    const std::string bad = policy.CheckConsistency();
    if (!bad.empty())
    {
        throw std::invalid_argument("aqm: " + typeName + ": " + bad);
    }
}
} // namespace

void
Fabric::ConfigureAqmBirth()
{
    const FabricConfig& cfg = m_ctx->cfg;
    if (cfg.aqmAttributeNames.size() != cfg.aqmAttributeValues.size())
    {
        throw std::invalid_argument("aqm: aqm_attribute_names and aqm_attribute_values differ in "
                                    "length");
    }
    const TypeId tid = LookupAqmType(cfg.aqmTypeId);
    ApplyAqmAttributes(*MakeAqm(tid), cfg.aqmTypeId, cfg.aqmAttributeNames, cfg.aqmAttributeValues);
    ObjectFactory& factory = m_ctx->aqmFactory;
    factory = ObjectFactory();
    factory.SetTypeId(tid);
    for (std::size_t k = 0; k < cfg.aqmAttributeNames.size(); ++k)
    {
        factory.Set(cfg.aqmAttributeNames[k], StringValue(cfg.aqmAttributeValues[k]));
    }
}

namespace
{
/**
 * One numeric attribute of a policy type as the bulk setter writes it: an unsigned integer, a
 * real or a boolean (0 or 1), with its accessor and checker looked up once per call.
 */
struct NumericAttribute
{
    std::string name;
    TypeId::AttributeInformation info;

    enum class Kind
    {
        Uinteger,
        Double,
        Boolean
    } kind;
};

std::vector<NumericAttribute>
LookupNumericAttributes(const TypeId& tid,
                        const std::string& typeName,
                        const std::vector<std::string>& names)
{
    std::vector<NumericAttribute> out;
    out.reserve(names.size());
    for (const std::string& name : names)
    {
        NumericAttribute a{name, {}, NumericAttribute::Kind::Double};
        if (!tid.LookupAttributeByName(name, &a.info))
        {
            throw std::invalid_argument("aqm: " + typeName + " has no attribute " + name);
        }
        const Ptr<AttributeValue> kind = a.info.checker->Create();
        if (DynamicCast<UintegerValue>(kind))
        {
            a.kind = NumericAttribute::Kind::Uinteger;
        }
        else if (DynamicCast<BooleanValue>(kind))
        {
            a.kind = NumericAttribute::Kind::Boolean;
        }
        else if (!DynamicCast<DoubleValue>(kind))
        {
            throw std::invalid_argument("aqm: " + typeName + "::" + name + " is not a number (" +
                                        a.info.checker->GetUnderlyingTypeInformation() +
                                        "): set it with set_aqm");
        }
        out.push_back(std::move(a));
    }
    return out;
}

/**
 * The attribute value of @p x, or nullptr if @p x is none of the attribute's values (a fraction
 * or a negative for an unsigned integer, not 0 or 1 for a boolean, outside the checker's range,
 * NaN): never rounded or wrapped.
 */
Ptr<AttributeValue>
NumericValue(const NumericAttribute& a, double x)
{
    Ptr<AttributeValue> v;
    switch (a.kind)
    {
    case NumericAttribute::Kind::Uinteger:
        // 2^64 is exact in a double; every whole double below it is a uint64_t
        if (!(x >= 0.0 && x < 18446744073709551616.0 && x == std::floor(x)))
        {
            return nullptr;
        }
        v = Create<UintegerValue>(static_cast<uint64_t>(x));
        break;
    case NumericAttribute::Kind::Boolean:
        if (x != 0.0 && x != 1.0)
        {
            return nullptr;
        }
        v = Create<BooleanValue>(x == 1.0);
        break;
    case NumericAttribute::Kind::Double:
        v = Create<DoubleValue>(x);
        break;
    }
    return a.info.checker->Check(*v) ? v : nullptr;
}

double
NumericOf(const NumericAttribute& a, const AttributeValue& v)
{
    switch (a.kind)
    {
    case NumericAttribute::Kind::Uinteger:
        return static_cast<double>(static_cast<const UintegerValue&>(v).Get());
    case NumericAttribute::Kind::Boolean:
        return static_cast<const BooleanValue&>(v).Get() ? 1.0 : 0.0;
    case NumericAttribute::Kind::Double:
        return static_cast<const DoubleValue&>(v).Get();
    }
    return std::nan("");
}
} // namespace

void
Fabric::SetAqmValues(const std::vector<uint32_t>& portIds,
                     const std::string& typeName,
                     const std::vector<std::string>& names,
                     const double* values)
{
    CheckAlive();
    const TypeId tid = LookupAqmType(typeName);
    const std::vector<NumericAttribute> attrs = LookupNumericAttributes(tid, typeName, names);
    const std::size_t m = attrs.size();
    // Every value is checked against its checker and every port resolved before anything
    // changes; then each port takes its row (a fresh instance first where it runs another type)
    // and the policy's consistency rule is checked with the port's own other parameters. A
    // refusal puts back every port changed so far: old values, old instances.
    std::vector<Ptr<AttributeValue>> converted(portIds.size() * m);
    std::vector<SwitchNode*> switches(portIds.size());
    for (std::size_t i = 0; i < portIds.size(); ++i)
    {
        switches[i] = SwitchOfPort(portIds[i], i, "port_ids");
        for (std::size_t k = 0; k < m; ++k)
        {
            const double x = values[i * m + k];
            converted[i * m + k] = NumericValue(attrs[k], x);
            if (converted[i * m + k] == nullptr)
            {
                std::ostringstream text;
                text.precision(std::numeric_limits<double>::max_digits10);
                text << x;
                throw std::invalid_argument(
                    Where("values", i) + ": aqm: " + typeName + "::" + attrs[k].name + " = " +
                    text.str() + " is outside its allowed values (" +
                    attrs[k].info.checker->GetUnderlyingTypeInformation() + ")");
            }
        }
    }
    struct Saved
    {
        PortAqmPolicy* policy;
        std::vector<Ptr<AttributeValue>> values; //!< the named attributes before this call
    };

    std::vector<Saved> saved;
    std::vector<std::pair<std::size_t, Ptr<PortAqmPolicy>>> fresh; //!< (row, instance) to install
    for (std::size_t i = 0; i < portIds.size(); ++i)
    {
        PortAqmPolicy* policy = switches[i]->GetAqm(m_ports[portIds[i]]->GetLocalIndex());
        if (policy->GetInstanceTypeId() != tid)
        {
            fresh.emplace_back(i, MakeAqm(tid));
            policy = PeekPointer(fresh.back().second);
        }
        else
        {
            Saved before{policy, {}};
            before.values.reserve(m);
            for (std::size_t k = 0; k < m; ++k)
            {
                Ptr<AttributeValue> old = attrs[k].info.checker->Create();
                attrs[k].info.accessor->Get(policy, *old);
                before.values.push_back(old);
            }
            saved.push_back(std::move(before));
        }
        for (std::size_t k = 0; k < m; ++k)
        {
            attrs[k].info.accessor->Set(policy, *converted[i * m + k]);
        }
        const std::string bad = policy->CheckConsistency();
        if (!bad.empty())
        {
            // newest first: a port listed twice ends as it began (plain member accessors: exact)
            for (auto it = saved.rbegin(); it != saved.rend(); ++it)
            {
                for (std::size_t k = 0; k < m; ++k)
                {
                    attrs[k].info.accessor->Set(it->policy, *it->values[k]);
                }
            }
            throw std::invalid_argument("aqm: " + typeName + ": " + Where("port_ids", i) + ": " + bad);
        }
    }
    for (auto& [i, policy] : fresh)
    {
        switches[i]->SetAqm(m_ports[portIds[i]]->GetLocalIndex(), policy);
    }
}

void
Fabric::GetAqmValues(const std::vector<uint32_t>& portIds,
                     const std::string& typeName,
                     const std::vector<std::string>& names,
                     double* out) const
{
    CheckAlive();
    const TypeId tid = LookupAqmType(typeName);
    const std::vector<NumericAttribute> attrs = LookupNumericAttributes(tid, typeName, names);
    const std::size_t m = attrs.size();
    std::vector<Ptr<AttributeValue>> scratch;
    for (const NumericAttribute& a : attrs)
    {
        scratch.push_back(a.info.checker->Create());
    }
    for (std::size_t i = 0; i < portIds.size(); ++i)
    {
        const PortAqmPolicy* policy =
            SwitchOfPort(portIds[i], i, "port_ids")->GetAqm(m_ports[portIds[i]]->GetLocalIndex());
        for (std::size_t k = 0; k < m; ++k)
        {
            if (policy->GetInstanceTypeId() != tid)
            {
                out[i * m + k] = std::nan("");
                continue;
            }
            attrs[k].info.accessor->Get(policy, *scratch[k]);
            out[i * m + k] = NumericOf(attrs[k], *scratch[k]);
        }
    }
}

void
Fabric::SetAqm(const std::vector<uint32_t>& portIds,
               const std::string& typeName,
               const std::vector<std::string>& names,
               const std::vector<std::string>& values)
{
    CheckAlive();
    if (names.size() != values.size())
    {
        throw std::invalid_argument("set_aqm: names and values differ in length");
    }
    const TypeId tid = LookupAqmType(typeName);
    // All or nothing. Every port is resolved first (a bad id changes nothing). A port that gets a
    // fresh instance (and a call with no port) is checked against the defaults on a scratch
    // instance, once, before anything changes. A port already running the policy keeps its other
    // parameters, so its merged setting is what must pass (a partial update can break a
    // consistency rule, e.g. K_min > K_max, or satisfy one only with the port's own values): it
    // is set in place, and a refusal restores every port set so far. Restoring is exact because
    // every policy attribute is a plain member accessor (no setter side effects), and far cheaper
    // than building a scratch policy per port.
    struct Target
    {
        SwitchNode* sw;
        uint16_t local; //!< the port's index on its switch
    };

    std::vector<Target> targets;
    targets.reserve(portIds.size());
    bool checkDefaults = portIds.empty();
    for (std::size_t i = 0; i < portIds.size(); ++i)
    {
        const Target t{SwitchOfPort(portIds[i], i, "port_ids"), m_ports[portIds[i]]->GetLocalIndex()};
        checkDefaults |= t.sw->GetAqm(t.local)->GetInstanceTypeId() != tid;
        targets.push_back(t);
    }
    if (checkDefaults)
    {
        ApplyAqmAttributes(*MakeAqm(tid), typeName, names, values);
    }
    struct Saved
    {
        PortAqmPolicy* policy;
        std::vector<Ptr<AttributeValue>> values; //!< the named attributes before this call
    };

    std::vector<Saved> saved;
    try
    {
        for (const Target& t : targets)
        {
            PortAqmPolicy* current = t.sw->GetAqm(t.local);
            if (current->GetInstanceTypeId() != tid)
            {
                continue;
            }
            Saved before{current, {}};
            for (const std::string& name : names)
            {
                TypeId::AttributeInformation info;
                if (!tid.LookupAttributeByName(name, &info))
                {
                    throw std::invalid_argument("aqm: " + typeName + " has no attribute " + name);
                }
                Ptr<AttributeValue> v = info.checker->Create();
                current->GetAttribute(name, *v);
                before.values.push_back(v);
            }
            saved.push_back(std::move(before));
            ApplyAqmAttributes(*current, typeName, names, values);
        }
    }
    catch (const std::invalid_argument&)
    {
        for (auto it = saved.rbegin(); it != saved.rend(); ++it) // newest first: a port listed twice ends as it began
        {
            for (std::size_t k = 0; k < names.size(); ++k)
            {
                it->policy->SetAttribute(names[k], *it->values[k]);
            }
        }
        throw;
    }
    for (const Target& t : targets)
    {
        if (t.sw->GetAqm(t.local)->GetInstanceTypeId() == tid)
        {
            continue; // set in place above (or a fresh instance given to an earlier entry of this port)
        }
        Ptr<PortAqmPolicy> policy = MakeAqm(tid);
        ApplyAqmAttributes(*policy, typeName, names, values); // passed on the defaults above
        t.sw->SetAqm(t.local, policy);
    }
}

std::string
Fabric::GetAqm(uint32_t portId,
               std::vector<std::string>& names,
               std::vector<std::string>& values) const
{
    SwitchNode* sw = SwitchOfPort(portId, 0, "port_ids");
    PortAqmPolicy* policy = sw->GetAqm(m_ports[portId]->GetLocalIndex());
    const TypeId tid = policy->GetInstanceTypeId();
    names.clear();
    values.clear();
    for (std::size_t k = 0; k < tid.GetAttributeN(); ++k)
    {
        const TypeId::AttributeInformation info = tid.GetAttribute(k);
        names.push_back(info.name);
        if (DynamicCast<DoubleValue>(info.checker->Create()))
        {
            // a DoubleValue's own string has 6 significant digits: set_aqm(get_aqm()) would move it
            DoubleValue v;
            policy->GetAttribute(info.name, v);
            std::ostringstream oss;
            oss.precision(std::numeric_limits<double>::max_digits10);
            oss << v.Get();
            values.push_back(oss.str());
            continue;
        }
        StringValue v;
        policy->GetAttribute(info.name, v);
        values.push_back(v.Get());
    }
    return tid.GetName();
}

std::vector<AttributeDescription>
DescribeAqmType(const std::string& typeName)
{
    return DescribeAttributes(LookupAqmType(typeName));
}

std::vector<AqmTelemetryInfo>
DescribeAqmTelemetry(const std::string& typeName)
{
    return MakeAqm(LookupAqmType(typeName))->DescribeTelemetry();
}

std::vector<std::string>
DescribeAqmActionAttributes(const std::string& typeName)
{
    const TypeId tid = LookupAqmType(typeName);
    std::vector<std::string> names = MakeAqm(tid)->DescribeActionAttributes();
    for (const std::string& name : names)
    {
        TypeId::AttributeInformation info;
        if (!tid.LookupAttributeByName(name, &info))
        {
            throw std::logic_error(typeName + " declares the action attribute " + name +
                                   ", which it does not have");
        }
    }
    return names;
}

std::vector<std::string>
DescribeAqmMarkingCurve(const std::string& typeName)
{
    const TypeId tid = LookupAqmType(typeName);
    std::vector<std::string> names = MakeAqm(tid)->DescribeMarkingCurve();
    if (!names.empty() && names.size() != 3)
    {
        throw std::logic_error(typeName + " declares a marking curve of " + std::to_string(names.size()) +
                               " attributes; a curve is (Kmin, Kmax, Pmax)");
    }
    for (const std::string& name : names)
    {
        TypeId::AttributeInformation info;
        if (!tid.LookupAttributeByName(name, &info))
        {
            throw std::logic_error(typeName + " declares the marking-curve attribute " + name +
                                   ", which it does not have");
        }
    }
    return names;
}

std::string
CheckAqmSetting(const std::string& typeName,
                const std::vector<std::string>& names,
                const std::vector<std::string>& values)
{
    if (names.size() != values.size())
    {
        throw std::invalid_argument("check_aqm: names and values differ in length");
    }
    const TypeId tid = LookupAqmType(typeName);
    try
    {
        ApplyAqmAttributes(*MakeAqm(tid), typeName, names, values);
    }
    catch (const std::invalid_argument& e)
    {
        return e.what();
    }
    return "";
}

void
Fabric::SetPfc(const std::vector<uint32_t>& switchIds,
               const std::vector<double>& alpha,
               const std::vector<uint64_t>& headroomBytes)
{
    CheckAlive();
    CheckPfcEntries("set_pfc", "switch_ids", switchIds, alpha, headroomBytes, [this](uint32_t id) {
        return id < m_switches.size() ? std::string()
                                      : "must be in [0, " + std::to_string(m_switches.size()) + ")";
    });
    for (std::size_t i = 0; i < switchIds.size(); ++i)
    {
        m_switches[switchIds[i]]->Mmu().SetPfcParameters(alpha[i], headroomBytes[i]);
    }
}

void
Fabric::SetPortPfc(const std::vector<uint32_t>& portIds,
                   const std::vector<double>& alpha,
                   const std::vector<uint64_t>& headroomBytes)
{
    CheckAlive();
    CheckPfcEntries("set_port_pfc", "port_ids", portIds, alpha, headroomBytes, [this](uint32_t id) {
        return id < m_ports.size() && m_isSwitch[m_portNode[id]]
                   ? std::string()
                   : std::to_string(id) + " is not a switch port";
    });
    for (std::size_t i = 0; i < portIds.size(); ++i)
    {
        const uint32_t node = m_portNode[portIds[i]];
        m_switches[m_nodeToSwitch[node]]->Mmu().SetPortPfcParameters(
            m_ports[portIds[i]]->GetLocalIndex(), alpha[i], headroomBytes[i]);
    }
}

void
Fabric::GetPortPfc(std::vector<double>& alpha, std::vector<uint64_t>& headroomBytes) const
{
    const std::size_t n = m_ports.size();
    alpha.assign(n, 0.0);
    headroomBytes.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i)
    {
        const uint32_t node = m_portNode[i];
        if (m_isSwitch[node])
        {
            SharedBufferMmu& mmu = m_switches[m_nodeToSwitch[node]]->Mmu();
            alpha[i] = mmu.GetPortAlpha(m_ports[i]->GetLocalIndex());
            headroomBytes[i] = mmu.GetPortHeadroom(m_ports[i]->GetLocalIndex());
        }
    }
}

} // namespace ecngym
} // namespace ns3
