// Help > About, Help > Keyboard Shortcuts and Tools > Settings, driven through the window's menus.
#include <gtest/gtest.h>

#include <QAction>
#include <QCheckBox>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QProcess>
#include <QSet>
#include <QSettings>
#include <QSpinBox>
#include <QTableWidget>

#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "widgets/SettingsKeys.h"
#include "widgets/dialogs/AboutDialog.h"
#include "widgets/dialogs/SettingsDialog.h"
#include "widgets/dialogs/ShortcutsDialog.h"
#include "widgets/graph/GraphPage.h"
#include "widgets/panels/BenchmarkPanel.h"
#include "widgets/panels/ComparePanel.h"

namespace onnxlens {
namespace {

using gui::MainWindow;

// The menu action whose text, without '&', is `text` (searched through every menu).
QAction* menuAction(QMainWindow& window, const QString& text) {
    for (QMenu* menu : window.menuBar()->findChildren<QMenu*>())
        for (QAction* action : menu->actions())
            if (action->text().remove(QLatin1Char('&')) == text) return action;
    return nullptr;
}

class HelpDialogsTest : public ::testing::Test {
  protected:
    void SetUp() override { testing::clearSettings(); }
    void TearDown() override { testing::clearSettings(); }
};

TEST_F(HelpDialogsTest, AboutShowsTheVersionsTheExecutablePrints) {
    MainWindow window;
    QAction* about = menuAction(window, QStringLiteral("About onnxlens"));
    ASSERT_NE(about, nullptr);
    about->trigger();
    auto* dialog = window.findChild<widgets::AboutDialog*>();
    ASSERT_NE(dialog, nullptr);
    EXPECT_TRUE(dialog->isVisible());

    // `onnxlens --version`: the same report, from the installed-style executable.
    QProcess gui;
    gui.setProcessEnvironment([] {
        auto env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        // The executable starts itself again with bounded OpenMP spinning; this test process
        // did not, so the child keeps the same waiting for the reports to compare ("threads:").
        env.insert(QStringLiteral("ONNXLENS_KEEP_OPENMP_SPINNING"), QStringLiteral("1"));
        return env;
    }());
    gui.start(QStringLiteral(ONNXLENS_GUI), {QStringLiteral("--version")});
    ASSERT_TRUE(gui.waitForFinished(30000));
    ASSERT_EQ(gui.exitCode(), 0);
    const QString printed = QString::fromUtf8(gui.readAllStandardOutput());
    EXPECT_TRUE(printed.startsWith(QStringLiteral("onnxlens "))) << printed.toStdString();
    QStringList expected;
    for (const QString& line : printed.split(QLatin1Char('\n'), Qt::SkipEmptyParts).mid(1))
        expected << line.trimmed();
    QStringList shown;
    for (const QString& line : dialog->versionText().split(QLatin1Char('\n'), Qt::SkipEmptyParts))
        shown << line.trimmed();
    EXPECT_EQ(shown, expected);
    for (const char* component :
         {"onnx: ", "protobuf: ", "oneDNN: ", "Qt: ", "engine build: ", "kernels: "})
        EXPECT_TRUE(dialog->versionText().contains(QLatin1String(component))) << component;
    dialog->close();
}

TEST_F(HelpDialogsTest, ShortcutsListEveryActionWithAShortcutOnce) {
    MainWindow window;
    // An action added at run time appears too: the list is read from the actions.
    auto* extra = new QAction(QStringLiteral("Extra Test Action"), &window);
    extra->setShortcut(QKeySequence(QStringLiteral("Ctrl+Alt+F12")));
    window.addAction(extra);

    QAction* shortcuts = menuAction(window, QStringLiteral("Keyboard Shortcuts"));
    ASSERT_NE(shortcuts, nullptr);
    shortcuts->trigger();
    auto* dialog = window.findChild<widgets::ShortcutsDialog*>();
    ASSERT_NE(dialog, nullptr);
    auto* table = dialog->findChild<QTableWidget*>(QStringLiteral("shortcutsTable"));
    ASSERT_NE(table, nullptr);

    // Every action of the window that has a shortcut, counted here from the actions themselves.
    QSet<QAction*> withShortcut;
    for (QAction* action : window.findChildren<QAction*>())
        if (!action->shortcut().isEmpty()) withShortcut.insert(action);
    for (QMenu* menu : window.menuBar()->findChildren<QMenu*>())
        for (QAction* action : menu->actions())
            if (!action->shortcut().isEmpty()) withShortcut.insert(action);
    ASSERT_GE(withShortcut.size(), 5);
    EXPECT_EQ(table->rowCount(), withShortcut.size());

    QMap<QString, QString> actionOfKey;
    for (int row = 0; row < table->rowCount(); ++row)  // "Ctrl++, Ctrl+=": every key
        for (const QString& key : table->item(row, 0)->text().split(QStringLiteral(", ")))
            actionOfKey.insert(key, table->item(row, 1)->text());
    for (QAction* action : withShortcut)
        EXPECT_TRUE(actionOfKey.contains(action->shortcut().toString(QKeySequence::NativeText)))
            << action->text().toStdString();
    EXPECT_EQ(
        actionOfKey.value(QKeySequence(QKeySequence::Open).toString(QKeySequence::NativeText)),
        QStringLiteral("Open…"));
    EXPECT_EQ(actionOfKey.value(QStringLiteral("Ctrl+Alt+F12")),
              QStringLiteral("Extra Test Action"));
    EXPECT_EQ(actionOfKey.value(QStringLiteral("Ctrl+,")), QStringLiteral("Settings…"));
    // Menu actions name their menu.
    bool openInFile = false;
    for (const auto& entry : dialog->entries())
        if (entry.action == QStringLiteral("Open…"))
            openInFile = entry.where == QStringLiteral("File");
    EXPECT_TRUE(openInFile);
    dialog->close();
}

TEST_F(HelpDialogsTest, SettingsEditTheKeysThePanelsRead) {
    {
        QSettings settings;
        settings.setValue(widgets::settings::kBenchmarkWarmup, 7);
        settings.setValue(widgets::settings::kCompareRtol, 0.25);
        settings.setValue(QStringLiteral("export/python"), QStringLiteral("/opt/py/bin/python3"));
    }
    MainWindow window;
    EXPECT_EQ(window.benchmarkPanel()->warmupSpin()->value(), 7);

    QAction* open = menuAction(window, QStringLiteral("Settings…"));
    ASSERT_NE(open, nullptr);
    open->trigger();
    auto* dialog = window.findChild<widgets::SettingsDialog*>();
    ASSERT_NE(dialog, nullptr);
    // The dialog shows what is remembered, defaults for the rest.
    EXPECT_EQ(dialog->benchmarkWarmup()->value(), 7);
    EXPECT_EQ(dialog->benchmarkRuns()->value(), 50);
    EXPECT_EQ(dialog->compareRtol()->text(), QStringLiteral("0.25"));
    EXPECT_EQ(dialog->compareAtol()->text(), QStringLiteral("1e-05"));
    EXPECT_EQ(dialog->exportPython()->text(), QStringLiteral("/opt/py/bin/python3"));
    EXPECT_EQ(dialog->exportTimeout()->value(), 600);

    dialog->benchmarkThreads()->setValue(3);
    dialog->benchmarkWarmup()->setValue(2);
    dialog->benchmarkRuns()->setValue(9);
    dialog->benchmarkProfile()->setChecked(false);
    dialog->compareRtol()->setText(QStringLiteral("0.01"));
    dialog->compareAtol()->setText(QStringLiteral("0.002"));
    dialog->exportPython()->setText(QStringLiteral("/usr/local/bin/python3.11"));
    dialog->exportTimeout()->setValue(120);
    dialog->accept();

    // Written under the keys the panels and the export dialog read...
    QSettings settings;
    EXPECT_EQ(settings.value(QStringLiteral("benchmark/threads")).toInt(), 3);
    EXPECT_EQ(settings.value(QStringLiteral("benchmark/warmup")).toInt(), 2);
    EXPECT_EQ(settings.value(QStringLiteral("benchmark/runs")).toInt(), 9);
    EXPECT_FALSE(settings.value(QStringLiteral("benchmark/profile")).toBool());
    EXPECT_DOUBLE_EQ(settings.value(QStringLiteral("compare/rtol")).toDouble(), 0.01);
    EXPECT_DOUBLE_EQ(settings.value(QStringLiteral("compare/atol")).toDouble(), 0.002);
    EXPECT_EQ(settings.value(QStringLiteral("export/python")).toString(),
              QStringLiteral("/usr/local/bin/python3.11"));
    EXPECT_EQ(settings.value(QStringLiteral("export/timeoutSeconds")).toInt(), 120);
    // ...and the open panels show them at once.
    EXPECT_EQ(window.benchmarkPanel()->threadsSpin()->value(), 3);
    EXPECT_EQ(window.benchmarkPanel()->warmupSpin()->value(), 2);
    EXPECT_EQ(window.benchmarkPanel()->runsSpin()->value(), 9);
    EXPECT_FALSE(window.benchmarkPanel()->profileCheck()->isChecked());
    EXPECT_DOUBLE_EQ(window.comparePanel()->tolerance().rtol, 0.01);
    EXPECT_DOUBLE_EQ(window.comparePanel()->tolerance().atol, 0.002);
}

TEST_F(HelpDialogsTest, SettingsRefuseABadToleranceAndRestoreDefaults) {
    widgets::SettingsDialog dialog;
    dialog.compareRtol()->setText(QStringLiteral("-1"));
    EXPECT_FALSE(dialog.save());
    EXPECT_FALSE(QSettings().contains(QStringLiteral("compare/rtol")));
    dialog.restoreDefaults();
    EXPECT_EQ(dialog.compareRtol()->text(), QStringLiteral("0.001"));
    EXPECT_EQ(dialog.benchmarkWarmup()->value(), 5);
    EXPECT_EQ(dialog.exportPython()->text(), QStringLiteral("/usr/bin/python3"));
    EXPECT_TRUE(dialog.save());
    EXPECT_DOUBLE_EQ(QSettings().value(QStringLiteral("compare/rtol")).toDouble(), 0.001);
}

}  // namespace
}  // namespace onnxlens
