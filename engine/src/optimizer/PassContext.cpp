#include "optimizer/PassContext.h"

#include <stdexcept>

#include "onnxlens/model/OnnxDomains.h"

namespace onnxlens::engine {

PassContext::PassContext(onnx::ModelProto& model, std::filesystem::path modelDirectory,
                         std::shared_ptr<ShapeInferenceCache> initialShapes)
    : model_(&model),
      graph_(model.mutable_graph()),
      directory_(std::move(modelDirectory)),
      opset_(onnxlens::defaultOpset(model)),
      initialShapes_(std::move(initialShapes)) {}

PassContext::PassContext(onnx::GraphProto& graph, int defaultOpset,
                         std::filesystem::path modelDirectory)
    : graph_(&graph), directory_(std::move(modelDirectory)), opset_(defaultOpset) {}

onnx::ModelProto& PassContext::model() {
    if (!model_) throw std::logic_error("optimizer pass needs the whole model");
    return *model_;
}

const GraphIndex& PassContext::index() {
    if (!index_) index_.emplace(*graph_);
    return *index_;
}

const InferredShapes& PassContext::shapes() {
    if (!shapes_) {
        if (initialState_ && initialShapes_)
            shapes_ = initialShapes_->get(model());
        else
            shapes_ = inferShapes(model());
    }
    return *shapes_;
}

void PassContext::graphChanged(bool shapesStillHold) {
    index_.reset();
    if (shapesStillHold) {
        // The first state's inference, if nobody made it yet, would no longer be of this state.
        if (!shapes_ && initialState_ && initialShapes_) shapes_ = initialShapes_->peek();
    } else {
        shapes_.reset();
    }
    initialState_ = false;
}

}  // namespace onnxlens::engine
