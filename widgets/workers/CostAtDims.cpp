#include "widgets/workers/CostAtDims.h"

#include <QObject>
#include <QStringList>

#include "widgets/workers/ModelDocument.h"

namespace onnxlens::widgets {

namespace {
std::shared_ptr<CostAtDims> indexed(std::shared_ptr<const ModelCost> cost) {
    auto state = std::make_shared<CostAtDims>();
    state->cost = std::move(cost);
    if (state->cost)
        for (std::size_t i = 0; i < state->cost->nodes.size(); ++i)
            state->index.emplace(state->cost->nodes[i].name, i);
    return state;
}
}  // namespace

const NodeCost* CostAtDims::nodeCost(const std::string& profileName) const {
    if (!cost) return nullptr;
    auto it = index.find(profileName);
    return it == index.end() ? nullptr : &cost->nodes[it->second];
}

QString CostAtDims::dimsText() const {
    if (!cost) return {};
    QStringList dims;
    for (const auto& [symbol, value] : cost->dims)
        dims << QStringLiteral("%1 = %2").arg(QString::fromStdString(symbol)).arg(value);
    return dims.join(QStringLiteral(", "));
}

QString CostAtDims::assumptionText() const {
    const QString dims = dimsText();
    if (dims.isEmpty()) return {};
    if (source.isEmpty())
        return QObject::tr("at %1 (every symbolic dim taken as 1 until a run)").arg(dims);
    return QObject::tr("at %1 (%2)").arg(dims, source);
}

std::shared_ptr<const CostAtDims> costOfDocument(const ModelDocument& document) {
    auto state = indexed(document.cost);
    state->error = document.costError;
    return state;
}

std::shared_ptr<const CostAtDims> countCostAtDims(const ModelDocument& document,
                                                  const std::map<std::string, std::int64_t>& dims,
                                                  const QString& source) {
    auto counted = computeModelCost(*document.loaded.proto, dims);
    std::shared_ptr<CostAtDims> state;
    if (counted) {
        state = indexed(std::make_shared<const ModelCost>(std::move(counted.value())));
    } else {
        state = std::make_shared<CostAtDims>();
        state->error = QString::fromStdString(counted.error().message);
    }
    state->source = source;
    return state;
}

}  // namespace onnxlens::widgets
