#include "onnxlens/workflows/ModuleComparison.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <fstream>
#include <set>
#include <sstream>
#include <unordered_map>

#include "ReportText.h"
#include "onnxlens/engine/Session.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/GraphIndex.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/NodeNames.h"
#include "onnxlens/model/TestDataSet.h"
#include "onnxlens/workflows/QuantizationReport.h"
#include "onnxlens/workflows/ReferenceRun.h"

namespace onnxlens::engine {

namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

constexpr const char* kModulesFolder = "modules";

std::string stringOf(const Json& doc, const char* key) {
    auto it = doc.find(key);
    return it != doc.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// index.json's entries, one ModuleOutput per recorded tensor (a module that recorded none, with
// its problem, as one unmapped output without a file).
Result<std::vector<ModuleOutput>> readIndex(const fs::path& indexFile, std::string& dataSet,
                                            int& modules) {
    std::ifstream in(indexFile, std::ios::binary);
    if (!in) return makeError(indexFile.string(), "cannot be read");
    const Json doc = Json::parse(in, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("modules") ||
        !doc["modules"].is_array())
        return makeError(indexFile.string(), "is not a module index (no \"modules\" array)");
    dataSet = stringOf(doc, "data_set");
    if (dataSet.empty()) dataSet = "test_data_set_0";
    if (dataSet.find('/') != std::string::npos || dataSet == "..")
        return makeError(indexFile.string(), "data_set '" + dataSet + "' is not a folder name");
    std::vector<ModuleOutput> outputs;
    for (const auto& entry : doc["modules"]) {
        if (!entry.is_object()) return makeError(indexFile.string(), "a module entry is no object");
        ++modules;
        ModuleOutput base;
        base.module = stringOf(entry, "module");
        base.moduleType = stringOf(entry, "type");
        const std::string problem = stringOf(entry, "problem");
        const auto items = entry.find("outputs");
        if (items == entry.end() || !items->is_array() || items->empty()) {
            base.problem = problem.empty() ? "nothing recorded" : problem;
            outputs.push_back(base);
            continue;
        }
        for (const auto& item : *items) {
            if (!item.is_object()) continue;
            ModuleOutput o = base;
            const auto element = item.find("element");
            if (element != item.end() && element->is_number_integer())
                o.element = static_cast<int>(
                    std::clamp<std::int64_t>(element->get<std::int64_t>(), 0, 1 << 20));
            o.file = stringOf(item, "file");
            o.onnxValue = stringOf(item, "onnx_value");
            if (o.file.empty() || o.file.find('/') != std::string::npos)
                o.problem = "no recorded file";
            else if (o.onnxValue.empty())
                o.problem = problem.empty() ? "not mapped to an ONNX value" : problem;
            outputs.push_back(std::move(o));
        }
    }
    return outputs;
}

}  // namespace

bool hasModuleRecords(const fs::path& folder) {
    std::error_code ec;
    return fs::is_regular_file(folder / kModulesFolder / "index.json", ec);
}

Result<ModuleComparison> compareModules(const fs::path& folder, const Tolerance& tolerance,
                                        int threads, const std::atomic<bool>* cancel) {
    ModuleComparison comparison;
    const fs::path records = folder / kModulesFolder;
    auto outputs = readIndex(records / "index.json", comparison.dataSet, comparison.modules);
    if (!outputs) return outputs.error();

    const fs::path modelPath = folder / "model.onnx";
    auto model = loadModel(modelPath);
    if (!model) return model.error();
    auto dataSet = readTestDataSetFolder(folder / comparison.dataSet, *model->proto);
    if (!dataSet) return dataSet.error();
    const onnx::ModelProto skeleton = modelSkeleton(*model->proto);
    const onnx::GraphProto& graph = skeleton.graph();
    GraphIndex index(graph);

    // Where each mapped value is made; values no node makes are that output's problem.
    std::unordered_map<std::string, std::vector<std::size_t>> byValue;
    for (std::size_t i = 0; i < outputs->size(); ++i) {
        auto& o = (*outputs)[i];
        if (!o.problem.empty()) continue;
        o.nodeIndex = index.producer(o.onnxValue);
        if (o.nodeIndex < 0) {
            o.problem = "no node of model.onnx makes '" + o.onnxValue + "'";
            continue;
        }
        o.onnxNode = profileNameOf(graph.node(o.nodeIndex));
        o.opType = graph.node(o.nodeIndex).op_type();
        o.diff.valueA = o.onnxValue;
        o.diff.valueB = o.onnxValue;
        o.diff.problem = "the engine's run did not produce it";
        byValue[o.onnxValue].push_back(i);
    }

    SessionOptions options;
    options.threads = threads;
    // The figures must come out the same when rerun at this thread count.
    options.adaptThreadsToLoad = false;
    options.optimize = false;  // every value of the graph as written
    auto session = Session::create(std::move(*model), options);
    if (!session) return makeError(modelPath.string(), session.error().message);
    auto feeds = feedsFromTestDataSet(**session, *dataSet);
    if (!feeds) return makeError((folder / comparison.dataSet).string(), feeds.error().message);

    RunControl control;
    control.onValue = [&](const std::string& name, const Value& value) {
        auto it = byValue.find(name);
        if (it == byValue.end()) return;
        if (cancel && cancel->load()) control.cancel = true;
        for (std::size_t i : it->second) {
            auto& o = (*outputs)[i];
            auto recorded = readValueFile(records / o.file);
            if (!recorded) {
                o.diff.problem = recorded.error().message;
                continue;
            }
            try {
                compareValuePair(*recorded, value, tolerance, o.diff);
            } catch (const std::exception& e) {
                o.diff.compared = false;
                o.diff.problem = e.what();
            }
        }
    };
    auto run = (*session)->run(*feeds, &control);
    if (cancel && cancel->load()) return makeError(folder.string(), "cancelled");
    if (!run) return makeError(modelPath.string(), run.error().message);

    // The graph's order; modules sharing a value keep PyTorch's call order (inner first).
    std::stable_sort(outputs->begin(), outputs->end(), [](const auto& x, const auto& y) {
        const bool mx = x.nodeIndex >= 0, my = y.nodeIndex >= 0;
        if (mx != my) return mx;
        return mx && x.nodeIndex < y.nodeIndex;
    });
    for (std::size_t i = 0; i < outputs->size(); ++i) {
        const auto& o = (*outputs)[i];
        if (o.nodeIndex < 0 || !o.diff.compared) continue;
        ++comparison.compared;
        if (comparison.firstDivergence < 0 && !o.diff.withinTolerance)
            comparison.firstDivergence = static_cast<int>(i);
    }
    if (comparison.firstDivergence >= 0) {
        // The values downstream of the divergent one.
        std::set<std::string> reached{(*outputs)[comparison.firstDivergence].onnxValue};
        std::deque<std::string> queue(reached.begin(), reached.end());
        while (!queue.empty()) {
            const std::string v = queue.front();
            queue.pop_front();
            for (int c : index.consumers(v))
                for (const auto& out : graph.node(c).output())
                    if (!out.empty() && reached.insert(out).second) queue.push_back(out);
        }
        const auto& first = (*outputs)[comparison.firstDivergence];
        for (std::size_t i = comparison.firstDivergence + 1; i < outputs->size(); ++i) {
            const auto& o = (*outputs)[i];
            if (o.nodeIndex >= 0 && o.diff.compared && o.onnxValue != first.onnxValue &&
                reached.count(o.onnxValue))
                comparison.growth.push_back(static_cast<int>(i));
        }
    }
    comparison.outputs = std::move(*outputs);
    return comparison;
}

namespace {

std::string moduleLabel(const ModuleOutput& o) {
    std::string label = o.module;
    if (o.element > 0) label += "[" + std::to_string(o.element) + "]";
    return label;
}

std::string figuresOf(const ModuleOutput& o) {
    return formatNumbers("max abs %.3g, max rel %.3g, ", o.diff.figures.maxAbsError,
                         o.diff.maxRelError) +
           "SQNR " + formatSqnr(o.diff.figures.sqnrDb) +
           formatNumbers(", %.0f elements outside", static_cast<double>(o.diff.outside));
}

Json number(double x) { return std::isfinite(x) ? Json(x) : Json(x > 0 ? "inf" : "-inf"); }

Json outputJson(const ModuleOutput& o) {
    Json j{{"module", o.module}, {"type", o.moduleType}, {"element", o.element}};
    if (o.nodeIndex < 0) {
        j["problem"] = o.problem;
        return j;
    }
    j["onnx_value"] = o.onnxValue;
    j["onnx_node"] = o.onnxNode;
    j["op_type"] = o.opType;
    j["compared"] = o.diff.compared;
    if (!o.diff.compared) {
        j["problem"] = o.diff.problem;
        return j;
    }
    j["max_abs_error"] = number(o.diff.figures.maxAbsError);
    j["max_rel_error"] = number(o.diff.maxRelError);
    j["cosine"] = number(o.diff.figures.cosine);
    j["sqnr_db"] = number(o.diff.figures.sqnrDb);
    j["relative_error"] = number(o.diff.relativeError);
    j["outside_tolerance"] = o.diff.outside;
    j["within_tolerance"] = o.diff.withinTolerance;
    return j;
}

}  // namespace

std::string moduleComparisonFigure(const ModuleComparison& c) {
    if (c.compared == 0)
        return "no recorded module output could be compared (" + std::to_string(c.modules) +
               " modules recorded)";
    if (c.firstDivergence < 0)
        return std::to_string(c.compared) + " module outputs compared, every one within tolerance";
    const auto& f = c.outputs[c.firstDivergence];
    std::string text = "first divergent module " + moduleLabel(f) +
                       (f.moduleType.empty() ? "" : " (" + f.moduleType + ")") + " at ONNX node " +
                       f.onnxNode + " (" + f.opType + "): " + figuresOf(f);
    if (!c.growth.empty()) {
        const auto& last = c.outputs[c.growth.back()];
        text += formatNumbers("; relative error %.3g there, %.3g at ", f.diff.relativeError,
                              last.diff.relativeError) +
                moduleLabel(last) + " (" + std::to_string(c.growth.size()) + " modules downstream)";
    }
    return text + "; " + std::to_string(c.compared) + " module outputs compared";
}

std::string moduleComparisonMarkdown(const ModuleComparison& c) {
    std::ostringstream md;
    md << "\n## Modules against PyTorch\n\nEach PyTorch module's output on " << c.dataSet
       << "'s inputs (forward hooks, `modules/`) against the ONNX value of its scope, the "
          "engine's optimizer off; "
       << c.compared << " outputs of " << c.modules << " modules compared.\n\n";
    int unmapped = 0;
    for (const auto& o : c.outputs) unmapped += o.nodeIndex < 0 ? 1 : 0;
    if (c.firstDivergence < 0) {
        md << "Every compared module output is within the tolerance.\n";
    } else {
        const auto& f = c.outputs[c.firstDivergence];
        md << "First module that diverges: `" << moduleLabel(f) << "`"
           << (f.moduleType.empty() ? "" : " (" + f.moduleType + ")") << ", ONNX node `"
           << f.onnxNode << "` (" << f.opType << "), value `" << f.onnxValue
           << "`: " << figuresOf(f) << ".\n\n";
        md << "Error growth along the modules after it (relative error = RMS error / RMS of "
              "PyTorch's):\n\n| module | ONNX node | relative error | max abs | SQNR |\n"
              "|---|---|---|---|---|\n";
        std::vector<int> rows{c.firstDivergence};
        rows.insert(rows.end(), c.growth.begin(), c.growth.end());
        const std::size_t shown = 24;
        for (std::size_t k = 0; k < rows.size(); ++k) {
            if (rows.size() > shown && k == shown / 2) {
                md << "| ... " << rows.size() - shown
                   << " more (report.json lists all) | | | | |\n";
                k = rows.size() - shown / 2;
            }
            const auto& o = c.outputs[rows[k]];
            md << "| `" << moduleLabel(o) << "` | `" << o.onnxNode << "` | "
               << formatNumbers("%.3g | %.3g | ", o.diff.relativeError, o.diff.figures.maxAbsError)
               << formatSqnr(o.diff.figures.sqnrDb) << " |\n";
        }
    }
    if (unmapped > 0)
        md << "\n" << unmapped << " recorded outputs have no ONNX value (report.json says why).\n";
    return md.str();
}

Json moduleComparisonJson(const ModuleComparison& c) {
    Json outputs = Json::array(), growth = Json::array();
    for (const auto& o : c.outputs) outputs.push_back(outputJson(o));
    for (int i : c.growth) growth.push_back(outputJson(c.outputs[i]));
    return {{"data_set", c.dataSet},
            {"modules", c.modules},
            {"compared", c.compared},
            {"first_divergence",
             c.firstDivergence >= 0 ? outputJson(c.outputs[c.firstDivergence]) : Json(nullptr)},
            {"error_growth", growth},
            {"outputs", outputs}};
}

}  // namespace onnxlens::engine
