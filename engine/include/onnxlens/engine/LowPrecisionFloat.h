#pragma once
// Element conversions of the low-precision types (ONNX 17..24), one byte per element in memory
// (DataType.h): float8 bit patterns, int4 sign-extended into an int8, uint4 and float4e2m1 codes
// in the low nibble, float8e8m0 biased exponents. Used by Cast/CastLike and
// QuantizeLinear/DequantizeLinear; no arithmetic runs on these types.
//
// To the float types: round to nearest, ties to even. Out of range (after rounding) with
// `saturate`: the largest finite value of the sign; without: e5m2 gives +-inf, the others NaN
// (float4e2m1 has neither, so it always saturates). Infinities follow the same rule; NaN gives
// NaN (0x7F with the input's sign for e4m3fn and e5m2, 0x80 for the fnuz types, 0x7 for
// float4e2m1 as the ONNX reference does, 0xFF for e8m0). The fnuz types have no -0.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "onnxlens/engine/DataType.h"

namespace onnxlens::engine::lowp {

// float8e8m0 (Cast-24/25 round_mode): a value between two powers of two goes to the larger
// ("up", the default), the smaller ("down"), or the nearer with ties up ("nearest").
enum class E8M0Rounding { Up, Down, Nearest };

struct MiniFloat {
    int exponentBits, mantissaBits, bias;
    double maxFinite;
    std::uint8_t maxCode;  // largest finite magnitude's code, without the sign
    bool ieeeInfinity;     // e5m2: exponent all ones is inf (mantissa 0) or NaN
    bool fnuz;             // NaN is 0x80 only, no -0, no inf
};

inline constexpr MiniFloat kE4M3FN{4, 3, 7, 448.0, 0x7E, false, false};
inline constexpr MiniFloat kE4M3FNUZ{4, 3, 8, 240.0, 0x7F, false, true};
inline constexpr MiniFloat kE5M2{5, 2, 15, 57344.0, 0x7B, true, false};
inline constexpr MiniFloat kE5M2FNUZ{5, 2, 16, 57344.0, 0x7F, false, true};
inline constexpr MiniFloat kE2M1{2, 1, 1, 6.0, 0x7, false, false};

inline const MiniFloat& miniFloatOf(DataType type) {
    switch (type) {
        case DataType::Float8E4M3FN:
            return kE4M3FN;
        case DataType::Float8E4M3FNUZ:
            return kE4M3FNUZ;
        case DataType::Float8E5M2:
            return kE5M2;
        case DataType::Float8E5M2FNUZ:
            return kE5M2FNUZ;
        default:
            return kE2M1;
    }
}

inline bool isMiniFloat(DataType t) {
    return t == DataType::Float8E4M3FN || t == DataType::Float8E4M3FNUZ ||
           t == DataType::Float8E5M2 || t == DataType::Float8E5M2FNUZ || t == DataType::Float4E2M1;
}

inline double miniFloatToDouble(const MiniFloat& f, std::uint8_t code) {
    const int width = f.exponentBits + f.mantissaBits;  // bits below the sign
    const std::uint8_t magnitude = code & static_cast<std::uint8_t>((1u << width) - 1u);
    const bool negative = ((code >> width) & 1u) != 0;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    if (f.fnuz && code == 0x80) return nan;
    const int exponentField = magnitude >> f.mantissaBits;
    const int mantissa = magnitude & ((1 << f.mantissaBits) - 1);
    const int exponentMax = (1 << f.exponentBits) - 1;
    if (f.ieeeInfinity && exponentField == exponentMax) {
        if (mantissa != 0) return nan;
        return negative ? -std::numeric_limits<double>::infinity()
                        : std::numeric_limits<double>::infinity();
    }
    if (!f.fnuz && !f.ieeeInfinity && width == 7 && magnitude == 0x7F) return nan;  // e4m3fn
    double value;
    if (exponentField == 0)
        value = std::ldexp(static_cast<double>(mantissa), 1 - f.bias - f.mantissaBits);
    else
        value = std::ldexp(static_cast<double>(mantissa + (1 << f.mantissaBits)),
                           exponentField - f.bias - f.mantissaBits);
    return negative ? -value : value;
}

inline std::uint8_t miniFloatFromDouble(const MiniFloat& f, double x, bool saturate) {
    const int width = f.exponentBits + f.mantissaBits;
    const auto signBit = static_cast<std::uint8_t>(1u << width);
    const bool isE2M1 = width == 3;
    if (std::isnan(x)) {
        if (f.fnuz) return 0x80;
        if (isE2M1) return 0x7;
        return static_cast<std::uint8_t>((std::signbit(x) ? signBit : 0) | 0x7F);
    }
    const bool negative = std::signbit(x);
    const std::uint8_t sign = negative ? signBit : 0;
    const double a = std::fabs(x);
    // The value rounded to the format's precision (ties to even), before the range check.
    double rounded = a;
    if (std::isfinite(a) && a != 0.0) {
        int exponent = 0;
        std::frexp(a, &exponent);  // a = m * 2^exponent, m in [0.5, 1)
        const int unbiased = std::max(exponent - 1, 1 - f.bias);
        const double quantum = std::ldexp(1.0, unbiased - f.mantissaBits);
        rounded = std::nearbyint(a / quantum) * quantum;
    }
    if (!(rounded <= f.maxFinite)) {  // too large, or inf
        if (saturate || isE2M1) return static_cast<std::uint8_t>(sign | f.maxCode);
        if (f.ieeeInfinity) return static_cast<std::uint8_t>(sign | 0x7C);
        if (f.fnuz) return 0x80;
        return static_cast<std::uint8_t>(sign | 0x7F);
    }
    if (rounded == 0.0) return f.fnuz ? 0 : sign;  // the fnuz types have no -0
    int exponent = 0;
    std::frexp(rounded, &exponent);
    const int unbiased = exponent - 1;
    std::uint32_t field, mantissa;
    if (unbiased >= 1 - f.bias) {
        field = static_cast<std::uint32_t>(unbiased + f.bias);
        mantissa = static_cast<std::uint32_t>(std::ldexp(rounded, f.mantissaBits - unbiased) -
                                              std::ldexp(1.0, f.mantissaBits));
    } else {
        field = 0;
        mantissa = static_cast<std::uint32_t>(std::ldexp(rounded, f.bias - 1 + f.mantissaBits));
    }
    return static_cast<std::uint8_t>(sign | (field << f.mantissaBits) | mantissa);
}

// float8e8m0: 2^(code - 127), 0xFF is NaN; no sign, no zero.
inline double e8m0ToDouble(std::uint8_t code) {
    if (code == 0xFF) return std::numeric_limits<double>::quiet_NaN();
    return std::ldexp(1.0, static_cast<int>(code) - 127);
}

inline std::uint8_t e8m0FromDouble(double x, bool saturate, E8M0Rounding rounding) {
    if (std::isnan(x)) return 0xFF;
    const double a = std::fabs(x);
    if (std::isinf(a)) return saturate ? 0xFE : 0xFF;
    if (a == 0.0) return 0x00;  // the smallest value, 2^-127
    int exponent = 0;
    const double m = std::frexp(a, &exponent);  // a = m * 2^exponent, m in [0.5, 1)
    int power = exponent - 1;                   // a = (2m) * 2^power, 2m in [1, 2)
    const double significand = 2.0 * m;
    if (significand > 1.0) {
        if (rounding == E8M0Rounding::Up ||
            (rounding == E8M0Rounding::Nearest && significand >= 1.5))
            ++power;
    }
    if (power < -127) return 0x00;
    if (power > 127) return saturate ? 0xFE : 0xFF;
    return static_cast<std::uint8_t>(power + 127);
}

// int4 (-8..7) and uint4 (0..15) for QuantizeLinear: round to nearest even, then clamp (NaN
// gives 0), as the ONNX reference's float32_to_4bit_unpacked.
inline std::uint8_t fourBitIntegerFromDouble(bool isSigned, double x) {
    if (std::isnan(x)) return 0;
    const double low = isSigned ? -8.0 : 0.0, high = isSigned ? 7.0 : 15.0;
    const double r = std::nearbyint(std::min(std::max(x, low), high));
    return static_cast<std::uint8_t>(static_cast<std::int8_t>(r));
}

// int4 and uint4 for Cast: round to nearest even, then keep the low four bits (the spec's "discard
// higher bits" of integer narrowing; what ONNX Runtime and the ml_dtypes-based ONNX reference do
// with out-of-range values). NaN and infinities give 0.
inline std::uint8_t fourBitIntegerWrapped(bool isSigned, double x) {
    if (!std::isfinite(x)) return 0;
    double low = std::fmod(std::nearbyint(x), 16.0);  // exact, in (-16, 16)
    if (low < 0) low += 16.0;
    const auto nibble = static_cast<std::uint8_t>(low);
    return isSigned && nibble >= 8 ? static_cast<std::uint8_t>(nibble | 0xF0) : nibble;
}

// The value of one element of a low-precision type (int4 and uint4 exactly).
inline double lowPrecisionToDouble(DataType type, std::uint8_t code) {
    switch (type) {
        case DataType::Int4:
            return static_cast<double>(static_cast<std::int8_t>(code));
        case DataType::UInt4:
            return static_cast<double>(code & 0x0F);
        case DataType::Float8E8M0:
            return e8m0ToDouble(code);
        case DataType::Float4E2M1:
            return miniFloatToDouble(kE2M1, code & 0x0F);
        default:
            return miniFloatToDouble(miniFloatOf(type), code);
    }
}

// Cast's conversion: int4/uint4 wrap (fourBitIntegerWrapped), the float types round and
// saturate as described at the top.
inline std::uint8_t lowPrecisionFromDouble(DataType type, double x, bool saturate,
                                           E8M0Rounding rounding = E8M0Rounding::Up) {
    switch (type) {
        case DataType::Int4:
            return fourBitIntegerWrapped(true, x);
        case DataType::UInt4:
            return fourBitIntegerWrapped(false, x);
        case DataType::Float8E8M0:
            return e8m0FromDouble(x, saturate, rounding);
        default:
            return miniFloatFromDouble(miniFloatOf(type), x, saturate);
    }
}

}  // namespace onnxlens::engine::lowp
