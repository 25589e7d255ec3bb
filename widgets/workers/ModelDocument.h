#pragma once
// Everything the window shows about one opened model, built on a worker thread by
// loadModelDocument(): the loaded protobuf, the summary (Model panel), the view graph and what
// the model costs (cost model with every symbolic dim 1, until a run gives other dims).
#include <QString>
#include <map>
#include <memory>
#include <string>

#include "onnxlens/model/CostModel.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/ModelSummary.h"
#include "onnxlens/model/ViewGraph.h"

namespace onnxlens::widgets {

struct ModelDocument {
    QString path;  // absolute: the file loaded (an edited model's private copy, see below)
    // Set for a model made by the window's edits (EditController): the user's file it was edited
    // from. Empty for a file as opened.
    QString editedFrom;
    LoadedModel loaded;
    ModelSummary summary;
    std::shared_ptr<const ViewGraph> view;
    std::shared_ptr<const ModelCost> cost;  // nullptr when counting failed (costError says why)
    QString costError;
    double loadMs = 0;  // parse + summary + view graph + cost, on the worker thread
    // The panels read the cost through the tab's controller (ModelController::cost, CostAtDims),
    // which counts again at the dims of the last run or benchmark.
};

// Runs on a worker thread; never touches widgets. Errors name the file.
Result<std::shared_ptr<const ModelDocument>> loadModelDocument(const QString& path,
                                                               const QString& editedFrom = {});

}  // namespace onnxlens::widgets
