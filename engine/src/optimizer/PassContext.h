#pragma once
// What an optimizer pass works on: the model (or one graph), its folder, and the facts about
// the current graph state the passes share, built at most once per state: the graph index and
// onnx shape inference. The driver (OptimizerDriver.cpp) tells the context when a pass changed
// the graph; a pass never rebuilds either itself.
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <memory>
#include <optional>

#include "onnxlens/model/GraphIndex.h"
#include "onnxlens/model/ShapeInference.h"

namespace onnxlens::engine {

class PassContext {
  public:
    // A whole model. `initialShapes` (may be null) is the shape inference cache of the model as it
    // is now (LoadedModel::shapes): the first state's inference comes from there.
    PassContext(onnx::ModelProto& model, std::filesystem::path modelDirectory,
                std::shared_ptr<ShapeInferenceCache> initialShapes = nullptr);
    // One graph without its model (passes that need neither opset imports nor shapes).
    PassContext(onnx::GraphProto& graph, int defaultOpset, std::filesystem::path modelDirectory);

    onnx::ModelProto& model();  // throws std::logic_error for a graph-only context
    onnx::GraphProto& graph() { return *graph_; }
    const std::filesystem::path& modelDirectory() const { return directory_; }
    int defaultOpset() const { return opset_; }

    // Producers and readers of the graph as it is now.
    const GraphIndex& index();
    // onnx shape inference of the model as it is now, or as it was before passes that keep shapes
    // (their surviving values keep theirs): run at most once per state.
    const InferredShapes& shapes();
    // The inference valid for the current state when one was made, else null.
    std::shared_ptr<const InferredShapes> currentShapes() const { return shapes_; }

    // Called by the driver after a pass rewrote the graph. `shapesStillHold`: every value that
    // survived keeps its shape and no new value would be typed differently by a new inference.
    void graphChanged(bool shapesStillHold);

  private:
    onnx::ModelProto* model_ = nullptr;
    onnx::GraphProto* graph_ = nullptr;
    std::filesystem::path directory_;
    int opset_ = 1;
    std::optional<GraphIndex> index_;
    std::shared_ptr<ShapeInferenceCache> initialShapes_;
    std::shared_ptr<const InferredShapes> shapes_;
    bool initialState_ = true;
};

}  // namespace onnxlens::engine
