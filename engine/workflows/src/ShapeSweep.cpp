#include "onnxlens/workflows/ShapeSweep.h"

#include <algorithm>
#include <cctype>
#include <mutex>

#include "onnxlens/workflows/DynamicAxesCheck.h"

namespace onnxlens::engine {

Result<SweepAxis> parseSweepAxis(const std::string& text) {
    const auto equals = text.find('=');
    if (equals == std::string::npos || equals == 0)
        return makeError("sweep " + text, "expected SYMBOL=V1,V2,...");
    SweepAxis axis;
    axis.symbol = text.substr(0, equals);
    const std::string list = text.substr(equals + 1);
    std::size_t start = 0;
    while (start <= list.size()) {
        const auto comma = list.find(',', start);
        const std::string item =
            list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        try {
            std::size_t used = 0;
            const long long v = std::stoll(item, &used);
            if (used != item.size() || v < 1) throw std::invalid_argument(item);
            axis.values.push_back(v);
        } catch (const std::exception&) {
            return makeError("sweep " + text, "'" + item + "' is not a positive integer");
        }
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return axis;
}

std::vector<SymbolBindings> sweepCombinations(const std::vector<SweepAxis>& axes) {
    std::vector<SymbolBindings> combos{{}};
    for (const auto& axis : axes) {
        std::vector<SymbolBindings> next;
        for (const auto& combo : combos)
            for (auto v : axis.values) {
                auto c = combo;
                c[axis.symbol] = v;
                next.push_back(c);
            }
        combos = std::move(next);
    }
    return combos;
}

std::int64_t itemsPerRun(const SymbolBindings& dims) {
    for (const auto& [symbol, value] : dims) {
        std::string lower = symbol;
        for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (lower.find("batch") != std::string::npos) return value;
    }
    return 1;
}

std::string unknownSweepSymbol(const std::vector<Session::IoInfo>& inputs,
                               const std::vector<SweepAxis>& axes) {
    const auto symbols = inputSymbols(inputs);
    for (const auto& axis : axes) {
        if (std::find(symbols.begin(), symbols.end(), axis.symbol) != symbols.end()) continue;
        std::string known;
        for (const auto& s : symbols) known += (known.empty() ? "" : ", ") + s;
        return "the model's inputs have no dim named '" + axis.symbol + "' (" +
               (known.empty() ? "they have no symbolic dims" : "symbols: " + known) + ")";
    }
    return {};
}

std::string sweepLabel(const SymbolBindings& dims) {
    std::string label;
    for (const auto& [k, v] : dims)
        label += (label.empty() ? "" : " ") + k + "=" + std::to_string(v);
    return label;
}

SweepRunner::SweepRunner(Session& session, int warmupRuns, int runs)
    : session_(session), warmupRuns_(warmupRuns), runs_(runs) {}

void SweepRunner::cancel() {
    cancelled_.store(true);
    std::lock_guard lock(mutex_);
    if (current_) current_->cancel();
}

Result<std::vector<SweepPoint>> SweepRunner::run(const std::vector<SymbolBindings>& combinations,
                                                 const FeedsForDims& feeds) {
    std::vector<SweepPoint> points;
    const int total = static_cast<int>(combinations.size());
    for (int i = 0; i < total; ++i) {
        if (cancelled_) return makeError("sweep", "cancelled");
        SweepPoint point;
        point.dims = combinations[static_cast<std::size_t>(i)];
        auto inputs = feeds(point.dims);
        if (!inputs) {
            point.error = inputs.error().message;
        } else {
            BenchmarkRunner runner(session_, {warmupRuns_, runs_, false});
            if (progress_)
                runner.setProgressCallback([this, i, total](const BenchmarkProgress& p) {
                    progress_({i, total, p});
                });
            {
                std::lock_guard lock(mutex_);
                if (cancelled_) return makeError("sweep", "cancelled");
                current_ = &runner;
            }
            auto result = runner.run(*inputs);
            {
                std::lock_guard lock(mutex_);
                current_ = nullptr;
            }
            if (cancelled_) return makeError("sweep", "cancelled");
            if (!result) {
                point.error = result.error().message;
            } else {
                point.statistics = result->statistics;
                const double median = point.statistics.medianMs;
                point.itemsPerSecond =
                    median > 0 ? 1000.0 * static_cast<double>(itemsPerRun(point.dims)) / median : 0;
            }
        }
        if (pointDone_) pointDone_(point);
        points.push_back(std::move(point));
    }
    return points;
}

}  // namespace onnxlens::engine
