// onnxlens: the inspector window. `onnxlens [--new-instance] [MODEL.onnx...]`
#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QIcon>
#include <QTextStream>
#include <memory>

#include "MainWindow.h"
#include "SingleInstance.h"
#include "buildinfo/BuildInfo.h"
#include "onnxlens/engine/ThreadPool.h"
#include "widgets/graph/GraphPage.h"

int main(int argc, char** argv) {
    // Before anything else: libgomp must start with bounded spinning (ThreadPool.h); the engine
    // processes the window starts inherit it.
    onnxlens::engine::boundOpenMpSpinning(argv);
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("onnxlens"));
    QApplication::setApplicationName(QStringLiteral("onnxlens"));
    QApplication::setApplicationVersion(QString::fromStdString(onnxlens::buildinfo::version()));
    QApplication::setDesktopFileName(QStringLiteral("onnxlens"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/onnxlens.svg")));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("An inspector for ONNX models"));
    parser.addHelpOption();
    // The versions of everything onnxlens was built with, as `onnxlens-cli --version` and
    // Help > About print them.
    QCommandLineOption version(
        {QStringLiteral("v"), QStringLiteral("version")},
        QStringLiteral("Print the versions onnxlens was built with and exit."));
    parser.addOption(version);
    QCommandLineOption newInstance(
        QStringLiteral("new-instance"),
        QStringLiteral("Open a new window instead of using a running onnxlens."));
    parser.addOption(newInstance);
    // For tests and timing: print "drawn PATH in MS ms" for each model once it is on screen and
    // quit when all are (exit code 1 if one failed to open or lay out).
    QCommandLineOption exitWhenDrawn(QStringLiteral("exit-when-drawn"),
                                     QStringLiteral("Quit once every model given is drawn."));
    parser.addOption(exitWhenDrawn);
    parser.addPositionalArgument(QStringLiteral("models"), QStringLiteral("ONNX models to open"),
                                 QStringLiteral("[MODEL.onnx...]"));
    parser.process(app);
    if (parser.isSet(version)) {
        QTextStream(stdout) << QString::fromStdString(
            onnxlens::buildinfo::versionReport("onnxlens"));
        return 0;
    }
    const QStringList files = parser.positionalArguments();

    onnxlens::gui::SingleInstance instance;
    if (!parser.isSet(newInstance)) {
        if (instance.forwardToRunningInstance(files)) return 0;
        instance.listen();
    }
    onnxlens::gui::MainWindow window;
    QObject::connect(
        &instance, &onnxlens::gui::SingleInstance::filesReceived, &window,
        [&window](const QStringList& received) {
            window.openFiles(received);
            window.setWindowState((window.windowState() & ~Qt::WindowMinimized) | Qt::WindowActive);
            window.raise();
            window.activateWindow();
        });
    QElapsedTimer sinceStart;
    sinceStart.start();
    if (parser.isSet(exitWhenDrawn)) {
        auto remaining = std::make_shared<int>(static_cast<int>(files.size()));
        auto failures = std::make_shared<int>(0);
        auto done = [remaining, failures] {
            if (--*remaining <= 0) QCoreApplication::exit(*failures ? 1 : 0);
        };
        QObject::connect(&window, &onnxlens::gui::MainWindow::documentOpened, &window,
                         [done, failures, &sinceStart](onnxlens::widgets::GraphPage* page) {
                             QObject::connect(page, &onnxlens::widgets::GraphPage::drawn, page,
                                              [page, done, &sinceStart] {
                                                  QTextStream(stdout)
                                                      << "drawn " << page->document().path << " in "
                                                      << sinceStart.elapsed() << " ms" << Qt::endl;
                                                  done();
                                              });
                             QObject::connect(page, &onnxlens::widgets::GraphPage::layoutFailed,
                                              page, [done, failures](const QString& message) {
                                                  QTextStream(stderr)
                                                      << "layout failed: " << message << Qt::endl;
                                                  ++*failures;
                                                  done();
                                              });
                         });
        QObject::connect(&window, &onnxlens::gui::MainWindow::openFailed, &window,
                         [done, failures](const QString&, const QString& message) {
                             QTextStream(stderr) << "open failed: " << message << Qt::endl;
                             ++*failures;
                             done();
                         });
        if (files.isEmpty()) return 0;
    }
    window.show();
    window.openFiles(files);
    return app.exec();
}
