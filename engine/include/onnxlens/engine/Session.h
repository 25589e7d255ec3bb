#pragma once
// Compiling a model once (kernels resolved, unsupported nodes reported together) and running it.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/engine/Kernel.h"
#include "onnxlens/engine/KernelRegistry.h"
#include "onnxlens/engine/Value.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/Result.h"

namespace onnxlens::engine {

struct UnsupportedNode {
    std::string nodeName, opType, domain;
    int opsetVersion = 0;
};

struct SessionOptions {
    int threads = 0;                 // intra-op threads; <= 0: number of cores
    std::uint64_t maxTensorBytes = 0;  // 0: keep the global default (half of physical memory)
    bool optimize = true;            // run the graph optimizer passes at load
    // optimizedModel() keeps its initializers' bytes (to show or save the optimized graph).
    // Otherwise each initializer's bytes are released as soon as the engine holds its tensor,
    // so a session holds its weights once, not twice.
    bool keepOptimizedModelWeights = false;
};

// One node's execution in a profiled run.
struct NodeProfile {
    std::string nodeName, opType;
    std::int64_t startNs = 0;      // since the start of the run
    std::int64_t durationNs = 0;
};

struct RunControl {
    std::atomic<bool> cancel{false};  // set from any thread to stop a run between nodes
    bool profile = false;             // fill `profile` with one entry per top-level node
    std::vector<NodeProfile> nodeProfiles;  // filled when profile is set
};

// A graph compiled for execution: value slots, kernels in topological order.
class CompiledGraph;

// A frame holds the values of one execution of a CompiledGraph; subgraphs look up free
// names in their parent frames.
struct Frame {
    const CompiledGraph* graph = nullptr;
    std::vector<Value> slots;
    const Frame* parent = nullptr;
    const Value* lookup(const std::string& name) const;
};

class CompiledGraph {
public:
    struct Step;
    ~CompiledGraph();
    // Runs with the given graph inputs (in graph-input order); free names resolve in `parent`.
    std::vector<Value> run(ThreadPool& pool, std::vector<Value> inputs, const Frame* parent,
                           const std::atomic<bool>* cancel, std::vector<NodeProfile>* profile) const;

    const std::vector<std::string>& inputNames() const { return inputNames_; }
    const std::vector<std::string>& outputNames() const { return outputNames_; }
    int slotOf(const std::string& name) const;  // -1 when not a value of this graph

private:
    friend class GraphCompiler;
    std::vector<std::string> slotNames_;
    std::map<std::string, int> slotIndex_;
    std::vector<std::string> inputNames_, outputNames_;
    std::vector<int> inputSlots_, outputSlots_;
    std::vector<std::pair<int, Value>> constants_;  // initializers
    std::vector<int> freeSlots_;                    // names resolved in parent frames
    std::vector<std::unique_ptr<Step>> steps_;
    std::shared_ptr<void> ownedProtos_;            // expanded function bodies etc.
};

class Session {
public:
    // Compiles the model. Fails with one error listing every unsupported node.
    static Result<std::unique_ptr<Session>> create(const LoadedModel& model,
                                                   const SessionOptions& options = {});
    // The same, taking the parsed model over instead of copying it when nothing else shares it
    // (no second copy of the weights while compiling); `model.proto` is empty afterwards.
    static Result<std::unique_ptr<Session>> create(LoadedModel&& model,
                                                   const SessionOptions& options = {});
    ~Session();

    // Lists nodes (including inside subgraphs and functions) that no kernel and no function
    // body can run.
    static std::vector<UnsupportedNode> findUnsupportedNodes(const onnx::ModelProto& model);

    struct IoInfo {
        std::string name;
        onnx::TypeProto type;
    };
    const std::vector<IoInfo>& inputs() const { return inputs_; }
    const std::vector<IoInfo>& outputs() const { return outputs_; }

    // Runs the model. `feeds` must name every graph input. Errors name the node and the problem.
    Result<std::vector<Value>> run(const std::map<std::string, Value>& feeds,
                                   RunControl* control = nullptr);

    int threads() const;
    // The graph the engine runs (after the optimizer's passes, when enabled) and what they did.
    const onnx::ModelProto& optimizedModel() const;
    const OptimizationReport& optimizationReport() const;

private:
    Session() = default;
    // `owned`: the model to take over (swapped out of the caller's proto), else loaded.proto is copied.
    static Result<std::unique_ptr<Session>> createFrom(const LoadedModel& loaded,
                                                       onnx::ModelProto* owned,
                                                       const SessionOptions& options);
    struct State;
    std::unique_ptr<State> state_;
    std::vector<IoInfo> inputs_, outputs_;
};

}  // namespace onnxlens::engine
