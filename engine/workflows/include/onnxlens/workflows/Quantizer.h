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

enum class QuantizationFormat { QOperator, QDQ };

const char* quantizationFormatName(QuantizationFormat format);  // "qoperator", "qdq"

struct QuantizeOptions {
    std::vector<std::string> opTypes = {"MatMul", "Gemm"};  // any of MatMul, Gemm, Conv
    bool perChannel = false;
    QuantizationFormat format = QuantizationFormat::QOperator;
    // Node names (or "OpType(first output)" for unnamed nodes, as profileNameOf names them).
    std::vector<std::string> excludedNodes;
};

// The op types quantize accepts.
const std::vector<std::string>& quantizableOpTypes();

struct QuantizedNode {
    std::string name;    // the float node, as profileNameOf names it
    std::string opType;  // MatMul, Gemm or Conv
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
