#include "onnxlens/workflows/Roofline.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <random>

#include "onnxlens/engine/Session.h"

namespace onnxlens::engine {

Result<PeakThroughput> measurePeakThroughput(int threads, int size) {
    LoadedModel model;
    model.path = "peak-gemm.onnx";
    model.proto = std::make_shared<onnx::ModelProto>();
    auto& proto = *model.proto;
    proto.set_ir_version(8);
    proto.add_opset_import()->set_version(17);
    auto* g = proto.mutable_graph();
    g->set_name("peak_gemm");
    for (const char* name : {"a", "b"}) {
        auto* in = g->add_input();
        in->set_name(name);
        auto* t = in->mutable_type()->mutable_tensor_type();
        t->set_elem_type(onnx::TensorProto::FLOAT);
        t->mutable_shape()->add_dim()->set_dim_value(size);
        t->mutable_shape()->add_dim()->set_dim_value(size);
    }
    auto* node = g->add_node();
    node->set_op_type("MatMul");
    node->add_input("a");
    node->add_input("b");
    node->add_output("c");
    g->add_output()->set_name("c");
    SessionOptions options;
    options.threads = threads;
    auto session = Session::create(model, options);
    if (!session) return session.error();
    std::mt19937 random(7);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::map<std::string, Value> feeds;
    for (const char* name : {"a", "b"}) {
        Tensor t(DataType::Float, Shape{size, size});
        for (auto& v : t.span<float>()) v = uniform(random);
        feeds.emplace(name, Value(std::move(t)));
    }
    double bestSeconds = 1e30;
    for (int i = 0; i < 12; ++i) {
        const auto start = std::chrono::steady_clock::now();
        auto out = (*session)->run(feeds);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (!out) return out.error();
        if (i >= 2) bestSeconds = std::min(bestSeconds, seconds);  // two warm-up runs
    }
    PeakThroughput peak;
    peak.threads = (*session)->threads();
    const double flops = 2.0 * size * size * static_cast<double>(size);
    peak.gflops = flops / bestSeconds / 1e9;
    peak.method = "best of 10 runs of a " + std::to_string(size) + "x" + std::to_string(size) +
                  "x" + std::to_string(size) + " float32 MatMul on the engine's GEMM at " +
                  std::to_string(peak.threads) + " thread(s)";
    return peak;
}

std::vector<NodeRate> nodeRates(const ModelCost& cost, const std::vector<NodeTimeSummary>& profiled,
                                double peakGflops) {
    std::map<std::string, const NodeCost*> byName;
    for (const auto& n : cost.nodes) byName.emplace(n.name, &n);
    std::vector<NodeRate> rates;
    for (const auto& p : profiled) {
        auto it = byName.find(p.nodeName);
        if (it == byName.end() || !it->second->shapesKnown || p.perRunMs <= 0) continue;
        NodeRate r;
        r.nodeName = p.nodeName;
        r.opType = p.opType;
        r.flops = it->second->figures.flops;
        r.perRunMs = p.perRunMs;
        r.gflops = r.flops / (p.perRunMs * 1e-3) / 1e9;
        r.intensity = it->second->figures.intensity();
        r.peakShare = peakGflops > 0 ? r.gflops / peakGflops : 0;
        rates.push_back(r);
    }
    return rates;
}

}  // namespace onnxlens::engine
