// The window on com.microsoft quantized models (issue 29 part 6): a model with a
// GatherBlockQuantized embedding and a MatMulNBits product, built here; their nodes in their
// categories' colours, their attributes and a "Quantized weight" row in the Node panel,
// com.microsoft in the Model panel's opsets, and the Tensor panel showing each packed weight
// dequantized (statistics and .npy export against values worked here from the integers).
#include <gtest/gtest.h>

#include <QCheckBox>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QTableWidget>
#include <QTextBrowser>
#include <QTreeWidget>
#include <cmath>
#include <cstring>
#include <iostream>
#include <random>

#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "onnxlens/model/TensorFile.h"
#include "widgets/graph/GraphPage.h"
#include "widgets/graph/GraphStyle.h"
#include "widgets/panels/ModelPanel.h"
#include "widgets/panels/NodePanel.h"
#include "widgets/panels/TensorPanel.h"

namespace onnxlens {
namespace {

onnx::TensorProto bytesTensor(const std::string& name, std::vector<std::int64_t> dims,
                              const std::vector<std::uint8_t>& bytes) {
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::UINT8);
    for (auto d : dims) t.add_dims(d);
    t.set_raw_data(std::string(bytes.begin(), bytes.end()));
    return t;
}

onnx::TensorProto floatTensor(const std::string& name, std::vector<std::int64_t> dims,
                              const std::vector<float>& values) {
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::FLOAT);
    for (auto d : dims) t.add_dims(d);
    for (float v : values) t.add_float_data(v);
    return t;
}

// ids [2] -> GatherBlockQuantized (uint8 [4, 16] of 4-bit values: a [4, 32] table, blocks of 16,
// zero points packed [4, 1]) -> h [2, 32] -> MatMulNBits (K 32, N 3, 4 bits, blocks of 16,
// packed zero points [3]) -> y [2, 3]. `table` and `weight` get the dequantized values.
struct QuantizedModel {
    std::shared_ptr<onnx::ModelProto> model;
    std::vector<double> table;   // [4, 32]
    std::vector<double> weight;  // [3, 32]
};

QuantizedModel makeQuantizedModel() {
    std::mt19937 rng(29);
    std::uniform_int_distribution<int> code(0, 15);
    QuantizedModel out;
    out.model = testing::makeModelShell(17);
    auto* ms = out.model->add_opset_import();
    ms->set_domain("com.microsoft");
    ms->set_version(1);
    auto& g = *out.model->mutable_graph();
    g.set_name("quantized");
    *g.add_input() = testing::makeValueInfo("ids", onnx::TensorProto::INT64, {"2"});
    *g.add_output() = testing::makeValueInfo("y", onnx::TensorProto::FLOAT, {"2", "3"});

    // The table: row r, value j (0..31): byte j / 2 of the row, low nibble first.
    std::vector<int> tq(4 * 32), tz(4 * 2);
    for (auto& v : tq) v = code(rng);
    for (auto& v : tz) v = code(rng);
    std::vector<std::uint8_t> tableBytes(4 * 16), tableZero(4);
    for (std::size_t i = 0; i < tableBytes.size(); ++i)
        tableBytes[i] = static_cast<std::uint8_t>(tq[2 * i] | (tq[2 * i + 1] << 4));
    for (std::size_t r = 0; r < 4; ++r)
        tableZero[r] = static_cast<std::uint8_t>(tz[2 * r] | (tz[2 * r + 1] << 4));
    std::vector<float> tableScales(8);
    for (std::size_t i = 0; i < 8; ++i) tableScales[i] = 0.25f * static_cast<float>(i + 1);
    for (std::size_t i = 0; i < tq.size(); ++i) {
        const std::size_t s = i / 32 * 2 + i % 32 / 16;
        out.table.push_back((tq[i] - tz[s]) * static_cast<double>(tableScales[s]));
    }
    *g.add_initializer() = bytesTensor("embed.qweight", {4, 16}, tableBytes);
    *g.add_initializer() = floatTensor("embed.scales", {4, 2}, tableScales);
    *g.add_initializer() = bytesTensor("embed.zp", {4, 1}, tableZero);
    auto* gather = testing::addNode(g, "GatherBlockQuantized", "embed",
                                    {"embed.qweight", "ids", "embed.scales", "embed.zp"}, {"h"});
    gather->set_domain("com.microsoft");
    testing::addIntAttribute(gather, "bits", 4);
    testing::addIntAttribute(gather, "block_size", 16);
    testing::addIntAttribute(gather, "gather_axis", 0);
    testing::addIntAttribute(gather, "quantize_axis", 1);

    // B [3, 2, 8]: column n, row k at byte (k % 16) / 2 of block k / 16.
    std::vector<int> wq(3 * 32), wz(3 * 2);
    for (auto& v : wq) v = code(rng);
    for (auto& v : wz) v = code(rng);
    std::vector<std::uint8_t> b(3 * 2 * 8, 0), bz(3, 0);
    for (std::size_t n = 0; n < 3; ++n)
        for (std::size_t k = 0; k < 32; ++k)
            b[(n * 2 + k / 16) * 8 + k % 16 / 2] |=
                static_cast<std::uint8_t>(wq[n * 32 + k] << (k % 2 * 4));
    for (std::size_t n = 0; n < 3; ++n)
        bz[n] = static_cast<std::uint8_t>(wz[2 * n] | (wz[2 * n + 1] << 4));
    const std::vector<float> wScales = {0.5f, 0.125f, 1.5f, 0.75f, 2.0f, 0.0625f};
    for (std::size_t i = 0; i < wq.size(); ++i) {
        const std::size_t s = i / 32 * 2 + i % 32 / 16;
        out.weight.push_back((wq[i] - wz[s]) * static_cast<double>(wScales[s]));
    }
    *g.add_initializer() = bytesTensor("lm.qweight", {3, 2, 8}, b);
    *g.add_initializer() = floatTensor("lm.scales", {6}, wScales);
    *g.add_initializer() = bytesTensor("lm.zp", {3}, bz);
    auto* mm = testing::addNode(g, "MatMulNBits", "lm_head",
                                {"h", "lm.qweight", "lm.scales", "lm.zp"}, {"y"});
    mm->set_domain("com.microsoft");
    testing::addIntAttribute(mm, "K", 32);
    testing::addIntAttribute(mm, "N", 3);
    testing::addIntAttribute(mm, "bits", 4);
    testing::addIntAttribute(mm, "block_size", 16);
    testing::addIntAttribute(mm, "accuracy_level", 4);
    return out;
}

void expectStatistics(const widgets::TensorStatistics& s, const std::vector<double>& values) {
    double sum = 0, squares = 0;
    for (double v : values) sum += v;
    const double mean = sum / static_cast<double>(values.size());
    for (double v : values) squares += (v - mean) * (v - mean);
    EXPECT_EQ(s.count, values.size());
    EXPECT_DOUBLE_EQ(s.min, *std::min_element(values.begin(), values.end()));
    EXPECT_DOUBLE_EQ(s.max, *std::max_element(values.begin(), values.end()));
    EXPECT_NEAR(s.mean, mean, 1e-12);
    EXPECT_NEAR(s.std, std::sqrt(squares / static_cast<double>(values.size())), 1e-12);
    EXPECT_EQ(s.zeros, static_cast<std::size_t>(std::count(values.begin(), values.end(), 0.0)));
    std::size_t total = 0;
    for (auto c : s.histogram) total += c;
    EXPECT_EQ(total, values.size());
}

TEST(QuantizedWeightsGui, MatMulNBitsAndGatherBlockQuantizedShownDequantized) {
    QTemporaryDir dir;
    const QuantizedModel q = makeQuantizedModel();
    gui::MainWindow window;
    window.resize(1400, 900);
    window.show();
    auto* page = testing::openAndDraw(window, testing::writeModel(dir, "int4.onnx", *q.model));
    ASSERT_NE(page, nullptr);
    const auto& view = *page->document().view;

    // Both nodes in a category of their own colour (not the grey of unknown operators).
    const auto& style = widgets::GraphStyle::standard();
    for (const char* name : {"embed", "lm_head"}) {
        const int index = view.findNodeByName(name);
        ASSERT_GE(index, 0) << name;
        EXPECT_NE(view.nodes[index].category, NodeCategory::Other) << name;
        EXPECT_NE(style.headerColour(view.nodes[index].category),
                  style.headerColour(NodeCategory::Other))
            << name;
    }
    // com.microsoft among the opsets.
    QStringList lines;
    auto* tree = window.modelPanel()->tree();
    for (int i = 0; i < tree->topLevelItemCount(); ++i)
        for (int k = 0; k < tree->topLevelItem(i)->childCount(); ++k)
            lines << tree->topLevelItem(i)->text(0) + ": " +
                         tree->topLevelItem(i)->child(k)->text(0) + " = " +
                         tree->topLevelItem(i)->child(k)->text(1);
    EXPECT_TRUE(lines.join('\n').contains("Opsets: com.microsoft = 1"))
        << lines.join('\n').toStdString();

    // MatMulNBits: attributes, the quantized weight's row, double-click: dequantized [3, 32].
    auto* nodes = window.nodePanel();
    nodes->showNode(page->document().view, view.findNodeByName("lm_head"));
    const QStringList attributes = nodes->sectionRows("Attributes");
    for (const char* row : {"K | 32", "N | 3", "bits | 4", "block_size | 16", "accuracy_level | 4"})
        EXPECT_TRUE(attributes.contains(row))
            << row << " in " << attributes.join(", ").toStdString();
    QTreeWidgetItem* weightRow = nodes->rowFor("Quantized weight", "B dequantized");
    ASSERT_NE(weightRow, nullptr)
        << nodes->sectionRows("Quantized weight").join(", ").toStdString();
    EXPECT_EQ(weightRow->text(3), "3x32");
    const QString path = QString::fromStdString(qgetenv("ONNXLENS_SCREENSHOT_DIR").toStdString());
    EXPECT_TRUE(nodes->findChild<QTextBrowser*>()->toPlainText().contains("ContribOperators"));
    if (!path.isEmpty()) {
        window.findChild<QDockWidget*>("nodeDock")->raise();
        QTest::qWait(200);
        window.grab().save(path + "/node-panel-matmulnbits.png");
    }
    emit nodes->details()->itemDoubleClicked(weightRow, 0);
    auto* panel = window.tensorPanel();
    ASSERT_TRUE(testing::waitFor([&] { return !panel->isBusy(); }));
    ASSERT_TRUE(panel->showsDequantized());
    EXPECT_TRUE(panel->dequantizeBox()->isVisible());
    EXPECT_TRUE(panel->titleText().contains("dequantized by MatMulNBits lm_head"))
        << panel->titleText().toStdString();
    EXPECT_TRUE(panel->titleText().contains("float32[3x32]")) << panel->titleText().toStdString();
    EXPECT_TRUE(panel->statisticsText().startsWith("dequantized: 96 values"))
        << panel->statisticsText().toStdString();
    expectStatistics(panel->statistics(), q.weight);
    ASSERT_EQ(panel->table()->rowCount(), 96);
    EXPECT_FLOAT_EQ(panel->table()->item(37, 1)->text().toFloat(),
                    static_cast<float>(q.weight[37]));
    if (!path.isEmpty()) {
        QTest::qWait(200);
        window.grab().save(path + "/screenshot-dequantized-matmulnbits.png");
    }
    // .npy: float32 [3, 32].
    const QString npy = dir.filePath("b.npy");
    ASSERT_EQ(panel->exportNpy(npy), QString());
    auto back = readNpyFile(npy.toStdString());
    ASSERT_TRUE(back) << back.error().message;
    ASSERT_EQ(back->data_type(), onnx::TensorProto::FLOAT);
    ASSERT_EQ(back->dims_size(), 2);
    EXPECT_EQ(back->dims(0), 3);
    EXPECT_EQ(back->dims(1), 32);
    ASSERT_EQ(back->raw_data().size(), 96u * 4);
    for (std::size_t i = 0; i < 96; ++i) {
        float v;
        std::memcpy(&v, back->raw_data().data() + i * 4, 4);
        ASSERT_EQ(v, static_cast<float>(q.weight[i])) << "index " << i;
    }
    // Unchecked: the stored bytes, uint8 [3, 2, 8].
    panel->dequantizeBox()->setChecked(false);
    EXPECT_FALSE(panel->showsDequantized());
    EXPECT_EQ(panel->statistics().count, 48u);
    EXPECT_FALSE(panel->titleText().contains("dequantized"));
    panel->dequantizeBox()->setChecked(true);
    ASSERT_TRUE(testing::waitFor([&] { return !panel->isBusy(); }));
    EXPECT_EQ(panel->statistics().count, 96u);

    // GatherBlockQuantized: its data double-clicked in the Inputs is shown dequantized [4, 32].
    nodes->showNode(page->document().view, view.findNodeByName("embed"));
    QTreeWidgetItem* data = nodes->rowFor("Inputs", "data");
    ASSERT_NE(data, nullptr) << nodes->sectionRows("Inputs").join(", ").toStdString();
    ASSERT_NE(nodes->rowFor("Quantized weight", "data dequantized"), nullptr);
    emit nodes->details()->itemDoubleClicked(data, 0);
    ASSERT_TRUE(testing::waitFor([&] { return !panel->isBusy(); }));
    EXPECT_TRUE(panel->titleText().contains("float32[4x32]")) << panel->titleText().toStdString();
    expectStatistics(panel->statistics(), q.table);
    ASSERT_EQ(panel->table()->rowCount(), 128);
    EXPECT_FLOAT_EQ(panel->table()->item(77, 1)->text().toFloat(), static_cast<float>(q.table[77]));
    if (!path.isEmpty()) {
        QTest::qWait(200);
        window.grab().save(path + "/screenshot-dequantized-gather.png");
    }
    // Any other initializer: no box, as before.
    nodes->showNode(page->document().view, view.findNodeByName("lm_head"));
    emit nodes->details()->itemDoubleClicked(nodes->rowFor("Inputs", "scales"), 0);
    EXPECT_FALSE(panel->dequantizeBox()->isVisible());
    EXPECT_FALSE(panel->showsDequantized());
    EXPECT_EQ(panel->statistics().count, 6u);
}

// A weight whose scales do not fit says why in the panel instead of showing numbers.
TEST(QuantizedWeightsGui, MalformedWeightSaysWhy) {
    QTemporaryDir dir;
    QuantizedModel q = makeQuantizedModel();
    for (auto& t : *q.model->mutable_graph()->mutable_initializer())
        if (t.name() == "lm.scales") {
            t.clear_float_data();
            t.set_dims(0, 5);
            for (int i = 0; i < 5; ++i) t.add_float_data(1.0f);
        }
    gui::MainWindow window;
    auto* page = testing::openAndDraw(window, testing::writeModel(dir, "bad.onnx", *q.model));
    ASSERT_NE(page, nullptr);
    auto* nodes = window.nodePanel();
    nodes->showNode(page->document().view, page->document().view->findNodeByName("lm_head"));
    emit nodes->details()->itemDoubleClicked(nodes->rowFor("Inputs", "B"), 0);
    auto* panel = window.tensorPanel();
    ASSERT_TRUE(testing::waitFor([&] { return !panel->isBusy(); }));
    EXPECT_TRUE(panel->statisticsText().contains("lm_head"))
        << panel->statisticsText().toStdString();
    EXPECT_TRUE(panel->statisticsText().contains("input scales"))
        << panel->statisticsText().toStdString();
    EXPECT_EQ(panel->exportNpy(dir.filePath("x.npy")).isEmpty(), false);
}

// A real decoder's lm_head (ONNXLENS_GENAI_MODEL: bench/make_genai_decoder.py's genai int4 layout,
// external data): opened, sampled and exported on workers, the GUI thread never held.
TEST(QuantizedWeightsGui, LargeWeightIsDequantizedOffTheGuiThread) {
    const QByteArray model = qgetenv("ONNXLENS_GENAI_MODEL");
    if (model.isEmpty()) GTEST_SKIP() << "set ONNXLENS_GENAI_MODEL to a genai int4 decoder";
    gui::MainWindow window;
    window.show();
    auto* page = testing::openAndDraw(window, QString::fromLocal8Bit(model));
    ASSERT_NE(page, nullptr);
    const int lmHead = page->document().view->findNodeByName("/lm_head/MatMulNBits");
    ASSERT_GE(lmHead, 0);
    auto* nodes = window.nodePanel();
    nodes->showNode(page->document().view, lmHead);
    QTreeWidgetItem* row = nodes->rowFor("Quantized weight", "B dequantized");
    ASSERT_NE(row, nullptr);
    auto* panel = window.tensorPanel();
    testing::StallMeter stalls;
    QElapsedTimer clock;
    clock.start();
    emit nodes->details()->itemDoubleClicked(row, 0);
    ASSERT_TRUE(testing::waitFor([&] { return !panel->isBusy(); }, 120000));
    const qint64 shownMs = clock.elapsed();
    std::cout << "lm_head dequantized and summarized in " << shownMs << " ms, worst GUI stall "
              << stalls.worstStallMs() << " ms: " << panel->statisticsText().toStdString() << "\n";
    EXPECT_TRUE(panel->titleText().contains("float32[32000x2048]"))
        << panel->titleText().toStdString();
    // An evenly strided sample of at most kStatisticsValues (every 17th of 65.5 M).
    EXPECT_LE(panel->statistics().count, widgets::TensorPanel::kStatisticsValues);
    EXPECT_GT(panel->statistics().count, widgets::TensorPanel::kStatisticsValues / 2);
    EXPECT_LT(stalls.worstStallMs(), 500 * testing::kStallBoundScale);
}

}  // namespace
}  // namespace onnxlens
