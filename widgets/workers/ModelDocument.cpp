#include "widgets/workers/ModelDocument.h"

#include <QElapsedTimer>
#include <QFileInfo>

namespace onnxlens::widgets {

Result<std::shared_ptr<const ModelDocument>> loadModelDocument(const QString& path,
                                                               const QString& editedFrom) {
    QElapsedTimer clock;
    clock.start();
    auto document = std::make_shared<ModelDocument>();
    document->path = QFileInfo(path).absoluteFilePath();
    document->editedFrom = editedFrom;
    auto loaded = loadModel(std::filesystem::path(path.toStdString()));
    if (!loaded) return loaded.error();
    document->loaded = std::move(loaded.value());
    auto summary = summarizeModel(document->loaded);
    if (summary) document->summary = std::move(summary.value());
    // The summary's shape inference, not a second one.
    ViewGraphOptions viewOptions;
    viewOptions.shapes = document->loaded.shapes->get(*document->loaded.proto);
    auto view = buildViewGraph(document->loaded.proto, viewOptions);
    if (!view) return makeError(path.toStdString(), view.error().message);
    document->view = std::make_shared<const ViewGraph>(std::move(view.value()));
    // Its own shape inference, on a weights-free copy with the dims bound: cheap next to the
    // parse, and never on the GUI thread.
    if (auto cost = computeModelCost(*document->loaded.proto)) {
        document->cost = std::make_shared<const ModelCost>(std::move(cost.value()));
    } else {
        document->costError = QString::fromStdString(cost.error().message);
    }
    document->loadMs = static_cast<double>(clock.nsecsElapsed()) / 1e6;
    return std::shared_ptr<const ModelDocument>(std::move(document));
}

}  // namespace onnxlens::widgets
