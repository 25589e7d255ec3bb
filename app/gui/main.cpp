// onnxlens: the inspector window. `onnxlens [--new-instance] [MODEL.onnx...]`
#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>

#include "MainWindow.h"
#include "SingleInstance.h"

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("onnxlens"));
    QApplication::setApplicationName(QStringLiteral("onnxlens"));
    QApplication::setApplicationVersion(QStringLiteral(ONNXLENS_VERSION));
    QApplication::setDesktopFileName(QStringLiteral("onnxlens"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/onnxlens.svg")));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("An inspector for ONNX models"));
    parser.addHelpOption();
    parser.addVersionOption();
    QCommandLineOption newInstance(QStringLiteral("new-instance"),
                                   QStringLiteral("Open a new window instead of using a running onnxlens."));
    parser.addOption(newInstance);
    parser.addPositionalArgument(QStringLiteral("models"), QStringLiteral("ONNX models to open"),
                                 QStringLiteral("[MODEL.onnx...]"));
    parser.process(app);
    const QStringList files = parser.positionalArguments();

    onnxlens::gui::SingleInstance instance;
    if (!parser.isSet(newInstance)) {
        if (instance.forwardToRunningInstance(files)) return 0;
        instance.listen();
    }
    onnxlens::gui::MainWindow window;
    QObject::connect(&instance, &onnxlens::gui::SingleInstance::filesReceived, &window,
                     [&window](const QStringList& received) {
                         window.openFiles(received);
                         window.setWindowState((window.windowState() & ~Qt::WindowMinimized) | Qt::WindowActive);
                         window.raise();
                         window.activateWindow();
                     });
    window.show();
    window.openFiles(files);
    return app.exec();
}
