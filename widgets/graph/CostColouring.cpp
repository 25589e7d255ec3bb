#include "widgets/graph/CostColouring.h"

#include "onnxlens/model/NodeNames.h"
#include "widgets/graph/CostText.h"

namespace onnxlens::widgets {

double costAmount(const CostFigures& f, HeatMeasure measure) {
    switch (measure) {
        case HeatMeasure::Flops:
            return f.flops;
        case HeatMeasure::Parameters:
            return static_cast<double>(f.parameters);
        case HeatMeasure::Memory:
            return static_cast<double>(f.bytesRead + f.bytesWritten + f.parameterBytes);
        case HeatMeasure::RunTime:
            break;
    }
    return 0;
}

NodeHeatMap costHeatMap(const ModelCost& cost, HeatMeasure measure) {
    // Shares of the sum over the nodes, not of the model total: shared weights count at each
    // reader here, so that the shares add up to 100 % like the profile's.
    double total = 0;
    for (const auto& node : cost.nodes) total += costAmount(node.figures, measure);
    NodeHeatMap heat;
    for (const auto& node : cost.nodes) {
        const double amount = costAmount(node.figures, measure);
        const double share = total > 0 ? amount / total : 0;
        if (measure == HeatMeasure::Parameters) {
            if (amount > 0) heat[node.name] = {share, amount};
            continue;
        }
        heat[node.name] = {share, amount, !node.shapesKnown};
    }
    return heat;
}

std::vector<QString> groupCostSummaries(const ViewGraph& view, const ModelCost& cost) {
    std::map<std::string, const NodeCost*> byName;
    for (const auto& node : cost.nodes) byName.emplace(node.name, &node);
    std::vector<CostFigures> sums(view.groups.size());
    std::vector<char> counted(view.groups.size(), 0);
    for (const auto& node : view.nodes) {
        if (node.kind != ViewNode::Kind::Operator || !node.proto) continue;
        auto it = byName.find(profileNameOf(*node.proto));
        if (it == byName.end()) continue;
        for (int g : view.groupChain(node.group)) {
            sums[static_cast<std::size_t>(g)] += it->second->figures;
            counted[static_cast<std::size_t>(g)] = 1;
        }
    }
    std::vector<QString> summaries(view.groups.size());
    for (std::size_t g = 0; g < sums.size(); ++g)
        if (counted[g]) summaries[g] = costSummary(sums[g]);
    return summaries;
}

}  // namespace onnxlens::widgets
