#include "onnxlens/workflows/Conformance.h"

#include <algorithm>
#include <chrono>

#include "onnxlens/engine/Session.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/TestDataSet.h"

namespace onnxlens::engine {

namespace fs = std::filesystem;

std::vector<fs::path> findConformanceCases(const fs::path& root) {
    std::error_code ec;
    if (fs::exists(root / "model.onnx", ec)) return {root};
    std::vector<fs::path> cases;
    for (const auto& entry : fs::directory_iterator(root, ec))
        if (entry.is_directory(ec) && fs::exists(entry.path() / "model.onnx", ec))
            cases.push_back(entry.path());
    std::sort(cases.begin(), cases.end());
    return cases;
}

const std::vector<std::pair<std::string, std::string>>& randomOutputCases() {
    static const std::vector<std::pair<std::string, std::string>> cases = {
        {"test_bernoulli", "Bernoulli draws random samples"},
        {"test_bernoulli_double", "Bernoulli draws random samples"},
        {"test_bernoulli_double_expanded", "Bernoulli draws random samples (RandomUniformLike)"},
        {"test_bernoulli_expanded", "Bernoulli draws random samples (RandomUniformLike)"},
        {"test_bernoulli_seed",
         "seeded with numpy's generator, which the engine does not replicate"},
        {"test_bernoulli_seed_expanded",
         "seeded with numpy's generator, which the engine does not replicate"},
        {"test_training_dropout", "training-mode Dropout draws a random mask"},
        {"test_training_dropout_default", "training-mode Dropout draws a random mask"},
        {"test_training_dropout_default_mask", "training-mode Dropout draws a random mask"},
        {"test_training_dropout_mask", "training-mode Dropout draws a random mask"},
    };
    return cases;
}

namespace {

std::string onOutput(const std::string& dataSet, const std::string& output,
                     const std::string& what) {
    return dataSet + " output '" + output + "': " + what;
}

}  // namespace

ConformanceCaseResult runConformanceCase(const fs::path& caseDirectory,
                                         const ConformanceOptions& options) {
    ConformanceCaseResult result;
    result.directory = caseDirectory;
    result.name = caseDirectory.filename().string();
    result.suite = caseDirectory.parent_path().filename().string();
    const auto start = std::chrono::steady_clock::now();
    auto finish = [&](ConformanceCaseResult::Outcome outcome, std::string reason) {
        result.outcome = outcome;
        result.reason = std::move(reason);
        result.seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return result;
    };
    for (const auto& [name, why] : randomOutputCases())
        if (name == result.name) return finish(ConformanceCaseResult::Outcome::Skipped, why);

    auto model = loadModel(caseDirectory / "model.onnx");
    if (!model) return finish(ConformanceCaseResult::Outcome::Failed, model.error().message);
    auto dataSets = discoverTestDataSets(caseDirectory / "model.onnx", *model->proto);
    if (!dataSets) return finish(ConformanceCaseResult::Outcome::Failed, dataSets.error().message);
    if (dataSets->empty())
        return finish(ConformanceCaseResult::Outcome::Failed, "no test_data_set_* folder");

    SessionOptions sessionOptions;
    sessionOptions.threads = options.threads;
    // The figures must come out the same when rerun at this thread count.
    sessionOptions.adaptThreadsToLoad = false;
    auto session = Session::create(*model, sessionOptions);
    if (!session) return finish(ConformanceCaseResult::Outcome::Failed, session.error().message);

    // Types of graph inputs/outputs tell sequence and optional data files apart.
    std::map<std::string, const onnx::TypeProto*> types;
    for (const auto& v : model->proto->graph().input()) types[v.name()] = &v.type();
    for (const auto& v : model->proto->graph().output()) types[v.name()] = &v.type();
    auto typeOf = [&](const std::string& name) -> const onnx::TypeProto* {
        auto it = types.find(name);
        return it == types.end() ? nullptr : it->second;
    };

    for (const auto& dataSet : *dataSets) {
        const std::string setName = dataSet.directory.filename().string();
        std::map<std::string, Value> feeds;
        for (std::size_t i = 0; i < dataSet.inputFiles.size(); ++i) {
            auto value = readValueFile(dataSet.inputFiles[i], typeOf(dataSet.inputNames[i]));
            if (!value)
                return finish(ConformanceCaseResult::Outcome::Failed, value.error().message);
            feeds[dataSet.inputNames[i]] = std::move(*value);
        }
        auto outputs = (*session)->run(feeds);
        if (!outputs)
            return finish(ConformanceCaseResult::Outcome::Failed, outputs.error().message);
        const auto& outputInfo = (*session)->outputs();
        for (std::size_t i = 0; i < dataSet.outputFiles.size(); ++i) {
            const std::string& name = dataSet.outputNames[i];
            auto expected = readValueFile(dataSet.outputFiles[i], typeOf(name));
            if (!expected)
                return finish(ConformanceCaseResult::Outcome::Failed, expected.error().message);
            std::size_t index = outputInfo.size();
            for (std::size_t k = 0; k < outputInfo.size(); ++k)
                if (outputInfo[k].name == name) index = k;
            if (index >= outputs->size())
                return finish(ConformanceCaseResult::Outcome::Failed,
                              onOutput(setName, name, "the model has no such output"));
            auto comparison = compareValues((*outputs)[index], *expected, options.tolerance);
            if (!comparison.passed) {
                std::string detail = comparison.problem;
                if (comparison.maxAbsError > 0)
                    detail += " (max abs error " + std::to_string(comparison.maxAbsError) + ")";
                return finish(ConformanceCaseResult::Outcome::Failed,
                              onOutput(setName, name, detail));
            }
        }
    }
    return finish(ConformanceCaseResult::Outcome::Passed, {});
}

}  // namespace onnxlens::engine
