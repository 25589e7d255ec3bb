// The numeric diff holds the weights two models share once (SharedWeights in engine/workflows):
// a chain of three Gemms whose middle weight differs in B. The two unchanged weights are shared,
// the changed one is not, and the comparison is the one without sharing, figure for figure; a
// first model whose proto someone else holds is left as it was; the scratch folder is gone after.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>

#include "GraphBuilding.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/workflows/NumericDiff.h"

namespace onnxlens::testing {
namespace {

Tensor seeded(Shape shape, unsigned seed) {
    Tensor t(DataType::Float, shape);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-0.2f, 0.2f);
    for (float& v : t.span<float>()) v = dist(rng);
    return t;
}

// x[2,64] -> Gemm(w1) -> Relu -> Gemm(w2) -> Relu -> Gemm(w3) -> y[2,64]; each weight 16 KB.
onnx::ModelProto gemmChain(float w2Delta) {
    auto m = emptyModel(17);
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {2, 64});
    std::string in = "x";
    for (int k = 1; k <= 3; ++k) {
        const std::string w = "w" + std::to_string(k);
        Tensor weights = seeded({64, 64}, 40 + k);
        if (k == 2) weights.data<float>()[7] += w2Delta;
        addInitializer(g, w, weights);
        const std::string out = k == 3 ? "y" : "gemm" + std::to_string(k);
        addNode(g, "Gemm", {in, w}, {out})->set_name("gemm" + std::to_string(k));
        in = out;
        if (k < 3) {
            addNode(g, "Relu", {in}, {"relu" + std::to_string(k)})
                ->set_name("relu" + std::to_string(k));
            in = "relu" + std::to_string(k);
        }
    }
    auto* out = g.add_output();
    out->set_name("y");
    out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    return m;
}

LoadedModel loaded(const onnx::ModelProto& m, const std::string& name) {
    auto l = loadModelFromBytes(m.SerializeAsString(), name, {});
    EXPECT_TRUE(l.ok()) << (l.ok() ? "" : l.error().message);
    return std::move(*l);
}

int scratchFolders() {
    const std::string prefix = "onnxlens-diff-weights-" + std::to_string(::getpid()) + "-";
    int n = 0;
    for (const auto& e :
         std::filesystem::directory_iterator(std::filesystem::temp_directory_path()))
        if (e.path().filename().string().rfind(prefix, 0) == 0) ++n;
    return n;
}

TEST(NumericDiffSharedWeights, UnchangedWeightsSharedAndTheSameFigures) {
    const auto a = gemmChain(0), b = gemmChain(0.5f);
    engine::NumericDiffOptions options;
    options.threads = 1;
    auto shared = engine::numericDiff(loaded(a, "a.onnx"), loaded(b, "b.onnx"), options);
    ASSERT_TRUE(shared.ok()) << shared.error().message;
    EXPECT_EQ(shared->sharedWeightBytes, 2u * 64 * 64 * 4);  // w1 and w3, not the changed w2
    EXPECT_EQ(scratchFolders(), 0);

    options.shareWeights = false;
    auto plain = engine::numericDiff(loaded(a, "a.onnx"), loaded(b, "b.onnx"), options);
    ASSERT_TRUE(plain.ok()) << plain.error().message;
    EXPECT_EQ(plain->sharedWeightBytes, 0u);
    ASSERT_EQ(shared->tensors.size(), plain->tensors.size());
    ASSERT_GE(shared->firstDivergence, 0);
    EXPECT_EQ(shared->tensors[shared->firstDivergence].valueA, "gemm2");
    EXPECT_EQ(shared->firstDivergence, plain->firstDivergence);
    for (std::size_t i = 0; i < plain->tensors.size(); ++i) {
        EXPECT_EQ(shared->tensors[i].valueA, plain->tensors[i].valueA);
        EXPECT_EQ(shared->tensors[i].figures.maxAbsError, plain->tensors[i].figures.maxAbsError)
            << plain->tensors[i].valueA;
    }
    EXPECT_EQ(shared->tensors[0].figures.maxAbsError, 0);  // gemm1: the same weights
    EXPECT_GT(shared->tensors[shared->firstDivergence].figures.maxAbsError, 0);
}

TEST(NumericDiffSharedWeights, AModelSomeoneElseHoldsIsLeftAsItWas) {
    const auto a = gemmChain(0);
    LoadedModel held = loaded(a, "a.onnx");  // the window's open model, say
    LoadedModel first = held;                // shares the proto
    engine::NumericDiffOptions options;
    options.threads = 1;
    auto result = engine::numericDiff(std::move(first), loaded(a, "same.onnx"), options);
    ASSERT_TRUE(result.ok()) << result.error().message;
    EXPECT_EQ(result->sharedWeightBytes, 3u * 64 * 64 * 4);
    EXPECT_EQ(result->firstDivergence, -1);
    ASSERT_EQ(held.proto->graph().initializer_size(), 3);
    for (const auto& t : held.proto->graph().initializer()) {
        EXPECT_EQ(t.raw_data().size(), 64u * 64 * 4) << t.name();
        EXPECT_EQ(t.external_data_size(), 0) << t.name();
    }
    EXPECT_EQ(held.directory, loaded(a, "a.onnx").directory);
    EXPECT_EQ(scratchFolders(), 0);
}

}  // namespace
}  // namespace onnxlens::testing
