#pragma once
// Building small test graphs node by node (optimizer and layout-pass tests).
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "OpTestHarness.h"

namespace onnxlens::testing {

inline onnx::NodeProto* addNode(onnx::GraphProto& g, const std::string& op,
                                std::vector<std::string> inputs, std::vector<std::string> outputs) {
    auto* n = g.add_node();
    n->set_op_type(op);
    n->set_name(op + "_" + outputs[0]);
    for (auto& i : inputs) n->add_input(i);
    for (auto& o : outputs) n->add_output(o);
    return n;
}

inline void addInitializer(onnx::GraphProto& g, const std::string& name, const Tensor& t) {
    *g.add_initializer() = engine::tensorToProto(t, name);
}

inline void addFloatInput(onnx::GraphProto& g, const std::string& name,
                          std::vector<std::int64_t> dims) {
    auto* in = g.add_input();
    in->set_name(name);
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (auto d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

inline onnx::ModelProto emptyModel(int opset = 17) {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(opset);
    return m;
}

// How many nodes of each op type the graph (not its subgraphs) has.
inline std::map<std::string, int> opCounts(const onnx::ModelProto& m) {
    std::map<std::string, int> counts;
    for (const auto& n : m.graph().node()) counts[n.op_type()]++;
    return counts;
}

// Runs `model` exactly as written (no optimizer passes) on `feeds`; failures are test failures.
inline std::vector<Value> runModelAsWritten(const onnx::ModelProto& model,
                                            const std::map<std::string, Value>& feeds,
                                            int threads = 1) {
    LoadedModel loaded;
    loaded.path = "graph-building-test.onnx";
    loaded.proto = std::make_shared<onnx::ModelProto>(model);
    engine::SessionOptions options;
    options.optimize = false;
    options.threads = threads;
    auto session = engine::Session::create(loaded, options);
    EXPECT_TRUE(session) << (session ? "" : session.error().message);
    if (!session) return {};
    auto result = (*session)->run(feeds);
    EXPECT_TRUE(result) << (result ? "" : result.error().message);
    return result ? *result : std::vector<Value>{};
}

}  // namespace onnxlens::testing
