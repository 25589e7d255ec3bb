#pragma once
// Shared by the tests of the com.microsoft operator families: deterministic sample tensors,
// double views of any floating tensor, one-node specs in the com.microsoft domain, runs that name
// only some of a node's outputs, and the engine's error for a failing run.
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "NumericOpTestHelpers.h"

namespace onnxlens::testing::ms {

// `count` deterministic values in [-range, range) (a linear congruential sequence per seed).
inline std::vector<float> sampleValues(std::size_t count, std::uint32_t seed, float range = 2.0f) {
    std::vector<float> values(count);
    std::uint32_t state = seed * 2654435761u + 12345u;
    for (auto& v : values) {
        state = state * 1664525u + 1013904223u;
        v = (static_cast<float>(state >> 8) / 16777216.0f * 2.0f - 1.0f) * range;
    }
    return values;
}

// A float tensor of sample values, cast to `type` (float16 values are then what the kernel and
// the reference both read).
inline Tensor sample(Shape shape, std::uint32_t seed, DataType type = DataType::Float,
                     float range = 2.0f) {
    Tensor t(DataType::Float, shape);
    const auto values = sampleValues(static_cast<std::size_t>(t.numel()), seed, range);
    for (std::size_t i = 0; i < values.size(); ++i) t.data<float>()[i] = values[i];
    return type == DataType::Float ? t : t.castTo(type);
}

inline std::vector<double> doublesOf(const Tensor& t) {
    const Tensor d = t.castTo(DataType::Double);
    auto s = d.span<double>();
    return {s.begin(), s.end()};
}

// The tensor of `type` and `shape` holding `values` (computed in double by a reference).
inline Tensor tensorOf(DataType type, Shape shape, const std::vector<double>& values) {
    return Tensor::fromVector<double>(std::move(shape), values).castTo(type);
}

// Passes when `r` failed with a message that mentions every one of `words` (the node, the
// attribute or input at fault).
inline ::testing::AssertionResult errorMentions(const Result<std::vector<Value>>& r,
                                                std::initializer_list<const char*> words) {
    if (r) return ::testing::AssertionFailure() << "ran without an error";
    for (const char* w : words)
        if (r.error().message.find(w) == std::string::npos)
            return ::testing::AssertionFailure()
                   << "\"" << r.error().message << "\" does not mention \"" << w << "\"";
    return ::testing::AssertionSuccess();
}

inline OneNodeSpec msSpec(std::string op, std::vector<Value> inputs, int outputCount = 1) {
    return nodeSpec(std::move(op), 1, std::move(inputs), outputCount, "com.microsoft");
}

// Runs `spec` with only the outputs flagged in `wanted` named (the others left "", as an exporter
// leaves an unused optional output); the result has one entry per output, None where unnamed.
inline Result<std::vector<Value>> runWithOutputs(const OneNodeSpec& spec,
                                                 const std::vector<bool>& wanted, int threads = 1) {
    onnx::ModelProto model = buildOneNodeModel(spec);
    auto* graph = model.mutable_graph();
    graph->clear_output();
    for (std::size_t o = 0; o < wanted.size(); ++o) {
        if (wanted[o])
            graph->add_output()->set_name("y" + std::to_string(o));
        else
            graph->mutable_node(0)->set_output(static_cast<int>(o), "");
    }
    LoadedModel loaded;
    loaded.path = "one_node.onnx";
    loaded.proto = std::make_shared<onnx::ModelProto>(model);
    engine::SessionOptions options;
    options.threads = threads;
    auto session = engine::Session::create(loaded, options);
    if (!session) return session.error();
    std::map<std::string, Value> feeds;
    for (std::size_t i = 0; i < spec.inputs.size(); ++i)
        if (!spec.inputs[i].isNone()) feeds["x" + std::to_string(i)] = spec.inputs[i];
    auto produced = (*session)->run(feeds);
    if (!produced) return produced.error();
    std::vector<Value> all(wanted.size());
    std::size_t next = 0;
    for (std::size_t o = 0; o < wanted.size(); ++o)
        if (wanted[o]) all[o] = produced->at(next++);
    return all;
}

// The engine's error message for a spec that must fail ("" when it ran).
inline std::string failureOf(const OneNodeSpec& spec) {
    auto result = runOneNode(spec);
    return result ? std::string() : result.error().message;
}

// The failure names the node under test and contains `text`.
inline ::testing::AssertionResult failsWith(const OneNodeSpec& spec, const std::string& text) {
    const std::string message = failureOf(spec);
    if (message.empty()) return ::testing::AssertionFailure() << "ran without an error";
    if (message.find("under_test") == std::string::npos || message.find(text) == std::string::npos)
        return ::testing::AssertionFailure()
               << "error \"" << message << "\" lacks \"" << text << "\"";
    return ::testing::AssertionSuccess();
}

}  // namespace onnxlens::testing::ms
