/*
 * ecngym env (envs/kernel/): one env step's per-port features, history, reward and episode statistics.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "port-feature-kernel.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>

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

/** np.clip(x, lo, hi) for floats: max first, then min, NaN kept (and -0.0 kept at lo = 0). */
inline double
Clip(double x, double lo, double hi)
{
    return Min(Max(x, lo), hi);
}

/** np.nan_to_num(x, nan=0.0): NaN 0, +-inf the largest finite double of its sign. */
inline double
Finite(double x)
{
    if (std::isnan(x))
    {
        return 0.0;
    }
    if (std::isinf(x))
    {
        return x > 0 ? std::numeric_limits<double>::max() : std::numeric_limits<double>::lowest();
    }
    return x;
}

bool
IsRowKind(char kind)
{
    return kind == 'u' || kind == 'i' || kind == 'f';
}

void
CheckRowKind(char kind)
{
    if (!IsRowKind(kind))
    {
        throw std::invalid_argument("PortFeatureKernel: a row's kind must be 'u', 'i' or 'f'");
    }
}

void
CheckOperandKind(char kind)
{
    if (!IsRowKind(kind) && kind != 'p' && kind != 's')
    {
        throw std::invalid_argument("PortFeatureKernel: an operand's kind must be 'u', 'i', 'f' (a block row), "
                                    "'p' (a per-policy array) or 's' (a setting column)");
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
        CheckOperandKind(c.kindA);
        CheckOperandKind(c.kindB);
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
    CheckRowKind(kindU);
    CheckRowKind(kindQ);
    CheckRowKind(kindTx);
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

void
PortFeatureKernel::SetSetting(std::vector<double> values, std::size_t columns)
{
    if (columns == 0 ? !values.empty() : values.size() % columns != 0)
    {
        throw std::invalid_argument("PortFeatureKernel: the setting must be rows of its columns");
    }
    m_setting = std::move(values);
    m_settingColumns = columns;
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
PortFeatureKernel::PredPhi(double q, double qMax, double qSpan)
{
    return Clip((qMax - q) / qSpan, 0.0, 1.0);
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
PortFeatureKernel::Gather(const Telemetry& t,
                          int32_t row,
                          char kind,
                          const int64_t* ports,
                          std::size_t n,
                          double* out) const
{
    if (kind == 'p')
    {
        const double* a = t.policy[row];
        for (std::size_t i = 0; i < n; ++i)
        {
            out[i] = a[ports[i]];
        }
    }
    else if (kind == 's')
    {
        for (std::size_t i = 0; i < n; ++i)
        {
            out[i] = m_setting[i * m_settingColumns + static_cast<std::size_t>(row)];
        }
    }
    else
    {
        const uint64_t* words = t.block + static_cast<std::size_t>(row) * t.totalPorts;
        for (std::size_t i = 0; i < n; ++i)
        {
            out[i] = AsDouble(words[ports[i]], kind);
        }
    }
}

void
PortFeatureKernel::Check(const Telemetry& t, const int64_t* ports, std::size_t n, bool features, bool statistics) const
{
    for (std::size_t i = 0; i < n; ++i)
    {
        if (ports[i] < 0 || static_cast<std::size_t>(ports[i]) >= t.totalPorts)
        {
            throw std::out_of_range("PortFeatureKernel: a controlled port is not a column of the block");
        }
    }
    auto checkRow = [&](int32_t row) {
        if (row < 0 || static_cast<std::size_t>(row) >= t.rows)
        {
            throw std::out_of_range("PortFeatureKernel: a telemetry row is not a row of the block");
        }
    };
    auto checkOperand = [&](int32_t row, char kind) {
        if (kind == 'p')
        {
            if (row < 0 || static_cast<std::size_t>(row) >= t.policyArrays || t.policy[row] == nullptr)
            {
                throw std::out_of_range("PortFeatureKernel: a per-policy operand is not one of the arrays given");
            }
        }
        else if (kind == 's')
        {
            if (row < 0 || static_cast<std::size_t>(row) >= m_settingColumns || m_setting.size() != n * m_settingColumns)
            {
                throw std::out_of_range("PortFeatureKernel: a setting operand is not a column of the setting "
                                        "(set_setting: one row per controlled port)");
            }
        }
        else
        {
            checkRow(row);
        }
    };
    if (features)
    {
        for (const Column& c : m_columns)
        {
            if (c.op != ColumnOp::Zero)
            {
                checkOperand(c.rowA, c.kindA);
            }
            if (c.op == ColumnOp::RatioMin)
            {
                checkOperand(c.rowB, c.kindB);
            }
            if (!c.portScale.empty() && c.portScale.size() != n)
            {
                throw std::invalid_argument("PortFeatureKernel: a column's port scale needs one value per port");
            }
        }
    }
    checkRow(m_rowU);
    checkRow(m_rowQ);
    checkRow(m_rowTx);
    if (m_reward == RewardOp::Pred && m_goodputPerByte.size() != n)
    {
        throw std::invalid_argument("PortFeatureKernel: the pred reward needs one goodput scale per port");
    }
    if (statistics)
    {
        for (int32_t r : m_statRows)
        {
            checkRow(r);
        }
    }
}

void
PortFeatureKernel::Frame(const Telemetry& t, const int64_t* ports, std::size_t n, double invSpan, double* frame) const
{
    const std::size_t f = m_columns.size();
    m_x.resize(n);
    m_y.resize(n);
    double* x = m_x.data();
    double* y = m_y.data();
    for (std::size_t k = 0; k < f; ++k)
    {
        const Column& c = m_columns[k];
        double* out = frame + k; // out[i * f]: port i's value
        if (c.op == ColumnOp::Zero)
        {
            for (std::size_t i = 0; i < n; ++i)
            {
                out[i * f] = 0.0;
            }
            continue;
        }
        Gather(t, c.rowA, c.kindA, ports, n, x);
        if (c.finiteA)
        {
            for (std::size_t i = 0; i < n; ++i)
            {
                x[i] = Finite(x[i]);
            }
        }
        if (!c.portScale.empty())
        {
            const double* scale = c.portScale.data();
            for (std::size_t i = 0; i < n; ++i)
            {
                x[i] = x[i] * scale[i];
            }
        }
        const double scale = c.op == ColumnOp::ScaleMin && c.scaleBySpan ? invSpan : c.scale;
        const double cap = c.cap;
        const double offset = c.offset;
        switch (c.op)
        {
        case ColumnOp::ScaleMin:
            for (std::size_t i = 0; i < n; ++i)
            {
                out[i * f] = Min(x[i] * scale, cap);
            }
            break;
        case ColumnOp::DivMin:
            for (std::size_t i = 0; i < n; ++i)
            {
                out[i * f] = Min(x[i] / scale, cap);
            }
            break;
        case ColumnOp::RatioMin:
            Gather(t, c.rowB, c.kindB, ports, n, y);
            for (std::size_t i = 0; i < n; ++i)
            {
                out[i * f] = Min(x[i] / Max(y[i], 1.0), 1.0);
            }
            break;
        case ColumnOp::Saturate:
            for (std::size_t i = 0; i < n; ++i)
            {
                out[i * f] = x[i] / (x[i] + scale);
            }
            break;
        case ColumnOp::StepMap:
            for (std::size_t i = 0; i < n; ++i)
            {
                out[i * f] = Level(x[i], i);
            }
            break;
        case ColumnOp::Copy:
            for (std::size_t i = 0; i < n; ++i)
            {
                out[i * f] = x[i];
            }
            break;
        case ColumnOp::Unit:
            for (std::size_t i = 0; i < n; ++i)
            {
                out[i * f] = Clip((x[i] - offset) / scale, 0.0, 1.0);
            }
            break;
        default:
            for (std::size_t i = 0; i < n; ++i)
            {
                out[i * f] = 0.0;
            }
        }
    }
}

double
PortFeatureKernel::PortReward(const Telemetry& t, const int64_t* ports, std::size_t i, double spanFraction) const
{
    const std::size_t column = static_cast<std::size_t>(ports[i]);
    auto word = [&](int32_t row) { return t.block[static_cast<std::size_t>(row) * t.totalPorts + column]; };
    switch (m_reward)
    {
    case RewardOp::Acc: {
        double r = Min(AsDouble(word(m_rowU), m_kindU), 1.0);
        r *= m_weight;
        r += m_oneMinusWeight * Level(AsDouble(word(m_rowQ), m_kindQ), i);
        return r;
    }
    case RewardOp::Pred: {
        const double rc = Min(AsDouble(word(m_rowTx), m_kindTx) * (m_goodputPerByte[i] / spanFraction), 1.0);
        return m_weight * rc + m_oneMinusWeight * PredPhi(AsDouble(word(m_rowQ), m_kindQ), m_qMax, m_qSpan);
    }
    default:
        return 0.0;
    }
}

void
PortFeatureKernel::Step(const Telemetry& t,
                        const int64_t* ports,
                        std::size_t n,
                        int64_t spanNs,
                        double spanFraction,
                        double* frame,
                        float* hist,
                        double* reward,
                        uint64_t* stats) const
{
    Check(t, ports, n, true, true);
    const std::size_t f = m_columns.size();
    Frame(t, ports, n, 1.0 / static_cast<double>(spanNs > 1 ? spanNs : 1), frame);
    for (std::size_t i = 0; i < n; ++i)
    {
        // the history ring of this port: oldest first, the new frame last
        const double* out = frame + i * f;
        float* h = hist + i * m_history * f;
        std::memmove(h, h + f, (m_history - 1) * f * sizeof(float));
        for (std::size_t k = 0; k < f; ++k)
        {
            h[(m_history - 1) * f + k] = static_cast<float>(out[k]);
        }
        reward[i] = PortReward(t, ports, i, spanFraction);
        const std::size_t column = static_cast<std::size_t>(ports[i]);
        for (std::size_t s = 0; s < m_statRows.size(); ++s)
        {
            stats[s * n + i] = t.block[static_cast<std::size_t>(m_statRows[s]) * t.totalPorts + column];
        }
    }
}

void
PortFeatureKernel::Reset(const Telemetry& t, const int64_t* ports, std::size_t n, double* frame, float* hist) const
{
    Check(t, ports, n, true, false);
    const std::size_t f = m_columns.size();
    Frame(t, ports, n, 1.0, frame); // a span of 1 ns: 1 / max(1, 1)
    for (std::size_t i = 0; i < n; ++i)
    {
        const double* out = frame + i * f;
        float* h = hist + i * m_history * f;
        for (std::size_t slot = 0; slot < m_history; ++slot)
        {
            for (std::size_t k = 0; k < f; ++k)
            {
                h[slot * f + k] = static_cast<float>(out[k]);
            }
        }
    }
}

void
PortFeatureKernel::Reward(const Telemetry& t, const int64_t* ports, std::size_t n, double spanFraction, double* reward) const
{
    Check(t, ports, n, false, false);
    for (std::size_t i = 0; i < n; ++i)
    {
        reward[i] = PortReward(t, ports, i, spanFraction);
    }
}

} // namespace ecngym
} // namespace ns3
