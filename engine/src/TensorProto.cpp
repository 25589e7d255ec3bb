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

template <class T, class Field>
void copyTypedField(Tensor& t, const Field& field, const std::string& label) {
    if (static_cast<std::int64_t>(field.size()) != t.numel())
        throw EngineError(label + ": has " + std::to_string(field.size()) + " values, its shape " +
                          shapeToString(t.shape()) + " needs " + std::to_string(t.numel()));
    T* out = t.data<T>();
    for (std::int64_t i = 0; i < t.numel(); ++i) {
        if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
            out[i] =
                Eigen::numext::bit_cast<T>(static_cast<std::uint16_t>(field[static_cast<int>(i)]));
        } else {
            out[i] = static_cast<T>(field[static_cast<int>(i)]);
        }
    }
}

// The 4-bit types (int4, uint4, float4e2m1) are stored two per byte, the first element in the
// low nibble (an odd count leaves the last high nibble as padding); in memory each element takes
// a byte: int4 sign-extended into an int8, uint4 and float4e2m1 as their code 0..15.
std::uint64_t storedByteCount(DataType type, std::uint64_t count) {
    return isFourBit(type) ? count / 2 + count % 2 : count * dataTypeSize(type);
}

// `packed` holds storedByteCount(t.dtype(), t.numel()) bytes.
void unpackFourBit(Tensor& t, const std::uint8_t* packed) {
    auto* out = static_cast<std::uint8_t*>(t.raw());
    const bool sign = t.dtype() == DataType::Int4;
    const auto n = static_cast<std::uint64_t>(t.numel());
    for (std::uint64_t i = 0; i < n; ++i) {
        const auto nibble = static_cast<std::uint8_t>((packed[i / 2] >> (4 * (i % 2))) & 0x0F);
        out[i] = sign && nibble >= 8 ? static_cast<std::uint8_t>(nibble | 0xF0) : nibble;
    }
}

std::string packFourBit(const Tensor& t) {
    const auto n = static_cast<std::uint64_t>(t.numel());
    std::string packed(storedByteCount(t.dtype(), n), '\0');
    const auto* in = static_cast<const std::uint8_t*>(t.raw());
    for (std::uint64_t i = 0; i < n; ++i)
        packed[i / 2] = static_cast<char>(static_cast<std::uint8_t>(packed[i / 2]) |
                                          ((in[i] & 0x0F) << (4 * (i % 2))));
    return packed;
}

void fillFromBytes(Tensor& t, const std::string& bytes, const std::string& label) {
    const auto needed = storedByteCount(t.dtype(), static_cast<std::uint64_t>(t.numel()));
    if (bytes.size() != needed)
        throw EngineError(label + ": has " + std::to_string(bytes.size()) +
                          " bytes of data, its shape " + shapeToString(t.shape()) + " (" +
                          dataTypeName(t.dtype()) + ") needs " + std::to_string(needed));
    if (bytes.empty()) return;
    if (isFourBit(t.dtype()))
        unpackFourBit(t, reinterpret_cast<const std::uint8_t*>(bytes.data()));
    else
        std::memcpy(t.raw(), bytes.data(), bytes.size());
}

// int32_data of a float8 or e8m0 tensor: one bit pattern per int32.
void copyBitPatterns(Tensor& t, const google::protobuf::RepeatedField<std::int32_t>& field,
                     const std::string& label) {
    if (static_cast<std::int64_t>(field.size()) != t.numel())
        throw EngineError(label + ": has " + std::to_string(field.size()) + " values, its shape " +
                          shapeToString(t.shape()) + " needs " + std::to_string(t.numel()));
    auto* out = static_cast<std::uint8_t*>(t.raw());
    for (std::int64_t i = 0; i < t.numel(); ++i)
        out[i] = static_cast<std::uint8_t>(static_cast<std::uint32_t>(field[static_cast<int>(i)]) &
                                           0xFF);
}

// int32_data of a 4-bit tensor: one packed byte (two elements) per int32.
void fillFourBitFromInt32(Tensor& t, const google::protobuf::RepeatedField<std::int32_t>& field,
                          const std::string& label) {
    const auto needed = storedByteCount(t.dtype(), static_cast<std::uint64_t>(t.numel()));
    if (static_cast<std::uint64_t>(field.size()) != needed)
        throw EngineError(label + ": has " + std::to_string(field.size()) +
                          " int32 values (two 4-bit elements each), its shape " +
                          shapeToString(t.shape()) + " (" + dataTypeName(t.dtype()) + ") needs " +
                          std::to_string(needed));
    std::string bytes(needed, '\0');
    for (std::uint64_t i = 0; i < needed; ++i)
        bytes[i] = static_cast<char>(static_cast<std::uint32_t>(field[static_cast<int>(i)]) & 0xFF);
    if (!bytes.empty()) unpackFourBit(t, reinterpret_cast<const std::uint8_t*>(bytes.data()));
}

// How many elements of `type` the proto's inline data (raw_data or the typed field) holds.
std::uint64_t inlineElementCount(const onnx::TensorProto& proto, DataType type) {
    const std::uint64_t perValue = isFourBit(type) ? 2 : 1;
    if (proto.has_raw_data())
        return type == DataType::String ? 0
                                        : perValue * proto.raw_data().size() / dataTypeSize(type);
    switch (type) {
        case DataType::Float:
            return proto.float_data_size();
        case DataType::Complex64:
            return proto.float_data_size() / 2;
        case DataType::Double:
            return proto.double_data_size();
        case DataType::Complex128:
            return proto.double_data_size() / 2;
        case DataType::Int64:
            return proto.int64_data_size();
        case DataType::UInt64:
        case DataType::UInt32:
            return proto.uint64_data_size();
        case DataType::String:
            return proto.string_data_size();
        default:
            return perValue * static_cast<std::uint64_t>(proto.int32_data_size());
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

Tensor tensorFromProto(const onnx::TensorProto& proto, const std::filesystem::path& modelDirectory,
                       TensorSource* source) {
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
    if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
        // Map (and size-check) the bytes before allocating: the dims alone may claim gigabytes.
        if (modelDirectory.empty())
            throw EngineError(label + ": stored as external data, but no model folder is known");
        auto mapped = mapExternalData(proto, modelDirectory);
        if (!mapped) throw EngineError(mapped.error().message);
        const std::uint64_t length = mapped->length;
        const auto count = static_cast<std::uint64_t>(shapeElementCount(shape));
        const bool fourBit = isFourBit(type);
        if (type == DataType::String ||
            (fourBit ? length != storedByteCount(type, count)
                     : length / dataTypeSize(type) != count || length % dataTypeSize(type) != 0))
            throw EngineError(
                label + ": has " + std::to_string(length) + " bytes of external data, its shape " +
                shapeToString(shape) + " (" + dataTypeName(type) + ") needs " +
                (type == DataType::String ? std::string("inline strings")
                                          : std::to_string(storedByteCount(type, count))));
        if (source) source->mapping = mapped->mapping;
        if (fourBit) {  // unpacked into one byte per element: never in place
            Tensor t(type, shape);
            if (length > 0) unpackFourBit(t, reinterpret_cast<const std::uint8_t*>(mapped->data()));
            if (auto st = mapped->mapping->checkUnchanged(); !st)
                throw EngineError(label + ": " + st.error().message);
            return t;
        }
        // In place when aligned as the engine's own buffers are (mappings start on a page).
        if (length > 0 && reinterpret_cast<std::uintptr_t>(mapped->data()) % 64 == 0) {
            if (source) source->inPlace = true;
            return Tensor::view(type, shape, mapped->mapping, mapped->data());
        }
        Tensor t(type, shape);
        if (length > 0) std::memcpy(t.raw(), mapped->data(), length);
        if (auto st = mapped->mapping->checkUnchanged(); !st)
            throw EngineError(label + ": " + st.error().message);
        return t;
    }
    Tensor t(type, shape);
    if (proto.has_raw_data()) {
        if (type == DataType::String) throw EngineError(label + ": strings cannot use raw_data");
        fillFromBytes(t, proto.raw_data(), label);
        return t;
    }
    switch (type) {
        case DataType::Float:
            copyTypedField<float>(t, proto.float_data(), label);
            break;
        case DataType::Double:
            copyTypedField<double>(t, proto.double_data(), label);
            break;
        case DataType::Int64:
            copyTypedField<std::int64_t>(t, proto.int64_data(), label);
            break;
        case DataType::UInt64:
            copyTypedField<std::uint64_t>(t, proto.uint64_data(), label);
            break;
        case DataType::UInt32:
            copyTypedField<std::uint32_t>(t, proto.uint64_data(), label);
            break;
        case DataType::Int32:
            copyTypedField<std::int32_t>(t, proto.int32_data(), label);
            break;
        case DataType::Int16:
            copyTypedField<std::int16_t>(t, proto.int32_data(), label);
            break;
        case DataType::Int8:
            copyTypedField<std::int8_t>(t, proto.int32_data(), label);
            break;
        case DataType::UInt16:
            copyTypedField<std::uint16_t>(t, proto.int32_data(), label);
            break;
        case DataType::UInt8:
            copyTypedField<std::uint8_t>(t, proto.int32_data(), label);
            break;
        case DataType::Bool:
            copyTypedField<bool>(t, proto.int32_data(), label);
            break;
        case DataType::Float16:
            copyTypedField<float16>(t, proto.int32_data(), label);
            break;
        case DataType::BFloat16:
            copyTypedField<bfloat16>(t, proto.int32_data(), label);
            break;
        case DataType::Float8E4M3FN:
        case DataType::Float8E4M3FNUZ:
        case DataType::Float8E5M2:
        case DataType::Float8E5M2FNUZ:
        case DataType::Float8E8M0:
            copyBitPatterns(t, proto.int32_data(), label);
            break;
        case DataType::UInt4:
        case DataType::Int4:
        case DataType::Float4E2M1:
            fillFourBitFromInt32(t, proto.int32_data(), label);
            break;
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
            for (std::int64_t i = 0; i < t.numel(); ++i)
                out[i] = proto.string_data(static_cast<int>(i));
            break;
        }
        case DataType::Undefined:
            break;
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
    } else if (isFourBit(tensor.dtype())) {
        proto.set_raw_data(packFourBit(tensor));
    } else {
        proto.set_raw_data(static_cast<const char*>(tensor.raw()), tensor.byteSize());
    }
    return proto;
}

Value valueFromMapProto(const onnx::MapProto& proto) {
    const std::string label =
        proto.name().empty() ? std::string("map") : "map '" + proto.name() + "'";
    Tensor keys;
    if (proto.key_type() == onnx::TensorProto::STRING) {
        keys = Tensor(DataType::String, {proto.string_keys_size()});
        auto* k = keys.data<std::string>();
        for (int i = 0; i < proto.string_keys_size(); ++i) k[i] = proto.string_keys(i);
    } else if (proto.key_type() == onnx::TensorProto::INT64 ||
               proto.key_type() == onnx::TensorProto::INT32) {
        keys = Tensor(DataType::Int64, {proto.keys_size()});
        auto* k = keys.data<std::int64_t>();
        for (int i = 0; i < proto.keys_size(); ++i) k[i] = proto.keys(i);
    } else {
        throw EngineError(label + ": key type " + std::to_string(proto.key_type()) +
                          " is not supported (int64 or string)");
    }
    const auto& items = proto.values().tensor_values();
    if (items.size() != keys.numel())
        throw EngineError(label + ": " + std::to_string(keys.numel()) + " keys but " +
                          std::to_string(items.size()) + " values");
    DataType valueType = DataType::Float;
    std::vector<Tensor> parts;
    for (const auto& item : items) {
        parts.push_back(tensorFromProto(item));
        if (parts.back().numel() != 1)
            throw EngineError(label + ": a map value is not a single element");
        valueType = parts.back().dtype();
    }
    Tensor values(valueType, {keys.numel()});
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (parts[i].dtype() != valueType) throw EngineError(label + ": map values of mixed types");
        dispatchAny(valueType, [&]<class T>() { values.data<T>()[i] = parts[i].data<T>()[0]; });
    }
    return Value::map(std::move(keys), std::move(values));
}

onnx::MapProto mapToProto(const Value& map, const std::string& name) {
    onnx::MapProto proto;
    if (!name.empty()) proto.set_name(name);
    const Tensor& keys = map.mapKeys();
    const Tensor& values = map.mapValues();
    proto.set_key_type(static_cast<int>(keys.dtype()));
    if (keys.dtype() == DataType::String)
        for (const auto& k : keys.span<std::string>()) proto.add_string_keys(k);
    else
        for (auto k : keys.span<std::int64_t>()) proto.add_keys(k);
    auto* sequence = proto.mutable_values();
    sequence->set_elem_type(onnx::SequenceProto::TENSOR);
    dispatchAny(values.dtype(), [&]<class T>() {
        for (const T& v : values.span<T>())
            *sequence->add_tensor_values() = tensorToProto(Tensor::scalar<T>(v));
    });
    return proto;
}

onnx::SequenceProto sequenceToProto(const Value& value, const std::string& name) {
    onnx::SequenceProto proto;
    if (!name.empty()) proto.set_name(name);
    if (value.isMapSequence()) {
        proto.set_elem_type(onnx::SequenceProto::MAP);
        for (const auto& m : value.maps()) *proto.add_map_values() = mapToProto(m);
    } else {
        proto.set_elem_type(onnx::SequenceProto::TENSOR);
        for (const auto& t : value.sequence()) *proto.add_tensor_values() = tensorToProto(t);
    }
    return proto;
}

Value valueFromSequenceProto(const onnx::SequenceProto& proto) {
    if (proto.elem_type() == onnx::SequenceProto::MAP) {
        std::vector<Value> maps;
        DataType keyType = DataType::Int64, valueType = DataType::Float;
        for (const auto& m : proto.map_values()) {
            maps.push_back(valueFromMapProto(m));
            keyType = maps.back().mapKeyType();
            valueType = maps.back().mapValueType();
        }
        return Value::mapSequence(std::move(maps), keyType, valueType);
    }
    std::vector<Tensor> items;
    DataType elementType = DataType::Undefined;
    if (proto.elem_type() != onnx::SequenceProto::TENSOR && proto.elem_type() != 0)
        throw EngineError("only sequences of tensors and of maps are supported");
    for (const auto& t : proto.tensor_values()) {
        items.push_back(tensorFromProto(t));
        elementType = items.back().dtype();
    }
    return Value::sequence(std::move(items), elementType);
}

Value valueFromOptionalProto(const onnx::OptionalProto& proto) {
    if (proto.has_tensor_value()) return Value(tensorFromProto(proto.tensor_value()));
    if (proto.has_sequence_value()) return valueFromSequenceProto(proto.sequence_value());
    if (proto.has_map_value()) return valueFromMapProto(proto.map_value());
    return Value();
}

onnx::OptionalProto optionalToProto(const Value& value, const std::string& name) {
    onnx::OptionalProto optional;
    optional.set_name(name);
    if (value.isTensor()) {
        optional.set_elem_type(onnx::OptionalProto::TENSOR);
        *optional.mutable_tensor_value() = tensorToProto(value.tensor(), name);
    } else if (value.isSequence() || value.isMapSequence()) {
        optional.set_elem_type(onnx::OptionalProto::SEQUENCE);
        *optional.mutable_sequence_value() = sequenceToProto(value, name);
    } else if (value.isMap()) {
        optional.set_elem_type(onnx::OptionalProto::MAP);
        *optional.mutable_map_value() = mapToProto(value, name);
    }
    return optional;
}

Status writeValuePbFile(const std::filesystem::path& file, const Value& value,
                        const std::string& name, const onnx::TypeProto* declaredType) {
    const bool optionalOutput = declaredType && declaredType->has_optional_type();
    if (value.isTensor() && !optionalOutput)
        return writeTensorPbFile(file, tensorToProto(value.tensor(), name));
    std::string bytes;
    bool serialized = false;
    if (optionalOutput || value.isNone()) {
        serialized = optionalToProto(value, name).SerializeToString(&bytes);
    } else if (value.isMap()) {
        serialized = mapToProto(value, name).SerializeToString(&bytes);
    } else {
        serialized = sequenceToProto(value, name).SerializeToString(&bytes);
    }
    if (!serialized) return makeError(file.string(), "cannot serialize '" + name + "'");
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    if (!out || !out.write(bytes.data(), static_cast<std::streamsize>(bytes.size())))
        return makeError(file.string(), "cannot be written");
    return Ok{};
}

Result<Value> readValueFile(const std::filesystem::path& file,
                            const onnx::TypeProto* expectedType) {
    const std::string where = file.string();
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) return makeError(where, "no such file");
    if (std::filesystem::is_directory(file, ec))
        return makeError(where, "is a folder, not a tensor file");
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
            if (!optional.ParseFromString(bytes))
                return makeError(where, "is not a valid OptionalProto");
            return valueFromOptionalProto(optional);
        }
        if (type && type->has_map_type()) {
            onnx::MapProto map;
            if (!map.ParseFromString(bytes)) return makeError(where, "is not a valid MapProto");
            return valueFromMapProto(map);
        }
        if (type && type->has_sequence_type()) {
            onnx::SequenceProto sequence;
            if (!sequence.ParseFromString(bytes))
                return makeError(where, "is not a valid SequenceProto");
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
