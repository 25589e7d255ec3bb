// `onnxlens-cli cost MODEL [--dim S=N]... [--json | --csv]`: multiply-accumulates, FLOPs,
// parameters and memory per node and in total (model/CostModel.h; rules in docs/cost-model.md).
#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <sstream>

#include "CliCommon.h"
#include "CliSession.h"
#include "onnxlens/model/CostModel.h"
#include "onnxlens/model/ModelLoader.h"

namespace onnxlens::cli {

namespace {

nlohmann::json figuresJson(const CostFigures& f) {
    return {{"macs", f.macs},
            {"flops", f.flops},
            {"parameters", f.parameters},
            {"parameter_bytes", f.parameterBytes},
            {"bytes_read", f.bytesRead},
            {"bytes_written", f.bytesWritten},
            {"arithmetic_intensity", f.intensity()}};
}

// 1234567 -> "1.23M"; the text report's numbers.
std::string human(double v) {
    const char* units[] = {"", "K", "M", "G", "T", "P"};
    int u = 0;
    while (v >= 1000 && u < 5) {
        v /= 1000;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f%s" : "%.2f%s", v, units[u]);
    return buf;
}

std::string csvField(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

int runCost(const Arguments& a) {
    if (a.flag("json") && a.flag("csv")) throw UsageError("--json and --csv exclude each other");
    const std::string path = a.positionals()[0];
    auto dims = parseDims(a);
    auto loaded = parseModelFile(path);
    if (!loaded) throw UsageError(loaded.error().message);
    auto cost = computeModelCost(*loaded->proto, {dims.begin(), dims.end()});
    if (!cost) throw UsageError(path + ": " + cost.error().message);

    if (a.flag("json")) {
        nlohmann::json doc;
        doc["model"] = path;
        doc["total"] = figuresJson(cost->total);
        // false: some nodes' shapes are unknown and the totals are lower bounds.
        doc["total_complete"] = !cost->totalIsLowerBound();
        doc["nodes_unknown"] = cost->nodesWithUnknownShapes;
        doc["peak_activation_bytes"] = cost->peakActivationBytes;
        doc["peak_after_node"] = cost->peakAfterNode;
        doc["dims"] = cost->dims;
        doc["assumptions"] = cost->assumptions;
        doc["parameters_by_type"] = nlohmann::json::object();
        for (const auto& [type, f] : cost->parametersByType)
            doc["parameters_by_type"][type] = {{"parameters", f.parameters},
                                               {"bytes", f.parameterBytes}};
        doc["scopes"] = nlohmann::json::object();
        for (const auto& [scope, f] : cost->scopes) doc["scopes"][scope] = figuresJson(f);
        doc["nodes"] = nlohmann::json::array();
        for (const auto& n : cost->nodes) {
            auto row = figuresJson(n.figures);
            row["name"] = n.name;
            row["op_type"] = n.opType;
            row["scope"] = n.scope;
            row["shapes_known"] = n.shapesKnown;
            row["estimate"] = n.estimate;
            if (!n.note.empty()) row["note"] = n.note;
            doc["nodes"].push_back(std::move(row));
        }
        printJson(doc);
        return kExitOk;
    }
    if (a.flag("csv")) {
        std::cout
            << "name,op_type,scope,macs,flops,parameters,parameter_bytes,bytes_read,bytes_written,"
               "arithmetic_intensity,shapes_known,estimate\n";
        for (const auto& n : cost->nodes) {
            const auto& f = n.figures;
            std::cout << csvField(n.name) << "," << csvField(n.opType) << "," << csvField(n.scope)
                      << "," << std::setprecision(17) << f.macs << "," << f.flops << ","
                      << f.parameters << "," << f.parameterBytes << "," << f.bytesRead << ","
                      << f.bytesWritten << "," << f.intensity() << "," << (n.shapesKnown ? 1 : 0)
                      << "," << (n.estimate ? 1 : 0) << "\n";
        }
        return kExitOk;
    }
    std::cout << path << "\n";
    for (const auto& note : cost->assumptions) std::cout << "  note: " << note << "\n";
    // The op column fits the longest op type (com.microsoft::QLinearGlobalAveragePool is 41).
    std::size_t opWidth = 20;
    for (const auto& n : cost->nodes) opWidth = std::max(opWidth, n.opType.size() + 2);
    const auto opColumn = static_cast<int>(opWidth);
    std::cout << std::left << std::setw(48) << "node" << std::setw(opColumn) << "op" << std::right
              << std::setw(10) << "MACs" << std::setw(10) << "FLOPs" << std::setw(10) << "params"
              << std::setw(10) << "read" << std::setw(10) << "written" << std::setw(8) << "F/B"
              << "\n";
    for (const auto& n : cost->nodes) {
        const auto& f = n.figures;
        std::string name = n.name.size() > 46 ? "..." + n.name.substr(n.name.size() - 43) : n.name;
        std::ostringstream intensity;
        intensity << std::fixed << std::setprecision(1) << f.intensity();
        // A node whose shapes are unknown has no figure to show, not 0.
        const std::string macs = n.shapesKnown ? human(f.macs) : "?";
        const std::string flops = n.shapesKnown ? human(f.flops) : "?";
        std::cout << std::left << std::setw(48) << name << std::setw(opColumn) << n.opType
                  << std::right << std::setw(10) << macs << std::setw(10) << flops << std::setw(10)
                  << human(static_cast<double>(f.parameters)) << std::setw(10)
                  << human(static_cast<double>(f.bytesRead)) << std::setw(10)
                  << human(static_cast<double>(f.bytesWritten)) << std::setw(8) << intensity.str()
                  << (n.estimate      ? "  (estimate)"
                      : n.shapesKnown ? ""
                                      : "  (partial)")
                  << "\n";
    }
    const auto& t = cost->total;
    const std::string atLeast = cost->totalIsLowerBound() ? "at least " : "";
    std::cout << "\ntotal: " << atLeast << human(t.macs) << " MACs, " << atLeast << human(t.flops)
              << " FLOPs"
              << (cost->totalIsLowerBound()
                      ? " (" + std::to_string(cost->nodesWithUnknownShapes) + " node(s) unknown)"
                      : std::string())
              << ", " << human(static_cast<double>(t.parameters)) << " parameters ("
              << human(static_cast<double>(t.parameterBytes)) << "B)";
    for (const auto& [type, f] : cost->parametersByType)
        std::cout << ", " << type << " " << human(static_cast<double>(f.parameters));
    std::cout << "\npeak activation memory: "
              << human(static_cast<double>(cost->peakActivationBytes)) << "B"
              << (cost->peakAfterNode.empty() ? "" : " (after " + cost->peakAfterNode + ")")
              << "\n";
    return kExitOk;
}

}  // namespace

Command addCostCommand(CLI::App& cli) {
    CLI::App* command = addCommand(
        cli, "cost",
        "multiply-accumulates, FLOPs, parameters and memory traffic per node and in total");
    addPositional(*command, "MODEL", "the ONNX model file");
    addDimOption(*command);
    addJsonFlag(*command, "print one JSON document instead of the table");
    addFlag(*command, "csv", "print one CSV row per node instead of the table");
    return {command, runCost};
}

}  // namespace onnxlens::cli
