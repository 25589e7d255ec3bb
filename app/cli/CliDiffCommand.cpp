// onnxlens-cli diff A B: what differs between two models, and with --numeric where their runs on
// the same inputs part ways, value by value.
#include <iostream>

#include "CliSession.h"
#include "onnxlens/workflows/ModelDiff.h"
#include "onnxlens/workflows/NumericDiff.h"

namespace onnxlens::cli {

namespace {

LoadedModel loadOrThrow(const std::string& path) {
    auto model = loadModel(path);
    if (!model) throw UsageError(model.error().message);
    return std::move(*model);
}

int runDiff(const Arguments& a) {
    const std::string pathA = a.positionals()[0], pathB = a.positionals()[1];
    const bool json = a.flag("json");
    LoadedModel modelA = loadOrThrow(pathA);

    if (!a.flag("numeric")) {
        LoadedModel modelB = loadOrThrow(pathB);
        engine::ModelDiffOptions options;
        options.directoryA = modelA.directory;
        options.directoryB = modelB.directory;
        engine::ModelDiff diff = engine::diffModels(*modelA.proto, *modelB.proto, options);
        diff.nameA = pathA;
        diff.nameB = pathB;
        if (json)
            printJson(engine::modelDiffJson(diff));
        else
            std::cout << engine::modelDiffText(diff);
        return diff.identical() ? kExitOk : kExitCheckFailed;
    }

    engine::NumericDiffOptions options;
    options.tolerance.rtol = a.doubleValue("rtol", options.tolerance.rtol);
    options.tolerance.atol = a.doubleValue("atol", options.tolerance.atol);
    if (options.tolerance.rtol < 0 || options.tolerance.atol < 0)
        throw UsageError("--rtol and --atol must not be negative");
    options.threads = static_cast<int>(a.intValue("threads", 0));
    options.optimize = a.flag("optimize");
    options.seed = static_cast<std::uint64_t>(a.intValue("seed", 0));
    options.dims = parseDims(a);
    options.useTestDataSets = !a.flag("random");
    if (auto dir = a.value("data-set")) options.dataSet = *dir;
    for (const auto& spec : a.values("input")) {
        auto [name, file] = splitAssignment(spec, "--input");
        options.inputFiles[name] = file;
    }
    const std::int64_t budget = a.intValue("budget-mb", 256);
    if (budget < 1) throw UsageError("--budget-mb must be at least 1");
    options.pendingBytesLimit = static_cast<std::uint64_t>(budget) << 20;

    // B is read once A is compiled (numericDiff): the two models' weights are never held twice.
    auto diff = engine::numericDiff(std::move(modelA), std::filesystem::path(pathB), options);
    if (!diff) throw UsageError(diff.error().message);
    diff->structure.nameA = pathA;
    diff->structure.nameB = pathB;
    const bool agree = diff->firstDivergence < 0 && diff->outputsWithinTolerance;
    if (json) {
        nlohmann::json doc = engine::numericDiffJson(*diff);
        doc["structure"] = engine::modelDiffJson(diff->structure);
        doc["agree"] = agree;
        printJson(doc);
    } else {
        std::cout << engine::modelDiffText(diff->structure, 10) << "\n"
                  << engine::numericDiffText(*diff);
    }
    return agree ? kExitOk : kExitCheckFailed;
}

}  // namespace

Command addDiffCommand(CLI::App& cli) {
    CLI::App* command = addCommand(
        cli, "diff",
        "what differs between two models: nodes matched by name, outputs and place; changed, "
        "removed and added nodes, initializers, opsets, metadata (exit 0 identical, 1 different); "
        "with --numeric both run on the same inputs and every shared value is compared (exit 0 "
        "when all agree)");
    addPositional(*command, "A", "the first model (the reference of --numeric)");
    addPositional(*command, "B", "the second model");
    addFlag(*command, "numeric",
            "run both models at once and compare every value they share as it is produced: "
            "first divergence, error growth, top 10 nodes by error added");
    addRepeatedOption(*command, "input", "NAME=FILE",
                      "input NAME of A from a tensor file (.pb or .npy); random data for the "
                      "others");
    addValueOption(*command, "data-set", "DIR",
                   "a test_data_set_* folder for the inputs (default: A's first one, else random)");
    addFlag(*command, "random", "seeded random inputs even when A has a test data set");
    addSeedOption(*command);
    addDimOption(*command);
    addValueOption(*command, "rtol", "R", "relative tolerance (default 1e-3)");
    addValueOption(*command, "atol", "A", "absolute tolerance (default 1e-5)");
    addThreadsOption(*command);
    addFlag(*command, "optimize",
            "run the engine's optimizer on both (values it fuses away are not compared)");
    addValueOption(*command, "budget-mb", "N",
                   "megabytes of values one run may hold for the other before it waits (default "
                   "256)");
    addJsonFlag(*command, "print one JSON document instead of the report");
    return {command, runDiff};
}

}  // namespace onnxlens::cli
