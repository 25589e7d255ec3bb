#pragma once
// The graph the engine runs: the model compiled as a Session compiles it (the optimizer's passes
// on), drawn like the file's graph so a person can see what was folded and fused.
#include <memory>

#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/engine/Session.h"
#include "onnxlens/model/ViewGraph.h"
#include "widgets/workers/ModelDocument.h"

namespace onnxlens::widgets {

struct OptimizedGraph {
    std::shared_ptr<const ViewGraph> view;
    engine::OptimizationReport report;
};

// Runs on a worker thread (compiling a large model takes a while); never touches widgets.
// Fails with the engine's message when it cannot compile the model (unsupported operators).
Result<std::shared_ptr<const OptimizedGraph>> buildOptimizedGraph(const ModelDocument& document);

}  // namespace onnxlens::widgets
