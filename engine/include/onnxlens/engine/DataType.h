#pragma once
// Element types use the numbering of onnx::TensorProto::DataType, so conversion is a cast.
#include <Eigen/Core>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "onnxlens/engine/EngineError.h"

namespace onnxlens::engine {

using float16 = Eigen::half;
using bfloat16 = Eigen::bfloat16;

enum class DataType : std::int32_t {
    Undefined = 0,
    Float = 1,
    UInt8 = 2,
    Int8 = 3,
    UInt16 = 4,
    Int16 = 5,
    Int32 = 6,
    Int64 = 7,
    String = 8,
    Bool = 9,
    Float16 = 10,
    Double = 11,
    UInt32 = 12,
    UInt64 = 13,
    Complex64 = 14,
    Complex128 = 15,
    BFloat16 = 16,
    // Low-precision types (opsets 19 to 24). One byte per element in memory: float8 as its bit
    // pattern, int4 sign-extended into an int8, uint4 and float4e2m1 codes in the low nibble.
    // Only data movement (dispatchBySize) and Cast/CastLike/QuantizeLinear/DequantizeLinear
    // handle them; they are in no arithmetic dispatch family.
    Float8E4M3FN = 17,
    Float8E4M3FNUZ = 18,
    Float8E5M2 = 19,
    Float8E5M2FNUZ = 20,
    UInt4 = 21,
    Int4 = 22,
    Float4E2M1 = 23,
    Float8E8M0 = 24,
};

std::size_t dataTypeSize(DataType type);  // bytes per element (sizeof(std::string) for String)
const char* dataTypeName(DataType type);  // numpy-style: "float32", "int64", "bool", ...
DataType dataTypeFromOnnx(int onnxType);  // throws EngineError for unknown values
bool isFloatingPoint(DataType type);      // float, double, float16, bfloat16
bool isSignedInteger(DataType type);
bool isUnsignedInteger(DataType type);
bool isLowPrecision(DataType type);  // the float8, 4-bit and e8m0 types (17..24)
inline bool isFourBit(DataType t) {
    return t == DataType::UInt4 || t == DataType::Int4 || t == DataType::Float4E2M1;
}
inline bool isInteger(DataType t) { return isSignedInteger(t) || isUnsignedInteger(t); }

template <class T>
struct DataTypeOf;
#define ONNXLENS_DATATYPE_OF(T, E)                     \
    template <>                                        \
    struct DataTypeOf<T> {                             \
        static constexpr DataType value = DataType::E; \
    };
ONNXLENS_DATATYPE_OF(float, Float)
ONNXLENS_DATATYPE_OF(double, Double)
ONNXLENS_DATATYPE_OF(float16, Float16)
ONNXLENS_DATATYPE_OF(bfloat16, BFloat16)
ONNXLENS_DATATYPE_OF(std::int8_t, Int8)
ONNXLENS_DATATYPE_OF(std::int16_t, Int16)
ONNXLENS_DATATYPE_OF(std::int32_t, Int32)
ONNXLENS_DATATYPE_OF(std::int64_t, Int64)
ONNXLENS_DATATYPE_OF(std::uint8_t, UInt8)
ONNXLENS_DATATYPE_OF(std::uint16_t, UInt16)
ONNXLENS_DATATYPE_OF(std::uint32_t, UInt32)
ONNXLENS_DATATYPE_OF(std::uint64_t, UInt64)
ONNXLENS_DATATYPE_OF(bool, Bool)
ONNXLENS_DATATYPE_OF(std::string, String)
ONNXLENS_DATATYPE_OF(std::complex<float>, Complex64)
ONNXLENS_DATATYPE_OF(std::complex<double>, Complex128)
#undef ONNXLENS_DATATYPE_OF
template <class T>
inline constexpr DataType dataTypeOf = DataTypeOf<T>::value;

// Type dispatch: calls f.template operator()<T>() for the C++ type T of `type`.
// Use with a template lambda:  dispatchNumeric(t, [&]<class T>() { ... });
// Each family throws EngineError("unsupported element type ...") for types outside it.
[[noreturn]] void throwUnsupportedType(DataType type, const char* family);

#define ONNXLENS_DISPATCH_CASE(E, T) \
    case DataType::E:                \
        return f.template operator()<T>();

// float, double, float16, bfloat16
template <class F>
decltype(auto) dispatchFloat(DataType type, F&& f) {
    switch (type) {
        ONNXLENS_DISPATCH_CASE(Float, float)
        ONNXLENS_DISPATCH_CASE(Double, double)
        ONNXLENS_DISPATCH_CASE(Float16, float16)
        ONNXLENS_DISPATCH_CASE(BFloat16, bfloat16)
        default:
            throwUnsupportedType(type, "floating-point");
    }
}
// all signed and unsigned integers (not bool)
template <class F>
decltype(auto) dispatchInteger(DataType type, F&& f) {
    switch (type) {
        ONNXLENS_DISPATCH_CASE(Int8, std::int8_t)
        ONNXLENS_DISPATCH_CASE(Int16, std::int16_t)
        ONNXLENS_DISPATCH_CASE(Int32, std::int32_t)
        ONNXLENS_DISPATCH_CASE(Int64, std::int64_t)
        ONNXLENS_DISPATCH_CASE(UInt8, std::uint8_t)
        ONNXLENS_DISPATCH_CASE(UInt16, std::uint16_t)
        ONNXLENS_DISPATCH_CASE(UInt32, std::uint32_t)
        ONNXLENS_DISPATCH_CASE(UInt64, std::uint64_t)
        default:
            throwUnsupportedType(type, "integer");
    }
}
// floats and integers (not bool, not string)
template <class F>
decltype(auto) dispatchNumeric(DataType type, F&& f) {
    switch (type) {
        ONNXLENS_DISPATCH_CASE(Float, float)
        ONNXLENS_DISPATCH_CASE(Double, double)
        ONNXLENS_DISPATCH_CASE(Float16, float16)
        ONNXLENS_DISPATCH_CASE(BFloat16, bfloat16)
        ONNXLENS_DISPATCH_CASE(Int8, std::int8_t)
        ONNXLENS_DISPATCH_CASE(Int16, std::int16_t)
        ONNXLENS_DISPATCH_CASE(Int32, std::int32_t)
        ONNXLENS_DISPATCH_CASE(Int64, std::int64_t)
        ONNXLENS_DISPATCH_CASE(UInt8, std::uint8_t)
        ONNXLENS_DISPATCH_CASE(UInt16, std::uint16_t)
        ONNXLENS_DISPATCH_CASE(UInt32, std::uint32_t)
        ONNXLENS_DISPATCH_CASE(UInt64, std::uint64_t)
        default:
            throwUnsupportedType(type, "numeric");
    }
}
// numeric plus bool
template <class F>
decltype(auto) dispatchNumericOrBool(DataType type, F&& f) {
    if (type == DataType::Bool) return f.template operator()<bool>();
    return dispatchNumeric(type, std::forward<F>(f));
}
// every type, including string and complex
template <class F>
decltype(auto) dispatchAny(DataType type, F&& f) {
    switch (type) {
        ONNXLENS_DISPATCH_CASE(Bool, bool)
        ONNXLENS_DISPATCH_CASE(String, std::string)
        ONNXLENS_DISPATCH_CASE(Complex64, std::complex<float>)
        ONNXLENS_DISPATCH_CASE(Complex128, std::complex<double>)
        default:
            return dispatchNumeric(type, std::forward<F>(f));
    }
}
#undef ONNXLENS_DISPATCH_CASE

// Element-size based dispatch for kernels that only move data (Transpose, Gather, Concat...):
// calls f.template operator()<U>() with an unsigned integer type of the same size, or
// std::string for strings. Complex types dispatch to a 8/16-byte POD.
struct Bytes16 {
    std::uint64_t lo, hi;
};
template <class F>
decltype(auto) dispatchBySize(DataType type, F&& f) {
    if (type == DataType::String) return f.template operator()<std::string>();
    switch (dataTypeSize(type)) {
        case 1:
            return f.template operator()<std::uint8_t>();
        case 2:
            return f.template operator()<std::uint16_t>();
        case 4:
            return f.template operator()<std::uint32_t>();
        case 8:
            return f.template operator()<std::uint64_t>();
        case 16:
            return f.template operator()<Bytes16>();
        default:
            throwUnsupportedType(type, "any");
    }
}

// Conversions that treat float16/bfloat16 like the other arithmetic types.
template <class T>
inline double toDouble(const T& v) {
    if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>)
        return static_cast<double>(static_cast<float>(v));
    else
        return static_cast<double>(v);
}

}  // namespace onnxlens::engine
