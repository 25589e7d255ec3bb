// The GUI tests run GoogleTest inside a QApplication on the offscreen platform, with settings
// isolated from the user's (QStandardPaths test mode) and the layout and engine workers from this
// build.
#include <gtest/gtest.h>

#include <QApplication>
#include <QFile>
#include <QSettings>
#include <QStandardPaths>

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    qputenv("ONNXLENS_LAYOUT_WORKER", ONNXLENS_LAYOUT_WORKER);
    qputenv("ONNXLENS_ENGINE_WORKER", ONNXLENS_ENGINE_WORKER);
    QStandardPaths::setTestModeEnabled(true);
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("onnxlens-tests"));
    // One settings file per process: ctest runs the GUI tests in parallel processes, and a test
    // that writes settings (recent files, panel choices) must not see another's.
    QApplication::setApplicationName(
        QStringLiteral("widgets_tests-%1").arg(QCoreApplication::applicationPid()));
    ::testing::InitGoogleTest(&argc, argv);
    const int status = RUN_ALL_TESTS();
    QFile::remove(QSettings().fileName());
    return status;
}
