#pragma once
// Graph rewrites applied once at load: a pipeline of small named passes, each separately tested,
// each preserving what the model computes (checked by running optimized and unoptimized models).
// The table of passes and how to add one: engine/src/optimizer/PassTable.h; the driver that runs
// them: engine/src/optimizer/OptimizerDriver.cpp.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "onnxlens/model/OnnxDomains.h"
#include "onnxlens/model/Result.h"

namespace onnxlens {
class InferredShapes;
class ShapeInferenceCache;
}  // namespace onnxlens

namespace onnxlens::engine {

// The domain of the nodes the fusion passes write (FusedConv...), with kernels in engine/ops.
using onnxlens::kOnnxlensDomain;

// Adds the com.onnxlens opset import a model needs once a pass wrote one of its nodes.
void importOnnxlensDomain(onnx::ModelProto& model);

struct PassResult {
    std::string pass;
    int rewrites = 0;
};

struct OptimizationReport {
    std::vector<PassResult> passes;  // every pass that ran, in table order, with its rewrites
    int nodesBefore = 0, nodesAfter = 0;
    // Shape inference valid for the optimized model (values the passes made may be missing), or
    // null when none was run or a pass invalidated it.
    std::shared_ptr<const InferredShapes> shapes;
};

struct OptimizerOptions {
    // Only these passes (by name, as optimizerPassNames() lists them); all when empty.
    std::set<std::string> passes;
    // The shape inference cache of the model as it is given (LoadedModel::shapes), so that the
    // passes reuse an inference already made (or made later) for the unoptimized model.
    std::shared_ptr<ShapeInferenceCache> shapes;
};

// Runs the passes of the table: the cleanup passes in rounds until nothing changes (at most a
// few rounds), then the fusion passes once. Every node a pass wrote or rewrote carries the
// pass's name (optimizerPassOf).
OptimizationReport optimizeModel(onnx::ModelProto& model,
                                 const std::filesystem::path& modelDirectory,
                                 const OptimizerOptions& options = {});

struct OptimizerPassInfo {
    std::string name;
    bool cleanup = false;  // repeated until nothing changes; else a fusion run once
    bool needsShapes = false;
};
// The passes in the order they run.
std::vector<OptimizerPassInfo> optimizerPasses();
// Checks a list of pass names; the error names the unknown one and the known ones.
Status checkOptimizerPassNames(const std::set<std::string>& names);

// The optimizer pass that wrote or last rewrote this node ("" for a node as the model had it).
// Kept in the node's doc_string, so it survives saving the optimized model.
std::string optimizerPassOf(const onnx::NodeProto& node);

// The passes, each run alone (the pipeline runs them through the table). Each returns the number
// of rewrites it made.
// Identity nodes whose output is not a graph output: consumers read the input instead.
int eliminateIdentityNodes(onnx::GraphProto& graph);
// Inference-mode Dropout (no training_mode input, mask unused) behaves as Identity.
int eliminateInferenceDropout(onnx::GraphProto& graph, int opsetVersion);
// Nodes whose inputs are all constants are run once and replaced by initializers; Shape nodes
// whose input shape is fully static (by onnx shape inference) become constants too, so that
// shape-computation chains fold away.
int foldConstants(onnx::ModelProto& model, const std::filesystem::path& modelDirectory);
// A Reshape target computed from the reshaped value's own dims (Shape -> Gather -> Unsqueeze ->
// Concat with constants, as PyTorch exports x.view(x.size(0), x.size(1), 12, 32) with dynamic
// axes) becomes a constant with 0 ("copy this dim") for those entries, also when the dims are read
// before a Transpose that makes the value; the chain's nodes no one else reads are removed.
int reshapeTargetsFromInputDims(onnx::ModelProto& model);
// Conv followed by BatchNormalization (constant parameters, Conv output used only there):
// the normalization is folded into the Conv's weights and bias.
int foldBatchNormIntoConv(onnx::GraphProto& graph, const std::filesystem::path& modelDirectory);
// Conv whose output only feeds an Add with another input Z of the same shape (by shape
// inference; no broadcasting): one com.onnxlens FusedConv computing conv(X, W) + B + Z.
int fuseConvAdd(onnx::ModelProto& model);
// Conv (or a FusedConv without activation) whose output only feeds Relu, Clip (constant bounds),
// LeakyRelu, Sigmoid, Tanh, HardSigmoid or HardSwish: one FusedConv with attributes activation /
// activation_params.
int fuseConvActivation(onnx::ModelProto& model);
// Conv/FusedConv with constant float 2-D weights (group 1 or depthwise) become com.onnxlens
// BlockedConv on channel-blocked activations [N, ceil(C/b), H, W, b], and MaxPool, AveragePool
// and GlobalAveragePool reading a blocked value become BlockedMaxPool... ReorderToBlocked and
// ReorderFromBlocked nodes convert where a chain starts and where plain readers (or graph
// outputs) need the value. `block` is 8 or 16 (else nothing changes).
int convertToChannelBlockedLayout(onnx::ModelProto& model, std::int64_t block);
// QLinearConv with constant 4-D weights becomes com.onnxlens QLinearConvChannelsLast on [N, H, W,
// C] activations when a graph has two or more; QLinearAdd (com.microsoft) of two channels-last
// values of one shape and QLinearGlobalAveragePool (channels_last = 1) reading one stay
// channels-last; Transposes convert where a chain starts and where plain readers (or graph
// outputs) need a value.
int convertQLinearConvToChannelsLast(onnx::ModelProto& model);
// The block this machine's oneDNN kernels compute in: 16 with AVX-512, 8 with AVX2, 0 when
// blocked layouts do not pay (no oneDNN, older CPUs): optimizeModel then skips the pass.
std::int64_t preferredChannelBlock();

// Transformer fusions (engine/src/optimizer/TransformerFusions.cpp).
// The exported exact GELU, x * 0.5 * (1 + erf(x / sqrt(2))) in any operand order (x * (1 / sqrt(2))
// too): one Gelu (onnx from opset 20, com.onnxlens below).
int fuseGelu(onnx::ModelProto& model);
// x * Sigmoid(x) -> com.onnxlens QuickGelu (alpha 1).
int fuseSilu(onnx::ModelProto& model);
// The exported LayerNorm over the last axis: ReduceMean, Sub, Pow 2, ReduceMean, Add eps, Sqrt,
// Div, Mul gamma, Add beta (gamma and beta constant vectors): one LayerNormalization (onnx from
// opset 17, com.onnxlens below).
int fuseLayerNormalization(onnx::ModelProto& model);
// MatMul with constant 2-D weights [K, N] whose output only feeds an Add of a constant [N]:
// one com.onnxlens FusedMatMul(A, B, bias).
int fuseMatMulBias(onnx::ModelProto& model);
// FusedMatMul whose output only feeds an exact Gelu: the FusedMatMul with activation "Gelu".
int fuseMatMulGelu(onnx::ModelProto& model);

// A model with float16 Conv/MatMul/Gemm weights (no subgraphs) computed in float: float16
// initializers and constants become float, float16 graph inputs and outputs get one Cast each,
// a Cast to float16 in the model becomes Cast to float16 and back (engine/src/
// optimizer/Float16ComputeInFloat.cpp).
int computeFloat16InFloat(onnx::ModelProto& model, const std::filesystem::path& modelDirectory);

// Quantized fusions (engine/src/optimizer/QuantizedFusions.cpp).
// MatMulInteger with constant 2-D weights -> Cast to float -> Mul by the scales (a_scale *
// b_scale, or one scale) [-> Add of a constant bias] [-> exact Gelu], as dynamic quantizers write
// it: one com.onnxlens MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zero_point, b_zero_point,
// bias) with attribute activation.
int fuseMatMulIntegerToFloat(onnx::ModelProto& model);

// Quantized convolution fusions (engine/src/optimizer/QuantizedConvFusions.cpp), each into one
// com.onnxlens ConvIntegerToFloat(X, W, x_scale, w_scale, x_zero_point, w_zero_point, B) with the
// Conv attributes and activation "Relu" when a Relu followed:
// ConvInteger with constant int8 weights -> Cast to float -> Mul by the scales (x_scale *
// w_scale, or one scale; one value or one per output channel) [-> Add of a constant per-channel
// bias] [-> Relu], as dynamic quantizers write it;
int fuseConvIntegerToFloat(onnx::ModelProto& model);
// a float Conv reading DequantizeLinear(8-bit activation from DynamicQuantizeLinear or
// QuantizeLinear, per-tensor) and DequantizeLinear(constant int8 weights, per tensor or per
// output channel), with a constant float bias or none [-> Relu] (QDQ models).
int fuseQdqConv(onnx::ModelProto& model);
// a float MatMul reading DequantizeLinear(8-bit activation, per tensor) and
// DequantizeLinear(constant int8 [K, N] weights, per tensor or per column) -> com.onnxlens
// MatMulIntegerToFloat (statically quantized QDQ transformers);
int fuseQdqMatMul(onnx::ModelProto& model);

}  // namespace onnxlens::engine
