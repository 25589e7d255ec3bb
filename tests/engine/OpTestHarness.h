#pragma once
// Builds a one-node model in memory and runs it on the engine: the unit-test harness for kernels.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "onnxlens/engine/Session.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/workflows/ReferenceComparison.h"

namespace onnxlens::testing {

using engine::DataType;
using engine::Shape;
using engine::Tensor;
using engine::Value;

inline void setAttr(onnx::NodeProto& node, const std::string& name, std::int64_t v) {
    auto* a = node.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
}
inline void setAttr(onnx::NodeProto& node, const std::string& name, float v) {
    auto* a = node.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
}
inline void setAttr(onnx::NodeProto& node, const std::string& name, const std::string& v) {
    auto* a = node.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
}
inline void setAttr(onnx::NodeProto& node, const std::string& name,
                    const std::vector<std::int64_t>& v) {
    auto* a = node.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
}
inline void setAttr(onnx::NodeProto& node, const std::string& name, const std::vector<float>& v) {
    auto* a = node.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOATS);
    for (auto x : v) a->add_floats(x);
}
inline void setAttr(onnx::NodeProto& node, const std::string& name, const Tensor& t) {
    auto* a = node.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::TENSOR);
    *a->mutable_t() = engine::tensorToProto(t);
}

struct OneNodeSpec {
    std::string opType;
    std::string domain;  // "" = ai.onnx
    int opset = 17;
    std::vector<Value> inputs;  // Value() = absent optional input
    int outputCount = 1;
    std::function<void(onnx::NodeProto&)> attributes = {};  // add attributes with setAttr
};

// The model the spec describes: inputs x0..xN (absent ones get the empty name), outputs y0..yM.
inline onnx::ModelProto buildOneNodeModel(const OneNodeSpec& spec) {
    onnx::ModelProto model;
    model.set_ir_version(8);
    auto* opset = model.add_opset_import();
    opset->set_domain(spec.domain);
    opset->set_version(spec.opset);
    if (!spec.domain.empty()) {
        auto* def = model.add_opset_import();
        def->set_domain("");
        def->set_version(17);
    }
    auto* graph = model.mutable_graph();
    graph->set_name("one_node");
    auto* node = graph->add_node();
    node->set_op_type(spec.opType);
    node->set_domain(spec.domain);
    node->set_name("under_test");
    for (std::size_t i = 0; i < spec.inputs.size(); ++i) {
        const Value& v = spec.inputs[i];
        if (v.isNone()) {
            node->add_input("");
            continue;
        }
        std::string name = "x" + std::to_string(i);
        node->add_input(name);
        auto* in = graph->add_input();
        in->set_name(name);
        if (v.isTensor()) {
            auto* tt = in->mutable_type()->mutable_tensor_type();
            tt->set_elem_type(static_cast<int>(v.tensor().dtype()));
            auto* shape = tt->mutable_shape();
            for (auto d : v.tensor().shape()) shape->add_dim()->set_dim_value(d);
        } else {
            in->mutable_type()
                ->mutable_sequence_type()
                ->mutable_elem_type()
                ->mutable_tensor_type()
                ->set_elem_type(static_cast<int>(v.sequenceElementType()));
        }
    }
    for (int o = 0; o < spec.outputCount; ++o) {
        std::string name = "y" + std::to_string(o);
        node->add_output(name);
        graph->add_output()->set_name(name);
    }
    if (spec.attributes) spec.attributes(*node);
    return model;
}

// Compiles `model` (a copy) as `path`, failing the test with the engine's message when it cannot.
inline std::unique_ptr<engine::Session> compileForTest(const onnx::ModelProto& model, bool optimize,
                                                       int threads = 1,
                                                       const std::string& path = "test.onnx") {
    LoadedModel loaded;
    loaded.path = path;
    loaded.proto = std::make_shared<onnx::ModelProto>(model);
    engine::SessionOptions options;
    options.optimize = optimize;
    options.threads = threads;
    auto session = engine::Session::create(loaded, options);
    if (!session) ADD_FAILURE() << session.error().message;
    return session ? std::move(*session) : nullptr;
}

// Compiles and runs; the Result carries the engine's error message on failure.
inline Result<std::vector<Value>> runOneNode(const OneNodeSpec& spec, int threads = 1) {
    LoadedModel loaded;
    loaded.path = "one_node.onnx";
    loaded.proto = std::make_shared<onnx::ModelProto>(buildOneNodeModel(spec));
    engine::SessionOptions options;
    options.threads = threads;
    auto session = engine::Session::create(loaded, options);
    if (!session) return session.error();
    std::map<std::string, Value> feeds;
    for (std::size_t i = 0; i < spec.inputs.size(); ++i)
        if (!spec.inputs[i].isNone()) feeds["x" + std::to_string(i)] = spec.inputs[i];
    return (*session)->run(feeds);
}

// Runs and returns output `index` as a tensor, failing the test on an engine error.
inline Tensor runOneNodeTensor(const OneNodeSpec& spec, std::size_t index = 0) {
    auto result = runOneNode(spec);
    if (!result) {
        ADD_FAILURE() << result.error().message;
        return {};
    }
    return result->at(index).tensor();
}

template <class T>
Tensor makeTensor(Shape shape, std::vector<T> values) {
    return Tensor::fromVector<T>(std::move(shape), values);
}

// Element-wise comparison with the design's tolerances (rtol 1e-3, atol 1e-5 by default).
inline ::testing::AssertionResult tensorsClose(const Tensor& actual, const Tensor& expected,
                                               engine::Tolerance tolerance = {}) {
    auto r = engine::compareTensors(actual, expected, tolerance);
    if (r.passed) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << r.problem << " (max abs error " << r.maxAbsError << ")";
}

}  // namespace onnxlens::testing
