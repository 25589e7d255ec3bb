// The Run and Compare docks on the sample models: symbolic dims, a run with its output figures,
// a comparison that passes and one against a perturbed copy that fails with the numbers, the
// dynamic-axes check with and without dynamic axes, wrong input files reported on their rows,
// image inputs, a failed run that keeps the panel, and a long run cancelled while the GUI
// thread's responsiveness is measured.
#include <gtest/gtest.h>

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QFile>
#include <QImage>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QtConcurrent/QtConcurrentRun>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/TensorFile.h"
#include "widgets/graph/GraphPage.h"
#include "widgets/panels/BenchmarkPanel.h"
#include "widgets/panels/ComparePanel.h"
#include "widgets/panels/ImageInput.h"
#include "widgets/panels/RunPanel.h"
#include "widgets/workers/ModelController.h"

namespace onnxlens {
namespace {

namespace fs = std::filesystem;
using widgets::ComparePanel;
using widgets::InputSource;
using widgets::RunPanel;

const fs::path kSamples = fs::path(ONNXLENS_SOURCE_DIR) / "resources" / "samples";

QString samplePath(const char* name) {
    return QString::fromStdString((kSamples / name / "model.onnx").string());
}

// A Run and a Compare panel on one model's controller, as the main window wires them.
struct Panels {
    std::unique_ptr<widgets::ModelController> controller;
    RunPanel run;
    ComparePanel compare;

    bool open(const QString& path) {
        auto document = widgets::loadModelDocument(path);
        EXPECT_TRUE(document) << document.error().message;
        if (!document) return false;
        controller = std::make_unique<widgets::ModelController>(*document);
        run.setController(controller.get());
        compare.setController(controller.get());
        return testing::waitFor([&] { return run.isReady() && !run.isBusy(); });
    }
    bool runAndWait() {
        run.run();
        // The worker's queue empties before its result signals reach this thread: wait for the
        // result itself, then for the idle signal that follows it.
        return testing::waitFor([&] { return !run.isAwaitingRun() && !run.isBusy(); }, 60000);
    }
};

int columnOf(QTableWidget* table, const QString& header) {
    for (int c = 0; c < table->columnCount(); ++c)
        if (table->horizontalHeaderItem(c)->text() == header) return c;
    return -1;
}

QString text(QTableWidget* table, int row, const QString& header) {
    const int column = columnOf(table, header);
    return column >= 0 && table->item(row, column) ? table->item(row, column)->text() : QString();
}

// A test_data_set_0 beside a copy of mnist_cnn whose output element [0, 7] is moved by 0.5.
QString writePerturbedMnistCopy(const QTemporaryDir& dir) {
    const fs::path root = dir.path().toStdString();
    fs::copy_file(kSamples / "mnist_cnn" / "model.onnx", root / "model.onnx");
    fs::create_directories(root / "test_data_set_0");
    fs::copy_file(kSamples / "mnist_cnn" / "test_data_set_0" / "input_0.pb",
                  root / "test_data_set_0" / "input_0.pb");
    auto reference = readTensorFile(kSamples / "mnist_cnn" / "test_data_set_0" / "output_0.pb");
    EXPECT_TRUE(reference);
    engine::Tensor perturbed = engine::tensorFromProto(*reference).clone();
    perturbed.data<float>()[7] += 0.5f;
    EXPECT_TRUE(writeTensorPbFile(root / "test_data_set_0" / "output_0.pb",
                                  engine::tensorToProto(perturbed)));
    return QString::fromStdString((root / "model.onnx").string());
}

// x[64x64] -> Loop(trip count 10^12, body: x = Tanh(x · W)) -> y: runs until cancelled.
std::shared_ptr<onnx::ModelProto> makeEndlessLoopModel() {
    using namespace testing;
    auto model = makeModelShell(13);
    auto& g = *model->mutable_graph();
    g.set_name("endless_loop");
    *g.add_input() = makeValueInfo("x", onnx::TensorProto::FLOAT, {"64", "64"});
    *g.add_initializer() = makeFloatInitializer("W", {64, 64}, 0.01f);
    onnx::TensorProto trips;
    trips.set_name("M");
    trips.set_data_type(onnx::TensorProto::INT64);
    trips.add_int64_data(1'000'000'000'000);
    *g.add_initializer() = trips;
    onnx::TensorProto keepGoing;
    keepGoing.set_name("cond");
    keepGoing.set_data_type(onnx::TensorProto::BOOL);
    keepGoing.add_int32_data(1);
    *g.add_initializer() = keepGoing;
    auto* loop = addNode(g, "Loop", "loop", {"M", "cond", "x"}, {"y"});
    auto* attribute = loop->add_attribute();
    attribute->set_name("body");
    attribute->set_type(onnx::AttributeProto::GRAPH);
    auto& body = *attribute->mutable_g();
    body.set_name("body");
    *body.add_input() = makeValueInfo("i", onnx::TensorProto::INT64, {});
    *body.add_input() = makeValueInfo("cond_in", onnx::TensorProto::BOOL, {});
    *body.add_input() = makeValueInfo("x_in", onnx::TensorProto::FLOAT, {"64", "64"});
    addNode(body, "Identity", "keep_going", {"cond_in"}, {"cond_out"});
    addNode(body, "MatMul", "matmul", {"x_in", "W"}, {"product"});
    addNode(body, "Tanh", "tanh", {"product"}, {"x_out"});
    *body.add_output() = makeValueInfo("cond_out", onnx::TensorProto::BOOL, {});
    *body.add_output() = makeValueInfo("x_out", onnx::TensorProto::FLOAT, {"64", "64"});
    *g.add_output() = makeValueInfo("y", onnx::TensorProto::FLOAT, {"64", "64"});
    return model;
}

class RunPanelTest : public ::testing::Test {
  protected:
    void SetUp() override { testing::clearSettings(); }
};

TEST_F(RunPanelTest, RunsMnistWithASymbolicBatchAndShowsEveryOutputFigure) {
    Panels p;
    ASSERT_TRUE(p.open(samplePath("mnist_cnn")));
    EXPECT_EQ(p.run.symbols(), QStringList{QStringLiteral("batch")});
    EXPECT_EQ(p.run.symbolValue(QStringLiteral("batch")), 1);
    EXPECT_EQ(text(p.run.inputsTable(), 0, QStringLiteral("Type")),
              QStringLiteral("float32 [batch x 1 x 28 x 28]"));
    p.run.setSymbolValue(QStringLiteral("batch"), 3);
    QSignalSpy finished(&p.run, &RunPanel::runFinished);
    ASSERT_TRUE(p.runAndWait());
    ASSERT_EQ(finished.count(), 1) << p.run.statusText().toStdString();
    EXPECT_EQ(p.run.inputStatus(QStringLiteral("image")), QStringLiteral("ok, [3x1x28x28]"));

    auto* outputs = p.run.outputsTable();
    ASSERT_EQ(outputs->rowCount(), 1);
    EXPECT_EQ(text(outputs, 0, QStringLiteral("Output")), QStringLiteral("log_probs"));
    EXPECT_EQ(text(outputs, 0, QStringLiteral("dtype")), QStringLiteral("float32"));
    EXPECT_EQ(text(outputs, 0, QStringLiteral("Shape")), QStringLiteral("[3x10]"));
    // The figures agree with the output values themselves: log-softmax rows, all ≤ 0.
    const auto outcome = p.run.lastOutcome();
    ASSERT_TRUE(outcome);
    const engine::Tensor& logProbs = outcome->outputs[0].value.tensor();
    double minimum = 0, sum = 0;
    for (float v : logProbs.span<float>()) {
        minimum = std::min(minimum, static_cast<double>(v));
        sum += v;
    }
    EXPECT_NEAR(text(outputs, 0, QStringLiteral("Min")).toDouble(), minimum,
                1e-5 * std::fabs(minimum));
    EXPECT_NEAR(text(outputs, 0, QStringLiteral("Mean")).toDouble(), sum / 30, 1e-5);
    EXPECT_LE(text(outputs, 0, QStringLiteral("Max")).toDouble(), 0.0);
    EXPECT_EQ(text(outputs, 0, QStringLiteral("NaN")), QStringLiteral("0"));
    for (int row = 0; row < 3; ++row) {  // each row of a log-softmax sums to 1 in probability
        double probability = 0;
        for (int c = 0; c < 10; ++c)
            probability += std::exp(static_cast<double>(logProbs.data<float>()[row * 10 + c]));
        EXPECT_NEAR(probability, 1.0, 1e-4);
    }
    // The value view, the histogram and the top 5 of row 0.
    EXPECT_EQ(p.run.valuesTable()->rowCount(), 30);
    EXPECT_EQ(p.run.valuesTable()->item(12, 0)->text(), QStringLiteral("[1, 2]"));
    EXPECT_FLOAT_EQ(p.run.valuesTable()->item(12, 1)->text().toFloat(), logProbs.data<float>()[12]);
    ASSERT_EQ(p.run.histogramView()->chart()->series().size(), 1);
    ASSERT_EQ(p.run.topTable()->rowCount(), 5);
    const std::int64_t best = p.run.topTable()->item(0, 1)->text().toLongLong();
    for (int c = 0; c < 10; ++c) EXPECT_GE(logProbs.data<float>()[best], logProbs.data<float>()[c]);
    EXPECT_NEAR(p.run.topTable()->item(0, 3)->text().toDouble(),
                std::exp(logProbs.data<float>()[best]), 1e-3);

    // The dim is remembered for this model.
    Panels again;
    ASSERT_TRUE(again.open(samplePath("mnist_cnn")));
    EXPECT_EQ(again.run.symbolValue(QStringLiteral("batch")), 3);
}

TEST_F(RunPanelTest, TinyBertTakesTwoSymbolsAndIntegerInputs) {
    Panels p;
    ASSERT_TRUE(p.open(samplePath("tiny_bert")));
    EXPECT_EQ(p.run.symbols(), (QStringList{QStringLiteral("batch"), QStringLiteral("sequence")}));
    p.run.setSymbolValue(QStringLiteral("sequence"), 7);
    p.run.setSymbolValue(QStringLiteral("batch"), 2);
    InputSource ones;
    ones.kind = InputSource::Kind::Ones;
    p.run.setInputSource(QStringLiteral("attention_mask"), ones);
    ASSERT_TRUE(p.runAndWait());
    ASSERT_TRUE(p.run.lastOutcome()) << p.run.statusText().toStdString();
    EXPECT_EQ(text(p.run.outputsTable(), 0, QStringLiteral("Shape")), QStringLiteral("[2x7x64]"));
    EXPECT_EQ(text(p.run.outputsTable(), 1, QStringLiteral("Shape")), QStringLiteral("[2x64]"));
    EXPECT_EQ(p.run.inputStatus(QStringLiteral("input_ids")), QStringLiteral("ok, [2x7]"));
}

TEST_F(RunPanelTest, ComparePassesOnTheSampleDataSetAndFailsOnAPerturbedCopyWithTheNumbers) {
    Panels p;
    ASSERT_TRUE(p.open(samplePath("mnist_cnn")));
    ASSERT_EQ(p.compare.referenceChoices().size(), 3);  // two data sets and "reference files"
    EXPECT_EQ(p.compare.referenceChoices()[1], QStringLiteral("test_data_set_1"));
    p.compare.chooseDataSet(1);
    QSignalSpy compared(&p.compare, &ComparePanel::compareFinished);
    p.compare.compare();
    ASSERT_TRUE(testing::waitFor([&] { return compared.count() == 1; }, 60000))
        << p.compare.summaryText().toStdString();
    auto* results = p.compare.resultsTable();
    ASSERT_EQ(results->rowCount(), 1);
    EXPECT_EQ(text(results, 0, QStringLiteral("Result")), QStringLiteral("pass"));
    EXPECT_TRUE(p.compare.summaryText().startsWith(QStringLiteral("PASS")))
        << p.compare.summaryText().toStdString();
    EXPECT_LT(p.compare.lastComparison()->outputs[0].result.maxAbsError, 1e-4);
    ASSERT_TRUE(testing::waitFor([&] { return !p.run.isBusy(); }));

    // The same model copied beside a data set whose reference is off by 0.5 at [0, 7].
    QTemporaryDir dir;
    Panels perturbed;
    ASSERT_TRUE(perturbed.open(writePerturbedMnistCopy(dir)));
    perturbed.compare.chooseDataSet(0);
    perturbed.compare.setTolerance(1e-3, 1e-5);
    QSignalSpy failedCompare(&perturbed.compare, &ComparePanel::compareFinished);
    perturbed.compare.compare();
    ASSERT_TRUE(testing::waitFor([&] { return failedCompare.count() == 1; }, 60000));
    results = perturbed.compare.resultsTable();
    EXPECT_EQ(text(results, 0, QStringLiteral("Result")), QStringLiteral("FAIL"));
    const auto& r = perturbed.compare.lastComparison()->outputs[0].result;
    EXPECT_NEAR(r.maxAbsError, 0.5, 1e-3);
    EXPECT_EQ(r.worstIndex, (std::vector<std::int64_t>{0, 7}));
    EXPECT_EQ(r.outsideCount, 1);
    EXPECT_TRUE(
        text(results, 0, QStringLiteral("Worst element")).startsWith(QStringLiteral("[0, 7]: ")));
    EXPECT_EQ(text(results, 0, QStringLiteral("Outside tolerance")),
              QStringLiteral("10% (1 of 10)"));
    EXPECT_NEAR(text(results, 0, QStringLiteral("Max abs error")).toDouble(), 0.5, 1e-3);
    EXPECT_TRUE(perturbed.compare.summaryText().startsWith(QStringLiteral("FAIL")))
        << perturbed.compare.summaryText().toStdString();
    // The histogram of absolute errors: 9 tiny errors and the 0.5 one in the last bin.
    const auto& histogram = perturbed.compare.lastComparison()->outputs[0].absoluteErrors;
    EXPECT_EQ(histogram.total(), 10);
    EXPECT_EQ(histogram.counts.back(), 1);
    EXPECT_EQ(perturbed.compare.errorHistogramView()->chart()->series().size(), 1);
    ASSERT_TRUE(testing::waitFor([&] { return !perturbed.run.isBusy(); }));

    // Any reference file per output, with the Run panel's inputs (the data set's input file).
    perturbed.run.fillFromDataSet(0);
    perturbed.compare.chooseReferenceFiles();
    perturbed.compare.setReferenceFile(QStringLiteral("log_probs"),
                                       dir.filePath(QStringLiteral("test_data_set_0/output_0.pb")));
    perturbed.compare.setTolerance(0, 0.6);  // loose enough for the 0.5
    perturbed.compare.compare();
    ASSERT_TRUE(testing::waitFor([&] { return failedCompare.count() == 2; }, 60000))
        << perturbed.compare.summaryText().toStdString();
    EXPECT_EQ(text(perturbed.compare.resultsTable(), 0, QStringLiteral("Result")),
              QStringLiteral("pass"));
    EXPECT_EQ(perturbed.compare.lastComparison()->source, QStringLiteral("reference files"));
}

// x [? x 4] and ids [?] -> Gather of a 2-row table: dims with no name and no value.
QString writeUnnamedDimsModel(const QTemporaryDir& dir) {
    using namespace testing;
    auto model = makeModelShell(13);
    auto& g = *model->mutable_graph();
    g.set_name("unnamed_dims");
    auto x = makeValueInfo("x", onnx::TensorProto::FLOAT, {"N", "4"});
    x.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->clear_dim_param();
    *g.add_input() = x;
    auto ids = makeValueInfo("ids", onnx::TensorProto::INT64, {"N"});
    ids.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->clear_dim_param();
    *g.add_input() = ids;
    *g.add_initializer() = makeFloatInitializer("table", {2, 3});
    addNode(g, "Relu", "relu", {"x"}, {"y"});
    addNode(g, "Gather", "gather", {"table", "ids"}, {"rows"});
    *g.add_output() = makeValueInfo("y", onnx::TensorProto::FLOAT, {"N", "4"});
    *g.add_output() = makeValueInfo("rows", onnx::TensorProto::FLOAT, {"M", "3"});
    const std::string path = (fs::path(dir.path().toStdString()) / "unnamed.onnx").string();
    std::ofstream(path, std::ios::binary) << model->SerializeAsString();
    return QString::fromStdString(path);
}

TEST_F(RunPanelTest, UnnamedDimsAndTheSeedAreEditableAndRememberedPerModel) {
    QTemporaryDir dir;
    const QString path = writeUnnamedDimsModel(dir);
    {
        Panels p;
        ASSERT_TRUE(p.open(path));
        EXPECT_EQ(p.run.symbols(), (QStringList{QStringLiteral("x:0"), QStringLiteral("ids:0")}));
        EXPECT_EQ(text(p.run.dimsTable(), 0, QStringLiteral("Used by")),
                  QStringLiteral("x[0] (unnamed ?)"));
        EXPECT_EQ(p.run.symbolValue(QStringLiteral("x:0")), 1);
        // ids indexes the 2-row table: random values 0..1, not 0..9.
        const InputSource idsSource = p.run.inputSource(QStringLiteral("ids"));
        EXPECT_EQ(idsSource.low, 0);
        EXPECT_EQ(idsSource.high, 1);
        p.run.setSymbolValue(QStringLiteral("x:0"), 3);
        p.run.setSymbolValue(QStringLiteral("ids:0"), 5);
        p.run.setSeed(42);
        ASSERT_TRUE(p.runAndWait());
        ASSERT_TRUE(p.run.lastOutcome()) << p.run.statusText().toStdString();
        EXPECT_EQ(p.run.inputStatus(QStringLiteral("x")), QStringLiteral("ok, [3x4]"));
        EXPECT_EQ(text(p.run.outputsTable(), 0, QStringLiteral("Shape")), QStringLiteral("[3x4]"));
        EXPECT_EQ(text(p.run.outputsTable(), 1, QStringLiteral("Shape")), QStringLiteral("[5x3]"));
    }
    // Remembered per model.
    Panels again;
    ASSERT_TRUE(again.open(path));
    EXPECT_EQ(again.run.symbolValue(QStringLiteral("x:0")), 3);
    EXPECT_EQ(again.run.symbolValue(QStringLiteral("ids:0")), 5);
    EXPECT_EQ(again.run.seed(), 42u);
    // The check says the dims are unknown, not fixed.
    QSignalSpy checked(&again.compare, &ComparePanel::dynamicAxesFinished);
    again.compare.checkDynamicAxes();
    ASSERT_TRUE(testing::waitFor([&] { return checked.count() == 1; }, 60000));
    EXPECT_EQ(again.compare.lastDynamicAxesCheck()->verdict,
              engine::DynamicAxesCheckResult::Verdict::CannotTell);
    EXPECT_TRUE(again.compare.dynamicAxesSummaryText().contains(QStringLiteral("are unknown")))
        << again.compare.dynamicAxesSummaryText().toStdString();
}

TEST_F(RunPanelTest, DynamicAxesCheckPassesOnABertExportWithATwoRowTypeEmbedding) {
    Panels p;
    ASSERT_TRUE(p.open(QString::fromStdString((fs::path(ONNXLENS_SOURCE_DIR) / "tests" / "engine" /
                                               "data" / "dynamic_axes" / "bert_type_embedding.onnx")
                                                  .string())));
    QSignalSpy checked(&p.compare, &ComparePanel::dynamicAxesFinished);
    p.compare.checkDynamicAxes();
    ASSERT_TRUE(testing::waitFor([&] { return checked.count() == 1; }, 60000));
    EXPECT_TRUE(p.compare.lastDynamicAxesCheck()->passed())
        << p.compare.dynamicAxesSummaryText().toStdString();
}

TEST_F(RunPanelTest, DynamicAxesCheckWithAndWithoutDynamicAxes) {
    Panels p;
    ASSERT_TRUE(p.open(samplePath("mnist_cnn")));
    QSignalSpy checked(&p.compare, &ComparePanel::dynamicAxesFinished);
    p.compare.checkDynamicAxes();
    ASSERT_TRUE(testing::waitFor([&] { return checked.count() == 1; }, 60000))
        << p.compare.dynamicAxesSummaryText().toStdString();
    EXPECT_TRUE(p.compare.lastDynamicAxesCheck()->passed());
    EXPECT_TRUE(
        p.compare.dynamicAxesSummaryText().startsWith(QStringLiteral("The dynamic axes work")))
        << p.compare.dynamicAxesSummaryText().toStdString();
    auto* table = p.compare.dynamicAxesTable();
    ASSERT_EQ(table->rowCount(), 1);
    EXPECT_EQ(text(table, 0, QStringLiteral("Shapes per run")), QStringLiteral("[1x10], [2x10]"));
    EXPECT_EQ(text(table, 0, QStringLiteral("Follows the symbols")), QStringLiteral("yes"));
    EXPECT_TRUE(text(table, 0, QStringLiteral("Batch-2 item 0 vs batch 1"))
                    .startsWith(QStringLiteral("equal")));
    ASSERT_TRUE(testing::waitFor([&] { return !p.run.isBusy(); }));

    Panels fixed;
    ASSERT_TRUE(fixed.open(samplePath("legacy_opset10")));
    QSignalSpy fixedChecked(&fixed.compare, &ComparePanel::dynamicAxesFinished);
    fixed.compare.checkDynamicAxes();
    ASSERT_TRUE(testing::waitFor([&] { return fixedChecked.count() == 1; }, 60000));
    EXPECT_EQ(fixed.compare.lastDynamicAxesCheck()->verdict,
              engine::DynamicAxesCheckResult::Verdict::NoDynamicAxes);
    EXPECT_TRUE(fixed.compare.dynamicAxesSummaryText().startsWith(
        QStringLiteral("The model has no dynamic axes")))
        << fixed.compare.dynamicAxesSummaryText().toStdString();
}

TEST_F(RunPanelTest, WrongInputFilesAreReportedOnTheirRowAndTheModelStays) {
    Panels p;
    ASSERT_TRUE(p.open(samplePath("mnist_cnn")));
    // squeezenet's input is [1x3x224x224]: the right dtype, the wrong shape.
    InputSource file;
    file.kind = InputSource::Kind::File;
    file.file = kSamples / "squeezenet1_1" / "test_data_set_0" / "input_0.pb";
    p.run.setInputSource(QStringLiteral("image"), file);
    QSignalSpy failed(&p.run, &RunPanel::runFailed);
    ASSERT_TRUE(p.runAndWait());
    ASSERT_EQ(failed.count(), 1);
    EXPECT_TRUE(p.run.inputHasError(QStringLiteral("image")));
    EXPECT_TRUE(p.run.inputStatus(QStringLiteral("image")).contains(QStringLiteral("input_0.pb")));
    EXPECT_TRUE(p.run.inputStatus(QStringLiteral("image")).contains(QStringLiteral("dim 1 = 1")))
        << p.run.inputStatus(QStringLiteral("image")).toStdString();

    // Not a tensor file at all.
    QTemporaryDir dir;
    const QString junk = dir.filePath(QStringLiteral("junk.npy"));
    QFile out(junk);
    ASSERT_TRUE(out.open(QIODevice::WriteOnly));
    out.write("not numpy");
    out.close();
    file.file = junk.toStdString();
    p.run.setInputSource(QStringLiteral("image"), file);
    ASSERT_TRUE(p.runAndWait());
    EXPECT_TRUE(p.run.inputHasError(QStringLiteral("image")));
    EXPECT_TRUE(p.run.inputStatus(QStringLiteral("image")).contains(QStringLiteral("junk.npy")));

    // A random range that is not a range is refused before anything runs.
    InputSource badRange;
    badRange.low = 2;
    badRange.high = 1;
    p.run.setInputSource(QStringLiteral("image"), badRange);
    p.run.run();
    EXPECT_FALSE(p.run.isBusy());
    EXPECT_TRUE(p.run.inputHasError(QStringLiteral("image")));

    // The model is still compiled and runs once the input is fixed.
    EXPECT_TRUE(p.run.isReady());
    p.run.setInputSource(QStringLiteral("image"), InputSource{});
    QSignalSpy finished(&p.run, &RunPanel::runFinished);
    ASSERT_TRUE(p.runAndWait());
    EXPECT_EQ(finished.count(), 1);
    EXPECT_FALSE(p.run.inputHasError(QStringLiteral("image")));
}

TEST_F(RunPanelTest, AFailedRunKeepsTheModelAndThePreviousOutputs) {
    // x[N,4] reshaped to a fixed [2,4]: batch 2 runs, batch 1 fails inside the engine.
    QTemporaryDir dir;
    auto model = testing::makeModelShell(13);
    auto& g = *model->mutable_graph();
    g.set_name("fixed_reshape");
    *g.add_input() = testing::makeValueInfo("x", onnx::TensorProto::FLOAT, {"N", "4"});
    *g.add_initializer() = testing::makeInt64Initializer("shape", {2, 4});
    testing::addNode(g, "Reshape", "reshape", {"x", "shape"}, {"y"});
    *g.add_output() = testing::makeValueInfo("y", onnx::TensorProto::FLOAT, {"2", "4"});
    Panels p;
    ASSERT_TRUE(p.open(testing::writeModel(dir, "fixed_reshape.onnx", *model)));
    p.run.setSymbolValue(QStringLiteral("N"), 2);
    ASSERT_TRUE(p.runAndWait());
    ASSERT_TRUE(p.run.lastOutcome()) << p.run.statusText().toStdString();
    const auto previous = p.run.lastOutcome();
    p.run.setSymbolValue(QStringLiteral("N"), 1);
    QSignalSpy failed(&p.run, &RunPanel::runFailed);
    ASSERT_TRUE(p.runAndWait());
    ASSERT_EQ(failed.count(), 1);
    EXPECT_TRUE(p.run.statusText().startsWith(QStringLiteral("Run failed:")))
        << p.run.statusText().toStdString();
    EXPECT_TRUE(p.run.statusText().contains(QStringLiteral("reshape")))
        << p.run.statusText().toStdString();
    EXPECT_TRUE(p.run.isReady());
    EXPECT_EQ(p.run.lastOutcome(), previous);
    EXPECT_EQ(text(p.run.outputsTable(), 0, QStringLiteral("Shape")), QStringLiteral("[2x4]"));
    EXPECT_EQ(p.run.symbolValue(QStringLiteral("N")), 1);
}

TEST_F(RunPanelTest, AnImageFileFeedsAFourDimensionalInput) {
    QTemporaryDir dir;
    QImage picture(40, 30, QImage::Format_RGB32);
    picture.fill(QColor(255, 0, 0));
    const QString png = dir.filePath(QStringLiteral("red.png"));
    ASSERT_TRUE(picture.save(png));

    widgets::ImagePreprocessing unit;
    unit.scaling = widgets::ImagePreprocessing::Scaling::UnitRange;
    auto tensor =
        widgets::imageToTensor(png.toStdString(), {2, 3, 8, 6}, engine::DataType::Float, unit);
    ASSERT_TRUE(tensor) << tensor.error().message;
    const float* v = tensor->data<float>();
    EXPECT_FLOAT_EQ(v[0], 1.0f);           // R plane
    EXPECT_FLOAT_EQ(v[48], 0.0f);          // G plane
    EXPECT_FLOAT_EQ(v[3 * 48 + 5], 1.0f);  // the second item is the same image
    auto imageNet =
        widgets::imageToTensor(png.toStdString(), {1, 3, 8, 6}, engine::DataType::Float, {});
    ASSERT_TRUE(imageNet);
    EXPECT_NEAR(imageNet->data<float>()[0], (1.0 - 0.485) / 0.229, 1e-5);
    EXPECT_NEAR(imageNet->data<float>()[48], (0.0 - 0.456) / 0.224, 1e-5);
    auto wrongRank =
        widgets::imageToTensor(png.toStdString(), {1, 64}, engine::DataType::Float, {});
    ASSERT_FALSE(wrongRank);
    EXPECT_NE(wrongRank.error().message.find("4-D"), std::string::npos);

    // mnist's [batch, 1, 28, 28] input from the image, in grey, through the panel.
    Panels p;
    ASSERT_TRUE(p.open(samplePath("mnist_cnn")));
    InputSource image;
    image.kind = InputSource::Kind::Image;
    image.file = png.toStdString();
    p.run.setInputSource(QStringLiteral("image"), image);
    p.run.setImagePreprocessing(unit);
    ASSERT_TRUE(p.runAndWait());
    ASSERT_TRUE(p.run.lastOutcome()) << p.run.statusText().toStdString();
    EXPECT_EQ(p.run.inputStatus(QStringLiteral("image")), QStringLiteral("ok, [1x1x28x28]"));

    // The choices the controller holds for Compare and the benchmark make the same feeds on
    // another thread.
    ASSERT_TRUE(p.controller->inputChoices());
    const widgets::InputChoices choices = *p.controller->inputChoices();
    auto made =
        QtConcurrent::run([choices] { return widgets::prepareInputFeeds(choices); }).result();
    ASSERT_TRUE(made.ok()) << made.combinedError().message;
    const engine::Tensor& grey = made.feeds.at("image").tensor();
    EXPECT_EQ(grey.shape(), (engine::Shape{1, 1, 28, 28}));
    // Qt's own grey conversion of pure red, scaled to 0..1, in every pixel.
    const double expectedGrey =
        QImage(png).convertToFormat(QImage::Format_Grayscale8).constScanLine(0)[0] / 255.0;
    EXPECT_GT(expectedGrey, 0.0);
    for (float v : grey.span<float>()) ASSERT_NEAR(v, expectedGrey, 1e-6);
}

TEST_F(RunPanelTest, ALongRunIsCancelledWhileTheGuiThreadStaysResponsive) {
    QTemporaryDir dir;
    Panels p;
    ASSERT_TRUE(p.open(testing::writeModel(dir, "endless_loop.onnx", *makeEndlessLoopModel())));
    QSignalSpy cancelled(&p.run, &RunPanel::runCancelled);
    testing::StallMeter meter(10);
    p.run.run();
    ASSERT_TRUE(testing::waitFor([&] { return p.run.isBusy(); }, 5000));
    QTest::qWait(1000);  // the run goes on; the GUI thread keeps ticking
    ASSERT_TRUE(p.run.isBusy());
    QElapsedTimer clock;
    clock.start();
    p.run.cancel();
    ASSERT_TRUE(testing::waitFor([&] { return cancelled.count() == 1; }, 10000));
    const qint64 cancelMs = clock.elapsed();
    const double stall = meter.worstStallMs();
    std::printf(
        "[ measured ] longest GUI-thread stall during a run: %.1f ms; cancel took %lld ms\n", stall,
        static_cast<long long>(cancelMs));
    EXPECT_LT(stall, 100.0 * testing::kStallBoundScale);
    EXPECT_LT(cancelMs, 2000);
    EXPECT_TRUE(p.run.statusText().contains(QStringLiteral("cancelled")));
    ASSERT_TRUE(testing::waitFor([&] { return !p.run.isBusy(); }));
    EXPECT_TRUE(p.run.isReady());
}

TEST_F(RunPanelTest, TheMainWindowCompilesTheCurrentTabAndRunsFromTheMenu) {
    gui::MainWindow window;
    window.openFile(samplePath("mnist_cnn"));
    ASSERT_TRUE(testing::waitFor(
        [&] { return window.pageCount() == 1 && window.runPanel()->isReady(); }, 60000));
    QSignalSpy finished(window.runPanel(), &RunPanel::runFinished);
    window.runPanel()->runAction()->trigger();
    ASSERT_TRUE(testing::waitFor([&] { return finished.count() == 1; }, 60000));
    window.openFile(samplePath("legacy_opset10"));
    ASSERT_TRUE(testing::waitFor(
        [&] {
            return window.pageCount() == 2 && window.runPanel()->isReady() &&
                   window.runPanel()->compiledModel()->path.endsWith(
                       QStringLiteral("legacy_opset10/model.onnx"));
        },
        60000));
    EXPECT_TRUE(window.runPanel()->symbols().isEmpty());
    EXPECT_FALSE(window.runPanel()->lastOutcome());  // the other model's outputs are gone
}

TEST_F(RunPanelTest, UsingATestDataSetSetsTheSymbolsToItsShapesAndTheBenchmarkSaysThem) {
    // x[batch, sequence] -> Relu -> y, with a test_data_set_0 of [1, 5].
    using namespace testing;
    QTemporaryDir dir;
    auto model = makeModelShell();
    auto& g = *model->mutable_graph();
    *g.add_input() = makeValueInfo("x", onnx::TensorProto::FLOAT, {"batch", "sequence"});
    addNode(g, "Relu", "relu", {"x"}, {"y"});
    *g.add_output() = makeValueInfo("y", onnx::TensorProto::FLOAT, {"batch", "sequence"});
    const QString path = writeModel(dir, "relu.onnx", *model);
    const fs::path set = fs::path(dir.path().toStdString()) / "test_data_set_0";
    fs::create_directories(set);
    ASSERT_TRUE(writeTensorPbFile(set / "input_0.pb", makeFloatInitializer("x", {1, 5}, 0.5f)));
    Panels p;
    ASSERT_TRUE(p.open(path));
    EXPECT_EQ(p.run.symbolValue(QStringLiteral("sequence")), 1);
    EXPECT_EQ(p.run.fillFromDataSet(0), QString());
    // The table says what runs: sequence 5 (before: still 1 while the input was [1x5]).
    EXPECT_EQ(p.run.symbolValue(QStringLiteral("sequence")), 5);
    EXPECT_EQ(p.run.symbolValue(QStringLiteral("batch")), 1);
    EXPECT_EQ(p.controller->inputChoices()->symbols.at("sequence"), 5);

    // The benchmark on those inputs says which dims it timed.
    widgets::BenchmarkPanel benchmark;
    benchmark.setController(p.controller.get());
    benchmark.warmupSpin()->setValue(0);
    benchmark.runsSpin()->setValue(2);
    benchmark.profileCheck()->setChecked(false);
    QSignalSpy finished(&benchmark, &widgets::BenchmarkPanel::finished);
    benchmark.start();
    ASSERT_TRUE(testing::waitFor([&] { return finished.count() == 1; }, 60000))
        << benchmark.statusText().toStdString();
    EXPECT_TRUE(benchmark.statusText().contains(QStringLiteral("at batch = 1, sequence = 5")))
        << benchmark.statusText().toStdString();
    QTableWidget* table = benchmark.statisticsTable();
    const int last = table->rowCount() - 1;
    EXPECT_EQ(table->item(last, 0)->text(), QStringLiteral("input dims"));
    EXPECT_EQ(table->item(last, 1)->text(), QStringLiteral("batch = 1, sequence = 5"));
}

}  // namespace
}  // namespace onnxlens
