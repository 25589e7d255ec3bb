// onnxlens-cli optimize MODEL OUT: saves the graph the engine runs, so a person can see what the
// optimizer folded and removed.
#include "CliCommon.h"
#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/ModelWriter.h"

namespace onnxlens::cli {

namespace {

int runOptimize(const Arguments& a) {
    if (a.flag("list-passes")) {
        for (const auto& pass : engine::optimizerPasses())
            std::cout << pass.name << (pass.cleanup ? "  (cleanup, repeated)" : "  (fusion, once)")
                      << (pass.needsShapes ? "  reads shapes" : "") << "\n";
        return kExitOk;
    }
    a.requirePositionals(2,
                         "onnxlens-cli optimize MODEL OUT.onnx [--passes NAME,NAME...] [--json] | "
                         "optimize --list-passes");
    engine::OptimizerOptions options;
    if (auto list = a.value("passes")) {
        std::string name;
        for (char c : *list + ",") {
            if (c != ',') {
                name += c;
            } else if (!name.empty()) {
                options.passes.insert(name);
                name.clear();
            }
        }
        if (options.passes.empty()) throw UsageError("option --passes: no pass named");
        if (auto known = engine::checkOptimizerPassNames(options.passes); !known)
            throw UsageError(known.error().message);
    }
    const std::string input = a.positionals()[0], output = a.positionals()[1];
    auto model = loadModel(input);
    if (!model) throw UsageError(model.error().message);
    onnx::ModelProto optimized = std::move(*model->proto);
    const auto report = engine::optimizeModel(optimized, model->directory, options);
    // External weights stay mapped (never read into memory): the writer copies them into
    // OUT.onnx.data beside the output when it is over 2 GB, and inlines them otherwise.
    ModelWriteOptions writeOptions;
    writeOptions.sourceDirectory = model->directory;
    if (auto written = writeModelFile(optimized, output, writeOptions); !written)
        throw UsageError(written.error().message);
    if (a.flag("json")) {
        nlohmann::json passes = nlohmann::json::array();
        for (const auto& p : report.passes)
            passes.push_back({{"pass", p.pass}, {"rewrites", p.rewrites}});
        printJson({{"input", input},
                   {"output", output},
                   {"nodes_before", report.nodesBefore},
                   {"nodes_after", report.nodesAfter},
                   {"passes", passes}});
    } else {
        std::cout << input << ": " << report.nodesBefore << " nodes -> " << output << ": "
                  << report.nodesAfter << " nodes\n";
        for (const auto& p : report.passes)
            std::cout << "  " << p.pass << ": " << p.rewrites << "\n";
    }
    return kExitOk;
}

}  // namespace

Command addOptimizeCommand(CLI::App& cli) {
    CLI::App* command =
        addCommand(cli, "optimize",
                   "save the graph the engine runs after its optimizer passes (fusions, folding)");
    addPositional(*command, "MODEL", "the ONNX model file", false);
    addPositional(*command, "OUT", "the optimized model to write (.onnx)", false);
    addValueOption(*command, "passes", "NAME,NAME...",
                   "run only these passes (--list-passes names them; default: all)");
    addFlag(*command, "list-passes", "print the optimizer's passes and exit");
    addJsonFlag(*command, "print what was done as one JSON document");
    return {command, runOptimize};
}

}  // namespace onnxlens::cli
