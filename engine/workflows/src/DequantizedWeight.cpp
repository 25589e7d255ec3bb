#include "onnxlens/workflows/DequantizedWeight.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "onnxlens/engine/EngineError.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/NodeNames.h"

namespace onnxlens::engine {
namespace {

constexpr const char* kMicrosoft = "com.microsoft";
// Attributes above this are refused before any size is computed from them (as the kernels).
constexpr std::int64_t kMaxDimension = std::int64_t{1} << 40;

std::optional<std::int64_t> intAttribute(const onnx::NodeProto& node, const std::string& name) {
    for (const auto& a : node.attribute())
        if (a.name() == name) return a.i();
    return std::nullopt;
}

std::string dims(const std::vector<std::int64_t>& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

std::vector<std::int64_t> dimsOf(const Tensor& t) {
    return std::vector<std::int64_t>(t.shape().begin(), t.shape().end());
}

bool flatOrMatrix(const Tensor& t, std::int64_t a, std::int64_t b) {
    return t.shape() == Shape{a * b} || t.shape() == Shape{a, b};
}

bool isScaleType(DataType t) {
    return t == DataType::Float || t == DataType::Float16 || t == DataType::BFloat16;
}

// Reads input `index` of the node as an engine tensor; an error when it is missing (and
// required) or not a constant.
class InputReader {
  public:
    InputReader(const onnx::NodeProto& node, const DequantizedWeight::ConstantLookup& constants,
                const std::filesystem::path& directory)
        : node_(node), constants_(constants), directory_(directory) {}

    Result<std::optional<Tensor>> read(int index, const char* name, bool required) const {
        if (index >= node_.input_size() || node_.input(index).empty()) {
            if (required) return fail(std::string("input ") + name + " is missing");
            return std::optional<Tensor>();
        }
        const onnx::TensorProto* proto = constants_ ? constants_(node_.input(index)) : nullptr;
        if (!proto)
            return fail(std::string("input ") + name + " ('" + node_.input(index) +
                        "') is not a constant: its values are known only when the model runs");
        try {
            return std::optional<Tensor>(tensorFromProto(*proto, directory_));
        } catch (const std::exception& e) {
            return fail(std::string("input ") + name + ": " + e.what());
        }
    }

    Error fail(const std::string& what) const {
        return makeError(profileNameOf(node_), node_.op_type() + ": " + what);
    }

  private:
    const onnx::NodeProto& node_;
    const DequantizedWeight::ConstantLookup& constants_;
    const std::filesystem::path& directory_;
};

}  // namespace

int quantizedWeightInput(const onnx::NodeProto& node) {
    if (node.domain() != kMicrosoft) return -1;
    if (node.op_type() == "MatMulNBits") return 1;
    if (node.op_type() == "GatherBlockQuantized") return 0;
    return -1;
}

Result<DequantizedWeight> DequantizedWeight::open(const onnx::NodeProto& node,
                                                  const ConstantLookup& constants,
                                                  const std::filesystem::path& modelDirectory) {
    const int input = quantizedWeightInput(node);
    if (input < 0)
        return makeError(profileNameOf(node), node.op_type() +
                                                  " holds no block-quantized weight (com.microsoft "
                                                  "MatMulNBits and GatherBlockQuantized do)");
    Result<DequantizedWeight> opened =
        node.op_type() == "MatMulNBits" ? openMatMulNBits(node, constants, modelDirectory)
                                        : openGatherBlockQuantized(node, constants, modelDirectory);
    if (opened) {
        opened->opType_ = node.op_type();
        opened->nodeName_ = profileNameOf(node);
        opened->weightName_ = node.input(input);
    }
    return opened;
}

Result<DequantizedWeight> DequantizedWeight::openMatMulNBits(
    const onnx::NodeProto& node, const ConstantLookup& constants,
    const std::filesystem::path& directory) {
    const InputReader reader(node, constants, directory);
    DequantizedWeight w;
    w.kind_ = Kind::MatMulNBits;
    const auto k = intAttribute(node, "K"), n = intAttribute(node, "N"),
               blockSize = intAttribute(node, "block_size");
    if (!k || !n || !blockSize)
        return reader.fail(std::string("attribute ") +
                           (!k   ? "K"
                            : !n ? "N"
                                 : "block_size") +
                           " is missing");
    w.bits_ = intAttribute(node, "bits").value_or(4);
    w.blockSize_ = *blockSize;
    w.k_ = *k;
    if (w.bits_ != 2 && w.bits_ != 4 && w.bits_ != 8)
        return reader.fail("attribute bits must be 2, 4 or 8, got " + std::to_string(w.bits_));
    if (w.blockSize_ < 16 || w.blockSize_ > (std::int64_t{1} << 30) ||
        (w.blockSize_ & (w.blockSize_ - 1)) != 0)
        return reader.fail("attribute block_size must be a power of 2, at least 16, got " +
                           std::to_string(w.blockSize_));
    if (*k < 1 || *k > kMaxDimension)
        return reader.fail("attribute K must be in [1, 2^40], got " + std::to_string(*k));
    if (*n < 1 || *n > kMaxDimension)
        return reader.fail("attribute N must be in [1, 2^40], got " + std::to_string(*n));
    w.perByte_ = 8 / w.bits_;
    w.kBlocks_ = (*k + w.blockSize_ - 1) / w.blockSize_;
    w.blob_ = w.blockSize_ * w.bits_ / 8;
    w.zeroBlob_ = (w.kBlocks_ * w.bits_ + 7) / 8;
    w.defaultZero_ = static_cast<float>(1 << (w.bits_ - 1));
    // N x K and N x k_blocks x blob: K and N are at most 2^40, so a product over 2^62 is refused
    // before it can overflow.
    if (*n > (std::int64_t{1} << 62) / *k || *n > (std::int64_t{1} << 62) / (w.kBlocks_ * w.blob_))
        return reader.fail("attributes K = " + std::to_string(*k) +
                           " and N = " + std::to_string(*n) + " are too large");
    w.shape_ = {*n, *k};
    w.numel_ = *n * *k;

    auto b = reader.read(1, "B", true);
    if (!b) return b.error();
    const std::vector<std::int64_t> packed = {*n, w.kBlocks_, w.blob_};
    if ((*b)->dtype() != DataType::UInt8 || dimsOf(**b) != packed)
        return reader.fail("input B must be uint8 " + dims(packed) +
                           " for attributes K = " + std::to_string(*k) +
                           ", N = " + std::to_string(*n) + ", bits, block_size; got " +
                           dataTypeName((*b)->dtype()) + " " + dims(dimsOf(**b)));
    w.codes_ = std::move(**b);

    auto scales = reader.read(2, "scales", true);
    if (!scales) return scales.error();
    if (!isScaleType((*scales)->dtype()) || !flatOrMatrix(**scales, *n, w.kBlocks_))
        return reader.fail("input scales must be float, float16 or bfloat16 [" +
                           std::to_string(*n) + ", " + std::to_string(w.kBlocks_) + "], got " +
                           dataTypeName((*scales)->dtype()) + " " + dims(dimsOf(**scales)));
    const DataType scaleType = (*scales)->dtype();
    w.scales_ = (*scales)->castTo(DataType::Float);

    auto zero = reader.read(3, "zero_points", false);
    if (!zero) return zero.error();
    if (*zero) {
        const Tensor& z = **zero;
        if (z.dtype() == DataType::UInt8) {
            if (!flatOrMatrix(z, *n, w.zeroBlob_))
                return reader.fail("packed uint8 input zero_points must be [" + std::to_string(*n) +
                                   ", " + std::to_string(w.zeroBlob_) + "], got " +
                                   dims(dimsOf(z)));
            w.zeroPoints_ = z;
        } else {
            if (z.dtype() != scaleType || !flatOrMatrix(z, *n, w.kBlocks_))
                return reader.fail("input zero_points must be packed uint8 or " +
                                   std::string(dataTypeName(scaleType)) + " [" +
                                   std::to_string(*n) + ", " + std::to_string(w.kBlocks_) +
                                   "], got " + dataTypeName(z.dtype()) + " " + dims(dimsOf(z)));
            w.zeroPoints_ = z.castTo(DataType::Float);
            w.floatZeroPoints_ = true;
        }
    }
    auto groupIndex = reader.read(4, "g_idx", false);
    if (!groupIndex) return groupIndex.error();
    if (*groupIndex) {
        const Tensor& g = **groupIndex;
        if (w.bits_ != 4) return reader.fail("input g_idx needs bits = 4 (as ONNX Runtime)");
        if (g.dtype() != DataType::Int32 || g.rank() != 1 ||
            (g.dim(0) != *k && g.dim(0) != w.kBlocks_ * w.blockSize_))
            return reader.fail("input g_idx must be int32 [" + std::to_string(*k) + "], got " +
                               dataTypeName(g.dtype()) + " " + dims(dimsOf(g)));
        const std::int32_t* gi = g.data<std::int32_t>();
        for (std::int64_t i = 0; i < *k; ++i)
            if (gi[i] < 0 || gi[i] >= w.kBlocks_)
                return reader.fail("input g_idx value " + std::to_string(gi[i]) + " at index " +
                                   std::to_string(i) + " is outside [0, " +
                                   std::to_string(w.kBlocks_) + ")");
        w.groupIndex_ = g;
    }
    return w;
}

Result<DequantizedWeight> DequantizedWeight::openGatherBlockQuantized(
    const onnx::NodeProto& node, const ConstantLookup& constants,
    const std::filesystem::path& directory) {
    const InputReader reader(node, constants, directory);
    DequantizedWeight w;
    w.kind_ = Kind::GatherBlockQuantized;
    const std::int64_t gatherAxisAttribute = intAttribute(node, "gather_axis").value_or(0);
    const std::int64_t quantizeAxisAttribute = intAttribute(node, "quantize_axis").value_or(1);
    w.blockSize_ = intAttribute(node, "block_size").value_or(128);
    w.bits_ = intAttribute(node, "bits").value_or(4);
    if (w.blockSize_ < 16 || w.blockSize_ > (std::int64_t{1} << 40) ||
        (w.blockSize_ & (w.blockSize_ - 1)) != 0)
        return reader.fail("attribute block_size must be a power of 2, at least 16, got " +
                           std::to_string(w.blockSize_));
    if (w.bits_ != 2 && w.bits_ != 4 && w.bits_ != 8)
        return reader.fail("attribute bits must be 2, 4 or 8, got " + std::to_string(w.bits_));

    auto data = reader.read(0, "data", true);
    if (!data) return data.error();
    const Tensor& d = **data;
    w.dataType_ = d.dtype();
    const bool packed = w.dataType_ == DataType::UInt8;
    if (!packed && w.dataType_ != DataType::Int4 && w.dataType_ != DataType::UInt4)
        return reader.fail(std::string("input data must be int4, uint4 or uint8, got ") +
                           dataTypeName(w.dataType_));
    if (!packed && w.bits_ != 4)
        return reader.fail("attribute bits must be 4 for int4/uint4 data, got " +
                           std::to_string(w.bits_));
    const std::int64_t rank = d.rank();
    if (rank < 1) return reader.fail("input data must have rank >= 1");
    auto axisOf = [&](std::int64_t axis, const char* name) -> Result<std::int64_t> {
        if (axis < -rank || axis >= rank)
            return reader.fail(std::string("attribute ") + name + " " + std::to_string(axis) +
                               " is outside [-" + std::to_string(rank) + ", " +
                               std::to_string(rank) + ")");
        return axis < 0 ? axis + rank : axis;
    };
    auto gatherAxis = axisOf(gatherAxisAttribute, "gather_axis");
    if (!gatherAxis) return gatherAxis.error();
    auto quantizeAxis = axisOf(quantizeAxisAttribute, "quantize_axis");
    if (!quantizeAxis) return quantizeAxis.error();
    w.perByte_ = packed ? 8 / w.bits_ : 1;
    if (packed && *gatherAxis != 0)
        return reader.fail("attribute gather_axis must be 0 for uint8 data");
    if (packed && (*quantizeAxis != rank - 1 || *quantizeAxis == *gatherAxis))
        return reader.fail(
            "attribute quantize_axis must be the last axis (and not gather_axis) for uint8 data");

    w.shape_ = dimsOf(d);
    w.shape_.back() *= w.perByte_;  // rank >= 1; at most 4 x a dimension that exists in memory
    w.numel_ = d.numel() * w.perByte_;
    const std::int64_t quantizeDim = w.shape_[static_cast<std::size_t>(*quantizeAxis)];
    const std::int64_t scaleBlocks = (quantizeDim + w.blockSize_ - 1) / w.blockSize_;

    auto scales = reader.read(2, "scales", true);
    if (!scales) return scales.error();
    const Tensor& s = **scales;
    if (!isScaleType(s.dtype()))
        return reader.fail(std::string("input scales must be float, float16 or bfloat16, got ") +
                           dataTypeName(s.dtype()));
    bool fits = s.rank() == rank;
    for (std::int64_t a = 0; fits && a < rank; ++a)
        fits = s.dim(a) == (a == *quantizeAxis ? scaleBlocks : d.dim(a));
    if (!fits)
        return reader.fail("input scales " + dims(dimsOf(s)) + " do not fit data " +
                           dims(dimsOf(d)) + " with block_size " + std::to_string(w.blockSize_) +
                           " on quantize_axis " + std::to_string(*quantizeAxis));
    w.scales_ = s.castTo(DataType::Float);

    auto zero = reader.read(3, "zero_points", false);
    if (!zero) return zero.error();
    if (*zero) {
        const Tensor& z = **zero;
        if (z.dtype() != w.dataType_)
            return reader.fail("input zero_points must have data's type " +
                               std::string(dataTypeName(w.dataType_)) + ", got " +
                               dataTypeName(z.dtype()));
        bool zeroFits = z.rank() == rank;
        for (std::int64_t a = 0; zeroFits && a < rank; ++a)
            zeroFits = z.dim(a) == (a == *quantizeAxis && w.perByte_ > 1
                                        ? (scaleBlocks + w.perByte_ - 1) / w.perByte_
                                        : s.dim(a));
        if (!zeroFits)
            return reader.fail("input zero_points " + dims(dimsOf(z)) + " do not fit scales " +
                               dims(dimsOf(s)));
        w.zeroPoints_ = z;
    }
    w.defaultZero_ = packed ? static_cast<float>(1 << (w.bits_ - 1)) : 0.0f;
    for (std::int64_t a = *quantizeAxis + 1; a < rank; ++a) w.quantizeN_ *= d.dim(a);
    w.quantizeBlock_ = quantizeDim * w.quantizeN_;
    w.scaleBlock_ = scaleBlocks * w.quantizeN_;
    w.codes_ = d;
    return w;
}

std::int32_t DequantizedWeight::code(std::int64_t index) const {
    const auto* bytes = static_cast<const std::uint8_t*>(codes_.raw());
    if (dataType_ == DataType::Int4 && kind_ == Kind::GatherBlockQuantized)
        return static_cast<std::int8_t>(bytes[index]);
    if (dataType_ == DataType::UInt4 && kind_ == Kind::GatherBlockQuantized)
        return bytes[index] & 0x0F;
    if (perByte_ == 1) return bytes[index];
    const int shift = static_cast<int>(index % perByte_ * bits_);
    return (bytes[index / perByte_] >> shift) & ((1 << bits_) - 1);
}

float DequantizedWeight::zeroPointOf(std::int64_t s) const {
    if (!zeroPoints_.defined()) return defaultZero_;
    if (floatZeroPoints_) return zeroPoints_.data<float>()[s];
    const auto* bytes = static_cast<const std::uint8_t*>(zeroPoints_.raw());
    const int mask = (1 << bits_) - 1;
    if (kind_ == Kind::MatMulNBits) {
        const std::int64_t column = s / kBlocks_, block = s % kBlocks_;
        const std::int64_t bit = block * bits_;
        return static_cast<float>((bytes[column * zeroBlob_ + bit / 8] >> (bit % 8)) & mask);
    }
    if (dataType_ == DataType::Int4) return static_cast<float>(static_cast<std::int8_t>(bytes[s]));
    if (dataType_ == DataType::UInt4) return static_cast<float>(bytes[s] & 0x0F);
    if (perByte_ == 1) return static_cast<float>(bytes[s]);
    // Packed along the last axis, per row of scales.
    const std::int64_t row = s / scaleBlock_, within = s % scaleBlock_;
    const std::int64_t perRow = (scaleBlock_ + perByte_ - 1) / perByte_;
    const int shift = static_cast<int>(within % perByte_ * bits_);
    return static_cast<float>((bytes[row * perRow + within / perByte_] >> shift) & mask);
}

float DequantizedWeight::at(std::int64_t index) const {
    const float* scales = scales_.data<float>();
    if (kind_ == Kind::MatMulNBits) {
        const std::int64_t column = index / k_, row = index % k_;
        const std::int64_t block =
            groupIndex_.defined() ? groupIndex_.data<std::int32_t>()[row] : row / blockSize_;
        // Value `row` of the column: byte (row % block_size) / perByte of block row / block_size.
        const std::int64_t within = row % blockSize_;
        const std::int64_t byte =
            (column * kBlocks_ + row / blockSize_) * blob_ + within / perByte_;
        const int shift = static_cast<int>(within % perByte_ * bits_);
        const auto q = static_cast<float>(
            (static_cast<const std::uint8_t*>(codes_.raw())[byte] >> shift) & ((1 << bits_) - 1));
        const std::int64_t s = column * kBlocks_ + block;
        return (q - zeroPointOf(s)) * scales[s];
    }
    const std::int64_t x = index / quantizeBlock_;
    const std::int64_t q = index % quantizeBlock_ / quantizeN_;
    const std::int64_t z = index % quantizeN_;
    const std::int64_t s = x * scaleBlock_ + q / blockSize_ * quantizeN_ + z;
    return (static_cast<float>(code(index)) - zeroPointOf(s)) * scales[s];
}

std::vector<double> DequantizedWeight::values(std::int64_t first, std::int64_t count,
                                              std::int64_t step) const {
    std::vector<double> out;
    step = std::max<std::int64_t>(step, 1);
    if (first < 0 || first >= numel_ || count <= 0) return out;
    const std::int64_t available = (numel_ - first - 1) / step + 1;
    count = std::min(count, available);
    out.reserve(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) out.push_back(at(first + i * step));
    return out;
}

Result<Tensor> DequantizedWeight::dequantizeAll() const {
    try {
        Tensor all(DataType::Float, Shape(shape_.begin(), shape_.end()));
        float* out = all.data<float>();
        for (std::int64_t i = 0; i < numel_; ++i) out[i] = at(i);
        return all;
    } catch (const std::exception& e) {
        return makeError(weightName_, std::string("dequantized ") + dims(shape_) + ": " + e.what());
    }
}

std::string DequantizedWeight::layoutText() const {
    std::string text = std::to_string(bits_) + " bits, blocks of " + std::to_string(blockSize_);
    if (kind_ == Kind::MatMulNBits) {
        text += " along K";
        if (groupIndex_.defined()) text += " (rows picked by g_idx)";
    }
    text += ", ";
    if (!zeroPoints_.defined())
        text += "zero point " + std::to_string(static_cast<int>(defaultZero_)) + " (default)";
    else if (floatZeroPoints_)
        text += "float zero points";
    else if (kind_ == Kind::MatMulNBits || perByte_ > 1)
        text += "zero points packed uint8";
    else
        text += std::string("zero points ") + dataTypeName(dataType_);
    return text;
}

}  // namespace onnxlens::engine
