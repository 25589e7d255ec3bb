// `onnxlens-cli render MODEL --out FILE.svg|FILE.png [--expand-all] [--scale S] [--json]`:
// draws the graph scene of the GUI without a window (Qt's offscreen platform), laid out by
// Graphviz in-process.
#include <cstdlib>
#include <filesystem>

#include "CliCommon.h"

#ifdef ONNXLENS_HAVE_WIDGETS
#include <QApplication>

#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/ViewGraph.h"
#include "widgets/graph/GraphExport.h"
#include "widgets/graph/GraphScene.h"
#endif

namespace onnxlens::cli {

namespace {

int runRender(const Arguments& arguments) {
    auto out = arguments.value("out");
    if (!out) throw UsageError("--out FILE.svg|FILE.png is required");
    const std::string extension = std::filesystem::path(*out).extension().string();
    if (extension != ".svg" && extension != ".png")
        throw UsageError(*out + ": the output must end in .svg or .png");
    const double scale = arguments.doubleValue("scale", 1.0);
    if (!(scale > 0 && scale <= 8)) throw UsageError("--scale must be in (0, 8]");
#ifdef ONNXLENS_HAVE_WIDGETS
    const std::string& modelPath = arguments.positionals()[0];
    auto loaded = loadModel(modelPath);
    if (!loaded) throw UsageError(loaded.error().message);
    auto view = buildViewGraph(loaded->proto);
    if (!view) throw UsageError(modelPath + ": " + view.error().message);

    // No window: the offscreen platform unless the caller chose one.
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    static int argc = 1;
    static char name[] = "onnxlens-cli";
    static char* argv[] = {name, nullptr};
    QApplication app(argc, argv);
    widgets::GraphScene scene(std::make_shared<const ViewGraph>(std::move(view.value())));
    if (arguments.flag("expand-all"))
        scene.expandAll();
    else
        scene.expandForOverview();
    QString error = widgets::layoutSceneInProcess(scene);
    if (error.isEmpty()) {
        const QString path = QString::fromStdString(*out);
        error =
            extension == ".svg"
                ? widgets::exportSceneSvg(
                      scene, path,
                      QString::fromStdString(std::filesystem::path(modelPath).filename().string()))
                : widgets::exportScenePng(scene, path, scale);
    }
    if (!error.isEmpty()) throw UsageError(error.toStdString());
    const QRectF rect = scene.contentRect();
    if (arguments.flag("json")) {
        printJson({{"model", modelPath},
                   {"out", *out},
                   {"nodes", scene.view().operatorCount},
                   {"width", rect.width()},
                   {"height", rect.height()}});
    } else {
        std::cout << "wrote " << *out << " (" << scene.view().operatorCount << " nodes, "
                  << static_cast<int>(rect.width()) << "x" << static_cast<int>(rect.height())
                  << " points)\n";
    }
    return kExitOk;
#else
    throw UsageError("this build has no widgets layer (configured with ONNXLENS_BUILD_GUI=OFF)");
#endif
}

}  // namespace

Command addRenderCommand(CLI::App& cli) {
    CLI::App* command =
        addCommand(cli, "render", "draw the graph as the window shows it, to SVG or PNG");
    addPositional(*command, "MODEL", "the ONNX model file");
    addValueOption(*command, "out", "FILE.svg|FILE.png", "the drawing to write (required)");
    addFlag(*command, "expand-all", "expand every subgraph and function instead of the overview");
    addValueOption(*command, "scale", "S", "PNG pixels per point, in (0, 8] (default 1)");
    addJsonFlag(*command, "print what was drawn as one JSON document");
    return {command, runRender};
}

}  // namespace onnxlens::cli
