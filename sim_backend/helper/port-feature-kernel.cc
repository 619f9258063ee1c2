/*
 * ecngym fabric: one env step's per-port features, history, reward and episode statistics.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "port-feature-kernel.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <utility>

// NumPy rounds every product and sum on its own: no fused multiply-add here, whatever the flags.
#pragma GCC optimize("fp-contract=off")

namespace ns3
{
namespace ecngym
{

namespace
{

/** A telemetry word as NumPy converts it to float64 (kind 'u', 'i' or 'f'). */
inline double
AsDouble(uint64_t word, char kind)
{
    switch (kind)
    {
    case 'u':
        return static_cast<double>(word);
    case 'i':
        return static_cast<double>(static_cast<int64_t>(word));
    default:
        return std::bit_cast<double>(word);
    }
}

/** np.minimum(a, b) for a double and a bound: NaN in a stays NaN. */
inline double
Min(double a, double b)
{
    return b < a ? b : a;
}

/** np.maximum(a, b): NaN in a stays NaN. */
inline double
Max(double a, double b)
{
    return a < b ? b : a;
}

void
CheckKind(char kind)
{
    if (kind != 'u' && kind != 'i' && kind != 'f')
    {
        throw std::invalid_argument("PortFeatureKernel: a row's kind must be 'u', 'i' or 'f'");
    }
}

} // namespace

PortFeatureKernel::PortFeatureKernel(std::vector<Column> columns,
                                     std::vector<double> breakpoints,
                                     std::vector<double> levels,
                                     bool sharedBreakpoints,
                                     std::size_t history)
    : m_columns(std::move(columns)),
      m_breakpoints(std::move(breakpoints)),
      m_levels(std::move(levels)),
      m_sharedBreakpoints(sharedBreakpoints),
      m_breaks(m_levels.empty() ? 0 : m_levels.size() - 1),
      m_history(history)
{
    if (m_levels.empty() || m_history == 0)
    {
        throw std::invalid_argument("PortFeatureKernel: needs step levels and a history of at least 1");
    }
    if (m_breaks == 0 ? !m_breakpoints.empty() : m_breakpoints.size() % m_breaks != 0)
    {
        throw std::invalid_argument("PortFeatureKernel: breakpoints must be rows of levels - 1");
    }
    for (const Column& c : m_columns)
    {
        CheckKind(c.kindA);
        CheckKind(c.kindB);
    }
}

void
PortFeatureKernel::SetReward(RewardOp op,
                             int32_t rowU,
                             char kindU,
                             int32_t rowQ,
                             char kindQ,
                             int32_t rowTx,
                             char kindTx,
                             double weight,
                             double oneMinusWeight,
                             double qMax,
                             double qSpan,
                             std::vector<double> goodputPerByte)
{
    CheckKind(kindU);
    CheckKind(kindQ);
    CheckKind(kindTx);
    m_reward = op;
    m_rowU = rowU;
    m_kindU = kindU;
    m_rowQ = rowQ;
    m_kindQ = kindQ;
    m_rowTx = rowTx;
    m_kindTx = kindTx;
    m_weight = weight;
    m_oneMinusWeight = oneMinusWeight;
    m_qMax = qMax;
    m_qSpan = qSpan;
    m_goodputPerByte = std::move(goodputPerByte);
}

void
PortFeatureKernel::SetStatRows(std::vector<int32_t> rows)
{
    m_statRows = std::move(rows);
}

std::size_t
PortFeatureKernel::GetColumns() const
{
    return m_columns.size();
}

std::size_t
PortFeatureKernel::GetHistory() const
{
    return m_history;
}

std::size_t
PortFeatureKernel::GetStatRows() const
{
    return m_statRows.size();
}

double
PortFeatureKernel::Level(double x, std::size_t i) const
{
    std::size_t passed = 0;
    if (m_sharedBreakpoints)
    {
        // np.searchsorted(breakpoints, x, side="left"): breakpoints below x; NaN sorts last
        if (std::isnan(x))
        {
            passed = m_breaks;
        }
        else
        {
            while (passed < m_breaks && m_breakpoints[passed] < x)
            {
                ++passed;
            }
        }
    }
    else
    {
        // (x > breakpoints[i]).sum(): NaN passes none
        const double* row = m_breakpoints.data() + i * m_breaks;
        for (std::size_t j = 0; j < m_breaks; ++j)
        {
            passed += x > row[j];
        }
    }
    return m_levels[passed];
}

void
PortFeatureKernel::Step(const uint64_t* block,
                        std::size_t rows,
                        std::size_t totalPorts,
                        const int64_t* ports,
                        std::size_t n,
                        int64_t spanNs,
                        double spanFraction,
                        double* frame,
                        float* hist,
                        double* reward,
                        uint64_t* stats) const
{
    auto word = [&](int32_t row, std::size_t i) { return block[static_cast<std::size_t>(row) * totalPorts + ports[i]]; };
    for (std::size_t i = 0; i < n; ++i)
    {
        if (ports[i] < 0 || static_cast<std::size_t>(ports[i]) >= totalPorts)
        {
            throw std::out_of_range("PortFeatureKernel: a controlled port is not a column of the block");
        }
    }
    auto checkRow = [&](int32_t row) {
        if (row < 0 || static_cast<std::size_t>(row) >= rows)
        {
            throw std::out_of_range("PortFeatureKernel: a telemetry row is not a row of the block");
        }
    };
    for (const Column& c : m_columns)
    {
        checkRow(c.rowA);
        checkRow(c.rowB);
    }
    checkRow(m_rowU);
    checkRow(m_rowQ);
    checkRow(m_rowTx);
    for (int32_t r : m_statRows)
    {
        checkRow(r);
    }
    if (m_reward == RewardOp::Pred && m_goodputPerByte.size() != n)
    {
        throw std::invalid_argument("PortFeatureKernel: the pred reward needs one goodput scale per port");
    }

    const std::size_t f = m_columns.size();
    const double invSpan = 1.0 / static_cast<double>(spanNs > 1 ? spanNs : 1);
    for (std::size_t i = 0; i < n; ++i)
    {
        double* out = frame + i * f;
        for (std::size_t k = 0; k < f; ++k)
        {
            const Column& c = m_columns[k];
            if (c.op == ColumnOp::Keep)
            {
                continue;
            }
            const double x = AsDouble(word(c.rowA, i), c.kindA);
            switch (c.op)
            {
            case ColumnOp::ScaleMin:
                out[k] = Min(x * (c.scaleBySpan ? invSpan : c.scale), c.cap);
                break;
            case ColumnOp::RatioMin:
                out[k] = Min(x / Max(AsDouble(word(c.rowB, i), c.kindB), 1.0), 1.0);
                break;
            case ColumnOp::Saturate:
                out[k] = x / (x + c.scale);
                break;
            case ColumnOp::StepMap:
                out[k] = Level(x, i);
                break;
            default:
                break;
            }
        }
        // the history ring of this port: oldest first, the new frame last
        float* h = hist + i * m_history * f;
        std::memmove(h, h + f, (m_history - 1) * f * sizeof(float));
        for (std::size_t k = 0; k < f; ++k)
        {
            h[(m_history - 1) * f + k] = static_cast<float>(out[k]);
        }
        switch (m_reward)
        {
        case RewardOp::Acc: {
            double r = Min(AsDouble(word(m_rowU, i), m_kindU), 1.0);
            r *= m_weight;
            r += m_oneMinusWeight * Level(AsDouble(word(m_rowQ, i), m_kindQ), i);
            reward[i] = r;
            break;
        }
        case RewardOp::Pred: {
            const double rc =
                Min(AsDouble(word(m_rowTx, i), m_kindTx) * (m_goodputPerByte[i] / spanFraction), 1.0);
            const double phi = Min(Max((m_qMax - AsDouble(word(m_rowQ, i), m_kindQ)) / m_qSpan, 0.0), 1.0);
            reward[i] = m_weight * rc + m_oneMinusWeight * phi;
            break;
        }
        default:
            reward[i] = 0.0;
        }
        for (std::size_t s = 0; s < m_statRows.size(); ++s)
        {
            stats[s * n + i] = word(m_statRows[s], i);
        }
    }
}

} // namespace ecngym
} // namespace ns3
