#pragma once
// Shared by ONNX Runtime's com.microsoft QOperator kernels (MsQLinearOps.cpp,
// MsQLinearPoolOps.cpp): reading the per-tensor scales and zero points, and the requantization
// that ONNX Runtime's CPU kernels (MLAS) perform, so that the engine's outputs match ONNX
// Runtime's step for step rather than only to within one quantization step.
//
// Rounding: every requantization here rounds half to even (x86's float -> int32 conversion in
// its default rounding mode, which the MLAS kernels use; std::nearbyint in the default mode is the
// same), then saturates to the 8-bit type's range. Where ONNX Runtime computes in float (not
// double), so do the kernels here, in ONNX Runtime's order of operations.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "Quantized8Simd.h"
#include "onnxlens/engine/EngineError.h"
#include "onnxlens/engine/Kernel.h"
#include "onnxlens/engine/Shape.h"
#include "onnxlens/engine/Tensor.h"

namespace onnxlens::engine::ops::qlinear {

inline constexpr const char* kMsDomain = "com.microsoft";

// "input 4 (B_scale)", for messages (the session prefixes the node's name).
inline std::string inputLabel(std::size_t index, const char* name) {
    return "input " + std::to_string(index) + " (" + name + ")";
}

inline std::string floatText(float v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    return std::to_string(v);
}

// A quantized data input: present, uint8 or int8.
inline const Tensor& quantizedInput(const std::vector<const Value*>& inputs, std::size_t index,
                                    const char* name) {
    const Tensor* t = optionalInputTensor(inputs, index);
    require(t != nullptr, [&] { return inputLabel(index, name) + " is required"; });
    require(t->dtype() == DataType::UInt8 || t->dtype() == DataType::Int8, [&] {
        return inputLabel(index, name) + " must be uint8 or int8, got " + dataTypeName(t->dtype());
    });
    return *t;
}

// Per-tensor parameters only: a scalar or a 1-D tensor of one element (ONNX Runtime's
// IsScalarOr1ElementVector).
inline void requirePerTensor(const Tensor& t, std::size_t index, const char* name) {
    require(t.rank() == 0 || (t.rank() == 1 && t.dim(0) == 1), [&] {
        return inputLabel(index, name) +
               " must be a scalar or a 1-D tensor of one element (per-tensor), got shape " +
               shapeToString(t.shape());
    });
}

// A float scale: required, per tensor, finite and non-zero. (ONNX Runtime runs on with a zero or
// NaN scale and returns the type's lowest value everywhere; the engine refuses it. A negative
// scale is arithmetic like any other and is accepted.)
inline float scaleInput(const std::vector<const Value*>& inputs, std::size_t index,
                        const char* name) {
    const Tensor* t = optionalInputTensor(inputs, index);
    require(t != nullptr, [&] { return inputLabel(index, name) + " is required"; });
    require(t->dtype() == DataType::Float, [&] {
        return inputLabel(index, name) + " must be float, got " + dataTypeName(t->dtype());
    });
    requirePerTensor(*t, index, name);
    const float s = t->data<float>()[0];
    require(std::isfinite(s) && s != 0.0f, [&] {
        return inputLabel(index, name) + " must be finite and non-zero, got " + floatText(s);
    });
    return s;
}

// A zero point of the quantized data's type, per tensor; 0 when it is optional and absent.
inline std::int32_t zeroPointInput(const std::vector<const Value*>& inputs, std::size_t index,
                                   const char* name, DataType type, bool required) {
    const Tensor* t = optionalInputTensor(inputs, index);
    if (!t) {
        require(!required, [&] { return inputLabel(index, name) + " is required"; });
        return 0;
    }
    require(t->dtype() == type, [&] {
        return inputLabel(index, name) + " must be " + dataTypeName(type) +
               " like the data it describes, got " + dataTypeName(t->dtype());
    });
    requirePerTensor(*t, index, name);
    return static_cast<std::int32_t>(t->valueAsInt64(0));
}

// x86's float -> int32 conversion (cvtps2dq) as the MLAS kernels use it: round half to even; a
// NaN or a value outside the int32 range gives INT32_MIN (which then saturates to the lowest
// 8-bit value).
inline std::int32_t roundToInt32(float v) {
    const float r = std::nearbyint(v);
    if (!(r >= -2147483648.0f && r < 2147483648.0f))
        return std::numeric_limits<std::int32_t>::min();
    return static_cast<std::int32_t>(r);
}

template <class Q>
Q saturateTo(std::int64_t v) {
    if (v < std::numeric_limits<Q>::lowest()) return std::numeric_limits<Q>::lowest();
    if (v > std::numeric_limits<Q>::max()) return std::numeric_limits<Q>::max();
    return static_cast<Q>(v);
}

// q = saturate(round_half_even(v)) for a value v that already includes the output zero point.
// In float, so that loops of it vectorise: the same as saturateTo<Q>(roundToInt32(v)), a value
// outside int32 (or NaN) taking the lowest as cvtps2dq's 0x80000000 does.
template <class Q>
Q requantize(float v) {
    constexpr float lo = static_cast<float>(std::numeric_limits<Q>::lowest());
    constexpr float hi = static_cast<float>(std::numeric_limits<Q>::max());
    float r = std::nearbyint(v);
    r = r >= -2147483648.0f && r < 2147483648.0f ? r : lo;
    r = r >= lo ? r : lo;
    r = r <= hi ? r : hi;
    return static_cast<Q>(static_cast<std::int32_t>(r));
}

// MlasQuantizeLinear: q = saturate(round_half_even(v / scale) + zeroPoint), the division in
// float; a NaN quotient gives the lowest value, an infinite one the bound on its side.
template <class Q>
Q quantizeValue(float v, float scale, std::int32_t zeroPoint) {
    const float low = static_cast<float>(std::numeric_limits<Q>::lowest() - zeroPoint);
    const float high = static_cast<float>(std::numeric_limits<Q>::max() - zeroPoint);
    float f = v / scale;
    f = f > low ? f : low;  // a NaN takes `low`
    f = f < high ? f : high;
    return static_cast<Q>(static_cast<std::int32_t>(std::nearbyint(f)) + zeroPoint);
}

// The real value of quantized q, in float as ONNX Runtime computes it: scale * (q - zeroPoint).
template <class Q>
float dequantizeValue(Q q, float scale, std::int32_t zeroPoint) {
    return scale * static_cast<float>(static_cast<std::int32_t>(q) - zeroPoint);
}

// Calls f.template operator()<Q>() with Q the 8-bit type of `type` (uint8 or int8).
template <class F>
decltype(auto) dispatchQuantized8(DataType type, F&& f) {
    if (type == DataType::UInt8) return f.template operator()<std::uint8_t>();
    require(type == DataType::Int8,
            [&] { return std::string("expected uint8 or int8 data, got ") + dataTypeName(type); });
    return f.template operator()<std::int8_t>();
}

}  // namespace onnxlens::engine::ops::qlinear
