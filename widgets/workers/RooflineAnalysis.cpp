#include "widgets/workers/RooflineAnalysis.h"

#include <QObject>
#include <QStringList>

namespace onnxlens::widgets {

double RooflineAnalysis::ridgeIntensity() const {
    return bandwidth.gbPerSecond > 0 ? peak.gflops / bandwidth.gbPerSecond : 0;
}

RooflineAnalysis analyseRoofline(const ModelDocument& document,
                                 const engine::BenchmarkResult& result) {
    RooflineAnalysis analysis;
    QStringList errors;
    if (auto peak = engine::cachedPeakThroughput(result.threads))
        analysis.peak = *peak;
    else
        errors << QObject::tr("peak: %1").arg(QString::fromStdString(peak.error().message));
    if (auto bandwidth = engine::cachedMemoryBandwidth(result.threads))
        analysis.bandwidth = *bandwidth;
    else
        errors
            << QObject::tr("bandwidth: %1").arg(QString::fromStdString(bandwidth.error().message));
    // The document's counts when the benchmark ran at the dims they assume, else a count at the
    // benchmark's dims (its own shape inference).
    std::shared_ptr<const ModelCost> cost = document.cost;
    bool sameDims = cost != nullptr;
    if (cost)
        for (const auto& [symbol, value] : result.dims) {
            auto it = cost->dims.find(symbol);
            if (it == cost->dims.end() ? value != 1 : it->second != value) sameDims = false;
        }
    if (!sameDims) {
        auto counted =
            computeModelCost(*document.loaded.proto, {result.dims.begin(), result.dims.end()});
        if (counted)
            cost = std::make_shared<const ModelCost>(std::move(counted.value()));
        else
            errors << QObject::tr("cost model: %1")
                          .arg(QString::fromStdString(counted.error().message));
    }
    if (cost && result.profiled) {
        analysis.rates = engine::nodeRates(*cost, result.nodes, analysis.peak.gflops);
        engine::coverAchievedRates(analysis.peak, analysis.rates);  // no node above 100 %
    }
    analysis.error = errors.join(QStringLiteral("; "));
    return analysis;
}

}  // namespace onnxlens::widgets
