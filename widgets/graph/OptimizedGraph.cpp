#include "widgets/graph/OptimizedGraph.h"

#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/engine/Session.h"

namespace onnxlens::widgets {

Result<std::shared_ptr<const OptimizedGraph>> buildOptimizedGraph(const ModelDocument& document) {
    engine::SessionOptions options;
    options.threads = 1;  // only compiled, never run
    options.optimize = true;
    options.keepOptimizedModelWeights = true;  // the drawn graph shows them
    auto session = engine::Session::create(document.loaded, options);
    if (!session) return session.error();
    auto graph = std::make_shared<OptimizedGraph>();
    graph->report = (*session)->optimizationReport();
    auto model = std::make_shared<const onnx::ModelProto>((*session)->optimizedModel());
    session.value().reset();  // the kernels and their weights are not needed any more
    auto view = buildViewGraph(std::move(model));
    if (!view) return makeError(document.path.toStdString(), view.error().message);
    graph->view = std::make_shared<const ViewGraph>(std::move(view.value()));
    return std::shared_ptr<const OptimizedGraph>(std::move(graph));
}

}  // namespace onnxlens::widgets
