#include "onnxlens/engine/TensorProto.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "onnxlens/model/ExternalData.h"
#include "onnxlens/model/TensorFile.h"

namespace onnxlens::engine {

namespace {

std::string tensorLabel(const onnx::TensorProto& proto) {
    return proto.name().empty() ? std::string("tensor") : "tensor '" + proto.name() + "'";
}

template <class T, class Field> void copyTypedField(Tensor& t, const Field& field, const std::string& label) {
    if (static_cast<std::int64_t>(field.size()) != t.numel())
        throw EngineError(label + ": has " + std::to_string(field.size()) + " values, its shape " +
                          shapeToString(t.shape()) + " needs " + std::to_string(t.numel()));
    T* out = t.data<T>();
    for (std::int64_t i = 0; i < t.numel(); ++i) {
        if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
            out[i] = Eigen::numext::bit_cast<T>(static_cast<std::uint16_t>(field[static_cast<int>(i)]));
        } else {
            out[i] = static_cast<T>(field[static_cast<int>(i)]);
        }
    }
}

void fillFromBytes(Tensor& t, const std::string& bytes, const std::string& label) {
    if (bytes.size() != t.byteSize())
        throw EngineError(label + ": has " + std::to_string(bytes.size()) + " bytes of data, its shape " +
                          shapeToString(t.shape()) + " (" + dataTypeName(t.dtype()) + ") needs " +
                          std::to_string(t.byteSize()));
    if (!bytes.empty()) std::memcpy(t.raw(), bytes.data(), bytes.size());
}

// How many elements of `type` the proto's inline data (raw_data or the typed field) holds.
std::uint64_t inlineElementCount(const onnx::TensorProto& proto, DataType type) {
    if (proto.has_raw_data())
        return type == DataType::String ? 0 : proto.raw_data().size() / dataTypeSize(type);
    switch (type) {
        case DataType::Float: return proto.float_data_size();
        case DataType::Complex64: return proto.float_data_size() / 2;
        case DataType::Double: return proto.double_data_size();
        case DataType::Complex128: return proto.double_data_size() / 2;
        case DataType::Int64: return proto.int64_data_size();
        case DataType::UInt64:
        case DataType::UInt32: return proto.uint64_data_size();
        case DataType::String: return proto.string_data_size();
        default: return proto.int32_data_size();
    }
}

Result<Value> readNpyValue(const std::filesystem::path& file) {
    auto proto = readNpyFile(file);
    if (!proto) return proto.error();
    try {
        return Value(tensorFromProto(*proto));
    } catch (const EngineError& e) {
        return makeError(file.string(), e.what());
    }
}

}  // namespace

DataType dataTypeOfTypeProto(const onnx::TypeProto& type) {
    if (type.has_tensor_type()) return static_cast<DataType>(type.tensor_type().elem_type());
    if (type.has_sparse_tensor_type())
        return static_cast<DataType>(type.sparse_tensor_type().elem_type());
    return DataType::Undefined;
}

Tensor tensorFromProto(const onnx::TensorProto& proto, const std::filesystem::path& modelDirectory) {
    const std::string label = tensorLabel(proto);
    if (proto.has_segment()) throw EngineError(label + ": segmented tensors are not supported");
    DataType type;
    try {
        type = dataTypeFromOnnx(proto.data_type());
    } catch (const EngineError& e) {
        throw EngineError(label + ": " + e.what());
    }
    Shape shape(proto.dims().begin(), proto.dims().end());
    for (auto d : shape)
        if (d < 0) throw EngineError(label + ": negative dimension in " + shapeToString(shape));
    // Inline data must cover the dims before the tensor is allocated: a few bytes of protobuf
    // can claim dims of gigabytes (string tensors cost sizeof(std::string) per element).
    if (proto.data_location() != onnx::TensorProto::EXTERNAL) {
        const auto needed = static_cast<std::uint64_t>(shapeElementCount(shape));
        if (needed > inlineElementCount(proto, type))
            throw EngineError(label + ": holds less data than its shape " + shapeToString(shape) +
                              " (" + dataTypeName(type) + ") needs");
    }
    Tensor t(type, shape);

    if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
        if (modelDirectory.empty())
            throw EngineError(label + ": stored as external data, but no model folder is known");
        auto bytes = readExternalData(proto, modelDirectory);
        if (!bytes) throw EngineError(bytes.error().message);
        fillFromBytes(t, *bytes, label);
        return t;
    }
    if (proto.has_raw_data()) {
        if (type == DataType::String) throw EngineError(label + ": strings cannot use raw_data");
        fillFromBytes(t, proto.raw_data(), label);
        return t;
    }
    switch (type) {
        case DataType::Float: copyTypedField<float>(t, proto.float_data(), label); break;
        case DataType::Double: copyTypedField<double>(t, proto.double_data(), label); break;
        case DataType::Int64: copyTypedField<std::int64_t>(t, proto.int64_data(), label); break;
        case DataType::UInt64: copyTypedField<std::uint64_t>(t, proto.uint64_data(), label); break;
        case DataType::UInt32: copyTypedField<std::uint32_t>(t, proto.uint64_data(), label); break;
        case DataType::Int32: copyTypedField<std::int32_t>(t, proto.int32_data(), label); break;
        case DataType::Int16: copyTypedField<std::int16_t>(t, proto.int32_data(), label); break;
        case DataType::Int8: copyTypedField<std::int8_t>(t, proto.int32_data(), label); break;
        case DataType::UInt16: copyTypedField<std::uint16_t>(t, proto.int32_data(), label); break;
        case DataType::UInt8: copyTypedField<std::uint8_t>(t, proto.int32_data(), label); break;
        case DataType::Bool: copyTypedField<bool>(t, proto.int32_data(), label); break;
        case DataType::Float16: copyTypedField<float16>(t, proto.int32_data(), label); break;
        case DataType::BFloat16: copyTypedField<bfloat16>(t, proto.int32_data(), label); break;
        case DataType::Complex64: {
            if (proto.float_data_size() != 2 * t.numel())
                throw EngineError(label + ": complex64 data does not match its shape");
            auto* out = t.data<std::complex<float>>();
            for (std::int64_t i = 0; i < t.numel(); ++i)
                out[i] = {proto.float_data(static_cast<int>(2 * i)),
                          proto.float_data(static_cast<int>(2 * i + 1))};
            break;
        }
        case DataType::Complex128: {
            if (proto.double_data_size() != 2 * t.numel())
                throw EngineError(label + ": complex128 data does not match its shape");
            auto* out = t.data<std::complex<double>>();
            for (std::int64_t i = 0; i < t.numel(); ++i)
                out[i] = {proto.double_data(static_cast<int>(2 * i)),
                          proto.double_data(static_cast<int>(2 * i + 1))};
            break;
        }
        case DataType::String: {
            if (proto.string_data_size() != t.numel())
                throw EngineError(label + ": has " + std::to_string(proto.string_data_size()) +
                                  " strings, its shape " + shapeToString(shape) + " needs " +
                                  std::to_string(t.numel()));
            auto* out = t.data<std::string>();
            for (std::int64_t i = 0; i < t.numel(); ++i) out[i] = proto.string_data(static_cast<int>(i));
            break;
        }
        case DataType::Undefined: break;
    }
    return t;
}

onnx::TensorProto tensorToProto(const Tensor& tensor, const std::string& name) {
    onnx::TensorProto proto;
    if (!name.empty()) proto.set_name(name);
    proto.set_data_type(static_cast<int>(tensor.dtype()));
    for (auto d : tensor.shape()) proto.add_dims(d);
    if (tensor.dtype() == DataType::String) {
        for (const auto& s : tensor.span<std::string>()) proto.add_string_data(s);
    } else {
        proto.set_raw_data(static_cast<const char*>(tensor.raw()), tensor.byteSize());
    }
    return proto;
}

Value valueFromSequenceProto(const onnx::SequenceProto& proto) {
    std::vector<Tensor> items;
    DataType elementType = DataType::Undefined;
    if (proto.elem_type() != onnx::SequenceProto::TENSOR && proto.elem_type() != 0)
        throw EngineError("only sequences of tensors are supported");
    for (const auto& t : proto.tensor_values()) {
        items.push_back(tensorFromProto(t));
        elementType = items.back().dtype();
    }
    return Value::sequence(std::move(items), elementType);
}

Value valueFromOptionalProto(const onnx::OptionalProto& proto) {
    if (proto.has_tensor_value()) return Value(tensorFromProto(proto.tensor_value()));
    if (proto.has_sequence_value()) return valueFromSequenceProto(proto.sequence_value());
    return Value();
}

Result<Value> readValueFile(const std::filesystem::path& file, const onnx::TypeProto* expectedType) {
    const std::string where = file.string();
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) return makeError(where, "no such file");
    if (std::filesystem::is_directory(file, ec)) return makeError(where, "is a folder, not a tensor file");
    if (file.extension() == ".npy") return readNpyValue(file);
    std::ifstream in(file, std::ios::binary);
    if (!in) return makeError(where, "cannot be opened");
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string bytes = buffer.str();
    if (bytes.empty()) return makeError(where, "is empty");
    try {
        const onnx::TypeProto* type = expectedType;
        if (type && type->has_optional_type()) {
            onnx::OptionalProto optional;
            if (!optional.ParseFromString(bytes)) return makeError(where, "is not a valid OptionalProto");
            return valueFromOptionalProto(optional);
        }
        if (type && type->has_sequence_type()) {
            onnx::SequenceProto sequence;
            if (!sequence.ParseFromString(bytes)) return makeError(where, "is not a valid SequenceProto");
            return valueFromSequenceProto(sequence);
        }
        onnx::TensorProto proto;
        if (!proto.ParseFromString(bytes)) return makeError(where, "is not a valid TensorProto");
        if (proto.data_type() == 0) return makeError(where, "TensorProto has no data_type");
        // The ONNX test data (onnx <= 1.13) stores bfloat16 tensors as their uint16 bit patterns.
        if (type && dataTypeOfTypeProto(*type) == DataType::BFloat16 &&
            proto.data_type() == onnx::TensorProto::UINT16)
            proto.set_data_type(onnx::TensorProto::BFLOAT16);
        return Value(tensorFromProto(proto, file.parent_path()));
    } catch (const EngineError& e) {
        return makeError(where, e.what());
    }
}

}  // namespace onnxlens::engine
