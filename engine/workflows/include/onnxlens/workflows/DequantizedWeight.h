#pragma once
// The block-quantized weights of com.microsoft nodes as the float values they stand for, for the
// window's Tensor panel (statistics, histogram, pages, .npy export) and anything else that shows
// a weight without running the node:
//  - MatMulNBits' B: uint8 [N, k_blocks, blob_size], 2, 4 or 8 bits per value, the first value
//    of a byte in its low bits, shown as [N, K] with w = (q - zero_point) * scale of its block
//    (scales [N * k_blocks]; zero points packed uint8 [N, ceil(k_blocks * bits / 8)] the same
//    way, or of the scales' type, default 2^(bits - 1); g_idx, when given, picks row k's block).
//  - GatherBlockQuantized's data: int4, uint4 (one value per element), or uint8 holding 8 / bits
//    values along the last axis; blocks of block_size along quantize_axis; shown with data's shape
//    (the last axis unpacked for uint8); zero points of data's type, default 0 for int4/uint4
//    and 2^(bits - 1) for uint8.
// Both as ONNX Runtime's docs/ContribOperators.md and its CPU kernels (and this engine's kernels,
// which the tests check this against). The values are computed element by element when asked:
// nothing dequantized is kept, so a sample of a 32k x 2048 table costs only the sample.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "onnxlens/engine/Tensor.h"
#include "onnxlens/model/Result.h"

namespace onnxlens::engine {

// The input of `node` that holds a block-quantized weight shown dequantized: 1 (B) for
// com.microsoft MatMulNBits, 0 (data) for com.microsoft GatherBlockQuantized, -1 otherwise.
int quantizedWeightInput(const onnx::NodeProto& node);

class DequantizedWeight {
  public:
    // The constant (initializer or Constant value) of a name, or null.
    using ConstantLookup = std::function<const onnx::TensorProto*(const std::string&)>;

    // Reads the node's weight, scales and zero points (and g_idx) through `constants` (external
    // data from `modelDirectory`, mapped) and checks them as the node's kernel does. Errors name
    // the node and the attribute or input: a bad attribute, a missing or non-constant input, a
    // type or shape that does not fit.
    static Result<DequantizedWeight> open(const onnx::NodeProto& node,
                                          const ConstantLookup& constants,
                                          const std::filesystem::path& modelDirectory = {});

    const std::string& opType() const { return opType_; }
    const std::string& nodeName() const { return nodeName_; }
    const std::string& weightName() const { return weightName_; }
    const std::vector<std::int64_t>& shape() const { return shape_; }
    std::int64_t numel() const { return numel_; }
    // "4 bits, blocks of 32 along K, zero points packed uint8 [N, 1]" and the like.
    std::string layoutText() const;

    // The element at a row-major index of shape() (0 <= index < numel()).
    float at(std::int64_t index) const;
    // Elements first, first + step, ..., at most `count` of them (fewer at the end).
    std::vector<double> values(std::int64_t first, std::int64_t count, std::int64_t step = 1) const;
    // Every element, float32 of shape(); an error (naming the weight) when it cannot be allocated.
    Result<Tensor> dequantizeAll() const;

  private:
    enum class Kind { MatMulNBits, GatherBlockQuantized };
    static Result<DequantizedWeight> openMatMulNBits(const onnx::NodeProto& node,
                                                     const ConstantLookup& constants,
                                                     const std::filesystem::path& directory);
    static Result<DequantizedWeight> openGatherBlockQuantized(
        const onnx::NodeProto& node, const ConstantLookup& constants,
        const std::filesystem::path& directory);
    std::int32_t code(std::int64_t index) const;
    float zeroPointOf(std::int64_t scaleIndex) const;

    Kind kind_ = Kind::MatMulNBits;
    std::string opType_, nodeName_, weightName_;
    std::vector<std::int64_t> shape_;
    std::int64_t numel_ = 0;
    Tensor codes_;       // B (uint8, packed) / data (int4, uint4: one per element; uint8 packed)
    Tensor scales_;      // float32
    Tensor zeroPoints_;  // packed uint8, int4/uint4, or float32 (floatZeroPoints_); undefined: none
    bool floatZeroPoints_ = false;
    Tensor groupIndex_;  // MatMulNBits g_idx (int32), or undefined
    std::int64_t bits_ = 4, blockSize_ = 32, perByte_ = 1;
    float defaultZero_ = 0.0f;
    // MatMulNBits: K, k_blocks, blob size, zero point bytes per column.
    std::int64_t k_ = 0, kBlocks_ = 0, blob_ = 0, zeroBlob_ = 0;
    // GatherBlockQuantized: the elements of one slab before quantize_axis, of the axes after it,
    // and scales per slab.
    std::int64_t quantizeBlock_ = 0, quantizeN_ = 1, scaleBlock_ = 0;
    DataType dataType_ = DataType::UInt8;
};

}  // namespace onnxlens::engine
