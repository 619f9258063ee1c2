/*
 * ecngym env (envs/kernel/): one env step's per-port features, history, reward and episode statistics.
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
 * \brief The env's per-step arithmetic on a telemetry block, in one call: the one definition of
 * its observation features and rewards.
 *
 * ecngym.envs computes, every step, a few features of each controlled port from the interval's
 * telemetry (the block: rows of uint64 / int64 / float64 quantities, one column per port; and
 * the per-policy arrays of float64, PortAqmPolicy::ReadTelemetry's), pushes them onto a history
 * ring, computes a per-port reward and keeps a few rows for the episode summary. This class is
 * where that arithmetic is written: ecngym.envs.observation and ecngym.envs.reward compile an
 * env's config into its program (ecngym.envs.step_kernel runs it), and tests/envs hold a NumPy
 * transcription as the test oracle, compared to the bit on whole episodes.
 *
 * The program is a list of feature columns and one reward. Every operand a column reads is a
 * telemetry row converted to double exactly as NumPy converts it (uint64 and int64 rounded to
 * nearest, float64 as stored), a per-policy value, or a column of the ports' current setting
 * (SetSetting). Operations round as NumPy's element-wise ones do, one product or sum at a time:
 * compile without floating-point contraction (no FMA).
 */
class PortFeatureKernel
{
  public:
    /** What a feature column computes from its operands x (operand a) and y (operand b). */
    enum class ColumnOp : int32_t
    {
        ScaleMin = 0, //!< min(x * scale, cap); scale = 1 / span of the step when scaleBySpan
        DivMin = 1,   //!< min(x / scale, cap)
        RatioMin = 2, //!< min(x / max(y, 1), 1)
        Saturate = 3, //!< x / (x + scale)
        StepMap = 4,  //!< the step levels at the count of breakpoints below x
        Copy = 5,     //!< x
        Unit = 6,     //!< clip((x - offset) / scale, 0, 1)
        Zero = 7,     //!< 0
    };

    /** What the reward computes. */
    enum class RewardOp : int32_t
    {
        Zero = 0, //!< 0 (a reward paid at the episode's end)
        Acc = 1,  //!< min(u, 1) * omega + (1 - omega) * step(q)
        Pred = 2, //!< beta * min(tx * (goodput / spanFraction), 1) + (1 - beta) * PredPhi(q)
    };

    /**
     * One feature column. An operand is a row of the block (kind 'u' uint64, 'i' int64, 'f'
     * float64), the index of a per-policy array (kind 'p'), or a column of the setting (kind 's').
     */
    struct Column
    {
        ColumnOp op{ColumnOp::Zero};    //!< what it computes
        int32_t rowA{0};                //!< row, array or setting column of x
        char kindA{'f'};                //!< its kind
        int32_t rowB{0};                //!< row, array or setting column of y (RatioMin)
        char kindB{'f'};                //!< its kind
        double scale{1.0};              //!< ScaleMin's factor, DivMin's divisor, Saturate's constant, Unit's span
        double cap{1.0};                //!< ScaleMin's and DivMin's bound
        double offset{0.0};             //!< Unit's low end
        bool scaleBySpan{false};        //!< ScaleMin: the factor is 1 / span of the step
        bool finiteA{false};            //!< x as np.nan_to_num(x, nan=0.0): NaN 0, +-inf the largest finite
        std::vector<double> portScale;  //!< empty, or x * portScale[i] at controlled port i (after finiteA)
    };

    /** One step's telemetry, as the fabric reads it. */
    struct Telemetry
    {
        const uint64_t* block{nullptr};         //!< rows x totalPorts words, row-major
        std::size_t rows{0};                    //!< rows of block
        std::size_t totalPorts{0};              //!< columns of block, and the length of each array
        const double* const* policy{nullptr};   //!< the per-policy arrays the program reads ('p')
        std::size_t policyArrays{0};            //!< how many
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
     * \brief Set the controlled ports' current setting, which the 's' operands read.
     * \param values ports x columns doubles, row-major.
     * \param columns Columns per port.
     */
    void SetSetting(std::vector<double> values, std::size_t columns);

    /**
     * \brief One step.
     * \param t The interval's telemetry.
     * \param ports The controlled ports' columns, n of them.
     * \param n Controlled ports.
     * \param spanNs Length of the interval (ScaleMin by span uses 1 / max(span, 1)).
     * \param spanFraction The step's length / the env's interval (Pred's reward).
     * \param frame n x columns doubles: the frame of the interval.
     * \param hist n x history x columns floats, oldest first: shifted by one, frame appended.
     * \param reward n doubles: each port's reward.
     * \param stats statRows x n words: the statistics rows of the controlled ports.
     */
    void Step(const Telemetry& t,
              const int64_t* ports,
              std::size_t n,
              int64_t spanNs,
              double spanFraction,
              double* frame,
              float* hist,
              double* reward,
              uint64_t* stats) const;

    /**
     * \brief Start a history: the frame of \p t (over a span of 1 ns) in every slot.
     * \param t The telemetry at the episode's start.
     * \param ports The controlled ports' columns, n of them.
     * \param n Controlled ports.
     * \param frame n x columns doubles: the frame.
     * \param hist n x history x columns floats: the frame in every slot.
     */
    void Reset(const Telemetry& t, const int64_t* ports, std::size_t n, double* frame, float* hist) const;

    /**
     * \brief The reward alone (no features, history or statistics).
     * \param t The interval's telemetry (the block is read).
     * \param ports The controlled ports' columns, n of them.
     * \param n Controlled ports.
     * \param spanFraction The step's length / the env's interval (Pred's reward).
     * \param reward n doubles: each port's reward.
     */
    void Reward(const Telemetry& t, const int64_t* ports, std::size_t n, double spanFraction, double* reward) const;

    /**
     * \brief PRED's queue term Phi (PRED, Sec. IV-B): 1 up to q_left, linear down to 0 at q_max.
     * \param q Queue bytes.
     * \param qMax q_max in bytes.
     * \param qSpan q_max - q_left in bytes.
     * \return clip((qMax - q) / qSpan, 0, 1), as np.clip rounds and treats NaN.
     */
    static double PredPhi(double q, double qMax, double qSpan);

    /** \return The number of feature columns. */
    std::size_t GetColumns() const;

    /** \return The number of frames in the history ring. */
    std::size_t GetHistory() const;

    /** \return The number of telemetry rows kept for the statistics. */
    std::size_t GetStatRows() const;

  private:
    /** \return The step level of x at controlled port i (NumPy's rule for NaN included). */
    double Level(double x, std::size_t i) const;

    /** \brief Operand (row, kind) of every controlled port into \p out (n doubles). */
    void Gather(const Telemetry& t, int32_t row, char kind, const int64_t* ports, std::size_t n, double* out) const;

    /**
     * \brief Throw unless \p t, \p ports and the program fit each other.
     * \param features Whether the feature columns are read.
     * \param statistics Whether the statistics rows are read.
     */
    void Check(const Telemetry& t, const int64_t* ports, std::size_t n, bool features, bool statistics) const;

    /**
     * \brief The frame of the controlled ports, column by column, into \p frame (n x columns).
     * \param invSpan 1 / span of the step (ScaleMin by span).
     */
    void Frame(const Telemetry& t, const int64_t* ports, std::size_t n, double invSpan, double* frame) const;

    /** \return The reward of controlled port i. */
    double PortReward(const Telemetry& t, const int64_t* ports, std::size_t i, double spanFraction) const;

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
    std::vector<double> m_setting;      //!< the controlled ports' setting, ports x m_settingColumns
    std::size_t m_settingColumns{0};    //!< columns of m_setting
    mutable std::vector<double> m_x;    //!< scratch: a column's x of every port
    mutable std::vector<double> m_y;    //!< scratch: a column's y of every port
};

} // namespace ecngym
} // namespace ns3

#endif // ECNGYM_PORT_FEATURE_KERNEL_H
