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

}  // namespace

int runDiffCommand(const std::vector<std::string>& args) {
    Arguments a(args, {"input", "data-set", "seed", "dim", "rtol", "atol", "threads", "budget-mb"},
                {"json", "numeric", "optimize", "random"});
    a.requirePositionals(
        2,
        "onnxlens-cli diff A.onnx B.onnx [--json] [--numeric [--input NAME=FILE]... "
        "[--data-set DIR | --random] [--seed N] [--dim SYMBOL=N]... [--rtol R] [--atol A] "
        "[--threads N] [--optimize] [--budget-mb N]]");
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

}  // namespace onnxlens::cli
