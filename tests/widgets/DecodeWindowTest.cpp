// Decoders in the window: the Benchmark dock's Decode tab generates the same ids as the decoding
// loop called directly (and as the toy decoder's rule, worked by hand), Cancel stops it between
// steps, its result stays with its model's tab and exports as JSON and Markdown; a model that is
// not a decoder greys the tab out with why; the Run dock runs a decoder's prefill with no dims
// typed (past length 0, the mask ones, positions 0..n-1).
#include <gtest/gtest.h>

#include <QChartView>
#include <QFile>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableWidget>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../app/DecoderTestModels.h"
#include "GuiTestSupport.h"
#include "onnxlens/engine/Session.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/workflows/DecodeLoop.h"
#include "onnxlens/workflows/DecoderModel.h"
#include "onnxlens/workflows/InputPreparation.h"
#include "widgets/panels/BenchmarkPanel.h"
#include "widgets/panels/DecodePanel.h"
#include "widgets/panels/RunPanel.h"
#include "widgets/workers/ModelController.h"

namespace onnxlens {
namespace {

namespace fs = std::filesystem;
using widgets::BenchmarkPanel;
using widgets::DecodePanel;
using widgets::ModelController;
using widgets::RunPanel;

class DecodeWindowTest : public ::testing::Test {
  protected:
    // The Decode tab and the Run dock remember their settings: a settings file of their own.
    void SetUp() override {
        ASSERT_TRUE(dir_.isValid());
        savedName_ = QCoreApplication::applicationName();
        QCoreApplication::setApplicationName(savedName_ + "-decode");
        testing::clearSettings();
    }
    void TearDown() override { QCoreApplication::setApplicationName(savedName_); }

    QString writeToy(const QString& name, const testing::ToyOptions& options = {}) {
        return testing::writeModel(dir_, name, testing::toyDecoder(options));
    }

    static std::unique_ptr<ModelController> openController(const QString& path) {
        auto document = widgets::loadModelDocument(path);
        EXPECT_TRUE(document) << document.error().message;
        if (!document) return nullptr;
        return std::make_unique<ModelController>(*document);
    }

    // Decodes on the tab and waits for its end; false when it did not finish.
    static bool decode(DecodePanel* panel, int prompt, int newTokens) {
        panel->promptTokensSpin()->setValue(prompt);
        panel->newTokensSpin()->setValue(newTokens);
        panel->threadsSpin()->setValue(1);
        QSignalSpy finished(panel, &DecodePanel::finished);
        QSignalSpy failed(panel, &DecodePanel::failed);
        panel->start();
        const bool ended =
            testing::waitFor([&] { return finished.count() + failed.count() > 0; }, 60000);
        EXPECT_EQ(failed.count(), 0) << panel->statusText().toStdString();
        return ended && finished.count() == 1;
    }

    QString savedName_;
    QTemporaryDir dir_;
};

// The ids runDecodeLoop gives on the model, in this process.
std::vector<std::int64_t> directIds(const QString& path, const std::vector<std::int64_t>& prompt,
                                    int newTokens) {
    auto loaded = loadModel(fs::path(path.toStdString()));
    EXPECT_TRUE(loaded);
    auto decoder = engine::recognizeDecoder(loaded->proto->graph());
    EXPECT_TRUE(decoder) << decoder.error().message;
    const auto ranges = engine::inferIndexRanges(loaded->proto->graph());
    engine::SessionOptions options;
    options.threads = 1;
    auto session = engine::Session::create(std::move(*loaded), options);
    EXPECT_TRUE(session) << session.error().message;
    engine::DecodeOptions decode;
    decode.promptIds = prompt;
    decode.newTokens = newTokens;
    decode.indexRanges = ranges;
    auto result = engine::runDecodeLoop(**session, *decoder, decode);
    EXPECT_TRUE(result) << result.error().message;
    return result ? result->generatedIds : std::vector<std::int64_t>{};
}

TEST_F(DecodeWindowTest, DecodeTabGivesTheLoopsIdsAndKeepsItsResultWithTheTab) {
    const QString path = writeToy("toy_decoder.onnx");
    auto controller = openController(path);
    ASSERT_TRUE(controller);
    BenchmarkPanel dock;
    dock.setController(controller.get());
    DecodePanel* panel = dock.decodePanel();
    const int tab = dock.resultTabs()->indexOf(panel);
    ASSERT_GE(tab, 0);
    EXPECT_TRUE(dock.resultTabs()->isTabEnabled(tab));
    EXPECT_TRUE(panel->startButton()->isEnabled()) << panel->startButton()->toolTip().toStdString();
    ASSERT_TRUE(panel->decoder());

    QSignalSpy steps(controller.get(), &ModelController::decodeStep);
    ASSERT_TRUE(decode(panel, 5, 12));
    const auto outcome = panel->result();
    ASSERT_TRUE(outcome);
    const auto& r = outcome->result;
    ASSERT_EQ(r.promptIds.size(), 5u);
    for (auto id : r.promptIds) EXPECT_TRUE(id >= 0 && id < 7) << id;
    EXPECT_EQ(r.generatedIds, directIds(path, r.promptIds, 12));
    EXPECT_EQ(r.generatedIds, testing::toyExpectedIds(r.promptIds, 12, 7));
    // Prefill, 11 steps over contexts 6..16, the cache of 4 tensors [1, 1, 16, 1] of floats.
    EXPECT_EQ(r.stepMs.size(), 11u);
    ASSERT_EQ(r.stepContext.size(), 11u);
    EXPECT_EQ(r.stepContext.front(), 6);
    EXPECT_EQ(r.stepContext.back(), 16);
    EXPECT_EQ(r.finalContext, 16);
    EXPECT_EQ(r.kvCacheBytes, 4u * 16u * 4u);
    EXPECT_GT(r.prefillMs, 0);
    EXPECT_GT(r.tokensPerSecond, 0);
    EXPECT_EQ(r.stepStatistics.runs, 11);
    EXPECT_EQ(outcome->threads, 1);
    EXPECT_GE(steps.count(), 2);  // the prefill and the last step at least
    EXPECT_EQ(panel->chartPoints(), 11);
    EXPECT_EQ(panel->statisticsTable()->rowCount(), 9);
    EXPECT_EQ(panel->progressBar()->value(), panel->progressBar()->maximum());

    // Exports: the JSON of generate --json, the Markdown report.
    const QString json = dir_.filePath("decode.json"), md = dir_.filePath("decode.md");
    ASSERT_EQ(panel->exportJson(json), QString());
    ASSERT_EQ(panel->exportMarkdown(md), QString());
    std::ifstream in(json.toStdString());
    const auto doc = nlohmann::json::parse(in);
    EXPECT_EQ(doc.at("generated_ids").get<std::vector<std::int64_t>>(), r.generatedIds);
    EXPECT_EQ(doc.at("prompt_ids").get<std::vector<std::int64_t>>(), r.promptIds);
    EXPECT_EQ(doc.at("threads").get<int>(), 1);
    EXPECT_EQ(doc.at("kv_cache").at("layers").get<int>(), 2);
    EXPECT_EQ(doc.at("step_ms").size(), 11u);
    QFile markdown(md);
    ASSERT_TRUE(markdown.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(markdown.readAll());
    EXPECT_TRUE(text.startsWith("# Decode: toy_decoder.onnx")) << text.toStdString();
    EXPECT_TRUE(text.contains("| tokens per second |"));
    EXPECT_TRUE(text.contains("## Step latency by context"));

    // Another model's tab: its own (no) result; the first one's comes back with it.
    auto other = openController(writeToy("other.onnx"));
    dock.setController(other.get());
    EXPECT_FALSE(panel->result());
    EXPECT_EQ(panel->chartPoints(), 0);
    dock.setController(controller.get());
    EXPECT_EQ(panel->result(), outcome);
    EXPECT_EQ(panel->chartPoints(), 11);
}

TEST_F(DecodeWindowTest, CancelStopsTheDecodeBetweenSteps) {
    testing::ToyOptions options;
    options.positions = 1 << 16;
    auto controller = openController(writeToy("long_decoder.onnx", options));
    ASSERT_TRUE(controller);
    BenchmarkPanel dock;
    dock.setController(controller.get());
    DecodePanel* panel = dock.decodePanel();
    panel->promptTokensSpin()->setValue(4);
    panel->newTokensSpin()->setValue(60000);
    panel->threadsSpin()->setValue(1);
    QSignalSpy steps(controller.get(), &ModelController::decodeStep);
    QSignalSpy cancelled(panel, &DecodePanel::cancelled);
    QSignalSpy finished(panel, &DecodePanel::finished);
    panel->start();
    EXPECT_TRUE(panel->isRunning());
    EXPECT_FALSE(panel->startButton()->isEnabled());
    EXPECT_TRUE(panel->cancelButton()->isEnabled());
    ASSERT_TRUE(testing::waitFor(
        [&] { return !steps.isEmpty() && steps.last().at(0).toInt() >= 1; }, 60000));
    // The chart draws the steps as they come, before the decode ends.
    EXPECT_TRUE(panel->isRunning());
    EXPECT_GT(panel->chartPoints(), 0);
    panel->cancel();
    ASSERT_TRUE(testing::waitFor([&] { return cancelled.count() == 1; }, 20000))
        << panel->statusText().toStdString();
    EXPECT_EQ(finished.count(), 0);
    EXPECT_FALSE(panel->isRunning());
    EXPECT_TRUE(panel->statusText().startsWith("Decode cancelled"))
        << panel->statusText().toStdString();
    EXPECT_FALSE(panel->result());
    EXPECT_TRUE(panel->startButton()->isEnabled());
    // The engine process is still there for the next job: a short decode runs.
    ASSERT_TRUE(decode(panel, 3, 4));
    EXPECT_EQ(panel->result()->result.generatedIds,
              testing::toyExpectedIds(panel->result()->result.promptIds, 4, 7));
}

TEST_F(DecodeWindowTest, ACrashInTheDecodeIsAnErrorOnTheTabAndTheNextDecodeRuns) {
    qputenv("ONNXLENS_ENGINE_WORKER_CRASH_ON", "decode");
    auto controller = openController(writeToy("crash.onnx"));
    ASSERT_TRUE(controller);
    BenchmarkPanel dock;
    dock.setController(controller.get());
    DecodePanel* panel = dock.decodePanel();
    QSignalSpy failed(panel, &DecodePanel::failed);
    panel->start();
    const bool ended = testing::waitFor([&] { return failed.count() == 1; }, 60000);
    qunsetenv("ONNXLENS_ENGINE_WORKER_CRASH_ON");
    ASSERT_TRUE(ended);
    EXPECT_TRUE(panel->statusText().startsWith("Decode failed: The engine process stopped"))
        << panel->statusText().toStdString();
    EXPECT_FALSE(panel->isRunning());
    // The next decode starts a new engine process (without the hook) and compiles again.
    ASSERT_TRUE(decode(panel, 2, 3));
    EXPECT_EQ(panel->result()->result.generatedIds,
              testing::toyExpectedIds(panel->result()->result.promptIds, 3, 7));
}

TEST_F(DecodeWindowTest, AContextBeyondThePositionTableIsAnErrorOnTheTab) {
    auto controller = openController(writeToy("short.onnx"));  // 16 positions
    ASSERT_TRUE(controller);
    BenchmarkPanel dock;
    dock.setController(controller.get());
    DecodePanel* panel = dock.decodePanel();
    panel->promptTokensSpin()->setValue(10);
    panel->newTokensSpin()->setValue(10);  // a context of 19 tokens
    QSignalSpy failed(panel, &DecodePanel::failed);
    panel->start();
    ASSERT_TRUE(testing::waitFor([&] { return failed.count() == 1; }, 60000));
    const QString status = panel->statusText();
    EXPECT_TRUE(
        status.startsWith("Decode failed: a context of 19 tokens (10 of the prompt and 9 "
                          "generated) is longer than the position table: position_ids"))
        << status.toStdString();
    EXPECT_FALSE(panel->result());
    EXPECT_TRUE(panel->startButton()->isEnabled());
}

TEST_F(DecodeWindowTest, ANonDecoderGreysTheTabOutWithWhy) {
    using namespace testing;
    auto model = makeModelShell();
    auto& g = *model->mutable_graph();
    *g.add_input() = makeValueInfo("x", onnx::TensorProto::FLOAT, {"batch", "4"});
    addNode(g, "Relu", "relu", {"x"}, {"y"});
    *g.add_output() = makeValueInfo("y", onnx::TensorProto::FLOAT, {"batch", "4"});
    auto controller = openController(writeModel(dir_, "relu.onnx", *model));
    ASSERT_TRUE(controller);
    BenchmarkPanel dock;
    DecodePanel* panel = dock.decodePanel();
    const int tab = dock.resultTabs()->indexOf(panel);
    dock.setController(controller.get());
    EXPECT_FALSE(dock.resultTabs()->isTabEnabled(tab));
    const QString why = dock.resultTabs()->tabToolTip(tab);
    EXPECT_TRUE(why.startsWith("relu.onnx is not a decoder with a KV cache: "))
        << why.toStdString();
    EXPECT_TRUE(why.contains("past")) << why.toStdString();
    EXPECT_FALSE(panel->startButton()->isEnabled());
    EXPECT_EQ(panel->startButton()->toolTip(), why);
    EXPECT_FALSE(panel->startAction()->isEnabled());
    panel->start();  // refused: nothing runs
    EXPECT_FALSE(panel->isRunning());

    // A decoder's tab is enabled again.
    auto decoder = openController(writeToy("toy.onnx"));
    dock.setController(decoder.get());
    EXPECT_TRUE(dock.resultTabs()->isTabEnabled(tab));
    EXPECT_TRUE(panel->startButton()->isEnabled());
}

TEST_F(DecodeWindowTest, RunDockRunsADecodersPrefillWithNoDimsTyped) {
    for (auto layout :
         {testing::ToyLayout::Optimum, testing::ToyLayout::SplitKv, testing::ToyLayout::Stacked}) {
        SCOPED_TRACE(static_cast<int>(layout));
        testing::ToyOptions options;
        options.layout = layout;
        auto controller = openController(
            writeToy(QStringLiteral("run_%1.onnx").arg(static_cast<int>(layout)), options));
        ASSERT_TRUE(controller);
        RunPanel run;
        run.setController(controller.get());
        ASSERT_TRUE(testing::waitFor([&] { return run.isReady() && !run.isBusy(); }));
        EXPECT_EQ(run.symbolValue("past_sequence_length"), 0);
        EXPECT_EQ(run.inputSource("attention_mask").kind, widgets::InputSource::Kind::Ones);
        EXPECT_EQ(run.inputSource("position_ids").kind, widgets::InputSource::Kind::Positions);
        // Three tokens, all id 1: positions 0, 1, 2 and a mask of three ones give
        // next = (1 + 1 + 1) + (0 + 1 + 2) + 3 = 9 mod 7 = 2 (all-zero positions would give 6).
        run.setSymbolValue("sequence_length", 3);
        widgets::InputSource ones;
        ones.kind = widgets::InputSource::Kind::Ones;
        run.setInputSource("input_ids", ones);
        run.run();
        ASSERT_TRUE(testing::waitFor([&] { return !run.isAwaitingRun() && !run.isBusy(); }, 60000));
        const auto outcome = run.lastOutcome();
        ASSERT_TRUE(outcome) << run.statusText().toStdString();
        const auto names = testing::toyCacheNames(layout, 0);
        const engine::Shape pastShape = layout == testing::ToyLayout::Stacked
                                            ? engine::Shape{2, 1, 1, 0, 1}
                                            : engine::Shape{1, 1, 0, 1};
        EXPECT_EQ(outcome->feedShapes.at(names[0]), pastShape);
        EXPECT_EQ(outcome->feedShapes.at("attention_mask"), (engine::Shape{1, 3}));
        EXPECT_EQ(outcome->feedShapes.at("position_ids"), (engine::Shape{1, 3}));
        ASSERT_EQ(outcome->outputs.front().name, "logits");
        const engine::Tensor& logits = outcome->outputs.front().value.tensor();
        ASSERT_EQ(logits.shape(), (engine::Shape{1, 3, 7}));
        const float* last = logits.data<float>() + 2 * 7;
        EXPECT_EQ(std::max_element(last, last + 7) - last, 2);
        // The presents hold the three tokens.
        const auto presentAxis = layout == testing::ToyLayout::Stacked ? 3u : 2u;
        for (const auto& output : outcome->outputs) {
            if (output.name != names[2]) continue;
            EXPECT_EQ(output.value.tensor().shape()[presentAxis], 3);
        }
    }
}

// The Decode tab after a run, for the eye (docs, reviews), taken offscreen:
//   ONNXLENS_SCREENSHOT_DIR=DIR [ONNXLENS_DECODE_MODEL=model.onnx] widgets_tests
//       --gtest_filter='DecodeWindowTest.Screenshot*'
// (the toy decoder without a model). Without the directory the test is skipped.
TEST_F(DecodeWindowTest, ScreenshotOfTheDecodeTab) {
    const QString out = qEnvironmentVariable("ONNXLENS_SCREENSHOT_DIR");
    if (out.isEmpty()) GTEST_SKIP() << "set ONNXLENS_SCREENSHOT_DIR to take the screenshot";
    testing::ToyOptions options;
    options.positions = 512;
    QString model = qEnvironmentVariable("ONNXLENS_DECODE_MODEL");
    if (model.isEmpty()) model = writeToy("toy_decoder.onnx", options);
    auto controller = openController(model);
    ASSERT_TRUE(controller);
    BenchmarkPanel dock;
    dock.resize(1300, 520);
    dock.setController(controller.get());
    dock.resultTabs()->setCurrentWidget(dock.decodePanel());
    dock.show();
    const int newTokens = qEnvironmentVariableIntValue("ONNXLENS_DECODE_NEW_TOKENS");
    ASSERT_TRUE(decode(dock.decodePanel(), 16, newTokens > 0 ? newTokens : 96));
    const auto& r = dock.decodePanel()->result()->result;
    // For a comparison with `onnxlens-cli generate --prompt-tokens 16` on the same model.
    std::string prompt, generated;
    for (auto id : r.promptIds) prompt += " " + std::to_string(id);
    for (auto id : r.generatedIds) generated += " " + std::to_string(id);
    std::printf("prompt ids:%s\ngenerated ids:%s\n", prompt.c_str(), generated.c_str());
    QTest::qWait(300);
    ASSERT_TRUE(dock.grab().save(out + "/screenshot-decode.png"));

    // The Run dock on the same model: the prefill with no dims typed.
    RunPanel run;
    run.resize(1300, 700);
    run.setController(controller.get());
    run.show();
    ASSERT_TRUE(testing::waitFor([&] { return run.isReady() && !run.isBusy(); }));
    run.run();
    ASSERT_TRUE(testing::waitFor([&] { return !run.isAwaitingRun() && !run.isBusy(); }, 60000));
    QTest::qWait(300);
    ASSERT_TRUE(run.grab().save(out + "/screenshot-run-decoder.png"));
}

}  // namespace
}  // namespace onnxlens
