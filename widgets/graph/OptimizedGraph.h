#pragma once
// The graph the engine runs: the model's compiled session's optimized model (the optimizer's
// passes on), drawn like the file's graph so a person can see what was folded and fused.
#include <memory>
#include <string>

#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/model/ViewGraph.h"

namespace onnxlens::widgets {

struct OptimizedGraph {
    std::shared_ptr<const ViewGraph> view;
    engine::OptimizationReport report;
};

// Runs on the engine's thread (a large graph takes a while to build); never touches widgets.
// `model` is the session's own optimized model as the engine process wrote it (no second
// compile): its initializers keep their names, types and dims, but the session released their
// bytes into the engine's tensors.
Result<std::shared_ptr<const OptimizedGraph>> buildOptimizedGraph(
    std::shared_ptr<const onnx::ModelProto> model, engine::OptimizationReport report,
    const std::string& where);

}  // namespace onnxlens::widgets
