/*
 * ecngym fabric: a Broadcom-style shared-buffer MMU with per-(ingress port, priority) accounting.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_SHARED_BUFFER_MMU_H
#define ECNGYM_SHARED_BUFFER_MMU_H

#include <cstdint>
#include <vector>

namespace ns3
{
namespace ecngym
{

/**
 * @brief Ingress accounting of a switch's shared packet buffer, and the PFC decisions it drives.
 *
 * Each data byte is charged to the (ingress port, priority) it arrived on, in this order:
 *  - reserved: the first `reserveBytes` of each (port, priority) are guaranteed;
 *  - shared: beyond that, up to the dynamic threshold of the ingress port
 *      T = alpha[port] * (buffer - sum(headroom) - sum(reserve) - shared_used)
 *    (Broadcom's dynamic threshold; smaller alpha = PFC triggers earlier);
 *  - headroom: with PFC on, bytes beyond T land in the port's headroom, which absorbs what is in
 *    flight after a PAUSE; a packet that fits neither is dropped.
 * With PFC off, bytes beyond T are dropped (the dynamic threshold is then a drop threshold).
 *
 * PFC: a (port, priority) asks for XOFF when it uses headroom or its shared use reaches T, and for
 * XON once its headroom is empty and its shared use is zero or at least `resumeOffsetBytes` below
 * T.
 * Control packets (queue 0) are not charged.
 */
class SharedBufferMmu
{
  public:
    /** @brief Static configuration of one switch's buffer. */
    struct Config
    {
        uint64_t bufferBytes{32ULL << 20};  //!< total packet buffer
        uint64_t reserveBytes{4096};        //!< guaranteed bytes per (ingress port, priority)
        uint64_t headroomBytes{37500};      //!< PFC headroom per ingress port
        uint64_t resumeOffsetBytes{3072};   //!< XON hysteresis below the threshold
        double alpha{0.125};                //!< dynamic-threshold factor
        bool pfcEnabled{true};              //!< lossless (PFC) or lossy (drop above threshold)
    };

    /**
     * @brief Size the accounting tables.
     * @param numPorts ports of the switch
     * @param numQueues queues per port (including the control queue)
     * @param config buffer configuration
     */
    void Setup(uint32_t numPorts, uint8_t numQueues, const Config& config);

    /**
     * @brief Change alpha and headroom of every port at run time (a ByteTuning-style action).
     * @param alpha new dynamic-threshold factor (> 0)
     * @param headroomBytes new headroom per ingress port
     */
    void SetPfcParameters(double alpha, uint64_t headroomBytes);

    /**
     * @brief Set one ingress port's alpha and headroom (the HPCC model sets them per port: headroom
     *        from the link's rate x delay, alpha from its rate relative to the NICs').
     * @param port ingress port
     * @param alpha dynamic-threshold factor of that port (> 0)
     * @param headroomBytes headroom of each of that port's priorities
     */
    void SetPortPfcParameters(uint16_t port, double alpha, uint64_t headroomBytes);

    /** @param enabled whether PFC is on (lossless) */
    void SetPfcEnabled(bool enabled)
    {
        m_cfg.pfcEnabled = enabled;
    }

    /**
     * @brief Try to admit a data packet and charge it.
     * @param port ingress port
     * @param queue priority
     * @param bytes wire size
     * @return false if the packet must be dropped (nothing charged)
     */
    bool Admit(uint16_t port, uint8_t queue, uint32_t bytes);

    /**
     * @brief Return a departed packet's bytes.
     * @param port ingress port it was charged to
     * @param queue priority
     * @param bytes wire size
     */
    void Release(uint16_t port, uint8_t queue, uint32_t bytes);

    /**
     * @param port ingress port
     * @param queue priority
     * @return whether this (port, priority) should be paused now
     */
    bool ShouldPause(uint16_t port, uint8_t queue) const;

    /**
     * @param port ingress port
     * @param queue priority
     * @return whether a paused (port, priority) may resume now
     */
    bool ShouldResume(uint16_t port, uint8_t queue) const;

    /**
     * @param port ingress port
     * @return the current dynamic threshold T of that port in bytes
     */
    uint64_t GetPfcThreshold(uint16_t port) const;

    /**
     * @param port ingress port
     * @return that port's dynamic-threshold factor
     */
    double GetPortAlpha(uint16_t port) const
    {
        return m_portAlpha[port];
    }

    /**
     * @param port ingress port
     * @return that port's headroom per priority
     */
    uint64_t GetPortHeadroom(uint16_t port) const
    {
        return m_portHeadroom[port];
    }

    /** @return bytes currently charged (reserved + shared + headroom) */
    uint64_t GetUsedBytes() const
    {
        return m_usedBytes;
    }

    /** @return the configuration in force */
    const Config& GetConfig() const
    {
        return m_cfg;
    }

  private:
    std::size_t Index(uint16_t port, uint8_t queue) const
    {
        return static_cast<std::size_t>(port) * m_numQueues + queue;
    }

    uint64_t SharedUse(std::size_t i) const
    {
        return m_queues[i].ingressBytes > m_cfg.reserveBytes ? m_queues[i].ingressBytes - m_cfg.reserveBytes
                                                             : 0;
    }

    Config m_cfg;
    uint32_t m_numPorts{0};
    std::vector<double> m_portAlpha;        //!< dynamic-threshold factor per ingress port
    std::vector<uint64_t> m_portHeadroom;   //!< headroom per (ingress port, priority), by port
    uint64_t m_totalHeadroomBytes{0};       //!< sum of m_portHeadroom
    uint8_t m_numQueues{0};
    /** The counters of one (ingress port, priority), side by side: every packet reads both. */
    struct QueueUse
    {
        uint64_t ingressBytes{0};  //!< reserved + shared
        uint64_t headroomBytes{0}; //!< headroom in use
    };

    std::vector<QueueUse> m_queues; //!< per (port, queue)
    uint64_t m_sharedUsed{0};              //!< sum of shared use over all (port, queue)
    uint64_t m_usedBytes{0};               //!< all charged bytes
};

} // namespace ecngym
} // namespace ns3

#endif
