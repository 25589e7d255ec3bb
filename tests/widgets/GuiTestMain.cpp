// The GUI tests run GoogleTest inside a QApplication on the offscreen platform, with settings
// isolated from the user's (QStandardPaths test mode) and the layout worker from this build.
#include <gtest/gtest.h>

#include <QApplication>
#include <QStandardPaths>

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    qputenv("ONNXLENS_LAYOUT_WORKER", ONNXLENS_LAYOUT_WORKER);
    QStandardPaths::setTestModeEnabled(true);
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("onnxlens-tests"));
    QApplication::setApplicationName(QStringLiteral("widgets_tests"));
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
