// The hostile-input corpus (tests/hostile, made by make_hostile.py) opened in the real main window,
// offscreen, after a good model: a file the loader refuses shows an error naming the file and the
// problem and leaves the open model as it was; a file that is only dangerous to run (huge or
// overflowing shapes) opens for inspection without crashing. The CLI twin of this test is
// tests/app/HostileInputsTest.cpp.
#include <gtest/gtest.h>

#include <QFileInfo>
#include <QMessageBox>
#include <memory>
#include <vector>

#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "widgets/graph/GraphPage.h"
#include "widgets/workers/ModelDocument.h"

namespace onnxlens {
namespace {

using gui::MainWindow;
using widgets::GraphPage;

QString hostile(const QString& relative) {
    return QStringLiteral(ONNXLENS_SOURCE_DIR "/tests/hostile/") + relative;
}

class HostileFilesGuiTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_TRUE(dir_.isValid());
        testing::clearSettings();
        good_ = testing::writeModel(dir_, "small_cnn.onnx", *testing::makeSmallCnn());
        window_ = std::make_unique<MainWindow>();  // after clearing: no recent files from others
        window_->show();
        first_ = openAndDraw(good_);
        ASSERT_NE(first_, nullptr);
    }

    GraphPage* openAndDraw(const QString& path) {
        const int before = window_->pageCount();
        window_->openFile(path);
        if (!testing::waitFor([&] { return window_->pageCount() > before; })) return nullptr;
        GraphPage* page = window_->page(window_->pageCount() - 1);
        if (!testing::waitFor([&] { return page->isDrawn(); })) return nullptr;
        return page;
    }

    // The good model is still open, current and drawn.
    void expectFirstModelKept(int pages) {
        EXPECT_EQ(window_->pageCount(), pages);
        EXPECT_EQ(window_->page(0), first_);
        EXPECT_EQ(first_->document().path, QFileInfo(good_).absoluteFilePath());
        EXPECT_TRUE(first_->isDrawn());
    }

    QTemporaryDir dir_;
    QString good_;
    std::unique_ptr<MainWindow> window_;
    GraphPage* first_ = nullptr;
};

TEST_F(HostileFilesGuiTest, RefusedFilesShowAnErrorNamingTheFileAndKeepTheOpenModel) {
    struct Case {
        QString file;
        QString problem;  // part of the message the loader gives
    };
    const std::vector<Case> cases = {
        {"empty.onnx", "empty"},
        {"random_bytes.onnx", "not"},
        {"truncated.onnx", "truncated or corrupt"},
        {"folder.onnx", "is a folder"},
        {"no_such_model.onnx", "no such file"},
        {"cyclic_graph.onnx", "cycle"},
        {"undefined_input.onnx", "'nowhere'"},
        {"nested_70.onnx", "nested deeper than 64"},
        {"nested_400.onnx", "nested more than"},
        {"external/model/dotdot.onnx", "leaves the model folder"},
        {"external/model/absolute.onnx", "absolute path"},
        {"external/model/symlink.onnx", "outside the model folder"},
        {"external/model/offset_past_end.onnx", "offset"},
        {"external/model/length_past_end.onnx", "past the end of 'weights.bin'"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.file.toStdString());
        const QString path = hostile(c.file);
        const QString name = QFileInfo(path).fileName();
        QString failedPath, failedMessage;
        auto connection = QObject::connect(window_.get(), &MainWindow::openFailed,
                                           [&](const QString& p, const QString& m) {
                                               failedPath = p;
                                               failedMessage = m;
                                           });
        window_->openFile(path);
        ASSERT_TRUE(testing::waitFor([&] { return !failedPath.isEmpty(); }));
        QObject::disconnect(connection);
        EXPECT_EQ(failedPath, QFileInfo(path).absoluteFilePath());
        EXPECT_TRUE(failedMessage.contains(name)) << failedMessage.toStdString();
        EXPECT_TRUE(failedMessage.contains(c.problem)) << failedMessage.toStdString();
        // What the person sees: a warning box naming the file, the loader's message below it.
        auto* box = window_->findChild<QMessageBox*>(QStringLiteral("openErrorBox"));
        ASSERT_NE(box, nullptr);
        EXPECT_TRUE(box->isVisible());
        EXPECT_TRUE(box->text().contains(name)) << box->text().toStdString();
        EXPECT_TRUE(box->informativeText().contains(c.problem))
            << box->informativeText().toStdString();
        box->close();  // deletes itself
        ASSERT_TRUE(testing::waitFor([&] {
            return window_->findChild<QMessageBox*>(QStringLiteral("openErrorBox")) == nullptr;
        }));
        expectFirstModelKept(1);
        EXPECT_FALSE(window_->recentFiles().contains(QFileInfo(path).absoluteFilePath()));
    }
    EXPECT_EQ(window_->currentPage(), first_);
}

TEST_F(HostileFilesGuiTest, FilesThatAreOnlyDangerousToRunOpenForInspection) {
    // Valid structure, but running them would need 2^40 elements, overflow 64-bit element
    // counts or meet a negative dim: inspecting them is safe.
    const QStringList files = {
        "huge_constant_of_shape.onnx",
        "huge_expand.onnx",
        "overflow_expand.onnx",
        "huge_initializer.onnx",
        "huge_input.onnx",
        "negative_dims_initializer.onnx",
        "scan_without_num_scan_inputs.onnx",
        // Attribute values that break arithmetic: the window compiles the engine's session as
        // soon as a model opens, and onnx's shape inference runs on open (issue 19: SIGFPE).
        "conv_zero_strides.onnx",
        "depth_to_space_huge_blocksize.onnx",
        "lstm_rank0_input.onnx",
        "short_data_initializer.onnx",
    };
    int pages = 1;
    for (const QString& file : files) {
        SCOPED_TRACE(file.toStdString());
        GraphPage* page = openAndDraw(hostile(file));
        ASSERT_NE(page, nullptr);
        ++pages;
        EXPECT_EQ(page->document().path, QFileInfo(hostile(file)).absoluteFilePath());
        EXPECT_GT(page->document().view->operatorCount, 0);
        expectFirstModelKept(pages);
    }
}

}  // namespace
}  // namespace onnxlens
