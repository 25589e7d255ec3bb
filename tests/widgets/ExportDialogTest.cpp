// Tools > Export from PyTorch & Benchmark, offscreen: the dialog drives the real exporter to a
// report card and the model opens in a tab; a crashing exporter and a cancelled export keep what
// the window had. The screenshot for the README:
//   ONNXLENS_SCREENSHOT_DIR=docs widgets_tests --gtest_filter='Screenshots.ExportReport'
// Before any Qt header: Session.h (through ExportReport.h) has a member named `slots`.
#include "onnxlens/workflows/ExportReport.h"
//
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QPixmap>

#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "widgets/dialogs/ExportDialog.h"
#include "widgets/dialogs/ExportReportCard.h"
#include "widgets/graph/GraphPage.h"

namespace onnxlens {
namespace {

using gui::MainWindow;
using widgets::ExportDialog;
using widgets::ExportReportCard;

bool torchAvailable() {
    // find_spec looks the packages up without importing torch (seconds on a busy machine).
    return std::system(
               "/usr/bin/python3 -c 'import importlib.util as u, sys; sys.exit(not all("
               "u.find_spec(m) for m in (\"torch\", \"torchvision\", \"onnx\")))'") == 0;
}

std::string dataScript(const std::string& name) {
    return std::string(ONNXLENS_SOURCE_DIR) + "/tests/app/data/" + name;
}

engine::ExportRequest smallRequest(const QTemporaryDir& dir) {
    engine::ExportRequest r;
    r.sourceKind = engine::ExportSourceKind::Script;
    r.source = dataScript("export_tiny_cnn.py");
    r.outDir = dir.filePath(QStringLiteral("export")).toStdString();
    r.runs = 2;
    r.warmup = 1;
    r.threads = 1;
    r.timeoutSeconds = 120;
    return r;
}

// ctest runs the GUI tests as parallel processes sharing one settings file; an application name
// of this process's own keeps the remembered export options from being overwritten by another.
class OwnSettings {
  public:
    OwnSettings() : previous_(QCoreApplication::applicationName()) {
        QCoreApplication::setApplicationName(previous_ + QStringLiteral("-export-") +
                                             QString::number(QCoreApplication::applicationPid()));
        testing::clearSettings();
    }
    ~OwnSettings() {
        testing::clearSettings();
        QCoreApplication::setApplicationName(previous_);
    }

  private:
    QString previous_;
};

int pageIndexOf(const MainWindow& window, const QString& fileName) {
    for (int i = 0; i < window.pageCount(); ++i)
        if (QString::fromStdString(window.page(i)->document().loaded.path.filename().string()) ==
            fileName)
            return i;
    return -1;
}

}  // namespace

TEST(ExportDialogTest, ExportsToAReportCardAndOpensTheModel) {
    if (!torchAvailable()) GTEST_SKIP() << "/usr/bin/python3 has no torch";
    OwnSettings settings;
    QTemporaryDir dir;
    MainWindow window;
    window.show();
    ExportDialog* dialog = window.exportDialog();
    window.showExportDialog();
    dialog->setRequest(smallRequest(dir));
    bool passed = false, ready = false;
    QObject::connect(dialog, &ExportDialog::reportReady, [&](bool p) {
        ready = true;
        passed = p;
    });
    testing::StallMeter stalls;
    ASSERT_TRUE(dialog->startExport()) << dialog->errorText().toStdString();
    EXPECT_EQ(dialog->state(), ExportDialog::State::Exporting);
    ASSERT_TRUE(testing::waitFor(
        [&] { return ready || dialog->state() == ExportDialog::State::Failed; }, 120000))
        << dialog->logText().toStdString();
    ASSERT_TRUE(ready) << dialog->errorText().toStdString() << "\n"
                       << dialog->logText().toStdString();
    EXPECT_TRUE(passed);
    // The export and the validation ran off the GUI thread.
    EXPECT_LT(stalls.worstStallMs(), 500 * testing::kStallBoundScale);

    // The card: five lines, each green with its figure, as written to report.json.
    ExportReportCard* card = dialog->reportCard();
    ASSERT_TRUE(card->hasReport());
    ASSERT_EQ(card->lineCount(), 5);
    for (int i = 0; i < card->lineCount(); ++i) {
        // Latency (line 4) on a loaded test machine is flagged WARN ("rerun"), never FAIL.
        if (i == 4 && card->lineText(i).startsWith(QStringLiteral("WARN"))) {
            EXPECT_TRUE(card->lineText(i).contains(QStringLiteral("the machine was busy: rerun")))
                << card->lineText(i).toStdString();
            continue;
        }
        EXPECT_TRUE(card->lineText(i).startsWith(QStringLiteral("PASS")))
            << card->lineText(i).toStdString();
        EXPECT_EQ(card->lineColor(i), ExportReportCard::statusColor(engine::ReportStatus::Passed));
    }
    // PyTorch was timed by the exporter script serving timing rounds, in turn with the engine.
    EXPECT_TRUE(card->lineText(4).contains(QStringLiteral("timed interleaved")))
        << card->lineText(4).toStdString();
    EXPECT_TRUE(card->lineText(2).contains(QStringLiteral("max abs error")));
    EXPECT_TRUE(card->lineText(4).contains(QStringLiteral("ratio")));
    EXPECT_TRUE(QFile::exists(dir.filePath(QStringLiteral("export/report.md"))));
    EXPECT_TRUE(QFile::exists(dir.filePath(QStringLiteral("export/report.json"))));
    EXPECT_TRUE(dialog->logText().contains(QStringLiteral("exported in")));

    // The model opened in a tab.
    ASSERT_TRUE(
        testing::waitFor([&] { return pageIndexOf(window, QStringLiteral("model.onnx")) >= 0; }));

    // The options are remembered.
    ExportDialog again;
    EXPECT_EQ(again.request().source, dataScript("export_tiny_cnn.py"));
    EXPECT_EQ(again.request().runs, 2);
    EXPECT_EQ(again.request().sourceKind, engine::ExportSourceKind::Script);
}

TEST(ExportReportCardTest, WarnsOnNearZeroOutputs) {
    // An export whose outputs are ~1e-9: "Numbers match PyTorch" must not show a plain PASS.
    engine::ExportReportOptions options;
    options.benchmark = false;
    auto report = engine::validateExport(
        std::string(ONNXLENS_SOURCE_DIR) + "/tests/engine/data/near_zero_export", options);
    ASSERT_TRUE(report) << report.error().message;
    ExportReportCard card;
    card.setReport(*report);
    ASSERT_EQ(card.lineCount(), 5);
    EXPECT_TRUE(card.lineText(2).startsWith(QStringLiteral("WARN  Numbers match PyTorch")))
        << card.lineText(2).toStdString();
    EXPECT_TRUE(card.lineText(2).contains(
        QStringLiteral("the check cannot tell right from wrong; use real weights or inputs")))
        << card.lineText(2).toStdString();
    EXPECT_EQ(card.lineColor(2), ExportReportCard::statusColor(engine::ReportStatus::Warning));
    EXPECT_NE(ExportReportCard::statusColor(engine::ReportStatus::Warning),
              ExportReportCard::statusColor(engine::ReportStatus::Passed));
}

TEST(ExportDialogTest, CrashingExporterKeepsTheWindowAsItWas) {
    OwnSettings settings;
    QTemporaryDir dir;
    const QString python = dir.filePath(QStringLiteral("python-that-crashes"));
    {
        QFile f(python);
        ASSERT_TRUE(f.open(QIODevice::WriteOnly));
        f.write("#!/bin/sh\necho starting\nkill -SEGV $$\n");
    }
    ::chmod(python.toLocal8Bit().constData(), 0755);
    const QString model = testing::writeModel(dir, "kept.onnx", *testing::makeSmallCnn());
    MainWindow window;
    window.openFile(model);
    ASSERT_TRUE(testing::waitFor([&] { return window.pageCount() == 1; }));

    ExportDialog* dialog = window.exportDialog();
    engine::ExportRequest r = smallRequest(dir);
    r.python = python.toStdString();
    dialog->setRequest(r);
    QString failure;
    QObject::connect(dialog, &ExportDialog::exportFailed, [&](const QString& m) { failure = m; });
    ASSERT_TRUE(dialog->startExport());
    ASSERT_TRUE(testing::waitFor([&] { return !failure.isEmpty(); }, 30000))
        << dialog->logText().toStdString();
    EXPECT_EQ(dialog->state(), ExportDialog::State::Failed);
    EXPECT_TRUE(failure.contains(QStringLiteral("crashed"))) << failure.toStdString();
    EXPECT_TRUE(dialog->errorText().contains(QStringLiteral("Python process")))
        << dialog->errorText().toStdString();
    EXPECT_TRUE(dialog->logText().contains(QStringLiteral("starting")));
    EXPECT_FALSE(dialog->reportCard()->hasReport());
    QTest::qWait(100);
    EXPECT_EQ(window.pageCount(), 1);
    EXPECT_EQ(pageIndexOf(window, QStringLiteral("kept.onnx")), 0);
}

TEST(ExportDialogTest, CancelStopsAHangingExporterAtOnce) {
    if (!torchAvailable()) GTEST_SKIP() << "/usr/bin/python3 has no torch";
    OwnSettings settings;
    QTemporaryDir dir;
    ExportDialog dialog;
    engine::ExportRequest r = smallRequest(dir);
    r.source = dataScript("export_sleeps.py");
    dialog.setRequest(r);
    ASSERT_TRUE(dialog.startExport());
    QTest::qWait(500);
    QElapsedTimer clock;
    clock.start();
    dialog.cancel();
    ASSERT_TRUE(
        testing::waitFor([&] { return dialog.state() == ExportDialog::State::Cancelled; }, 10000))
        << dialog.logText().toStdString();
    EXPECT_LT(clock.elapsed(), 5000);
    EXPECT_TRUE(dialog.errorText().contains(QStringLiteral("cancelled")));
    EXPECT_FALSE(QFile::exists(dir.filePath(QStringLiteral("export/export.json"))));
}

TEST(ExportDialogTest, InvalidFormIsRefusedWithItsReason) {
    OwnSettings settings;
    ExportDialog dialog;
    engine::ExportRequest r;
    r.sourceKind = engine::ExportSourceKind::TorchScript;
    r.source = "/nonexistent/model.pt";
    r.outDir = "/tmp/x";
    dialog.setRequest(r);
    EXPECT_FALSE(dialog.startExport());
    EXPECT_EQ(dialog.state(), ExportDialog::State::Failed);
    EXPECT_TRUE(dialog.errorText().contains(QStringLiteral("no such file")))
        << dialog.errorText().toStdString();
}

TEST(Screenshots, ExportReport) {
    const QByteArray out = qgetenv("ONNXLENS_SCREENSHOT_DIR");
    if (out.isEmpty()) GTEST_SKIP() << "set ONNXLENS_SCREENSHOT_DIR to write the screenshot";
    if (!torchAvailable()) GTEST_SKIP() << "/usr/bin/python3 has no torch";
    OwnSettings settings;
    QTemporaryDir dir;
    ExportDialog dialog;
    engine::ExportRequest r = smallRequest(dir);
    r.sourceKind = engine::ExportSourceKind::Torchvision;
    r.source = "resnet18";
    r.runs = 10;
    r.warmup = 2;
    r.threads = 0;
    r.outDir = "/tmp/onnxlens-export/resnet18";
    dialog.setRequest(r);
    dialog.resize(1000, 820);
    dialog.show();
    bool ready = false;
    QObject::connect(&dialog, &ExportDialog::reportReady, [&](bool) { ready = true; });
    ASSERT_TRUE(dialog.startExport());
    ASSERT_TRUE(testing::waitFor([&] { return ready; }, 300000)) << dialog.logText().toStdString();
    QTest::qWait(200);
    ASSERT_TRUE(dialog.grab().save(QString::fromLocal8Bit(out) +
                                   QStringLiteral("/screenshot-export-report.png")));
}

}  // namespace onnxlens
