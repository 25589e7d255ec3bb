#pragma once
// Visiting every tensor and every subgraph of a model: initializers, sparse initializers,
// Constant-style tensor attributes, If/Loop/Scan bodies and local function bodies.
#include <onnx/onnx_pb.h>

namespace onnxlens::detail {

template <class Fn>
void forEachTensorInGraph(const onnx::GraphProto& graph, Fn& fn);

template <class Fn>
void forEachTensorInNode(const onnx::NodeProto& node, Fn& fn) {
    for (const auto& attribute : node.attribute()) {
        if (attribute.has_t()) fn(attribute.t());
        for (const auto& t : attribute.tensors()) fn(t);
        if (attribute.has_sparse_tensor()) {
            fn(attribute.sparse_tensor().values());
            fn(attribute.sparse_tensor().indices());
        }
        for (const auto& s : attribute.sparse_tensors()) {
            fn(s.values());
            fn(s.indices());
        }
        if (attribute.has_g()) forEachTensorInGraph(attribute.g(), fn);
        for (const auto& g : attribute.graphs()) forEachTensorInGraph(g, fn);
    }
}

template <class Fn>
void forEachTensorInGraph(const onnx::GraphProto& graph, Fn& fn) {
    for (const auto& t : graph.initializer()) fn(t);
    for (const auto& s : graph.sparse_initializer()) {
        fn(s.values());
        fn(s.indices());
    }
    for (const auto& node : graph.node()) forEachTensorInNode(node, fn);
}

// Calls fn(const onnx::TensorProto&) for every tensor stored in the model.
template <class Fn>
void forEachTensor(const onnx::ModelProto& model, Fn&& fn) {
    forEachTensorInGraph(model.graph(), fn);
    for (const auto& function : model.functions())
        for (const auto& node : function.node()) forEachTensorInNode(node, fn);
}

}  // namespace onnxlens::detail
