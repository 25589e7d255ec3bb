// Embedding tables (Gather of a constant float table) quantized to 8 bits as quantize_dynamic
// writes them (its activation type: uint8, asymmetric per tensor): the Gather reads the uint8
// table, a DequantizeLinear writes the float output.
#include <gtest/gtest.h>

#include <cmath>

#include "GraphBuilding.h"
#include "onnxlens/engine/Session.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/ModelSummary.h"
#include "onnxlens/workflows/Quantizer.h"

namespace onnxlens::testing {
namespace {

// E [5, 4] gathered by ids [3] (int64), then a MatMul by W [4, 2].
onnx::ModelProto embeddingModel() {
    auto m = emptyModel(17);
    auto& g = *m.mutable_graph();
    g.set_name("embedding");
    auto* ids = g.add_input();
    ids->set_name("ids");
    ids->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
    ids->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(3);
    std::vector<float> table(20);
    // Largest magnitude 1.273 (i = 19).
    for (int i = 0; i < 20; ++i)
        table[i] = 0.1f * static_cast<float>(i) - 0.63f + 0.003f * static_cast<float>(i % 3);
    addInitializer(g, "E", Tensor::fromVector<float>({5, 4}, table));
    addInitializer(g, "W", Tensor::fromVector<float>({4, 2}, {1, 0, 0, 1, 1, 0, 0, 1}));
    addNode(g, "Gather", {"E", "ids"}, {"emb"})->set_name("embed");
    addNode(g, "MatMul", {"emb", "W"}, {"Y"})->set_name("proj");
    auto* o = g.add_output();
    o->set_name("emb");
    o->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    o->mutable_type()->mutable_tensor_type()->mutable_shape();
    return m;
}

TEST(QuantizerGather, EmbeddingTableBecomesUInt8GatherThenDequantizeLinear) {
    engine::QuantizeOptions options;
    options.opTypes = {"Gather"};
    for (const auto format :
         {engine::QuantizationFormat::QOperator, engine::QuantizationFormat::QDQ}) {
        options.format = format;
        auto q = engine::quantizeModel(embeddingModel(), "m.onnx", options);
        ASSERT_TRUE(q) << q.error().message;
        ASSERT_EQ(q->quantized.size(), 1u);
        EXPECT_EQ(q->quantized[0].weight, "E");
        EXPECT_EQ(q->quantized[0].output, "emb");
        const auto& g = q->model.graph();
        ASSERT_EQ(g.node_size(), 3);
        EXPECT_EQ(g.node(0).op_type(), "Gather");
        EXPECT_EQ(g.node(0).input(0), "E_quantized");
        EXPECT_EQ(g.node(0).input(1), "ids");
        EXPECT_EQ(g.node(1).op_type(), "DequantizeLinear");
        EXPECT_EQ(g.node(1).input(0), g.node(0).output(0));
        EXPECT_EQ(g.node(1).output(0), "emb");
        EXPECT_EQ(g.node(2).op_type(), "MatMul");  // not asked for: left in float
        for (const auto& t : g.initializer()) {
            EXPECT_NE(t.name(), "E");
            if (t.name() == "E_quantized" || t.name() == "E_zero_point") {
                EXPECT_EQ(t.data_type(), onnx::TensorProto::UINT8) << t.name();
            }
        }
        const auto verdict = runChecker(q->model);
        EXPECT_TRUE(verdict.ok) << verdict.message;

        // Asymmetric per tensor over [-0.63, 1.273]: scale 1.903 / 255, zero point
        // round(0.63 / scale) = 84, each value (round(e / scale) + 84 - 84) * scale; finer than
        // the symmetric int8 scale 1.273 / 127 would be.
        LoadedModel loaded;
        loaded.path = "m.onnx";
        loaded.proto = std::make_shared<onnx::ModelProto>(q->model);
        auto session = engine::Session::create(loaded);
        ASSERT_TRUE(session) << session.error().message;
        auto out =
            (*session)->run({{"ids", Value(Tensor::fromVector<std::int64_t>({3}, {4, 0, 2}))}});
        ASSERT_TRUE(out) << out.error().message;
        const Tensor& emb = (*out)[0].tensor();
        ASSERT_EQ(emb.shape(), (Shape{3, 4}));
        const int rows[3] = {4, 0, 2};
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 4; ++c) {
                const int i = rows[r] * 4 + c;
                const double e = 0.1 * i - 0.63 + 0.003 * (i % 3), scale = 1.903 / 255;
                EXPECT_EQ(std::nearbyint(0.63 / scale), 84.0);
                const double want = std::nearbyint(e / scale) * scale;
                EXPECT_NEAR(emb.data<float>()[r * 4 + c], want, 1e-5) << r << "," << c;
                EXPECT_LE(std::fabs(want - e), 0.5 * scale + 1e-9);
            }
    }
}

TEST(QuantizerGather, ComputedTableIsSkippedWithTheReason) {
    auto m = embeddingModel();
    auto* g = m.mutable_graph();
    // The table is a graph input with a default: it can be overridden, so it is left in float.
    auto* in = g->add_input();
    in->set_name("E");
    in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    in->mutable_type()->mutable_tensor_type()->mutable_shape();
    engine::QuantizeOptions options;
    options.opTypes = {"Gather", "MatMul"};
    auto q = engine::quantizeModel(m, "m.onnx", options);
    ASSERT_TRUE(q) << q.error().message;
    ASSERT_EQ(q->skipped.size(), 1u);
    EXPECT_EQ(q->skipped[0].opType, "Gather");
    EXPECT_NE(q->skipped[0].reason.find("graph input"), std::string::npos);
}

}  // namespace
}  // namespace onnxlens::testing
