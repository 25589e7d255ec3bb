#pragma once
// The kernel interface. A kernel object is created once per node at compile time (attributes
// parsed then) and run many times; it never sees a Qt type and never does per-element virtual
// calls.
#include <onnx/onnx_pb.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "onnxlens/engine/Tensor.h"
#include "onnxlens/engine/ThreadPool.h"
#include "onnxlens/engine/Value.h"

namespace onnxlens::engine {

class CompiledGraph;
struct Frame;
class KernelRegistry;

// Everything a kernel's factory may know about its node, read once at compile time.
class NodeInfo {
  public:
    NodeInfo(const onnx::NodeProto& node, int opsetVersion,
             std::function<std::shared_ptr<CompiledGraph>(const onnx::GraphProto&)> compileSubgraph)
        : node_(node), opset_(opsetVersion), compileSubgraph_(std::move(compileSubgraph)) {}

    const onnx::NodeProto& proto() const { return node_; }
    const std::string& name() const { return node_.name(); }
    const std::string& opType() const { return node_.op_type(); }
    const std::string& domain() const { return node_.domain(); }
    int opsetVersion() const { return opset_; }  // opset of the node's domain in this model
    int inputCount() const { return node_.input_size(); }
    int outputCount() const { return node_.output_size(); }
    bool hasInput(int i) const { return i < node_.input_size() && !node_.input(i).empty(); }
    bool hasOutput(int i) const { return i < node_.output_size() && !node_.output(i).empty(); }

    bool hasAttribute(const std::string& name) const { return find(name) != nullptr; }
    // Optional attributes return the fallback when absent; required ones throw EngineError.
    std::int64_t getInt(const std::string& name, std::int64_t fallback) const;
    std::int64_t getInt(const std::string& name) const;
    float getFloat(const std::string& name, float fallback) const;
    float getFloat(const std::string& name) const;
    std::string getString(const std::string& name, const std::string& fallback) const;
    std::string getString(const std::string& name) const;
    std::vector<std::int64_t> getInts(const std::string& name,
                                      std::vector<std::int64_t> fallback = {}) const;
    std::vector<float> getFloats(const std::string& name, std::vector<float> fallback = {}) const;
    std::vector<std::string> getStrings(const std::string& name,
                                        std::vector<std::string> fallback = {}) const;
    std::optional<Tensor> getTensor(const std::string& name) const;  // TENSOR attribute
    const onnx::AttributeProto* find(const std::string& name) const;
    // Compiles a GRAPH attribute (If/Loop/Scan bodies); throws when absent.
    std::shared_ptr<CompiledGraph> compileGraph(const std::string& attributeName) const;

  private:
    const onnx::NodeProto& node_;
    int opset_;
    std::function<std::shared_ptr<CompiledGraph>(const onnx::GraphProto&)> compileSubgraph_;
};

// Per-node timing sink used by the profiler; null when not profiling.
struct NodeTiming {
    const onnx::NodeProto* node = nullptr;
    std::int64_t startNs = 0;
    std::int64_t durationNs = 0;
};

// What a kernel may use while running.
class KernelContext {
  public:
    KernelContext(ThreadPool& pool, const Frame* frame, const std::atomic<bool>* cancel)
        : pool_(pool), frame_(frame), cancel_(cancel) {}
    ThreadPool& pool() const { return pool_; }
    bool cancelled() const { return cancel_ && cancel_->load(std::memory_order_relaxed); }
    // Runs a compiled subgraph whose free names resolve in the frame of the calling node.
    std::vector<Value> runSubgraph(const CompiledGraph& graph, std::vector<Value> inputs) const;
    const Frame* frame() const { return frame_; }
    const std::atomic<bool>* cancelFlag() const { return cancel_; }
    // Whether the running node's input i is released once the node returns: the node is its
    // last reader, reads it once, and it is neither a graph output nor a constant. Set by the
    // graph before each node (setReleasedInputs); see reusableInputTensor.
    bool inputReleasedAfterRun(std::size_t i) const {
        return released_ && i < released_->size() && (*released_)[i] != 0;
    }
    void setReleasedInputs(const std::vector<char>* released) { released_ = released; }

  private:
    ThreadPool& pool_;
    const Frame* frame_;
    const std::atomic<bool>* cancel_;
    const std::vector<char>* released_ = nullptr;
};

class Kernel {
  public:
    virtual ~Kernel() = default;
    // inputs[i] is null for an absent optional input. outputs has outputCount() entries; the
    // kernel assigns each (outputs with an empty name may be left None or filled, either is fine).
    virtual void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
                     std::vector<Value>& outputs) = 0;
};

// Helpers for kernels.
inline const Tensor& inputTensor(const std::vector<const Value*>& inputs, std::size_t i) {
    if (i >= inputs.size() || inputs[i] == nullptr)
        throw EngineError("missing required input " + std::to_string(i));
    return inputs[i]->tensor();
}
inline const Tensor* optionalInputTensor(const std::vector<const Value*>& inputs, std::size_t i) {
    if (i >= inputs.size() || inputs[i] == nullptr || inputs[i]->isNone()) return nullptr;
    return &inputs[i]->tensor();
}
// Input i's tensor, for the kernel to overwrite with its output, when nothing else can see that
// buffer: the input is released after this node (KernelContext::inputReleasedAfterRun) and its
// tensor owns the buffer alone (no constant, caller's input, view or observer shares it).
// Nothing otherwise. The kernel must not read input i after writing into it.
inline std::optional<Tensor> reusableInputTensor(const KernelContext& ctx,
                                                 const std::vector<const Value*>& inputs,
                                                 std::size_t i) {
    if (!ctx.inputReleasedAfterRun(i) || i >= inputs.size() || inputs[i] == nullptr ||
        !inputs[i]->isTensor() || !inputs[i]->tensor().uniquelyOwned())
        return std::nullopt;
    return inputs[i]->tensor();
}

}  // namespace onnxlens::engine
