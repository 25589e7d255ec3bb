#pragma once
// What LSTM, GRU and RNN (RecurrentOps.cpp) and com.microsoft DynamicQuantizeLSTM
// (MsDynamicQuantizeLstmOps.cpp) share: the activation functions, the cells' gate equations and
// the driver (layouts, directions, sequence lengths, initial states, outputs). A kernel hands the
// driver its weights as a policy: the input projection of every step (X W^T) and the recurrent
// product of each step (R^T for the float cells, or a hook that computes h R^T itself).
// GCC 12 reports -Wmaybe-uninitialized false positives inside Eigen's AVX-512 GEMV kernels,
// which are instantiated by the cells; the warnings point into compiler intrinsics headers.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <Eigen/Core>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "SubnormalFreeMath.h"
#include "onnxlens/engine/EngineError.h"
#include "onnxlens/engine/Kernel.h"
#include "onnxlens/engine/ThreadPool.h"

namespace onnxlens::engine::ops::recurrent {

template <class T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using MatrixMap = Eigen::Map<Matrix<T>>;
template <class T>
using ConstMatrixMap = Eigen::Map<const Matrix<T>>;

// ---------------------------------------------------------------------------------------------
// Activation functions named by the `activations` attribute.

struct Activation {
    enum class Kind {
        Relu,
        Tanh,
        Sigmoid,
        Affine,
        LeakyRelu,
        ThresholdedRelu,
        ScaledTanh,
        HardSigmoid,
        Elu,
        Softsign,
        Softplus
    };
    Kind kind = Kind::Sigmoid;
    float alpha = 0, beta = 0;

    template <class T>
    void apply(T* x, std::int64_t n) const {
        const T a = static_cast<T>(alpha), b = static_cast<T>(beta);
        switch (kind) {
            case Kind::Relu:
                for (std::int64_t i = 0; i < n; ++i) x[i] = std::max(x[i], T(0));
                break;
            // Tanh and Sigmoid, every gate of every step: Eigen's vectorised functions, as the
            // Tanh and Sigmoid operators (recognizer's two bidirectional LSTMs, 80 steps of
            // H = 96: 2.35 -> 1.2 ms at 1 thread against the scalar std::tanh / std::exp loops).
            case Kind::Tanh: {
                Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> v(x, n);
                v = v.tanh();
                break;
            }
            case Kind::Sigmoid: {
                Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> v(x, n);
                v = v.unaryExpr(LogisticWithoutSubnormals{});
                break;
            }
            case Kind::Affine:
                for (std::int64_t i = 0; i < n; ++i) x[i] = a * x[i] + b;
                break;
            case Kind::LeakyRelu:
                for (std::int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0 ? x[i] : a * x[i];
                break;
            case Kind::ThresholdedRelu:
                for (std::int64_t i = 0; i < n; ++i) x[i] = x[i] > a ? x[i] : T(0);
                break;
            case Kind::ScaledTanh:
                for (std::int64_t i = 0; i < n; ++i) x[i] = a * std::tanh(b * x[i]);
                break;
            case Kind::HardSigmoid:
                for (std::int64_t i = 0; i < n; ++i) x[i] = std::clamp(a * x[i] + b, T(0), T(1));
                break;
            case Kind::Elu:
                for (std::int64_t i = 0; i < n; ++i)
                    x[i] = x[i] >= 0 ? x[i] : a * (std::exp(x[i]) - T(1));
                break;
            case Kind::Softsign:
                for (std::int64_t i = 0; i < n; ++i) x[i] = x[i] / (T(1) + std::abs(x[i]));
                break;
            case Kind::Softplus:
                for (std::int64_t i = 0; i < n; ++i)
                    x[i] = x[i] > T(20) ? x[i] : std::log1p(std::exp(x[i]));
                break;
        }
    }
};

// Parses `activations`, consuming activation_alpha / activation_beta in order by the functions
// that take them (the others use their documented defaults).
inline std::vector<Activation> parseActivations(const NodeInfo& node,
                                                const std::vector<std::string>& defaults,
                                                int directions) {
    std::vector<std::string> names = node.getStrings("activations");
    const std::size_t perDirection = defaults.size();
    if (names.empty()) {
        for (int d = 0; d < directions; ++d)
            names.insert(names.end(), defaults.begin(), defaults.end());
    } else if (names.size() == perDirection && directions == 2) {
        names.insert(names.end(), names.begin(), names.end());
    } else if (names.size() != perDirection * static_cast<std::size_t>(directions)) {
        fail("activations must list " + std::to_string(perDirection * directions) +
             " functions, got " + std::to_string(names.size()));
    }
    const auto alphas = node.getFloats("activation_alpha");
    const auto betas = node.getFloats("activation_beta");
    std::size_t nextAlpha = 0, nextBeta = 0;
    auto takeAlpha = [&](float fallback) {
        return nextAlpha < alphas.size() ? alphas[nextAlpha++] : fallback;
    };
    auto takeBeta = [&](float fallback) {
        return nextBeta < betas.size() ? betas[nextBeta++] : fallback;
    };

    std::vector<Activation> result;
    for (const auto& name : names) {
        std::string lower = name;
        std::transform(lower.begin(), lower.end(), lower.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        Activation a;
        using K = Activation::Kind;
        if (lower == "relu")
            a.kind = K::Relu;
        else if (lower == "tanh")
            a.kind = K::Tanh;
        else if (lower == "sigmoid")
            a.kind = K::Sigmoid;
        else if (lower == "affine")
            a = {K::Affine, takeAlpha(1.0f), takeBeta(0.0f)};
        else if (lower == "leakyrelu")
            a = {K::LeakyRelu, takeAlpha(0.01f), 0};
        else if (lower == "thresholdedrelu")
            a = {K::ThresholdedRelu, takeAlpha(1.0f), 0};
        else if (lower == "scaledtanh")
            a = {K::ScaledTanh, takeAlpha(1.0f), takeBeta(1.0f)};
        else if (lower == "hardsigmoid")
            a = {K::HardSigmoid, takeAlpha(0.2f), takeBeta(0.5f)};
        else if (lower == "elu")
            a = {K::Elu, takeAlpha(1.0f), 0};
        else if (lower == "softsign")
            a.kind = K::Softsign;
        else if (lower == "softplus")
            a.kind = K::Softplus;
        else
            fail("unsupported activation function '" + name + "'");
        result.push_back(a);
    }
    return result;
}

template <class T>
void clipValues(T* x, std::int64_t n, float clip) {
    if (clip <= 0) return;
    const T c = static_cast<T>(clip);
    for (std::int64_t i = 0; i < n; ++i) x[i] = std::clamp(x[i], -c, c);
}

// ---------------------------------------------------------------------------------------------
// What the driver hands a cell for one direction.

template <class T>
struct DirectionData {
    std::int64_t batch = 0, hidden = 0;
    std::int64_t direction = 0, step = 0;  // this direction's index; the step being computed
    const T* rT = nullptr;                 // R transposed: [H, gates*H], row-major
    const T* rBias = nullptr;     // [gates*H] or null (already folded into the projection for
                                  // every gate except those a cell keeps separate)
    const T* peephole = nullptr;  // LSTM only: [3H] or null
    const Activation* activations = nullptr;  // this direction's functions
    float clip = 0;
    // LSTM only: when set, adds the recurrent product h R^T to the gates in place of the float
    // product with rT (DynamicQuantizeLSTM's integer product, MsDynamicQuantizeLstmOps.cpp).
    std::function<void(const DirectionData&, const Matrix<T>& h, Matrix<T>& gates)>
        recurrentProduct;
};

// Hidden state h and (LSTM) cell state c of every batch row, updated in place by a step.
template <class T>
struct RecurrentState {
    Matrix<T> h, c;
};

// ---------------------------------------------------------------------------------------------
// Cells. `gates` holds the input projection (with biases) of the active rows for this step; the
// cell adds the recurrent part and writes the new state into `next`.

struct RnnCell {
    static constexpr int kGates = 1;
    static constexpr bool kHasCellState = false;
    static std::vector<std::string> defaultActivations() { return {"Tanh"}; }
    explicit RnnCell(const NodeInfo&) {}
    bool foldRecurrentBias(int) const { return true; }

    template <class T>
    void step(const DirectionData<T>& d, Matrix<T>& gates, const RecurrentState<T>& prev,
              RecurrentState<T>& next) const {
        const ConstMatrixMap<T> rT(d.rT, d.hidden, d.hidden);
        gates.noalias() += prev.h * rT;
        clipValues(gates.data(), gates.size(), d.clip);
        d.activations[0].apply(gates.data(), gates.size());
        next.h = gates;
    }
};

struct GruCell {
    static constexpr int kGates = 3;  // z, r, h
    static constexpr bool kHasCellState = false;
    static std::vector<std::string> defaultActivations() { return {"Sigmoid", "Tanh"}; }
    explicit GruCell(const NodeInfo& node)
        : linearBeforeReset(node.getInt("linear_before_reset", 0) != 0) {}
    // With linear_before_reset the recurrent bias of the h gate is applied inside the reset
    // product.
    bool foldRecurrentBias(int gate) const { return !(linearBeforeReset && gate == 2); }

    template <class T>
    void step(const DirectionData<T>& d, Matrix<T>& gates, const RecurrentState<T>& prev,
              RecurrentState<T>& next) const {
        const std::int64_t H = d.hidden, rows = gates.rows();
        const ConstMatrixMap<T> rT(d.rT, H, 3 * H);
        gates.leftCols(2 * H).noalias() += prev.h * rT.leftCols(2 * H);
        Matrix<T> recurrentH;
        if (linearBeforeReset) {
            recurrentH.noalias() = prev.h * rT.rightCols(H);
            if (d.rBias)
                recurrentH.rowwise() +=
                    Eigen::Map<const Eigen::Matrix<T, 1, Eigen::Dynamic>>(d.rBias + 2 * H, H);
        }
        Matrix<T> resetH(rows, H);
        for (std::int64_t b = 0; b < rows; ++b) {
            T* row = gates.row(b).data();
            clipValues(row, 2 * H, d.clip);
            d.activations[0].apply(row, 2 * H);  // z and r
            const T* reset = row + H;
            if (linearBeforeReset) {
                for (std::int64_t j = 0; j < H; ++j) row[2 * H + j] += reset[j] * recurrentH(b, j);
            } else {
                for (std::int64_t j = 0; j < H; ++j) resetH(b, j) = reset[j] * prev.h(b, j);
            }
        }
        // rows > 0: Eigen offsets the null data pointer of an empty matrix to take a block (UBSan).
        if (!linearBeforeReset && rows > 0)
            gates.rightCols(H).noalias() += resetH * rT.rightCols(H);
        next.h.resize(rows, H);
        for (std::int64_t b = 0; b < rows; ++b) {
            T* row = gates.row(b).data();
            T* candidate = row + 2 * H;
            clipValues(candidate, H, d.clip);
            d.activations[1].apply(candidate, H);
            for (std::int64_t j = 0; j < H; ++j)
                next.h(b, j) = (T(1) - row[j]) * candidate[j] + row[j] * prev.h(b, j);
        }
    }

    bool linearBeforeReset;
};

struct LstmCell {
    static constexpr int kGates = 4;  // i, o, f, c
    static constexpr bool kHasCellState = true;
    static std::vector<std::string> defaultActivations() { return {"Sigmoid", "Tanh", "Tanh"}; }
    explicit LstmCell(const NodeInfo& node) : inputForget(node.getInt("input_forget", 0) != 0) {}
    bool foldRecurrentBias(int) const { return true; }

    template <class T>
    void step(const DirectionData<T>& d, Matrix<T>& gates, const RecurrentState<T>& prev,
              RecurrentState<T>& next) const {
        const std::int64_t H = d.hidden, rows = gates.rows();
        if (d.recurrentProduct)
            d.recurrentProduct(d, prev.h, gates);
        else
            gates.noalias() += prev.h * ConstMatrixMap<T>(d.rT, H, 4 * H);
        const T* pI = d.peephole;
        const T* pO = d.peephole ? d.peephole + H : nullptr;
        const T* pF = d.peephole ? d.peephole + 2 * H : nullptr;
        const Activation &f = d.activations[0], &g = d.activations[1], &h = d.activations[2];
        next.h.resize(rows, H);
        next.c.resize(rows, H);
        for (std::int64_t b = 0; b < rows; ++b) {
            T* in = gates.row(b).data();
            T* out = in + H;
            T* forget = in + 2 * H;
            T* cell = in + 3 * H;
            const T* cPrev = prev.c.row(b).data();
            if (pI)
                for (std::int64_t j = 0; j < H; ++j) in[j] += pI[j] * cPrev[j];
            clipValues(in, H, d.clip);
            f.apply(in, H);
            if (inputForget) {
                for (std::int64_t j = 0; j < H; ++j) forget[j] = T(1) - in[j];
            } else {
                if (pF)
                    for (std::int64_t j = 0; j < H; ++j) forget[j] += pF[j] * cPrev[j];
                clipValues(forget, H, d.clip);
                f.apply(forget, H);
            }
            clipValues(cell, H, d.clip);
            g.apply(cell, H);
            T* cNext = next.c.row(b).data();
            for (std::int64_t j = 0; j < H; ++j) cNext[j] = forget[j] * cPrev[j] + in[j] * cell[j];
            if (pO)
                for (std::int64_t j = 0; j < H; ++j) out[j] += pO[j] * cNext[j];
            clipValues(out, H, d.clip);
            f.apply(out, H);
            T* hNext = next.h.row(b).data();
            for (std::int64_t j = 0; j < H; ++j) hNext[j] = cNext[j];
            h.apply(hNext, H);
            for (std::int64_t j = 0; j < H; ++j) hNext[j] *= out[j];
        }
    }

    bool inputForget;
};

// ---------------------------------------------------------------------------------------------
// The driver.

// Swaps the first two axes of a [A, B, rest] buffer.
template <class T>
void swapLeadingAxes(const T* in, T* out, std::int64_t a, std::int64_t b, std::int64_t rest) {
    for (std::int64_t i = 0; i < a; ++i)
        for (std::int64_t j = 0; j < b; ++j)
            std::copy_n(in + (i * b + j) * rest, rest, out + (j * a + i) * rest);
}

// The attributes every recurrent operator reads.
struct RecurrentConfig {
    int directions = 1;
    bool reverseOnly = false;
    std::int64_t hiddenSize = 0;  // 0: from R
    float clip = 0;
    std::int64_t layout = 0;
    std::vector<Activation> activations;
};

inline RecurrentConfig parseRecurrentConfig(const NodeInfo& node,
                                            const std::vector<std::string>& defaultActivations) {
    RecurrentConfig c;
    const std::string direction = node.getString("direction", "forward");
    if (direction == "forward")
        c.directions = 1;
    else if (direction == "reverse")
        c.directions = 1, c.reverseOnly = true;
    else if (direction == "bidirectional")
        c.directions = 2;
    else
        fail("unknown direction '" + direction + "'");
    c.hiddenSize = node.getInt("hidden_size", 0);
    c.clip = node.getFloat("clip", 0.0f);
    if (node.hasAttribute("clip") && c.clip <= 0) fail("clip must be positive");
    c.layout = node.getInt("layout", 0);
    if (c.layout != 0 && c.layout != 1) fail("layout must be 0 or 1");
    c.activations = parseActivations(node, defaultActivations, c.directions);
    return c;
}

// The sizes of a run: X [seq, batch, input] in layout 0 ([batch, seq, input] in layout 1).
struct RecurrentSizes {
    std::int64_t seq = 0, batch = 0, input = 0, hidden = 0;
};

inline RecurrentSizes recurrentSizes(const RecurrentConfig& config, const Tensor& x,
                                     std::int64_t hidden) {
    if (x.rank() != 3) fail("X must have rank 3, got shape " + shapeToString(x.shape()));
    RecurrentSizes s;
    s.seq = config.layout == 0 ? x.dim(0) : x.dim(1);
    s.batch = config.layout == 0 ? x.dim(1) : x.dim(0);
    s.input = x.dim(2);
    s.hidden = hidden;
    return s;
}

// Fails unless input `name` has `shape` and X's element type `type`.
inline void expectRecurrentInput(const Tensor& t, const Shape& shape, DataType type,
                                 const char* name) {
    if (t.shape() != shape)
        fail(std::string(name) + " has shape " + shapeToString(t.shape()) + ", expected " +
             shapeToString(shape));
    if (t.dtype() != type) fail(std::string(name) + " must have the element type of X");
}

// Runs a recurrent layer: inputs X (0), B (3), sequence_lens (4), initial_h (5), initial_c (6),
// P (7) as ONNX LSTM / GRU / RNN; W and R come through `weights`, which the kernel has checked:
//   weights.project(d, x, rows, projected): projected [rows, G*H] = x [rows, input] W_d^T, for
//     the first `rows` rows of X in layout 0 (the steps some batch row reaches);
//   weights.prepare(d, data, lengths): sets data.rT (R_d^T, [H, G*H]) or data.recurrentProduct.
template <class T, class Cell, class Weights>
void runRecurrent(ThreadPool& pool, const Cell& cell, const RecurrentConfig& config,
                  const RecurrentSizes& sizes, const std::vector<const Value*>& inputs,
                  Weights& weights, std::vector<Value>& outputs) {
    constexpr int G = Cell::kGates;
    const Tensor& xInput = inputTensor(inputs, 0);
    const Tensor* bias = optionalInputTensor(inputs, 3);
    const Tensor* lengthsInput = optionalInputTensor(inputs, 4);
    const Tensor* initialH = optionalInputTensor(inputs, 5);
    const Tensor* initialC = Cell::kHasCellState ? optionalInputTensor(inputs, 6) : nullptr;
    const Tensor* peepholes = Cell::kHasCellState ? optionalInputTensor(inputs, 7) : nullptr;
    const std::int64_t seq = sizes.seq, batch = sizes.batch, inputSize = sizes.input;
    const std::int64_t H = sizes.hidden, D = config.directions;
    const std::int64_t layout = config.layout;

    auto expectShape = [&](const Tensor& t, const Shape& shape, const char* name) {
        expectRecurrentInput(t, shape, xInput.dtype(), name);
    };
    if (bias) expectShape(*bias, {D, 2 * G * H}, "B");
    if (peepholes) expectShape(*peepholes, {D, 3 * H}, "P");
    const Shape stateShape = layout == 0 ? Shape{D, batch, H} : Shape{batch, D, H};
    if (initialH) expectShape(*initialH, stateShape, "initial_h");
    if (initialC) expectShape(*initialC, stateShape, "initial_c");

    std::vector<std::int64_t> lengths(static_cast<std::size_t>(batch), seq);
    if (lengthsInput) {
        if (lengthsInput->numel() != batch)
            fail("sequence_lens must have one entry per batch item");
        lengths = lengthsInput->toInt64Vector();
        for (auto n : lengths)
            if (n < 0 || n > seq)
                fail("sequence_lens entry " + std::to_string(n) + " is outside [0, " +
                     std::to_string(seq) + "]");
    }
    const std::int64_t longest =
        lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());

    // Everything below works in layout 0: X [seq, batch, I], states [D, batch, H].
    std::vector<T> xBuffer, hBuffer, cBuffer;
    const T* x = xInput.data<T>();
    if (layout == 1) {
        xBuffer.resize(static_cast<std::size_t>(xInput.numel()));
        swapLeadingAxes(x, xBuffer.data(), batch, seq, inputSize);
        x = xBuffer.data();
    }
    auto stateInLayout0 = [&](const Tensor* t, std::vector<T>& buffer) -> const T* {
        if (!t || layout == 0) return t ? t->data<T>() : nullptr;
        buffer.resize(static_cast<std::size_t>(t->numel()));
        swapLeadingAxes(t->data<T>(), buffer.data(), batch, D, H);
        return buffer.data();
    };
    const T* h0 = stateInLayout0(initialH, hBuffer);
    const T* c0 = stateInLayout0(initialC, cBuffer);

    Tensor y = Tensor::zeros(xInput.dtype(), {seq, D, batch, H});
    Tensor yH(xInput.dtype(), {D, batch, H});
    Tensor yC(xInput.dtype(), {D, batch, H});
    // One direction: its projection and its steps, writing its own slices of Y, Y_h, Y_c.
    auto runDirection = [&](std::int64_t d) {
        const bool reverse = config.reverseOnly || d == 1;
        DirectionData<T> data;
        data.batch = batch;
        data.hidden = H;
        data.direction = d;
        data.rBias = bias ? bias->data<T>() + d * 2 * G * H + G * H : nullptr;
        data.peephole = peepholes ? peepholes->data<T>() + d * 3 * H : nullptr;
        data.activations = config.activations.data() +
                           d * static_cast<std::int64_t>(config.activations.size() / D);
        data.clip = config.clip;
        weights.prepare(d, data, lengths);

        // Input projection of the steps some row reaches: [seq*batch, G*H] = X W^T + biases
        // (the rows past the longest sequence are never read; they stay 0).
        Matrix<T> projected = Matrix<T>::Zero(seq * batch, G * H);
        if (longest > 0) weights.project(d, x, longest * batch, projected);
        if (bias) {
            Eigen::Matrix<T, 1, Eigen::Dynamic> combined(G * H);
            const T* wb = bias->data<T>() + d * 2 * G * H;
            for (int gate = 0; gate < G; ++gate)
                for (std::int64_t j = 0; j < H; ++j) {
                    const std::int64_t k = gate * H + j;
                    combined(k) = wb[k] + (cell.foldRecurrentBias(gate) ? data.rBias[k] : T(0));
                }
            projected.rowwise() += combined;
        }

        RecurrentState<T> state, next;
        state.h = h0 ? Matrix<T>(ConstMatrixMap<T>(h0 + d * batch * H, batch, H))
                     : Matrix<T>::Zero(batch, H);
        if (Cell::kHasCellState)
            state.c = c0 ? Matrix<T>(ConstMatrixMap<T>(c0 + d * batch * H, batch, H))
                         : Matrix<T>::Zero(batch, H);
        Matrix<T> gates(batch, G * H);
        T* yData = y.data<T>();
        for (std::int64_t s = 0; s < seq; ++s) {
            for (std::int64_t b = 0; b < batch; ++b) {
                const std::int64_t len = lengths[static_cast<std::size_t>(b)];
                const std::int64_t t = s < len ? (reverse ? len - 1 - s : s) : 0;
                gates.row(b) = projected.row(t * batch + b);
            }
            data.step = s;
            cell.step(data, gates, state, next);
            for (std::int64_t b = 0; b < batch; ++b) {
                const std::int64_t len = lengths[static_cast<std::size_t>(b)];
                if (s >= len) continue;  // finished rows keep their state; Y stays 0
                const std::int64_t t = reverse ? len - 1 - s : s;
                state.h.row(b) = next.h.row(b);
                if (Cell::kHasCellState) state.c.row(b) = next.c.row(b);
                std::copy_n(state.h.row(b).data(), H, yData + ((t * D + d) * batch + b) * H);
            }
        }
        std::copy_n(state.h.data(), batch * H, yH.data<T>() + d * batch * H);
        if (Cell::kHasCellState)
            std::copy_n(state.c.data(), batch * H, yC.data<T>() + d * batch * H);
    };
    // The two directions of a bidirectional layer are independent: one per thread when the
    // session has two (each step is a small product a second thread cannot share).
    const double stepFlops =
        2.0 * static_cast<double>(seq * batch * G * H) * static_cast<double>(inputSize + H);
    pool.parallelFor(D, stepFlops, [&](std::int64_t d0, std::int64_t d1) {
        for (std::int64_t d = d0; d < d1; ++d) runDirection(d);
    });

    if (layout == 1) {
        // Y [seq, D, batch, H] -> [batch, seq, D, H]; states [D, batch, H] -> [batch, D, H].
        Tensor yBatchFirst(xInput.dtype(), {batch, seq, D, H});
        swapLeadingAxes(y.data<T>(), yBatchFirst.data<T>(), seq * D, batch, H);
        y = yBatchFirst;
        for (Tensor* t : {&yH, &yC}) {
            Tensor swapped(xInput.dtype(), {batch, D, H});
            swapLeadingAxes(t->data<T>(), swapped.data<T>(), D, batch, H);
            *t = swapped;
        }
    }
    if (outputs.size() > 0) outputs[0] = Value(y);
    if (outputs.size() > 1) outputs[1] = Value(yH);
    if (Cell::kHasCellState && outputs.size() > 2) outputs[2] = Value(yC);
}

}  // namespace onnxlens::engine::ops::recurrent

#pragma GCC diagnostic pop
