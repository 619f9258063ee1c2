/*
 * ecngym fabric: one env step's per-port features, history, reward and episode statistics.
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_PORT_FEATURE_KERNEL_H
#define ECNGYM_PORT_FEATURE_KERNEL_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ns3
{
namespace ecngym
{

/**
 * \brief The env's per-step arithmetic on a telemetry block, in one call.
 *
 * ecngym.envs computes, every step, a few features of each controlled port from the interval's
 * telemetry block (rows of uint64 / int64 / float64 quantities, one column per port), pushes them
 * onto a history ring, computes a per-port reward and keeps a few rows for the episode summary.
 * In NumPy that is some thirty small array operations per step, most of their cost per call;
 * this class runs the same arithmetic, element by element in the same order and precision, so
 * its results are bit-identical to the NumPy path (ecngym.envs.step_kernel, which builds the
 * program and keeps the NumPy path for what the kernel does not cover).
 *
 * The program is a list of feature columns and one reward; every operand a column reads is a
 * telemetry row converted to double exactly as NumPy converts it (uint64 and int64 rounded to
 * nearest, float64 as stored). Compile without floating-point contraction (no FMA): NumPy rounds
 * every product and sum on its own.
 */
class PortFeatureKernel
{
  public:
    /** What a feature column computes from its operands x (row a) and y (row b). */
    enum class ColumnOp : int32_t
    {
        Keep = 0,      //!< not written (a column the caller maintains)
        ScaleMin = 1,  //!< min(x * scale, cap); scale = 1 / span when scaleBySpan
        RatioMin = 2,  //!< min(x / max(y, 1), 1)
        Saturate = 3,  //!< x / (x + scale)
        StepMap = 4,   //!< the step levels at the count of breakpoints below x
    };

    /** What the reward computes. */
    enum class RewardOp : int32_t
    {
        Zero = 0, //!< 0 (a reward paid at the episode's end)
        Acc = 1,  //!< min(u, 1) * omega + (1 - omega) * step(q)
        Pred = 2, //!< beta * min(tx * (goodput / spanFraction), 1) + (1 - beta) * clip((qMax - q) / qSpan, 0, 1)
    };

    /** One feature column. */
    struct Column
    {
        ColumnOp op{ColumnOp::Keep}; //!< what it computes
        int32_t rowA{0};             //!< telemetry row of x
        char kindA{'f'};             //!< its kind: 'u' uint64, 'i' int64, 'f' float64
        int32_t rowB{0};             //!< telemetry row of y (RatioMin)
        char kindB{'f'};             //!< its kind
        double scale{1.0};           //!< ScaleMin's factor, Saturate's constant
        double cap{1.0};             //!< ScaleMin's bound
        bool scaleBySpan{false};     //!< ScaleMin: the factor is 1 / span of the step
    };

    /**
     * \param columns The feature columns, in the observation's order.
     * \param breakpoints Step-map breakpoints: one increasing row (shared by every port) or one
     *        row per controlled port, row-major.
     * \param levels The step levels, one more than breakpoints per row.
     * \param sharedBreakpoints Whether \p breakpoints is one row for every port.
     * \param history Frames kept in the history ring.
     */
    PortFeatureKernel(std::vector<Column> columns,
                      std::vector<double> breakpoints,
                      std::vector<double> levels,
                      bool sharedBreakpoints,
                      std::size_t history);

    /**
     * \brief Set the reward.
     * \param op What it computes.
     * \param rowU, kindU Telemetry row of the utilisation (Acc).
     * \param rowQ, kindQ Telemetry row of the mean queue bytes (Acc, Pred).
     * \param rowTx, kindTx Telemetry row of the data bytes sent (Pred).
     * \param weight omega (Acc) or beta (Pred).
     * \param oneMinusWeight 1 - weight, as the caller computed it.
     * \param qMax Pred's q_max in bytes.
     * \param qSpan Pred's q_max - q_left in bytes, as the caller computed it (in integers).
     * \param goodputPerByte Pred's R / C per data byte, one per controlled port.
     */
    void SetReward(RewardOp op,
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
                   std::vector<double> goodputPerByte);

    /**
     * \brief Set the telemetry rows copied (as raw 64-bit words) for the episode statistics.
     * \param rows Telemetry rows, in the order they are stored per step.
     */
    void SetStatRows(std::vector<int32_t> rows);

    /**
     * \brief One step.
     * \param block The telemetry block, rows x totalPorts uint64, row-major.
     * \param rows Rows of \p block.
     * \param totalPorts Columns of \p block.
     * \param ports The controlled ports' columns, n of them.
     * \param n Controlled ports.
     * \param spanNs Length of the interval (ScaleMin by span uses 1 / max(span, 1)).
     * \param spanFraction The step's length / the env's interval (Pred's reward).
     * \param frame n x columns doubles: the columns the program writes are overwritten.
     * \param hist n x history x columns floats, oldest first: shifted by one, frame appended.
     * \param reward n doubles: each port's reward.
     * \param stats statRows x n words: the statistics rows of the controlled ports.
     */
    void Step(const uint64_t* block,
              std::size_t rows,
              std::size_t totalPorts,
              const int64_t* ports,
              std::size_t n,
              int64_t spanNs,
              double spanFraction,
              double* frame,
              float* hist,
              double* reward,
              uint64_t* stats) const;

    /** \return The number of feature columns. */
    std::size_t GetColumns() const;

    /** \return The number of frames in the history ring. */
    std::size_t GetHistory() const;

    /** \return The number of telemetry rows kept for the statistics. */
    std::size_t GetStatRows() const;

  private:
    /** \return The step level of x at controlled port i (NumPy's rule for NaN included). */
    double Level(double x, std::size_t i) const;

    std::vector<Column> m_columns;      //!< the feature columns
    std::vector<double> m_breakpoints;  //!< step-map breakpoints (one row or one per port)
    std::vector<double> m_levels;       //!< step levels (breakpoints per row + 1)
    bool m_sharedBreakpoints;           //!< whether m_breakpoints is one row
    std::size_t m_breaks;               //!< breakpoints per row
    std::size_t m_history;              //!< frames in the history ring
    RewardOp m_reward{RewardOp::Zero};  //!< the reward
    int32_t m_rowU{0};                  //!< utilisation row
    char m_kindU{'f'};                  //!< its kind
    int32_t m_rowQ{0};                  //!< mean queue row
    char m_kindQ{'f'};                  //!< its kind
    int32_t m_rowTx{0};                 //!< data bytes sent row
    char m_kindTx{'u'};                 //!< its kind
    double m_weight{0.0};               //!< omega or beta
    double m_oneMinusWeight{1.0};       //!< 1 - weight
    double m_qMax{1.0};                 //!< Pred's q_max
    double m_qSpan{1.0};                //!< Pred's q_max - q_left
    std::vector<double> m_goodputPerByte; //!< Pred's R / C per byte, per controlled port
    std::vector<int32_t> m_statRows;    //!< rows copied for the statistics
};

} // namespace ecngym
} // namespace ns3

#endif // ECNGYM_PORT_FEATURE_KERNEL_H
