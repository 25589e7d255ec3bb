#pragma once
// GELU, x * Phi(x): the exact form 0.5 x (1 + erf(x / sqrt(2))) and the tanh approximation
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), per element and as Eigen array
// expressions (vectorised: Eigen's erf and tanh have AVX-512 paths). Used by the Gelu kernels
// (onnx opset 20, and the com.onnxlens Gelu the optimizer writes for the exported pattern) and
// by the fused MatMul's epilogue when oneDNN does not run it.
#include <Eigen/Core>
#include <cmath>
#include <unsupported/Eigen/SpecialFunctions>

namespace onnxlens::engine::ops {

inline constexpr double kSqrtHalf = 0.70710678118654752440;
inline constexpr double kSqrt2OverPi = 0.79788456080286535588;

template <class T>
T geluErf(T x) {
    return T(0.5) * x * (T(1) + std::erf(x * T(kSqrtHalf)));
}

template <class T>
T geluTanh(T x) {
    return T(0.5) * x * (T(1) + std::tanh(T(kSqrt2OverPi) * (x + T(0.044715) * x * x * x)));
}

template <class A>
auto geluErfArray(const A& x) {
    using S = typename A::Scalar;
    return S(0.5) * x * (S(1) + (x * S(kSqrtHalf)).erf());
}

template <class A>
auto geluTanhArray(const A& x) {
    using S = typename A::Scalar;
    return S(0.5) * x * (S(1) + (S(kSqrt2OverPi) * (x + S(0.044715) * x.cube())).tanh());
}

}  // namespace onnxlens::engine::ops
