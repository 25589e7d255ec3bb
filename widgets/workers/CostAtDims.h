#pragma once
// The cost model at the dims a model was last run or benchmarked with: what the Model panel's
// totals, the Node panel's figures, the group tooltips and View > Colour by FLOPs / Parameters /
// Memory show. Until a run, the document's count (every symbolic dim 1); after a Run with the Run
// dock's inputs or a benchmark, a count at the dims its feeds bound, made on a worker thread
// (shape inference on a weights-free copy: seconds on a large model) by the tab's controller.
#include <QString>
#include <map>
#include <memory>
#include <string>

#include "onnxlens/model/CostModel.h"

namespace onnxlens::widgets {

struct ModelDocument;

struct CostAtDims {
    std::shared_ptr<const ModelCost> cost;  // nullptr when counting failed (error says why)
    QString error;
    // Where the dims come from: "" (every symbolic dim 1, nothing ran yet), "the last run",
    // "the last benchmark".
    QString source;
    std::map<std::string, std::size_t> index;  // profile name -> index in cost->nodes

    // The cost of a main-graph node by its profile name (profileNameOf); nullptr when the cost
    // model has no such node (inside a subgraph, or made by the optimizer).
    const NodeCost* nodeCost(const std::string& profileName) const;
    // "batch = 1, sequence = 128" (the cost's dims in order), "" without symbolic dims.
    QString dimsText() const;
    // "at batch = 1, sequence = 128 (the last run's inputs)" or "at batch = 1 (every symbolic
    // dim taken as 1 until a run)": what the figures assume, for the panels and the legend.
    QString assumptionText() const;
};

// The document's own count (every symbolic dim 1).
std::shared_ptr<const CostAtDims> costOfDocument(const ModelDocument& document);
// A count at `dims` (symbols and "input:axis" keys); runs shape inference: call it on a worker
// thread.
std::shared_ptr<const CostAtDims> countCostAtDims(const ModelDocument& document,
                                                  const std::map<std::string, std::int64_t>& dims,
                                                  const QString& source);

}  // namespace onnxlens::widgets
