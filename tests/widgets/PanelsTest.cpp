// The tensor panel (values, statistics, histogram, .npy export) and the model panel.
#include <gtest/gtest.h>

#include <QTableWidget>
#include <QTreeWidget>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "onnxlens/model/TensorFile.h"
#include "widgets/graph/GraphPage.h"
#include "widgets/panels/ModelPanel.h"
#include "widgets/panels/NodePanel.h"
#include "widgets/panels/TensorPanel.h"

namespace onnxlens {
namespace {

// The view graph of y = x + bias over 2,500 floats, and the index of its tensor "bias"
// (null view when the graph cannot be built).
std::pair<std::shared_ptr<const ViewGraph>, int> viewOfAddWith(const onnx::TensorProto& bias) {
    auto model = testing::makeModelShell();
    auto& g = *model->mutable_graph();
    *g.add_input() = testing::makeValueInfo("x", onnx::TensorProto::FLOAT, {"2500"});
    *g.add_initializer() = bias;
    testing::addNode(g, "Add", "add", {"x", "bias"}, {"y"});
    *g.add_output() = testing::makeValueInfo("y", onnx::TensorProto::FLOAT, {"2500"});
    auto view = buildViewGraph(model);
    if (!view) return {nullptr, -1};
    auto shared = std::make_shared<const ViewGraph>(std::move(view.value()));
    int index = -1;
    for (int t = 0; t < static_cast<int>(shared->tensors.size()); ++t)
        if (shared->tensors[t].name == "bias") index = t;
    return {shared, index};
}

TEST(TensorStatistics, MatchesAHandComputation) {
    std::vector<double> values = {0, 1, 2, 3, 4, 0, -2, 8};
    auto s = widgets::computeStatistics(values, 4);
    double mean = 16.0 / 8;
    double var = 0;
    for (double v : values) var += (v - mean) * (v - mean);
    EXPECT_EQ(s.count, 8u);
    EXPECT_DOUBLE_EQ(s.min, -2);
    EXPECT_DOUBLE_EQ(s.max, 8);
    EXPECT_DOUBLE_EQ(s.mean, mean);
    EXPECT_DOUBLE_EQ(s.std, std::sqrt(var / 8));
    EXPECT_EQ(s.zeros, 2u);
    ASSERT_EQ(s.histogram.size(), 4u);  // bins of 2.5 from -2
    EXPECT_EQ(s.histogram[0], 3u);      // [-2, 0.5): -2, 0, 0
    std::size_t total = 0;
    for (auto c : s.histogram) total += c;
    EXPECT_EQ(total, 8u);
}

TEST(TensorPanel, ShowsAnInitializersValuesStatisticsAndExportsNpy) {
    QTemporaryDir dir;
    const QString path = testing::writeModel(dir, "cnn.onnx", *testing::makeSmallCnn());
    gui::MainWindow window;
    window.openFile(path);
    ASSERT_TRUE(
        testing::waitFor([&] { return window.pageCount() == 1 && window.page(0)->isDrawn(); }));
    auto* page = window.page(0);
    const auto& view = *page->document().view;
    const int conv = view.findNodeByName("conv1");
    window.nodePanel()->showNode(page->document().view, conv);
    QTreeWidgetItem* weight = window.nodePanel()->rowFor("Inputs", "W");
    ASSERT_NE(weight, nullptr);
    emit window.nodePanel()->details()->itemDoubleClicked(weight, 0);
    auto* panel = window.tensorPanel();
    // The generator's values: 0.01 * ((i * 37) % 17 - 8) for 72 elements.
    std::vector<double> expected;
    for (int i = 0; i < 72; ++i)
        expected.push_back(static_cast<double>(0.01f * static_cast<float>((i * 37) % 17 - 8)));
    const auto& s = panel->statistics();
    ASSERT_EQ(s.count, 72u);
    EXPECT_DOUBLE_EQ(s.min, *std::min_element(expected.begin(), expected.end()));
    EXPECT_DOUBLE_EQ(s.max, *std::max_element(expected.begin(), expected.end()));
    double sum = 0;
    for (double v : expected) sum += v;
    EXPECT_NEAR(s.mean, sum / 72, 1e-12);
    EXPECT_EQ(s.zeros, static_cast<std::size_t>(std::count(expected.begin(), expected.end(), 0.0)));
    ASSERT_EQ(panel->table()->rowCount(), 72);
    EXPECT_FLOAT_EQ(panel->table()->item(5, 1)->text().toFloat(), static_cast<float>(expected[5]));

    const QString npy = dir.filePath("w.npy");
    ASSERT_EQ(panel->exportNpy(npy), QString());
    auto back = readNpyFile(npy.toStdString());
    ASSERT_TRUE(back) << back.error().message;
    ASSERT_EQ(back->dims_size(), 4);
    EXPECT_EQ(back->dims(0), 8);
    EXPECT_EQ(back->data_type(), onnx::TensorProto::FLOAT);
    ASSERT_EQ(back->raw_data().size(), 72u * 4);
    float fifth;
    std::memcpy(&fifth, back->raw_data().data() + 5 * 4, 4);
    EXPECT_EQ(static_cast<double>(fifth), expected[5]);
}

TEST(TensorPanel, PagesLargeTensors) {
    const auto [shared, bias] = viewOfAddWith(testing::makeFloatInitializer("bias", {2500}));
    ASSERT_TRUE(shared);
    widgets::TensorPanel panel;
    panel.showTensor(shared, bias, {});
    EXPECT_EQ(panel.table()->rowCount(), widgets::TensorPanel::kPageSize);
    panel.setPage(2);
    EXPECT_EQ(panel.table()->rowCount(), 500);
    EXPECT_EQ(panel.table()->item(0, 0)->text(), "2000");
}

// An external weight is read through its mapping a page (or a sample) at a time.
TEST(TensorPanel, ReadsExternalValuesOnDemand) {
    QTemporaryDir dir;
    std::vector<float> values(2500);
    for (int i = 0; i < 2500; ++i) values[i] = 0.5f * static_cast<float>(i) - 100.0f;
    const std::filesystem::path folder = dir.path().toStdString();
    {
        std::ofstream out(folder / "bias.bin", std::ios::binary);
        out.write("0123456789abcdef", 16);  // the tensor starts at byte 16
        out.write(reinterpret_cast<const char*>(values.data()), 2500 * sizeof(float));
    }
    onnx::TensorProto bias;
    bias.set_name("bias");
    bias.set_data_type(onnx::TensorProto::FLOAT);
    bias.add_dims(2500);
    bias.set_data_location(onnx::TensorProto::EXTERNAL);
    for (auto [key, value] : {std::pair<const char*, const char*>{"location", "bias.bin"},
                              {"offset", "16"},
                              {"length", "10000"}}) {
        auto* entry = bias.add_external_data();
        entry->set_key(key);
        entry->set_value(value);
    }
    widgets::ValueSelection pick;
    pick.first = 1;
    pick.count = 3;
    pick.step = 1000;
    auto picked = widgets::tensorValues(bias, folder, pick);
    ASSERT_TRUE(picked) << picked.error().message;
    EXPECT_EQ(*picked, (std::vector<double>{values[1], values[1001], values[2001]}));

    const auto [shared, index] = viewOfAddWith(bias);
    ASSERT_TRUE(shared);
    widgets::TensorPanel panel;
    panel.showTensor(shared, index, folder);
    EXPECT_EQ(panel.statistics().count, 2500u);
    EXPECT_DOUBLE_EQ(panel.statistics().min, -100.0);
    EXPECT_DOUBLE_EQ(panel.statistics().max, 0.5 * 2499 - 100.0);
    panel.setPage(2);
    ASSERT_EQ(panel.table()->rowCount(), 500);
    EXPECT_EQ(panel.table()->item(0, 0)->text(), "2000");
    EXPECT_FLOAT_EQ(panel.table()->item(3, 1)->text().toFloat(), values[2003]);
}

TEST(ModelPanel, ShowsTheSummary) {
    QTemporaryDir dir;
    const QString path = testing::writeModel(dir, "cnn.onnx", *testing::makeSmallCnn());
    gui::MainWindow window;
    window.openFile(path);
    ASSERT_TRUE(testing::waitFor([&] { return window.pageCount() == 1; }));
    QStringList lines;
    auto* tree = window.modelPanel()->tree();
    for (int i = 0; i < tree->topLevelItemCount(); ++i)
        for (int k = 0; k < tree->topLevelItem(i)->childCount(); ++k)
            lines << tree->topLevelItem(i)->text(0) + ": " +
                         tree->topLevelItem(i)->child(k)->text(0) + " = " +
                         tree->topLevelItem(i)->child(k)->text(1);
    const QString all = lines.join('\n');
    EXPECT_TRUE(all.contains("Model: IR version = 8")) << all.toStdString();
    EXPECT_TRUE(all.contains("Opsets: ai.onnx = 13"));
    EXPECT_TRUE(all.contains("Inputs: input = float32 [batch, 1, 28, 28]"));
    EXPECT_TRUE(all.contains("Dynamic axes: input = axis 0: batch"));
    EXPECT_TRUE(all.contains("Checks: onnx checker = ")) << all.toStdString();
    EXPECT_TRUE(all.contains("Checks: shape inference = passed")) << all.toStdString();
    EXPECT_TRUE(all.contains("Operators: ai.onnx::Conv = 1")) << all.toStdString();
}

}  // namespace
}  // namespace onnxlens
