// `onnxlens-cli check MODEL [--json]`: is the model valid (structure, onnx checker, and what the
// engine's compilation rejects: initializers whose dims or data do not hold, attribute values no
// kernel can compute with), and can the engine run every node? The exit code follows validity:
// 0 valid, 1 not; nodes the engine cannot run are listed but do not fail the check (the model
// itself is not wrong). Nothing is run.
#include "CliCommon.h"
#include "onnxlens/engine/Session.h"
#include "onnxlens/model/ExternalData.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/ModelSummary.h"

namespace onnxlens::cli {

namespace {

struct Verdict {
    bool ok = true;
    std::string message;
};

nlohmann::json verdictJson(const Verdict& v) { return {{"ok", v.ok}, {"message", v.message}}; }

// ---- engine support ----
// Which nodes (subgraphs and functions included) the onnxlens engine has no kernel for.
nlohmann::json unsupportedNodesJson(const std::vector<engine::UnsupportedNode>& nodes) {
    auto list = nlohmann::json::array();
    for (const auto& n : nodes)
        list.push_back({{"node", n.nodeName},
                        {"op_type", n.opType},
                        {"domain", displayDomain(n.domain)},
                        {"opset", n.opsetVersion}});
    return list;
}

void printUnsupportedNodes(const std::vector<engine::UnsupportedNode>& nodes) {
    if (nodes.empty()) {
        std::cout << "engine: every node is supported\n";
        return;
    }
    std::cout << "engine: " << nodes.size() << " node(s) not supported:\n";
    for (const auto& n : nodes)
        std::cout << "  " << displayDomain(n.domain) << "::" << n.opType << " (opset "
                  << n.opsetVersion << ") "
                  << (n.nodeName.empty() ? std::string("<unnamed>") : n.nodeName) << "\n";
}

void printVerdict(const std::string& label, const Verdict& v) {
    std::cout << label << ": " << (v.ok ? "ok" : "FAILED") << "\n";
    if (v.ok) return;
    std::string indented = "  " + v.message;
    for (std::size_t at = indented.find('\n'); at != std::string::npos;
         at = indented.find('\n', at + 3))
        indented.insert(at + 1, "  ");
    std::cout << indented << "\n";
}

}  // namespace

int runCheckCommand(const std::vector<std::string>& args) {
    Arguments arguments(args, {}, {"json"});
    arguments.requirePositionals(1, "check MODEL [--json]");
    const std::string path = arguments.positionals()[0];
    // A file that is not an ONNX model is an input error (exit 2); a model that is one but is
    // malformed is what `check` reports (exit 1).
    auto parsed = parseModelFile(path);
    if (!parsed) throw UsageError(parsed.error().message);
    const onnx::ModelProto& model = *parsed->proto;

    Verdict structure;
    if (auto status = validateModelStructure(model, path); !status) {
        structure = {false, status.error().message};
    } else if (auto external = checkExternalDataLocations(model, parsed->directory, path);
               !external) {
        structure = {false, external.error().message};
    }
    const CheckerVerdict onnxChecker = runChecker(model);
    const Verdict checker{onnxChecker.ok, onnxChecker.message};
    const auto unsupported = engine::Session::findUnsupportedNodes(model);
    // Compile as `run` would (weights loaded, kernels built, optimizer passes), run nothing:
    // what fails here would fail every run. Skipped when some node has no kernel (listed below).
    Verdict compilation;
    if (structure.ok && unsupported.empty()) {
        engine::SessionOptions options;
        options.threads = 1;
        if (auto session = engine::Session::create(*parsed, options); !session)
            compilation = {false, session.error().message};
    }
    const bool ok = structure.ok && checker.ok && compilation.ok;

    if (arguments.flag("json")) {
        printJson({{"model", path},
                   {"ok", ok},
                   {"structure", verdictJson(structure)},
                   {"checker", verdictJson(checker)},
                   {"compilation", verdictJson(compilation)},
                   {"engine_supports_all", unsupported.empty()},
                   {"unsupported_nodes", unsupportedNodesJson(unsupported)}});
    } else {
        std::cout << path << "\n";
        printVerdict("structure", structure);
        printVerdict("onnx checker", checker);
        printVerdict("engine compilation", compilation);
        printUnsupportedNodes(unsupported);
    }
    return ok ? kExitOk : kExitCheckFailed;
}

}  // namespace onnxlens::cli
