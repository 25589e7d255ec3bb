#pragma once
// Everything the window shows about one opened model, built on a worker thread by
// loadModelDocument(): the loaded protobuf, the summary (Model panel) and the view graph.
#include <QString>
#include <memory>

#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/ModelSummary.h"
#include "onnxlens/model/ViewGraph.h"

namespace onnxlens::widgets {

struct ModelDocument {
    QString path;  // absolute
    LoadedModel loaded;
    ModelSummary summary;
    std::shared_ptr<const ViewGraph> view;
    double loadMs = 0;  // parse + summary + view graph, on the worker thread
};

// Runs on a worker thread; never touches widgets. Errors name the file.
Result<std::shared_ptr<const ModelDocument>> loadModelDocument(const QString& path);

}  // namespace onnxlens::widgets
