#pragma once
// Small multi-node graphs with subgraph attributes for the control-flow and sequence tests (the
// one-node harness cannot express bodies or chains of nodes).
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "OpTestHarness.h"

namespace onnxlens::testing {

class TestGraph {
  public:
    explicit TestGraph(std::string name = "g") { graph_.set_name(std::move(name)); }

    // Adds a node; returns it so that attributes can be set with setAttr / setGraphAttr.
    onnx::NodeProto& node(const std::string& opType, std::initializer_list<std::string> inputs,
                          std::initializer_list<std::string> outputs) {
        auto* n = graph_.add_node();
        n->set_op_type(opType);
        n->set_name(opType + "_" + std::to_string(graph_.node_size()));
        for (const auto& in : inputs) n->add_input(in);
        for (const auto& out : outputs) n->add_output(out);
        return *n;
    }
    TestGraph& input(const std::string& name) {
        graph_.add_input()->set_name(name);
        return *this;
    }
    // A graph input (or output) with a declared tensor type and shape.
    TestGraph& tensorInput(const std::string& name, DataType type, const Shape& shape) {
        declareTensor(*graph_.add_input(), name, type, shape);
        return *this;
    }
    TestGraph& output(const std::string& name) {
        graph_.add_output()->set_name(name);
        return *this;
    }
    TestGraph& tensorOutput(const std::string& name, DataType type, const Shape& shape) {
        declareTensor(*graph_.add_output(), name, type, shape);
        return *this;
    }
    const onnx::GraphProto& proto() const { return graph_; }

  private:
    static void declareTensor(onnx::ValueInfoProto& v, const std::string& name, DataType type,
                              const Shape& shape) {
        v.set_name(name);
        auto* tt = v.mutable_type()->mutable_tensor_type();
        tt->set_elem_type(static_cast<int>(type));
        auto* s = tt->mutable_shape();
        for (auto d : shape) s->add_dim()->set_dim_value(d);
    }
    onnx::GraphProto graph_;
};

inline void setGraphAttr(onnx::NodeProto& node, const std::string& name, const TestGraph& body) {
    auto* a = node.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = body.proto();
}

// Compiles the graph as a model of the default domain at `opset` and runs it on `feeds`.
inline Result<std::vector<Value>> runGraph(const TestGraph& graph,
                                           const std::map<std::string, Value>& feeds,
                                           int opset = 17) {
    LoadedModel loaded;
    loaded.path = "test_graph.onnx";
    auto model = std::make_shared<onnx::ModelProto>();
    model->set_ir_version(8);
    auto* import = model->add_opset_import();
    import->set_domain("");
    import->set_version(opset);
    *model->mutable_graph() = graph.proto();
    loaded.proto = model;
    engine::SessionOptions options;
    options.threads = 1;
    auto session = engine::Session::create(loaded, options);
    if (!session) return session.error();
    return (*session)->run(feeds);
}

template <class T>
std::vector<T> valuesOf(const Tensor& t) {
    auto s = t.span<T>();
    return {s.begin(), s.end()};
}

}  // namespace onnxlens::testing
