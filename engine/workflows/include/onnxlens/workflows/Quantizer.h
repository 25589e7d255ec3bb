#pragma once
// Dynamic int8 quantization of a model's weights, in the layout ONNX Runtime's quantize_dynamic
// writes and runs. For each MatMul / Gemm (and Conv when asked) whose weight is a constant float32
// initializer:
//  - QOperator (default): DynamicQuantizeLinear on the activation (uint8, its scale and zero point
//    computed per run), MatMulInteger / ConvInteger with the int8 weight (symmetric, zero point 0,
//    per tensor or per output channel), Cast to float, Mul by activation scale x weight scale, and
//    the bias Add (Gemm's C, Conv's B) writing the float node's output name.
//  - QDQ: DynamicQuantizeLinear -> DequantizeLinear on the activation, the int8 weight through
//    DequantizeLinear, and the float node itself kept on the dequantized values.
//  - Int4 (MatMul only): weight-only block quantization to com.microsoft MatMulNBits in the layout
//    ONNX Runtime's MatMulNBitsQuantizer writes: B uint8 [N, k_blocks, block_size / 2] (the even
//    k in the low nibble, K padded with zeros to whole blocks), scales float32 [N * k_blocks],
//    zero points uint8 [N * ceil(k_blocks / 2)] (two per byte, the even block low) when
//    asymmetric; symmetric writes none (the default 8). Attributes K, N, bits 4, block_size,
//    accuracy_level. The activation stays float.
// Inputs, outputs, value names, metadata and every other node are kept; the settings are recorded
// in metadata_props ("onnxlens.quantization", JSON).
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/ModelWriter.h"
#include "onnxlens/model/Result.h"

namespace onnxlens::engine {

enum class QuantizationFormat { QOperator, QDQ, Int4 };

const char* quantizationFormatName(QuantizationFormat format);  // "qoperator", "qdq", "int4"

struct QuantizeOptions {
    // Any of MatMul, Gemm, Conv and Gather (embedding tables: the Gather reads a uint8 copy of a
    // constant float table, asymmetric per tensor, and a DequantizeLinear follows it, as
    // quantize_dynamic writes it; in every format but int4, which takes MatMul only). The
    // default quantizes the embeddings too, as quantize_dynamic does: on BERT-base the file is
    // 0.251 of the float one instead of 0.414. A Gather reading a computed tensor (a shape
    // lookup) or a non-float constant is not an embedding table: it is not listed as skipped.
    std::vector<std::string> opTypes = {"MatMul", "Gemm", "Gather"};
    bool perChannel = false;
    QuantizationFormat format = QuantizationFormat::QOperator;
    // Node names (or "OpType(first output)" for unnamed nodes, as profileNameOf names them).
    std::vector<std::string> excludedNodes;
    // Int4 only: the block along K (16 to 256, a power of two), symmetric blocks (no zero
    // points) or asymmetric (uint8 zero points), and MatMulNBits' accuracy_level (0 to 4; 0 is
    // what ONNX Runtime's MatMulNBitsQuantizer leaves by default, 4 computes with int8 A).
    std::int64_t blockSize = 32;
    bool symmetric = true;
    std::int64_t accuracyLevel = 0;
};

// One 2-D float weight [K, N] quantized to 4 bits in MatMulNBits' layout (see above).
struct Int4Weight {
    std::int64_t k = 0, n = 0, blockSize = 0, kBlocks = 0;
    std::vector<std::uint8_t> packed;      // [N, kBlocks, blockSize / 2]
    std::vector<float> scales;             // [N * kBlocks]
    std::vector<std::uint8_t> zeroPoints;  // [N * ceil(kBlocks / 2)], empty when symmetric
};

// Symmetric blocks: scale = (the block's value of largest magnitude) / -8, q = clamp(round(w /
// scale) + 8, 0, 15). Asymmetric: the range [min(0, lo), max(0, hi)] over 15 steps, zero point
// round(-lo / scale) in [0, 15], q = clamp(round(w / scale) + zero point, 0, 15). As ONNX
// Runtime's block quantizer. `weight` is row-major [k, n]; k and n must be positive and
// blockSize a power of two >= 2.
Int4Weight quantizeInt4(const float* weight, std::int64_t k, std::int64_t n, std::int64_t blockSize,
                        bool symmetric);

// The op types quantize accepts.
const std::vector<std::string>& quantizableOpTypes();

struct QuantizedNode {
    std::string name;    // the float node, as profileNameOf names it
    std::string opType;  // MatMul, Gemm, Conv or Gather
    std::string weight;  // its float initializer
    std::string output;  // its output: the same tensor name in the int8 model
    // The nodes written in its place (profileNameOf names), the activation's quantizer included
    // when this node created it.
    std::vector<std::string> int8Nodes;
};

struct SkippedNode {
    std::string name, opType;
    std::string reason;  // "excluded", "weight is not a constant initializer", ...
};

struct QuantizationResult {
    onnx::ModelProto model;
    std::vector<QuantizedNode> quantized;  // in graph order
    std::vector<SkippedNode> skipped;      // nodes of the chosen op types left in float
    std::map<std::string, int> quantizedPerOpType;
    std::int64_t opsetBefore = 0, opsetAfter = 0;  // the default domain's import
};

// The default-domain opset the output needs for these options (11; 13 for per-channel QDQ).
std::int64_t requiredOpset(const QuantizeOptions& options);

// Quantizes a model whose tensors are all inline (internalizeExternalData first). Fails, naming
// `name`, when nothing can be quantized (with every skip reason), when an option is invalid, or
// when the model's default-domain opset is below requiredOpset() and cannot be raised without
// changing what one of its operators means (each such operator named).
Result<QuantizationResult> quantizeModel(const onnx::ModelProto& model, const std::string& name,
                                         const QuantizeOptions& options);

// A quantization of a model file, ready to be written.
struct QuantizedModelFile {
    std::filesystem::path input;
    LoadedModel floatModel;  // its tensors inline
    bool inputUsedExternalData = false;
    std::uint64_t bytesBefore = 0;  // model file + external data
    QuantizationResult result;
};

// Refuses an output that is the input (or one of its external data files), a folder, or in a
// folder that does not exist. Checked before anything is read or written.
Status checkQuantizeOutput(const std::filesystem::path& input, const std::filesystem::path& output);

// Loads `input`, refuses a model the engine cannot run (the int8 model could not be checked),
// quantizes, and checks the int8 model with the onnx checker and the engine's kernel lookup.
Result<QuantizedModelFile> quantizeModelFile(const std::filesystem::path& input,
                                             const QuantizeOptions& options);

// Writes the int8 model atomically; external data beside it when the input used external data or
// the model is over the threshold.
Result<WrittenModel> writeQuantizedModel(QuantizedModelFile& quantized,
                                         const std::filesystem::path& output,
                                         ModelWriteOptions writeOptions = {});

}  // namespace onnxlens::engine
