#include "onnxlens/engine/DataType.h"

#include <string>

namespace onnxlens::engine {

std::size_t dataTypeSize(DataType type) {
    switch (type) {
        case DataType::Bool:
        case DataType::Int8:
        case DataType::UInt8:
        case DataType::Float8E4M3FN:
        case DataType::Float8E4M3FNUZ:
        case DataType::Float8E5M2:
        case DataType::Float8E5M2FNUZ:
        case DataType::UInt4:
        case DataType::Int4:
        case DataType::Float4E2M1:
        case DataType::Float8E8M0:
            return 1;
        case DataType::Int16:
        case DataType::UInt16:
        case DataType::Float16:
        case DataType::BFloat16:
            return 2;
        case DataType::Int32:
        case DataType::UInt32:
        case DataType::Float:
            return 4;
        case DataType::Int64:
        case DataType::UInt64:
        case DataType::Double:
        case DataType::Complex64:
            return 8;
        case DataType::Complex128:
            return 16;
        case DataType::String:
            return sizeof(std::string);
        case DataType::Undefined:
            return 0;
    }
    return 0;
}

const char* dataTypeName(DataType type) {
    switch (type) {
        case DataType::Undefined:
            return "undefined";
        case DataType::Float:
            return "float32";
        case DataType::UInt8:
            return "uint8";
        case DataType::Int8:
            return "int8";
        case DataType::UInt16:
            return "uint16";
        case DataType::Int16:
            return "int16";
        case DataType::Int32:
            return "int32";
        case DataType::Int64:
            return "int64";
        case DataType::String:
            return "string";
        case DataType::Bool:
            return "bool";
        case DataType::Float16:
            return "float16";
        case DataType::Double:
            return "float64";
        case DataType::UInt32:
            return "uint32";
        case DataType::UInt64:
            return "uint64";
        case DataType::Complex64:
            return "complex64";
        case DataType::Complex128:
            return "complex128";
        case DataType::BFloat16:
            return "bfloat16";
        case DataType::Float8E4M3FN:
            return "float8e4m3fn";
        case DataType::Float8E4M3FNUZ:
            return "float8e4m3fnuz";
        case DataType::Float8E5M2:
            return "float8e5m2";
        case DataType::Float8E5M2FNUZ:
            return "float8e5m2fnuz";
        case DataType::UInt4:
            return "uint4";
        case DataType::Int4:
            return "int4";
        case DataType::Float4E2M1:
            return "float4e2m1";
        case DataType::Float8E8M0:
            return "float8e8m0";
    }
    return "unknown";
}

DataType dataTypeFromOnnx(int onnxType) {
    if (onnxType < 1 || onnxType > 24)
        throw EngineError("unsupported ONNX element type " + std::to_string(onnxType));
    return static_cast<DataType>(onnxType);
}

bool isFloatingPoint(DataType t) {
    return t == DataType::Float || t == DataType::Double || t == DataType::Float16 ||
           t == DataType::BFloat16;
}
bool isSignedInteger(DataType t) {
    return t == DataType::Int8 || t == DataType::Int16 || t == DataType::Int32 ||
           t == DataType::Int64;
}
bool isUnsignedInteger(DataType t) {
    return t == DataType::UInt8 || t == DataType::UInt16 || t == DataType::UInt32 ||
           t == DataType::UInt64;
}

bool isLowPrecision(DataType t) {
    const auto v = static_cast<std::int32_t>(t);
    return v >= static_cast<std::int32_t>(DataType::Float8E4M3FN) &&
           v <= static_cast<std::int32_t>(DataType::Float8E8M0);
}

void throwUnsupportedType(DataType type, const char* family) {
    throw EngineError(std::string("unsupported element type ") + dataTypeName(type) +
                      " (expected " + family + ")");
}

}  // namespace onnxlens::engine
