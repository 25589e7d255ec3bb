#include "onnxlens/model/TensorFile.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <system_error>
#include <vector>

#include "onnxlens/model/TensorTypes.h"

namespace onnxlens {

namespace {

namespace fs = std::filesystem;
using TP = onnx::TensorProto;

constexpr char kNpyMagic[] = "\x93NUMPY";
constexpr std::size_t kNpyMagicSize = 6;

Result<std::string> readWholeFile(const fs::path& file) {
    const std::string name = file.string();
    std::error_code ec;
    auto status = fs::status(file, ec);
    if (ec || !fs::exists(status)) return makeError(name, "no such file");
    if (fs::is_directory(status)) return makeError(name, "is a folder, not a tensor file");
    std::ifstream in(file, std::ios::binary);
    if (!in) return makeError(name, "cannot open");
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) return makeError(name, "read error");
    if (bytes.empty()) return makeError(name, "the file is empty");
    return bytes;
}

Status writeWholeFile(const fs::path& file, const std::string& bytes) {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    if (!out) return makeError(file.string(), "cannot open for writing");
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) return makeError(file.string(), "write error");
    return Ok{};
}

// ---- .npy header ----

struct NpyDtype {
    char byteOrder = '<';  // '<', '>', '|' (not applicable) or '=' (native)
    char kind = 'f';       // f, i, u, b, c, S, U
    std::size_t size = 0;  // bytes per element
};

struct NpyHeader {
    NpyDtype dtype;
    bool fortranOrder = false;
    std::vector<std::int64_t> shape;
};

std::optional<std::size_t> findKey(const std::string& header, const std::string& key) {
    auto at = header.find("'" + key + "'");
    if (at == std::string::npos) at = header.find("\"" + key + "\"");
    if (at == std::string::npos) return std::nullopt;
    auto colon = header.find(':', at + key.size() + 2);
    if (colon == std::string::npos) return std::nullopt;
    auto value = header.find_first_not_of(" \t", colon + 1);
    if (value == std::string::npos) return std::nullopt;
    return value;
}

std::optional<NpyDtype> parseDescr(const std::string& descr) {
    if (descr.size() < 2) return std::nullopt;
    NpyDtype dtype;
    std::size_t pos = 0;
    if (std::string("<>|=").find(descr[0]) != std::string::npos)
        dtype.byteOrder = descr[pos++];
    else
        dtype.byteOrder = '=';
    dtype.kind = descr[pos++];
    std::size_t size = 0;
    if (pos >= descr.size()) return std::nullopt;
    for (; pos < descr.size(); ++pos) {
        if (!std::isdigit(static_cast<unsigned char>(descr[pos]))) return std::nullopt;
        size = size * 10 + static_cast<std::size_t>(descr[pos] - '0');
        if (size > (1u << 20)) return std::nullopt;
    }
    if (dtype.kind == 'U') size *= 4;
    dtype.size = size;
    if (dtype.byteOrder == '=') dtype.byteOrder = '<';  // onnxlens runs on little-endian hosts
    return dtype;
}

Result<NpyHeader> parseNpyHeader(const std::string& header, const std::string& name) {
    NpyHeader parsed;
    auto descrAt = findKey(header, "descr");
    if (!descrAt || (header[*descrAt] != '\'' && header[*descrAt] != '"'))
        return makeError(name,
                         ".npy header has no 'descr' string (structured dtypes are not supported)");
    char quote = header[*descrAt];
    auto descrEnd = header.find(quote, *descrAt + 1);
    if (descrEnd == std::string::npos) return makeError(name, ".npy header is malformed");
    const std::string descr = header.substr(*descrAt + 1, descrEnd - *descrAt - 1);
    auto dtype = parseDescr(descr);
    if (!dtype) return makeError(name, ".npy dtype '" + descr + "' is not supported");
    parsed.dtype = *dtype;
    auto fortranAt = findKey(header, "fortran_order");
    if (!fortranAt) return makeError(name, ".npy header has no 'fortran_order'");
    if (header.compare(*fortranAt, 4, "True") == 0)
        parsed.fortranOrder = true;
    else if (header.compare(*fortranAt, 5, "False") != 0)
        return makeError(name, ".npy header has a malformed 'fortran_order'");
    auto shapeAt = findKey(header, "shape");
    if (!shapeAt || header[*shapeAt] != '(')
        return makeError(name, ".npy header has no 'shape' tuple");
    auto shapeEnd = header.find(')', *shapeAt);
    if (shapeEnd == std::string::npos)
        return makeError(name, ".npy header has a malformed 'shape'");
    std::string dims = header.substr(*shapeAt + 1, shapeEnd - *shapeAt - 1);
    std::replace(dims.begin(), dims.end(), ',', ' ');
    std::istringstream in(dims);
    std::string token;
    while (in >> token) {
        std::int64_t value = 0;
        for (char c : token) {
            if (c == 'L') continue;  // Python 2 long suffix
            if (!std::isdigit(static_cast<unsigned char>(c)) || value > (std::int64_t{1} << 50))
                return makeError(name, ".npy header has a malformed 'shape' entry '" + token + "'");
            value = value * 10 + (c - '0');
        }
        parsed.shape.push_back(value);
    }
    return parsed;
}

std::optional<std::int32_t> onnxTypeOf(const NpyDtype& dtype) {
    switch (dtype.kind) {
        case 'f':
            if (dtype.size == 2) return TP::FLOAT16;
            if (dtype.size == 4) return TP::FLOAT;
            if (dtype.size == 8) return TP::DOUBLE;
            break;
        case 'i':
            if (dtype.size == 1) return TP::INT8;
            if (dtype.size == 2) return TP::INT16;
            if (dtype.size == 4) return TP::INT32;
            if (dtype.size == 8) return TP::INT64;
            break;
        case 'u':
            if (dtype.size == 1) return TP::UINT8;
            if (dtype.size == 2) return TP::UINT16;
            if (dtype.size == 4) return TP::UINT32;
            if (dtype.size == 8) return TP::UINT64;
            break;
        case 'b':
            if (dtype.size == 1) return TP::BOOL;
            break;
        case 'c':
            if (dtype.size == 8) return TP::COMPLEX64;
            if (dtype.size == 16) return TP::COMPLEX128;
            break;
        case 'S':
        case 'U':
            return TP::STRING;
    }
    return std::nullopt;
}

std::optional<std::string> npyDescrOf(std::int32_t type) {
    switch (type) {
        case TP::FLOAT:
            return "<f4";
        case TP::DOUBLE:
            return "<f8";
        case TP::FLOAT16:
            return "<f2";
        case TP::INT8:
            return "|i1";
        case TP::UINT8:
            return "|u1";
        case TP::INT16:
            return "<i2";
        case TP::UINT16:
            return "<u2";
        case TP::INT32:
            return "<i4";
        case TP::UINT32:
            return "<u4";
        case TP::INT64:
            return "<i8";
        case TP::UINT64:
            return "<u8";
        case TP::BOOL:
            return "|b1";
        case TP::COMPLEX64:
            return "<c8";
        case TP::COMPLEX128:
            return "<c16";
        default:
            return std::nullopt;
    }
}

void appendUtf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xc0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xe0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else {
        out.push_back(static_cast<char>(0xf0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    }
}

// Reorders elements stored column-major (Fortran) into row-major (C) order.
std::string fortranToC(const std::string& data, const std::vector<std::int64_t>& shape,
                       std::size_t itemSize) {
    const std::size_t rank = shape.size();
    if (rank < 2 || data.empty()) return data;
    std::vector<std::size_t> fortranStride(rank, 1);
    for (std::size_t k = 1; k < rank; ++k)
        fortranStride[k] = fortranStride[k - 1] * static_cast<std::size_t>(shape[k - 1]);
    std::string out(data.size(), '\0');
    std::vector<std::int64_t> index(rank, 0);
    const std::size_t count = data.size() / itemSize;
    for (std::size_t linear = 0; linear < count; ++linear) {
        std::size_t source = 0;
        for (std::size_t k = 0; k < rank; ++k)
            source += static_cast<std::size_t>(index[k]) * fortranStride[k];
        std::memcpy(&out[linear * itemSize], &data[source * itemSize], itemSize);
        for (std::size_t k = rank; k-- > 0;) {
            if (++index[k] < shape[k]) break;
            index[k] = 0;
        }
    }
    return out;
}

}  // namespace

Result<onnx::TensorProto> readTensorPbFile(const fs::path& file) {
    auto bytes = readWholeFile(file);
    if (!bytes) return bytes.error();
    const std::string name = file.string();
    onnx::TensorProto tensor;
    if (!tensor.ParseFromString(*bytes))
        return makeError(name, "not a TensorProto: the protobuf is truncated or corrupt");
    if (tensor.data_location() == TP::EXTERNAL)
        return makeError(name, "tensor '" + tensor.name() +
                                   "' refers to external data, which "
                                   "tensor files cannot use");
    auto checked = checkTensorDataSize(tensor, name);
    if (!checked) return checked.error();
    return tensor;
}

Result<onnx::TensorProto> readNpyFile(const fs::path& file) {
    auto bytes = readWholeFile(file);
    if (!bytes) return bytes.error();
    const std::string name = file.string();
    const std::string& data = *bytes;
    if (data.size() < 10 || data.compare(0, kNpyMagicSize, kNpyMagic, kNpyMagicSize) != 0)
        return makeError(name, "not a .npy file (no \\x93NUMPY magic)");
    const int major = static_cast<unsigned char>(data[6]);
    std::size_t headerLength = 0, headerStart = 0;
    if (major == 1) {
        headerLength =
            static_cast<unsigned char>(data[8]) | (static_cast<unsigned char>(data[9]) << 8);
        headerStart = 10;
    } else if (major == 2 || major == 3) {
        if (data.size() < 12) return makeError(name, ".npy header is truncated");
        for (int b = 3; b >= 0; --b)
            headerLength = (headerLength << 8) | static_cast<unsigned char>(data[8 + b]);
        headerStart = 12;
    } else {
        return makeError(name,
                         ".npy format version " + std::to_string(major) + " is not supported");
    }
    if (headerStart + headerLength > data.size())
        return makeError(name, ".npy header is truncated");
    auto header = parseNpyHeader(data.substr(headerStart, headerLength), name);
    if (!header) return header.error();
    auto type = onnxTypeOf(header->dtype);
    if (!type)
        return makeError(name, ".npy dtype '" + std::string(1, header->dtype.kind) +
                                   std::to_string(header->dtype.size) + "' is not supported");
    std::uint64_t count = 1;
    for (auto d : header->shape) {
        auto u = static_cast<std::uint64_t>(d);
        if (u != 0 && count > (std::uint64_t{1} << 62) / u)
            return makeError(name, ".npy header's shape has too many elements");
        count *= u;
    }
    if (header->dtype.size != 0 && count > (std::uint64_t{1} << 62) / header->dtype.size)
        return makeError(name, ".npy header's shape has too many elements");
    const std::size_t dataStart = headerStart + headerLength;
    const std::uint64_t available = data.size() - dataStart;
    const std::uint64_t expected = count * header->dtype.size;
    if (available != expected) {
        std::string shape;
        for (auto d : header->shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
        return makeError(name, "data is " + std::to_string(available) +
                                   " bytes but the header's shape (" + shape + ") of " +
                                   elementTypeName(*type) + " needs " + std::to_string(expected) +
                                   " bytes");
    }
    std::string payload = data.substr(dataStart);
    const std::size_t itemSize = header->dtype.size;
    if (header->dtype.byteOrder == '>' && itemSize > 1) {
        // Complex numbers swap each of their two halves; UTF-32 swaps each code unit.
        std::size_t unit = header->dtype.kind == 'c'   ? itemSize / 2
                           : header->dtype.kind == 'U' ? 4
                                                       : itemSize;
        if (header->dtype.kind != 'S')
            for (std::size_t at = 0; at + unit <= payload.size(); at += unit)
                std::reverse(payload.begin() + static_cast<std::ptrdiff_t>(at),
                             payload.begin() + static_cast<std::ptrdiff_t>(at + unit));
    }
    if (header->fortranOrder) payload = fortranToC(payload, header->shape, itemSize);

    onnx::TensorProto tensor;
    tensor.set_data_type(*type);
    for (auto d : header->shape) tensor.add_dims(d);
    if (*type == TP::STRING) {
        for (std::size_t at = 0; at < payload.size(); at += itemSize) {
            std::string text;
            if (header->dtype.kind == 'S') {
                text = payload.substr(at, itemSize);
            } else {
                for (std::size_t c = 0; c < itemSize; c += 4) {
                    std::uint32_t cp = 0;
                    std::memcpy(&cp, &payload[at + c], 4);
                    if (cp == 0) break;
                    appendUtf8(text, cp);
                }
            }
            // numpy pads fixed-width strings with NULs and drops them on reading.
            text.erase(text.find_last_not_of('\0') + 1);
            tensor.add_string_data(text);
        }
        return tensor;
    }
    tensor.set_raw_data(std::move(payload));
    return tensor;
}

Result<onnx::TensorProto> readTensorFile(const fs::path& file) {
    const auto extension = file.extension().string();
    if (extension == ".pb") return readTensorPbFile(file);
    if (extension == ".npy") return readNpyFile(file);
    return makeError(file.string(),
                     "unknown tensor file type '" + extension + "' (expected .pb or .npy)");
}

Status writeTensorPbFile(const fs::path& file, const onnx::TensorProto& tensor) {
    std::string bytes;
    if (!tensor.SerializeToString(&bytes))
        return makeError(file.string(), "cannot serialize tensor '" + tensor.name() + "'");
    return writeWholeFile(file, bytes);
}

Status writeNpyFile(const fs::path& file, const onnx::TensorProto& tensor) {
    const std::string name = file.string();
    auto checked = checkTensorDataSize(tensor, name);
    if (!checked) return checked;
    std::string descr, payload;
    if (tensor.data_type() == TP::STRING) {
        std::size_t width = 1;
        for (const auto& s : tensor.string_data()) width = std::max(width, s.size());
        descr = "|S" + std::to_string(width);
        for (const auto& s : tensor.string_data()) {
            payload += s;
            payload.append(width - s.size(), '\0');
        }
    } else {
        auto npyDescr = npyDescrOf(tensor.data_type());
        if (!npyDescr)
            return makeError(name, elementTypeName(tensor.data_type()) + " tensor '" +
                                       tensor.name() + "' has no .npy dtype");
        descr = *npyDescr;
        auto raw = tensorRawBytes(tensor, name);
        if (!raw) return raw.error();
        payload = std::move(raw.value());
    }
    std::string shape = "(";
    for (int i = 0; i < tensor.dims_size(); ++i)
        shape += (i ? ", " : "") + std::to_string(tensor.dims(i));
    shape += tensor.dims_size() == 1 ? ",)" : ")";
    std::string header =
        "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    // Format 1.0: the data starts at a multiple of 64 bytes; the header ends with a newline.
    const std::size_t prefix = kNpyMagicSize + 4;
    header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
    header.push_back('\n');
    if (header.size() > 0xffff) return makeError(name, "the tensor has too many dims for .npy 1.0");
    std::string bytes(kNpyMagic, kNpyMagicSize);
    bytes.push_back('\x01');
    bytes.push_back('\x00');
    bytes.push_back(static_cast<char>(header.size() & 0xff));
    bytes.push_back(static_cast<char>(header.size() >> 8));
    bytes += header;
    bytes += payload;
    return writeWholeFile(file, bytes);
}

}  // namespace onnxlens
