// `onnxlens-cli check MODEL [--json]`: is the model valid (structure, onnx checker, and what the
// engine's compilation rejects: initializers whose dims or data do not hold, attribute values no
// kernel can compute with), and can the engine run every node? The exit code follows validity:
// 0 valid, 1 not; nodes the engine cannot run are listed but do not fail the check (the model
// itself is not wrong). Nothing is run.
// `check MODEL --dynamic-axes`: do the declared dynamic axes work (the Compare dock's check)?
// 0 they do, 1 they do not (or there are none), 2 it cannot tell.
#include "CliCommon.h"
#include "CliSession.h"
#include "onnxlens/engine/Session.h"
#include "onnxlens/model/ExternalData.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/ModelSummary.h"
#include "onnxlens/model/TestDataSet.h"
#include "onnxlens/workflows/DynamicAxesCheck.h"
#include "onnxlens/workflows/ReferenceRun.h"

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

const char* verdictName(engine::DynamicAxesCheckResult::Verdict verdict) {
    using Verdict = engine::DynamicAxesCheckResult::Verdict;
    switch (verdict) {
        case Verdict::Passed:
            return "pass";
        case Verdict::Failed:
            return "fail";
        case Verdict::NoDynamicAxes:
            return "no_dynamic_axes";
        case Verdict::CannotTell:
            return "cannot_tell";
        case Verdict::NotExercised:
            return "not_exercised";
    }
    return "fail";
}

nlohmann::json runJson(const engine::DynamicAxesRun& run) {
    nlohmann::json doc = {{"label", run.label}, {"bindings", run.bindings}, {"ok", run.ok}};
    if (run.ok) {
        doc["output_shapes"] = run.outputShapes;
    } else {
        doc["error"] = run.error;
    }
    return doc;
}

// The example the check starts from: the first test_data_set_* beside the model gives the
// symbols' values and the integer inputs' ranges; --dim and --int-range override it.
int runDynamicAxesCheck(const Arguments& a, const std::string& path) {
    auto loaded = loadSession(path, static_cast<int>(a.intValue("threads", 0)));
    engine::Session& session = *loaded.session;
    engine::DynamicAxesCheckOptions options;
    options.seed = static_cast<std::uint64_t>(a.intValue("seed", 0));
    options.tolerance.rtol = a.doubleValue("rtol", options.tolerance.rtol);
    options.tolerance.atol = a.doubleValue("atol", options.tolerance.atol);
    engine::ValueRanges ranges = loaded.indexRanges;
    std::string example;
    if (auto sets = discoverTestDataSets(path, *loaded.model.proto); sets && !sets->empty()) {
        if (auto feeds = engine::feedsFromTestDataSet(session, sets->front())) {
            options.base = engine::bindingsOfFeeds(session.inputs(), *feeds);
            for (const auto& [name, range] : engine::observedIntegerRanges(*feeds))
                ranges[name] = range;
            example = sets->front().directory.string();
        }
    }
    for (const auto& [key, value] : parseDims(a)) options.base[key] = value;
    for (const auto& [name, range] : parseIntegerRanges(a)) ranges[name] = range;
    options.makeFeeds = [&](const engine::SymbolBindings& bindings) {
        return engine::prepareFeeds(session.inputs(), {}, bindings, options.seed, ranges);
    };
    auto checked = engine::checkDynamicAxes(session, options);
    if (!checked) throw UsageError(path + ": " + checked.error().message);
    const auto& result = *checked;
    if (a.flag("json")) {
        nlohmann::json runs = nlohmann::json::array(), rejected = nlohmann::json::array(),
                       outputs = nlohmann::json::array();
        for (const auto& run : result.runs) runs.push_back(runJson(run));
        for (const auto& run : result.rejected) rejected.push_back(runJson(run));
        for (const auto& o : result.outputs) {
            nlohmann::json out = {{"name", o.name},
                                  {"declared", o.declared},
                                  {"shapes", o.shapes},
                                  {"shapes_follow", o.shapesFollow},
                                  {"first_item_compared", o.firstItemCompared},
                                  {"moved_with", o.movedWith}};
            if (!o.problem.empty()) out["problem"] = o.problem;
            if (o.firstItemCompared) {
                out["first_item_equal"] = o.firstItem.passed;
                out["first_item_max_abs_error"] = o.firstItem.maxAbsError;
            }
            outputs.push_back(out);
        }
        printJson({{"model", path},
                   {"verdict", verdictName(result.verdict)},
                   {"passed", result.passed()},
                   {"symbols", result.symbols},
                   {"unknown_dims", result.unknownDims},
                   {"unexercised", result.unexercised},
                   {"batch_symbol", result.batchSymbol},
                   {"example", example},
                   {"runs", runs},
                   {"rejected", rejected},
                   {"rejections", result.rejections},
                   {"outputs", outputs},
                   {"problems", result.problems},
                   {"summary", result.summary}});
    } else {
        std::cout << path << "\n"
                  << "dynamic axes: " << verdictName(result.verdict) << "\n  " << result.summary
                  << "\n";
        if (!example.empty()) std::cout << "example values from " << example << "\n";
        for (const auto& run : result.runs) {
            std::string bindings;
            for (const auto& [k, v] : run.bindings)
                bindings += (bindings.empty() ? "" : ", ") + k + "=" + std::to_string(v);
            std::cout << "  run " << run.label << " (" << bindings
                      << "): " << (run.ok ? "ran" : "failed: " + run.error) << "\n";
        }
        for (const auto& text : result.rejections) std::cout << "  " << text << "\n";
        for (const auto& o : result.outputs)
            std::cout << "  output " << o.name << " " << o.declared << ": "
                      << (o.shapesFollow ? "follows the symbols" : "does not follow: " + o.problem)
                      << (o.firstItemCompared
                              ? (o.firstItem.passed ? ", first item equal" : ", first item DIFFERS")
                              : "")
                      << "\n";
    }
    return engine::dynamicAxesExitCode(result);
}

int runCheck(const Arguments& arguments) {
    const std::string path = arguments.positionals()[0];
    if (arguments.flag("dynamic-axes")) return runDynamicAxesCheck(arguments, path);
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
                   {"checker", checkerJson(onnxChecker)},
                   {"compilation", verdictJson(compilation)},
                   {"engine_supports_all", unsupported.empty()},
                   {"unsupported_nodes", unsupportedNodesJson(unsupported)}});
    } else {
        std::cout << path << "\n";
        printVerdict("structure", structure);
        printVerdict("onnx checker", checker);
        for (const auto& line : checkerNoteLines(onnxChecker)) std::cout << "  " << line << "\n";
        if (!onnxChecker.newerOpsetWarning.empty())
            std::cout << "warning: " << onnxChecker.newerOpsetWarning
                      << "; run, compare and bench refuse it without --allow-newer-opset\n";
        printVerdict("engine compilation", compilation);
        printUnsupportedNodes(unsupported);
    }
    return ok ? kExitOk : kExitCheckFailed;
}

}  // namespace

Command addCheckCommand(CLI::App& cli) {
    CLI::App* command = addCommand(
        cli, "check",
        "the onnx checker, the model's structure and the engine's support of every node (exit 1 "
        "when one fails); with --dynamic-axes, whether the declared dynamic axes work (exit 0 "
        "yes, 1 no, 2 cannot tell)");
    addPositional(*command, "MODEL", "the ONNX model file");
    addJsonFlag(*command, "print one JSON document instead of the report");
    addFlag(*command, "dynamic-axes",
            "run the model at several values of its symbolic dims and check the outputs follow");
    addDimOption(*command);
    addIntRangeOption(*command);
    addSeedOption(*command);
    addThreadsOption(*command);
    addValueOption(*command, "rtol", "R",
                   "relative tolerance when --dynamic-axes compares the first item");
    addValueOption(*command, "atol", "A",
                   "absolute tolerance when --dynamic-axes compares the first item");
    return {command, runCheck};
}

}  // namespace onnxlens::cli
