// Fusions of quantized convolutions into one com.onnxlens ConvIntegerToFloat each (ConvOps.cpp,
// oneDNN's int8 convolution), so that a quantized CNN runs its convolutions in int8:
// - the QOperator layout of dynamic quantizers: DynamicQuantizeLinear -> ConvInteger (constant
//   int8 weights) -> Cast to float -> Mul by the scales [-> Add bias] [-> Relu];
// - QDQ pairs around a float Conv: DequantizeLinear(x_q) and DequantizeLinear(constant int8 W)
//   -> Conv [-> Relu], x_q from DynamicQuantizeLinear or QuantizeLinear. Constant folding leaves
//   such weight DequantizeLinear nodes alone (isFusedQdqWeight), so that the weights reach
//   this pass as int8.
// And the QDQ pair around a float MatMul with constant int8 [K, N] weights, into one com.onnxlens
// MatMulIntegerToFloat (the kernel of the dynamic-quantization fusion, MatMulOps.cpp), so that a
// statically quantized QDQ transformer runs its products in int8 too.
#include <map>
#include <string>
#include <vector>

#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/engine/Shape.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/OnnxDomains.h"
#include "optimizer/Passes.h"
#include "optimizer/RewriteSupport.h"

namespace onnxlens::engine {

namespace {

constexpr int kOnnxFloat = 1;  // TensorProto.DataType FLOAT
constexpr int kOnnxUInt8 = 2;
constexpr int kOnnxInt8 = 3;

// The element count of a constant initializer's dims, or -1.
std::int64_t initializerCount(const GraphIndex& index, const std::string& name) {
    const auto dims = initializerDims(index, name);
    if (!dims) return -1;
    const auto count = checkedElementCount(*dims);
    return count ? *count : -1;
}

// A float constant that scales or offsets output channel m of a convolution whose output has
// rank `rank` and M channels: one value, or M values along the channel axis ([M, 1, ...] or
// [1, M, 1, ...], right-aligned against [N, M, spatial...]).
bool isChannelVector(const GraphIndex& index, const std::string& name, std::int64_t channels,
                     std::size_t rank, bool allowScalar) {
    const auto dims = initializerDims(index, name);
    if (!dims || initializerType(index, name) != kOnnxFloat) return false;
    const auto count = checkedElementCount(*dims);
    if (!count) return false;
    if (*count == 1) return allowScalar;
    if (*count != channels || dims->size() > rank) return false;
    // The dim aligned with axis 1 of the output must be the M values.
    const std::size_t offset = rank - dims->size();
    for (std::size_t i = 0; i < dims->size(); ++i)
        if ((*dims)[i] != (offset + i == 1 ? channels : 1)) return false;
    return true;
}

// A per-tensor scale or zero point of a quantized activation: DynamicQuantizeLinear's output
// `slot` or a one-value constant.
bool isActivationParameter(const GraphIndex& index, const std::string& value, int slot) {
    const int p = index.producer(value);
    if (p >= 0) {
        const auto& n = index.node(p);
        return isOnnxOp(n, "DynamicQuantizeLinear") && n.output_size() > slot &&
               n.output(slot) == value;
    }
    return initializerCount(index, value) == 1;
}

// An 8-bit quantized activation the int8 kernel reads: DynamicQuantizeLinear's output (uint8) or
// QuantizeLinear's to uint8/int8 with a per-tensor scale.
bool isQuantizedActivation(const GraphIndex& index, const std::string& value) {
    const int p = index.producer(value);
    if (p < 0) return false;
    const auto& q = index.node(p);
    if (isOnnxOp(q, "DynamicQuantizeLinear")) return q.output(0) == value;
    if (!isOnnxOp(q, "QuantizeLinear") || q.input_size() < 2) return false;
    if (findAttribute(q, "output_dtype") || findAttribute(q, "block_size")) return false;
    if (initializerCount(index, q.input(1)) != 1) return false;
    if (q.input_size() < 3 || q.input(2).empty()) return true;  // uint8
    const auto type = initializerType(index, q.input(2));
    return initializerCount(index, q.input(2)) == 1 && type &&
           (*type == kOnnxUInt8 || *type == kOnnxInt8);
}

// Int8 constant weights [M, C/G, k...] (rank 3 to 5), their output channel count or -1.
std::int64_t int8ConvWeights(const GraphIndex& index, const std::string& name) {
    const auto dims = initializerDims(index, name);
    if (!dims || dims->size() < 3 || dims->size() > 5 || initializerType(index, name) != kOnnxInt8)
        return -1;
    return (*dims)[0];
}

// The convolution attributes carried over to the fused node.
void copyConvAttributes(const onnx::NodeProto& from, onnx::NodeProto& to) {
    for (const auto& a : from.attribute())
        if (a.name() == "kernel_shape" || a.name() == "strides" || a.name() == "dilations" ||
            a.name() == "pads" || a.name() == "auto_pad" || a.name() == "group")
            *to.add_attribute() = a;
}

onnx::NodeProto fusedNode(const onnx::NodeProto& conv, const std::string& name,
                          std::vector<std::string> inputs, const std::string& output, bool relu) {
    while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();
    onnx::NodeProto fused = makeNode("ConvIntegerToFloat", kOnnxlensDomain, name, inputs, output);
    copyConvAttributes(conv, fused);
    if (relu) setStringAttribute(fused, "activation", "Relu");
    return fused;
}

// A float Conv the QDQ fusion takes: input DequantizeLinear(8-bit activation, per tensor),
// weights DequantizeLinear(constant int8, per tensor or axis 0), bias a float constant [M] or
// none.
bool isFusableQdqConv(const GraphIndex& index, const onnx::NodeProto& conv) {
    if (!isOnnxOp(conv, "Conv") || conv.input_size() < 2 || conv.output_size() != 1) return false;
    if (conv.input(0) == conv.input(1)) return false;
    const int wdq = index.producer(conv.input(1));
    const int xdq = index.producer(conv.input(0));
    if (wdq < 0 || xdq < 0 || !isOnnxOp(index.node(wdq), "DequantizeLinear") ||
        !isOnnxOp(index.node(xdq), "DequantizeLinear"))
        return false;
    // Weights: constant int8, scale one value or one per output channel (axis 0).
    const auto& w = index.node(wdq);
    if (w.input_size() < 2) return false;
    const std::int64_t channels = int8ConvWeights(index, w.input(0));
    if (channels <= 0) return false;
    const std::int64_t scales = initializerCount(index, w.input(1));
    if (initializerType(index, w.input(1)) != kOnnxFloat || (scales != 1 && scales != channels))
        return false;
    const auto rank = static_cast<std::int64_t>(initializerDims(index, w.input(0))->size());
    if (scales > 1) {
        const std::int64_t axis = intAttribute(w, "axis", 1);
        if (axis != 0 && axis != -rank) return false;
    }
    if (findAttribute(w, "block_size")) return false;
    if (w.input_size() > 2 && !w.input(2).empty() && initializerCount(index, w.input(2)) != scales)
        return false;
    // Activation: an 8-bit quantized value with per-tensor scale and zero point.
    const auto& x = index.node(xdq);
    if (x.input_size() < 2 || !isQuantizedActivation(index, x.input(0)) ||
        !isActivationParameter(index, x.input(1), 1) ||
        (x.input_size() > 2 && !x.input(2).empty() && !isActivationParameter(index, x.input(2), 2)))
        return false;
    // The bias, when there is one: float constant [M].
    if (conv.input_size() > 2 && !conv.input(2).empty() &&
        (initializerDims(index, conv.input(2)) != std::vector<std::int64_t>{channels} ||
         initializerType(index, conv.input(2)) != kOnnxFloat))
        return false;
    return true;
}

// A float MatMul the QDQ fusion takes: A = DequantizeLinear(8-bit activation, per tensor), B =
// DequantizeLinear(constant int8 [K, N], per tensor or one scale per column: axis 1), B's zero
// point absent or one per scale.
bool isFusableQdqMatMul(const GraphIndex& index, const onnx::NodeProto& matmul) {
    if (!isOnnxOp(matmul, "MatMul") || matmul.input_size() != 2 || matmul.output_size() != 1)
        return false;
    if (matmul.input(0) == matmul.input(1)) return false;
    const int wdq = index.producer(matmul.input(1));
    const int xdq = index.producer(matmul.input(0));
    if (wdq < 0 || xdq < 0 || !isOnnxOp(index.node(wdq), "DequantizeLinear") ||
        !isOnnxOp(index.node(xdq), "DequantizeLinear"))
        return false;
    const auto& w = index.node(wdq);
    if (w.input_size() < 2 || findAttribute(w, "block_size")) return false;
    const auto dims = initializerDims(index, w.input(0));
    if (!dims || dims->size() != 2 || initializerType(index, w.input(0)) != kOnnxInt8) return false;
    const std::int64_t columns = (*dims)[1];
    const std::int64_t scales = initializerCount(index, w.input(1));
    if (initializerType(index, w.input(1)) != kOnnxFloat || (scales != 1 && scales != columns))
        return false;
    if (scales > 1) {
        const std::int64_t axis = intAttribute(w, "axis", 1);
        if (axis != 1 && axis != -1) return false;
    }
    if (w.input_size() > 2 && !w.input(2).empty() && initializerCount(index, w.input(2)) != scales)
        return false;
    const auto& x = index.node(xdq);
    return x.input_size() >= 2 && isQuantizedActivation(index, x.input(0)) &&
           isActivationParameter(index, x.input(1), 1) &&
           (x.input_size() < 3 || x.input(2).empty() ||
            isActivationParameter(index, x.input(2), 2));
}

}  // namespace

bool isFusedQdqWeight(const GraphIndex& index, const onnx::NodeProto& dq) {
    if (!isOnnxOp(dq, "DequantizeLinear") || dq.output_size() != 1) return false;
    const int c = index.soleConsumer(dq.output(0));
    if (c < 0 || index.node(c).input_size() < 2 || index.node(c).input(1) != dq.output(0))
        return false;
    return isFusableQdqConv(index, index.node(c)) || isFusableQdqMatMul(index, index.node(c));
}

int fuseConvIntegerToFloat(PassContext& context) {
    onnx::GraphProto& graph = context.graph();
    const GraphIndex& index = context.index();
    Rewriter rewriter(graph);
    for (int c = 0; c < graph.node_size(); ++c) {
        const auto& conv = graph.node(c);
        if (!isOnnxOp(conv, "ConvInteger") || conv.input_size() < 2 || conv.output_size() != 1)
            continue;
        const std::int64_t channels = int8ConvWeights(index, conv.input(1));
        if (channels <= 0) continue;
        const std::size_t rank = initializerDims(index, conv.input(1))->size();
        std::vector<int> chain{c};

        // The scale is x_scale * w_scale or one per-tensor or per-channel constant.
        const auto scaled = matchScaledIntegerAccumulator(
            index, conv.output(0),
            [&](const std::string& x, const std::string& w) {
                return isActivationParameter(index, x, 1) &&
                       isChannelVector(index, w, channels, rank, true);
            },
            [&](const std::string& s) { return isChannelVector(index, s, channels, rank, true); });
        if (!scaled) continue;
        chain.insert(chain.end(), scaled->nodes.begin(), scaled->nodes.end());
        const std::string& xScale = scaled->scaleA;
        const std::string& wScale = scaled->scaleB;

        std::string output = scaled->output, bias;
        const int add = soleReaderOp(index, output, "Add");
        if (add >= 0) {
            const std::string other = otherInput(index.node(add), output);
            if (!other.empty() && isChannelVector(index, other, channels, rank, false)) {
                bias = other;
                chain.push_back(add);
                output = index.node(add).output(0);
            }
        }
        const int relu = soleReaderOp(index, output, "Relu");
        if (relu >= 0) {
            chain.push_back(relu);
            output = index.node(relu).output(0);
        }
        if (!rewriter.free(chain)) continue;
        const auto input = [&](int i) { return i < conv.input_size() ? conv.input(i) : ""; };
        rewriter.replace(
            chain, fusedNode(conv, conv.name().empty() ? output : conv.name(),
                             {input(0), input(1), xScale, wScale, input(2), input(3), bias}, output,
                             relu >= 0));
    }
    const int rewrites = rewriter.apply();
    if (rewrites) importOnnxlensDomain(context.model());
    return rewrites;
}

namespace {

// The input `i` of a node, or "" past its last one.
std::string inputOf(const onnx::NodeProto& node, int i) {
    return i < node.input_size() ? node.input(i) : std::string();
}

// What the QDQ fusions share: every node `fusable` takes reads DequantizeLinear(activation) as
// input 0 and DequantizeLinear(weights) as input 1. The chain replaced is the node, its weight
// DequantizeLinear when nothing else reads it, and the activation DequantizeLinear with the last
// fused node reading it when fused nodes are its only readers (Q, K and V products, or the
// convolutions of one block, often read one). `fuse(node, x, w, chain)` may extend the chain (a
// trailing activation) and returns the fused node.
template <class Fusable, class Fuse>
int fuseQdqPairs(PassContext& context, Fusable fusable, Fuse fuse) {
    onnx::GraphProto& graph = context.graph();
    const GraphIndex& index = context.index();
    struct Candidate {
        int node, weightDq, activationDq;
    };
    std::vector<Candidate> candidates;
    for (int i = 0; i < graph.node_size(); ++i)
        if (fusable(index, graph.node(i)))
            candidates.push_back({i, index.producer(graph.node(i).input(1)),
                                  index.producer(graph.node(i).input(0))});
    std::map<int, int> fusedReaders, lastReader;
    for (const auto& cand : candidates) {
        ++fusedReaders[cand.activationDq];
        lastReader[cand.activationDq] = cand.node;
    }
    Rewriter rewriter(graph);
    for (const auto& cand : candidates) {
        const auto& node = graph.node(cand.node);
        std::vector<int> chain{cand.node};
        if (index.soleConsumer(node.input(1)) == cand.node) chain.push_back(cand.weightDq);
        if (lastReader[cand.activationDq] == cand.node &&
            index.exclusiveConsumerCount(node.input(0)) == fusedReaders[cand.activationDq])
            chain.push_back(cand.activationDq);
        onnx::NodeProto fused =
            fuse(node, index.node(cand.activationDq), index.node(cand.weightDq), chain);
        if (!rewriter.free(chain)) continue;
        rewriter.replace(chain, std::move(fused));
    }
    const int rewrites = rewriter.apply();
    if (rewrites) importOnnxlensDomain(context.model());
    return rewrites;
}

}  // namespace

int fuseQdqConv(PassContext& context) {
    const GraphIndex& index = context.index();
    return fuseQdqPairs(context, isFusableQdqConv,
                        [&](const onnx::NodeProto& conv, const onnx::NodeProto& x,
                            const onnx::NodeProto& w, std::vector<int>& chain) {
                            std::string output = conv.output(0);
                            const int relu = soleReaderOp(index, output, "Relu");
                            if (relu >= 0) {
                                chain.push_back(relu);
                                output = index.node(relu).output(0);
                            }
                            return fusedNode(
                                conv, conv.name().empty() ? output : conv.name(),
                                {inputOf(x, 0), inputOf(w, 0), inputOf(x, 1), inputOf(w, 1),
                                 inputOf(x, 2), inputOf(w, 2), inputOf(conv, 2)},
                                output, relu >= 0);
                        });
}

int fuseQdqMatMul(PassContext& context) {
    return fuseQdqPairs(
        context, isFusableQdqMatMul,
        [](const onnx::NodeProto& matmul, const onnx::NodeProto& x, const onnx::NodeProto& w,
           std::vector<int>&) {
            // MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zero_point,
            // b_zero_point).
            std::vector<std::string> inputs{inputOf(x, 0), inputOf(w, 0), inputOf(x, 1),
                                            inputOf(w, 1), inputOf(x, 2), inputOf(w, 2)};
            while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();
            const std::string& output = matmul.output(0);
            return makeNode("MatMulIntegerToFloat", kOnnxlensDomain,
                            matmul.name().empty() ? output : matmul.name(), inputs, output);
        });
}

}  // namespace onnxlens::engine
