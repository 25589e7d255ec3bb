#include "widgets/graph/OptimizedGraph.h"

namespace onnxlens::widgets {

Result<std::shared_ptr<const OptimizedGraph>> buildOptimizedGraph(
    std::shared_ptr<const onnx::ModelProto> model, engine::OptimizationReport report,
    const std::string& where) {
    auto graph = std::make_shared<OptimizedGraph>();
    graph->report = std::move(report);
    auto view = buildViewGraph(std::move(model));
    if (!view) return makeError(where, view.error().message);
    graph->view = std::make_shared<const ViewGraph>(std::move(view.value()));
    return std::shared_ptr<const OptimizedGraph>(std::move(graph));
}

}  // namespace onnxlens::widgets
