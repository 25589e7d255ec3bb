#pragma once
// Compiling a model once (kernels resolved, unsupported nodes reported together) and running it.
#include <onnx/onnx_pb.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/engine/ThreadUse.h"
#include "onnxlens/engine/Value.h"
#include "onnxlens/engine/WeightMemory.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/Result.h"

namespace onnxlens::engine {

struct UnsupportedNode {
    std::string nodeName, opType, domain;
    int opsetVersion = 0;
};

struct SessionOptions {
    int threads = 0;  // intra-op threads; <= 0: number of cores
    // The largest tensor this session's compile and runs may allocate (a broken or hostile model
    // asking for terabytes fails with an error naming the node); 0: the process default, half of
    // physical memory (maxTensorBytes() in Tensor.h).
    std::uint64_t maxTensorBytes = 0;
    bool optimize = true;  // run the graph optimizer passes at load
    // optimizedModel() keeps its initializers' bytes (to show or save the optimized graph).
    // Otherwise each initializer's bytes are released as soon as the engine holds its tensor,
    // so a session holds its weights once, not twice.
    bool keepOptimizedModelWeights = false;
    // Runs use fewer of the threads while other programs keep the cores busy (ThreadUse.h; the
    // environment's ONNXLENS_ADAPTIVE_THREADS=0 turns it off too): a parallel region waits for
    // its slowest thread, and a thread sharing a core with a busy program waits time slices.
    // Results may then differ in their last bits between runs, as between thread counts: the
    // workflows whose figures must come out the same when rerun (export and quantization
    // reports, comparisons, numeric diffs, conformance) turn it off.
    bool adaptThreadsToLoad = true;
    // Where the session reads its threads' waits for a CPU (readThreadWaitTimes when empty);
    // tests give their own.
    std::function<bool(ThreadWaitTimes&)> threadWaitReader;
};

// One node's execution in a profiled run.
struct NodeProfile {
    std::string nodeName, opType;
    std::int64_t startNs = 0;  // since the start of the run
    std::int64_t durationNs = 0;
};

struct RunControl {
    std::atomic<bool> cancel{false};        // set from any thread to stop a run between nodes
    bool profile = false;                   // fill `profile` with one entry per top-level node
    std::vector<NodeProfile> nodeProfiles;  // filled when profile is set
    // When set, called on the running thread with every value a top-level node produces (by
    // value name), before the executor may release it: layer-by-layer comparison without
    // making every tensor a graph output. Keeping a copy keeps the buffer (copies share it).
    std::function<void(const std::string& valueName, const Value& value)> onValue;
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
    // An external data file the session maps that changed on disk since the load (replaced,
    // truncated, rewritten), before or during the run, is an error naming the file.
    Result<std::vector<Value>> run(const std::map<std::string, Value>& feeds,
                                   RunControl* control = nullptr);

    // The threads the session was made with; a run may use fewer (threadUse()).
    int threads() const;
    ThreadUse threadUse() const;
    // The graph the engine runs (after the optimizer's passes, when enabled) and what they did.
    const onnx::ModelProto& optimizedModel() const;
    const OptimizationReport& optimizationReport() const;
    // Bytes of weights mapped in place and copied (kernels' reorders: as of the last run).
    WeightMemory weightMemory() const;

  private:
    Session() = default;
    // `owned`: the model to take over (swapped out of the caller's proto), else loaded.proto is
    // copied.
    static Result<std::unique_ptr<Session>> createFrom(const LoadedModel& loaded,
                                                       onnx::ModelProto* owned,
                                                       const SessionOptions& options);
    struct State;
    std::unique_ptr<State> state_;
    std::vector<IoInfo> inputs_, outputs_;
};

}  // namespace onnxlens::engine
