// The transformer fusion passes: GELU and LayerNorm patterns as exported by PyTorch, MatMul +
// bias (+ GELU) as one FusedMatMul. Each rewrite is checked structurally and by running the
// model with and without the optimizer on the same inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "GraphBuilding.h"
#include "OpTestHarness.h"
#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/workflows/InputPreparation.h"

using namespace onnxlens;
using namespace onnxlens::testing;

namespace {

// A float model under construction: one input x of a fixed shape, constants, nodes.
class ModelBuilder {
  public:
    ModelBuilder(std::vector<std::int64_t> inputShape, int opset = 14) {
        model_.set_ir_version(8);
        model_.add_opset_import()->set_version(opset);
        auto* in = graph().add_input();
        in->set_name("x");
        auto* tt = in->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(onnx::TensorProto::FLOAT);
        for (auto d : inputShape) tt->mutable_shape()->add_dim()->set_dim_value(d);
    }
    onnx::GraphProto& graph() { return *model_.mutable_graph(); }

    std::string scalar(float v) { return constant(Tensor::scalar<float>(v)); }
    std::string constant(const Tensor& t) {
        const std::string name = "c" + std::to_string(graph().initializer_size());
        *graph().add_initializer() = engine::tensorToProto(t, name);
        return name;
    }
    // A [n] vector (or [rows, n] matrix) of distinct values.
    std::string values(Shape shape, float phase) {
        std::vector<float> v(static_cast<std::size_t>(engine::shapeElementCount(shape)));
        for (std::size_t i = 0; i < v.size(); ++i)
            v[i] = std::cos(0.61f * static_cast<float>(i) + phase);
        return constant(Tensor::fromVector<float>(std::move(shape), v));
    }
    std::string node(const std::string& op, std::vector<std::string> inputs,
                     std::function<void(onnx::NodeProto&)> attributes = {}) {
        auto* n = graph().add_node();
        n->set_op_type(op);
        const std::string out = op + std::to_string(graph().node_size());
        n->set_name(out);
        for (auto& i : inputs) n->add_input(i);
        n->add_output(out);
        if (attributes) attributes(*n);
        return out;
    }
    void output(const std::string& name) { graph().add_output()->set_name(name); }
    const onnx::ModelProto& model() const { return model_; }

  private:
    onnx::ModelProto model_;
};

std::string reduceMeanLastAxis(ModelBuilder& b, const std::string& in) {
    return b.node("ReduceMean", {in},
                  [](onnx::NodeProto& n) { setAttr(n, "axes", std::vector<std::int64_t>{-1}); });
}

// PyTorch's LayerNorm export over the last axis.
std::string layerNormPattern(ModelBuilder& b, const std::string& x, float eps) {
    const std::string d = b.node("Sub", {x, reduceMeanLastAxis(b, x)});
    const std::string var = reduceMeanLastAxis(b, b.node("Pow", {d, b.scalar(2.0f)}));
    const std::string std = b.node("Sqrt", {b.node("Add", {var, b.scalar(eps)})});
    const std::string normed = b.node("Div", {d, std});
    return b.node("Add", {b.node("Mul", {normed, b.values({8}, 0.3f)}), b.values({8}, 1.7f)});
}

// Optimized and unoptimized sessions on the same seeded inputs agree; returns the optimized graph.
onnx::ModelProto expectOptimizedRunAgrees(const onnx::ModelProto& model) {
    LoadedModel loaded;
    loaded.path = "transformer-fusions.onnx";
    loaded.proto = std::make_shared<onnx::ModelProto>(model);
    engine::SessionOptions unoptimized;
    unoptimized.optimize = false;
    auto reference = engine::Session::create(loaded, unoptimized);
    auto optimized = engine::Session::create(loaded, {});
    if (!reference || !optimized) {
        ADD_FAILURE() << (reference ? optimized.error().message : reference.error().message);
        return {};
    }
    auto feeds = engine::prepareFeeds((*reference)->inputs(), {}, {}, 7);
    EXPECT_TRUE(feeds);
    if (!feeds) return {};
    auto expected = (*reference)->run(*feeds);
    auto actual = (*optimized)->run(*feeds);
    EXPECT_TRUE(expected && actual);
    if (expected && actual) {
        EXPECT_EQ(expected->size(), actual->size());
        for (std::size_t i = 0; i < std::min(expected->size(), actual->size()); ++i)
            EXPECT_TRUE(tensorsClose((*actual)[i].tensor(), (*expected)[i].tensor(), {1e-4, 1e-5}));
    }
    return (*optimized)->optimizedModel();
}

TEST(TransformerFusions, GeluPatternInEachExportedOperandOrderBecomesOneGelu) {
    ModelBuilder b({2, 8});
    const float sqrt2 = std::sqrt(2.0f);
    // (x * (1 + erf(x / sqrt2))) * 0.5
    std::string t =
        b.node("Add", {b.node("Erf", {b.node("Div", {"x", b.scalar(sqrt2)})}), b.scalar(1)});
    b.output(b.node("Mul", {b.node("Mul", {"x", t}), b.scalar(0.5f)}));
    // (0.5 * (erf(x * 1/sqrt2) + 1)) * x, constants first
    t = b.node("Add", {b.scalar(1), b.node("Erf", {b.node("Mul", {b.scalar(1 / sqrt2), "x"})})});
    b.output(b.node("Mul", {"x", b.node("Mul", {b.scalar(0.5f), t})}));
    // (x * 0.5) * (1 + erf(x / sqrt2))
    t = b.node("Add", {b.node("Erf", {b.node("Div", {"x", b.scalar(sqrt2)})}), b.scalar(1)});
    b.output(b.node("Mul", {b.node("Mul", {"x", b.scalar(0.5f)}), t}));
    onnx::ModelProto copy = b.model();
    EXPECT_EQ(engine::fuseGelu(copy), 3);
    ASSERT_EQ(copy.graph().node_size(), 3);
    for (const auto& n : copy.graph().node()) {
        EXPECT_EQ(n.op_type(), "Gelu");
        EXPECT_EQ(n.domain(), engine::kOnnxlensDomain);  // opset 14 has no onnx Gelu
        EXPECT_EQ(n.input(0), "x");
    }
    for (int i = 0; i < 3; ++i)
        EXPECT_EQ(copy.graph().node(i).output(0), copy.graph().output(i).name());
    expectOptimizedRunAgrees(b.model());
}

TEST(TransformerFusions, GeluWithAnotherConstantOrASharedIntermediateIsNotFused) {
    ModelBuilder b({2, 8});
    // erf(x / 1.5): not GELU.
    std::string t =
        b.node("Add", {b.node("Erf", {b.node("Div", {"x", b.scalar(1.5f)})}), b.scalar(1)});
    b.output(b.node("Mul", {b.node("Mul", {"x", t}), b.scalar(0.5f)}));
    // 1 + erf(...) also a graph output.
    t = b.node("Add",
               {b.node("Erf", {b.node("Div", {"x", b.scalar(std::sqrt(2.0f))})}), b.scalar(1)});
    b.output(t);
    b.output(b.node("Mul", {b.node("Mul", {"x", t}), b.scalar(0.5f)}));
    onnx::ModelProto copy = b.model();
    EXPECT_EQ(engine::fuseGelu(copy), 0);
    EXPECT_EQ(copy.graph().node_size(), b.model().graph().node_size());
}

TEST(TransformerFusions, SiluInEitherOperandOrderBecomesOneQuickGeluWithAlphaOne) {
    ModelBuilder b({2, 8});
    b.output(b.node("Mul", {"x", b.node("Sigmoid", {"x"})}));
    const std::string h = b.node("Add", {"x", b.scalar(0.25f)});
    b.output(b.node("Mul", {b.node("Sigmoid", {h}), h}));
    onnx::ModelProto copy = b.model();
    EXPECT_EQ(engine::fuseSilu(copy), 2);
    ASSERT_EQ(copy.graph().node_size(), 3);
    int fused = 0;
    for (const auto& n : copy.graph().node()) {
        if (n.op_type() != "QuickGelu") continue;
        ++fused;
        EXPECT_EQ(n.domain(), engine::kOnnxlensDomain);
        ASSERT_EQ(n.attribute_size(), 1);
        EXPECT_EQ(n.attribute(0).name(), "alpha");
        EXPECT_EQ(n.attribute(0).f(), 1.0f);
    }
    EXPECT_EQ(fused, 2);
    expectOptimizedRunAgrees(b.model());
}

TEST(TransformerFusions, SigmoidTimesAnotherValueOrASharedSigmoidIsNotSilu) {
    ModelBuilder b({2, 8});
    const std::string y = b.node("Add", {"x", b.scalar(1.0f)});
    b.output(b.node("Mul", {y, b.node("Sigmoid", {"x"})}));  // x's sigmoid times another value
    const std::string shared = b.node("Sigmoid", {"x"});
    b.output(shared);  // also a graph output
    b.output(b.node("Mul", {"x", shared}));
    onnx::ModelProto copy = b.model();
    EXPECT_EQ(engine::fuseSilu(copy), 0);
    EXPECT_EQ(copy.graph().node_size(), b.model().graph().node_size());
}

TEST(TransformerFusions, LayerNormPatternBecomesLayerNormalizationWithItsEpsilon) {
    ModelBuilder b({3, 8});
    b.output(layerNormPattern(b, "x", 1e-5f));
    onnx::ModelProto copy = b.model();
    EXPECT_EQ(engine::fuseLayerNormalization(copy), 1);
    ASSERT_EQ(copy.graph().node_size(), 1);
    const auto& ln = copy.graph().node(0);
    EXPECT_EQ(ln.op_type(), "LayerNormalization");
    EXPECT_EQ(ln.domain(), engine::kOnnxlensDomain);
    ASSERT_EQ(ln.input_size(), 3);
    EXPECT_EQ(ln.input(0), "x");
    float epsilon = 0;
    for (const auto& a : ln.attribute())
        if (a.name() == "epsilon") epsilon = a.f();
    EXPECT_FLOAT_EQ(epsilon, 1e-5f);
    expectOptimizedRunAgrees(b.model());
}

TEST(TransformerFusions, LayerNormAtOpset17IsTheOnnxOperatorAndOtherAxesAreLeftAlone) {
    ModelBuilder b({3, 8}, 17);
    b.output(layerNormPattern(b, "x", 1e-6f));
    // Means over axis 0: not a last-axis LayerNorm.
    const std::string mean0 = b.node("ReduceMean", {"x"}, [](onnx::NodeProto& n) {
        setAttr(n, "axes", std::vector<std::int64_t>{0});
    });
    b.output(b.node("Sub", {"x", mean0}));
    onnx::ModelProto copy = b.model();
    EXPECT_EQ(engine::fuseLayerNormalization(copy), 1);
    EXPECT_EQ(opCounts(copy)["LayerNormalization"], 1);
    EXPECT_EQ(opCounts(copy)["ReduceMean"], 1);
    for (const auto& n : copy.graph().node())
        if (n.op_type() == "LayerNormalization") {
            EXPECT_EQ(n.domain(), "");
        }
    expectOptimizedRunAgrees(b.model());
}

TEST(TransformerFusions, MatMulBiasAndGeluBecomeOneFusedMatMul) {
    ModelBuilder b({2, 5, 8});
    const float sqrt2 = std::sqrt(2.0f);
    const std::string h =
        b.node("Add", {b.values({6}, 0.2f), b.node("MatMul", {"x", b.values({8, 6}, 0.9f)})});
    const std::string t =
        b.node("Add", {b.node("Erf", {b.node("Div", {h, b.scalar(sqrt2)})}), b.scalar(1)});
    b.output(b.node("Mul", {b.node("Mul", {h, t}), b.scalar(0.5f)}));
    // A bias of another length (here [1], broadcast) is not a FusedMatMul bias.
    b.output(b.node("Add", {b.node("MatMul", {"x", b.values({8, 6}, 0.4f)}), b.values({1}, 0.1f)}));
    onnx::ModelProto copy = b.model();
    EXPECT_EQ(engine::fuseGelu(copy), 1);
    EXPECT_EQ(engine::fuseMatMulBias(copy), 1);
    EXPECT_EQ(engine::fuseMatMulGelu(copy), 1);
    auto counts = opCounts(copy);
    EXPECT_EQ(counts["FusedMatMul"], 1);
    EXPECT_EQ(counts["Gelu"], 0);
    EXPECT_EQ(counts["MatMul"], 1);
    for (const auto& n : copy.graph().node()) {
        if (n.op_type() != "FusedMatMul") continue;
        ASSERT_EQ(n.input_size(), 3);
        ASSERT_EQ(n.attribute_size(), 1);
        EXPECT_EQ(n.attribute(0).s(), "Gelu");
    }
    expectOptimizedRunAgrees(b.model());
}

TEST(TransformerFusions, TinyBertSampleFusesEveryLayerAndComputesTheSame) {
    auto loaded = loadModel(std::filesystem::path(ONNXLENS_SOURCE_DIR) / "resources" / "samples" /
                            "tiny_bert" / "model.onnx");
    ASSERT_TRUE(loaded) << loaded.error().message;
    const onnx::ModelProto optimized = expectOptimizedRunAgrees(*loaded->proto);
    auto counts = opCounts(optimized);
    EXPECT_EQ(counts["Erf"], 0);
    EXPECT_EQ(counts["Pow"], 0);
    EXPECT_EQ(counts["Sqrt"], 0);
    EXPECT_GT(counts["LayerNormalization"], 0);
    // The fused products end packed (pack-matmul-weights) where blocked kernels exist.
    EXPECT_GT(counts["FusedMatMul"] + counts["PackedMatMul"], 0);
}

}  // namespace
