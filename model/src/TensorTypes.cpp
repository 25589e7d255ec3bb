#include "onnxlens/model/TensorTypes.h"

#include <array>
#include <bit>
#include <cstring>
#include <limits>

namespace onnxlens {

static_assert(std::endian::native == std::endian::little,
              "raw_data is little-endian; onnxlens assumes a little-endian host");

namespace {

struct ElementTypeInfo {
    std::int32_t type;
    const char* name;
    std::size_t size;
};

using TP = onnx::TensorProto;

// Types 17 to 24 (IR 9 to 11) have no names in the enum of Debian's onnx 1.12.
constexpr std::array<ElementTypeInfo, 25> kElementTypes{{
    {TP::UNDEFINED, "undefined", 0},
    {TP::FLOAT, "float32", 4},
    {TP::UINT8, "uint8", 1},
    {TP::INT8, "int8", 1},
    {TP::UINT16, "uint16", 2},
    {TP::INT16, "int16", 2},
    {TP::INT32, "int32", 4},
    {TP::INT64, "int64", 8},
    {TP::STRING, "string", 0},
    {TP::BOOL, "bool", 1},
    {TP::FLOAT16, "float16", 2},
    {TP::DOUBLE, "float64", 8},
    {TP::UINT32, "uint32", 4},
    {TP::UINT64, "uint64", 8},
    {TP::COMPLEX64, "complex64", 8},
    {TP::COMPLEX128, "complex128", 16},
    {TP::BFLOAT16, "bfloat16", 2},
    {17, "float8e4m3fn", 1},
    {18, "float8e4m3fnuz", 1},
    {19, "float8e5m2", 1},
    {20, "float8e5m2fnuz", 1},
    {21, "uint4", 1},  // two per byte in raw_data
    {22, "int4", 1},
    {23, "float4e2m1", 1},
    {24, "float8e8m0", 1},
}};

const ElementTypeInfo* findElementType(std::int32_t type) {
    for (const auto& info : kElementTypes)
        if (info.type == type) return &info;
    return nullptr;
}

// How many values of the typed field one element takes (complex numbers take two floats).
int valuesPerElement(std::int32_t type) {
    return (type == TP::COMPLEX64 || type == TP::COMPLEX128) ? 2 : 1;
}

template <class Field>
void appendNarrowed(std::string& out, const Field& values, std::size_t size) {
    // int32_data holds 8- and 16-bit types (and fp16/bf16 bit patterns) one per int32; the
    // little-endian low bytes are the element.
    for (auto v : values) {
        auto u = static_cast<std::uint64_t>(v);
        for (std::size_t b = 0; b < size; ++b)
            out.push_back(static_cast<char>((u >> (8 * b)) & 0xff));
    }
}

template <class Field>
void appendBytes(std::string& out, const Field& values) {
    if (values.empty()) return;
    out.append(reinterpret_cast<const char*>(values.data()),
               static_cast<std::size_t>(values.size()) * sizeof(values.Get(0)));
}

}  // namespace

std::string elementTypeName(std::int32_t elementType) {
    if (const auto* info = findElementType(elementType)) return info->name;
    return "type<" + std::to_string(elementType) + ">";
}

std::optional<std::int32_t> elementTypeFromName(const std::string& name) {
    for (const auto& info : kElementTypes)
        if (name == info.name && info.type != TP::UNDEFINED) return info.type;
    return std::nullopt;
}

std::size_t elementTypeSize(std::int32_t elementType) {
    const auto* info = findElementType(elementType);
    return info ? info->size : 0;
}

bool isFourBitElementType(std::int32_t elementType) {
    return elementType == 21 || elementType == 22 || elementType == 23;
}

std::uint64_t rawDataSize(std::int32_t elementType, std::uint64_t count) {
    if (isFourBitElementType(elementType)) return count / 2 + count % 2;
    return count * elementTypeSize(elementType);
}

std::string typeName(const onnx::TypeProto& type) {
    switch (type.value_case()) {
        case onnx::TypeProto::kTensorType:
            return elementTypeName(type.tensor_type().elem_type());
        case onnx::TypeProto::kSequenceType:
            return "sequence<" + typeName(type.sequence_type().elem_type()) + ">";
        case onnx::TypeProto::kMapType:
            return "map<" + elementTypeName(type.map_type().key_type()) + "," +
                   typeName(type.map_type().value_type()) + ">";
        case onnx::TypeProto::kOptionalType:
            return "optional<" + typeName(type.optional_type().elem_type()) + ">";
        case onnx::TypeProto::kSparseTensorType:
            return "sparse<" + elementTypeName(type.sparse_tensor_type().elem_type()) + ">";
        default:
            return "undefined";
    }
}

std::optional<std::uint64_t> elementCount(const onnx::TensorProto& tensor) {
    std::uint64_t count = 1;
    for (auto d : tensor.dims()) {
        if (d < 0) return std::nullopt;
        auto u = static_cast<std::uint64_t>(d);
        if (u != 0 && count > std::numeric_limits<std::uint64_t>::max() / u) return std::nullopt;
        count *= u;
    }
    return count;
}

std::string dimsText(const onnx::TensorProto& tensor) {
    if (tensor.dims_size() == 0) return "scalar";
    std::string text;
    for (int i = 0; i < tensor.dims_size(); ++i) {
        if (i) text += "x";
        text += std::to_string(tensor.dims(i));
    }
    return text;
}

Status checkTensorDataSize(const onnx::TensorProto& tensor, const std::string& where) {
    const std::int32_t type = tensor.data_type();
    const auto* info = findElementType(type);
    if (!info || type == TP::UNDEFINED)
        return makeError(
            where, "tensor '" + tensor.name() + "' has unknown data type " + std::to_string(type));
    auto count = elementCount(tensor);
    if (!count)
        return makeError(where,
                         "tensor '" + tensor.name() + "' has invalid dims " + dimsText(tensor));
    if (tensor.data_location() == TP::EXTERNAL) return Ok{};
    const std::string desc =
        "tensor '" + tensor.name() + "' (" + elementTypeName(type) + ", " + dimsText(tensor) + ")";
    if (type == TP::STRING) {
        if (static_cast<std::uint64_t>(tensor.string_data_size()) != *count)
            return makeError(where, desc + " holds " + std::to_string(tensor.string_data_size()) +
                                        " strings, its dims need " + std::to_string(*count));
        return Ok{};
    }
    if (tensor.has_raw_data()) {
        const std::uint64_t expected = rawDataSize(type, *count);
        if (tensor.raw_data().size() != expected)
            return makeError(where, desc + " has " + std::to_string(tensor.raw_data().size()) +
                                        " bytes of data, its dims need " +
                                        std::to_string(expected));
        return Ok{};
    }
    std::uint64_t values = 0;
    switch (type) {
        case TP::FLOAT:
        case TP::COMPLEX64:
            values = tensor.float_data_size();
            break;
        case TP::DOUBLE:
        case TP::COMPLEX128:
            values = tensor.double_data_size();
            break;
        case TP::INT64:
            values = tensor.int64_data_size();
            break;
        case TP::UINT32:
        case TP::UINT64:
            values = tensor.uint64_data_size();
            break;
        default:
            values = tensor.int32_data_size();
            break;
    }
    // int32_data holds two 4-bit elements per value (one packed byte).
    const std::uint64_t expected =
        isFourBitElementType(type) ? rawDataSize(type, *count) : *count * valuesPerElement(type);
    if (values != expected)
        return makeError(where, desc + " holds " + std::to_string(values) +
                                    " values, its dims need " + std::to_string(expected));
    return Ok{};
}

Result<std::string> tensorRawBytes(const onnx::TensorProto& tensor, const std::string& where) {
    if (tensor.data_type() == TP::STRING)
        return makeError(where, "tensor '" + tensor.name() + "' holds strings, not raw bytes");
    if (tensor.data_location() == TP::EXTERNAL)
        return makeError(where, "tensor '" + tensor.name() + "' is stored in external data");
    auto checked = checkTensorDataSize(tensor, where);
    if (!checked) return checked.error();
    if (tensor.has_raw_data()) return tensor.raw_data();
    const std::int32_t type = tensor.data_type();
    const std::size_t size = elementTypeSize(type);
    std::string out;
    out.reserve(static_cast<std::size_t>(rawDataSize(type, *elementCount(tensor))));
    switch (type) {
        case TP::FLOAT:
        case TP::COMPLEX64:
            appendBytes(out, tensor.float_data());
            break;
        case TP::DOUBLE:
        case TP::COMPLEX128:
            appendBytes(out, tensor.double_data());
            break;
        case TP::INT64:
            appendBytes(out, tensor.int64_data());
            break;
        case TP::UINT64:
            appendBytes(out, tensor.uint64_data());
            break;
        case TP::UINT32:
            appendNarrowed(out, tensor.uint64_data(), 4);
            break;
        case TP::INT32:
            appendBytes(out, tensor.int32_data());
            break;
        default:
            appendNarrowed(out, tensor.int32_data(), size);
            break;
    }
    return out;
}

}  // namespace onnxlens
