/*
 * ecngym fabric: the congestion-control, NIC and buffer knobs of a fabric as ns-3 attributes.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_FABRIC_PARAMETERS_H
#define ECNGYM_FABRIC_PARAMETERS_H

#include "fabric-config.h"

#include "ns3/object.h"

namespace ns3
{
namespace ecngym
{

/**
 * @brief One section of a FabricConfig (a congestion control, the NIC, the buffer) as ns-3
 *        attributes with checkers: the one home of each knob's name, default and allowed range.
 *
 * Each subclass also is the plain struct its section fills (DcqcnConfig, ...), and its attributes
 * access that struct's members, so a knob is declared once, in GetTypeId(); an attribute's default
 * is the struct member's initializer. The Python FabricConfig reads the sections' attributes
 * (describe_fabric_section) for its fields, defaults and ranges, and builds the C++ config from
 * attribute strings (MakeFabricConfig). Attribute names end in their unit (Ns, Bytes, Bps), which
 * the Python field drops: AlphaIntervalNs is `fabric.dcqcn.alpha_interval` ("1us" or ns).
 *
 * A lower bound of std::numeric_limits<double>::min() in a double checker means "> 0".
 * Attributes are read when a fabric is built, never on a packet's path.
 */
class FabricParameters : public Object
{
  public:
    /**
     * @brief Get the type ID.
     * @return the object TypeId
     */
    static TypeId GetTypeId();

    /** @brief Copy this section's values into @p cfg. */
    virtual void ApplyTo(FabricConfig& cfg) const = 0;
};

/**
 * @brief The fabric-wide FabricConfig fields: the NIC's packet sizes, ACK cadence and timers, and
 *        the choices of congestion control, ECN feedback, NIC pacing, switch ACK queue, ECMP hash
 *        and serialisation rounding (enumerations: their names are Python's values); Python's
 *        top-level `fabric.*` knobs.
 */
class NicParameters : public FabricParameters, public FabricConfig
{
  public:
    /**
     * @brief Get the type ID.
     * @return the object TypeId
     */
    static TypeId GetTypeId();
    /** @brief Replace the whole @p cfg by this one (the NIC knobs set, every other field default). */
    void ApplyTo(FabricConfig& cfg) const override;
};

/** @brief DCQCN reaction point (DcqcnConfig), Python's `fabric.dcqcn`. */
class DcqcnParameters : public FabricParameters, public DcqcnConfig
{
  public:
    /**
     * @brief Get the type ID.
     * @return the object TypeId
     */
    static TypeId GetTypeId();
    void ApplyTo(FabricConfig& cfg) const override;
};

/** @brief Window-based DCTCP host (DctcpConfig without its TCP options), Python's `fabric.dctcp`. */
class DctcpParameters : public FabricParameters, public DctcpConfig
{
  public:
    /**
     * @brief Get the type ID.
     * @return the object TypeId
     */
    static TypeId GetTypeId();
    void ApplyTo(FabricConfig& cfg) const override;
};

/** @brief Rate-based DCTCP (DctcpRateConfig), Python's `fabric.dctcp_rate`. */
class DctcpRateParameters : public FabricParameters, public DctcpRateConfig
{
  public:
    /**
     * @brief Get the type ID.
     * @return the object TypeId
     */
    static TypeId GetTypeId();
    void ApplyTo(FabricConfig& cfg) const override;
};

/** @brief TIMELY (TimelyConfig), Python's `fabric.timely`. */
class TimelyParameters : public FabricParameters, public TimelyConfig
{
  public:
    /**
     * @brief Get the type ID.
     * @return the object TypeId
     */
    static TypeId GetTypeId();
    void ApplyTo(FabricConfig& cfg) const override;
};

/** @brief HPCC (HpccConfig), Python's `fabric.hpcc`. */
class HpccParameters : public FabricParameters, public HpccConfig
{
  public:
    /**
     * @brief Get the type ID.
     * @return the object TypeId
     */
    static TypeId GetTypeId();
    void ApplyTo(FabricConfig& cfg) const override;
};

/**
 * @brief The HPCC model's NIC window (HAS_WIN / VAR_WIN / GLOBAL_T) for any rate-based congestion
 *        control (FabricConfig's nicWindow, varWindow, windowGlobal), Python's `fabric.window`.
 */
class WindowParameters : public FabricParameters
{
  public:
    /**
     * @brief Get the type ID.
     * @return the object TypeId
     */
    static TypeId GetTypeId();
    void ApplyTo(FabricConfig& cfg) const override;

  private:
    // set from the attributes' initial values at construction (GetTypeId: their one home)
    bool m_enabled;  //!< FabricConfig::nicWindow
    bool m_variable; //!< FabricConfig::varWindow
    bool m_global;   //!< FabricConfig::windowGlobal
};

/** @brief The switches' shared buffer and PFC (SharedBufferMmu::Config), Python's `fabric.buffer`. */
class BufferParameters : public FabricParameters, public SharedBufferMmu::Config
{
  public:
    /**
     * @brief Get the type ID.
     * @return the object TypeId
     */
    static TypeId GetTypeId();
    void ApplyTo(FabricConfig& cfg) const override;

  private:
    uint32_t m_pauseQuanta; //!< FabricConfig::pauseQuanta
};

} // namespace ecngym
} // namespace ns3

#endif
