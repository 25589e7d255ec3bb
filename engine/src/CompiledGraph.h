#pragma once
// The executor's internals: a graph compiled for execution and the frame of values one execution
// of it holds. Used by the compiler and executor (Session.cpp) and by the kernels that run
// subgraphs (If, Loop, Scan, SequenceMap); not part of the engine's public headers.
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "onnxlens/engine/Kernel.h"
#include "onnxlens/engine/Session.h"
#include "onnxlens/engine/ThreadPool.h"
#include "onnxlens/engine/Value.h"

namespace onnxlens::engine {

// A graph compiled for execution: value slots, kernels in topological order.
class CompiledGraph;

// A frame holds the values of one execution of a CompiledGraph; subgraphs look up free
// names in their parent frames.
struct Frame {
    const CompiledGraph* graph = nullptr;
    std::vector<Value> values;  // indexed by the graph's slots; an initializer's stays None
    const Frame* parent = nullptr;
    const Value* lookup(const std::string& name) const;
    // The value of `slot`: the frame's own, else the graph's initializer there. Initializers are
    // read in place, never copied into a frame (a copy per run and initializer cost a heap block
    // for its shape); they are never released, so no kernel reuses their buffers.
    const Value& at(int slot) const;
};

class CompiledGraph {
  public:
    struct Step;
    ~CompiledGraph();
    using ValueObserver = std::function<void(const std::string&, const Value&)>;
    // Runs with the given graph inputs (in graph-input order); free names resolve in `parent`.
    // `observe` (RunControl::onValue) sees each value a node of this graph produces.
    std::vector<Value> run(ThreadPool& pool, std::vector<Value> inputs, const Frame* parent,
                           const std::atomic<bool>* cancel, std::vector<NodeProfile>* profile,
                           const ValueObserver* observe = nullptr) const;

    const std::vector<std::string>& inputNames() const { return inputNames_; }
    const std::vector<std::string>& outputNames() const { return outputNames_; }
    int slotOf(const std::string& name) const;  // -1 when not a value of this graph
    const Value* constantAt(int slot) const { return constantAt_[static_cast<std::size_t>(slot)]; }

  private:
    friend class GraphCompiler;
    std::vector<std::string> slotNames_;
    std::map<std::string, int> slotIndex_;
    std::vector<std::string> inputNames_, outputNames_;
    std::vector<int> inputSlots_, outputSlots_;
    std::vector<std::pair<int, Value>> constants_;  // initializers
    std::vector<const Value*> constantAt_;          // per slot: its initializer, or null
    std::vector<int> freeSlots_;                    // names resolved in parent frames
    std::vector<std::unique_ptr<Step>> steps_;
    std::shared_ptr<void> ownedProtos_;  // expanded function bodies etc.
};

}  // namespace onnxlens::engine
