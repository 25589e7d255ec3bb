#pragma once
// The cost model as the graph's heat overlay and group tooltips: each node's FLOPs, parameters
// or bytes moved with its share of the model's total, keyed like the profile's heat map
// (profileNameOf), and each view group's totals over the operators inside.
#include <QString>
#include <vector>

#include "onnxlens/model/CostModel.h"
#include "onnxlens/model/ViewGraph.h"
#include "widgets/graph/GraphScene.h"

namespace onnxlens::widgets {

// A node's amount under `measure` (Flops, Parameters or Memory: bytes read + written +
// parameter bytes).
double costAmount(const CostFigures& figures, HeatMeasure measure);

// Every node the cost model has, with its amount and share of the sum over the nodes: a node whose
// amount is known is coloured even at 0 (a Reshape's FLOPs), one whose rule needed an unknown
// shape is marked unknown (drawn hatched). Under Parameters the nodes that read no weights are
// left out (grey, "reads no weights"): parameters never need a shape.
NodeHeatMap costHeatMap(const ModelCost& cost, HeatMeasure measure);

// Per view group: costSummary() of the summed figures of the operators inside (at any depth)
// that the cost model counted; empty for groups with none.
std::vector<QString> groupCostSummaries(const ViewGraph& view, const ModelCost& cost);

}  // namespace onnxlens::widgets
