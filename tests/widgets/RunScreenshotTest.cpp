// Screenshots of the Run and Compare docks for the README, taken offscreen:
//   ONNXLENS_SCREENSHOT_DIR=docs widgets_tests --gtest_filter='RunScreenshots.*'
// Without the variable the test is skipped.
#include <gtest/gtest.h>

#include <QDockWidget>
#include <QSignalSpy>
#include <QTabWidget>

#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "widgets/graph/GraphPage.h"
#include "widgets/panels/ComparePanel.h"
#include "widgets/panels/RunPanel.h"

namespace onnxlens {
namespace {

TEST(RunScreenshots, RunAndCompareDocksOnSqueezeNet) {
    const QString out = qEnvironmentVariable("ONNXLENS_SCREENSHOT_DIR");
    if (out.isEmpty()) GTEST_SKIP() << "set ONNXLENS_SCREENSHOT_DIR to take the screenshots";
    testing::clearSettings();
    gui::MainWindow window;
    window.resize(1600, 1000);
    window.show();
    window.openFile(
        QStringLiteral(ONNXLENS_SOURCE_DIR "/resources/samples/squeezenet1_1/model.onnx"));
    auto* run = window.runPanel();
    ASSERT_TRUE(testing::waitFor(
        [&] { return window.pageCount() == 1 && window.page(0)->isDrawn() && run->isReady(); },
        60000));
    auto* runDock = window.findChild<QDockWidget*>(QStringLiteral("runDock"));
    auto* compareDock = window.findChild<QDockWidget*>(QStringLiteral("compareDock"));
    ASSERT_TRUE(runDock && compareDock);
    runDock->show();  // closed until used (Run > Run shows it; run() here is called directly)
    compareDock->show();
    window.resizeDocks({runDock}, {620}, Qt::Vertical);

    run->fillFromDataSet(0);
    QSignalSpy ran(run, &widgets::RunPanel::runFinished);
    run->run();
    ASSERT_TRUE(testing::waitFor([&] { return ran.count() == 1 && !run->isBusy(); }, 60000));
    run->outputTabs()->setCurrentIndex(0);
    runDock->raise();
    QTest::qWait(300);
    ASSERT_TRUE(window.grab().save(out + "/screenshot-run.png"));

    auto* compare = window.comparePanel();
    compare->chooseDataSet(0);
    QSignalSpy compared(compare, &widgets::ComparePanel::compareFinished);
    compare->compare();
    ASSERT_TRUE(testing::waitFor([&] { return compared.count() == 1 && !run->isBusy(); }, 60000));
    QSignalSpy checked(compare, &widgets::ComparePanel::dynamicAxesFinished);
    compare->checkDynamicAxes();
    ASSERT_TRUE(testing::waitFor([&] { return checked.count() == 1 && !run->isBusy(); }, 60000));
    compareDock->raise();
    QTest::qWait(300);
    ASSERT_TRUE(window.grab().save(out + "/screenshot-compare.png"));
}

}  // namespace
}  // namespace onnxlens
