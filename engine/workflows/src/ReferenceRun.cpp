#include "onnxlens/workflows/ReferenceRun.h"

#include <chrono>

#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/workflows/InputPreparation.h"

namespace onnxlens::engine {

bool ReferenceRunResult::passed() const {
    for (const auto& o : outputs)
        if (!o.result.passed) return false;
    return true;
}

Result<std::map<std::string, Value>> feedsFromTestDataSet(const Session& session,
                                                          const TestDataSet& dataSet) {
    return feedsFromTestDataSet(session.inputs(), dataSet);
}

Result<std::map<std::string, Value>> feedsFromTestDataSet(
    const std::vector<Session::IoInfo>& inputs, const TestDataSet& dataSet) {
    std::map<std::string, std::filesystem::path> files;
    for (std::size_t i = 0; i < dataSet.inputFiles.size() && i < dataSet.inputNames.size(); ++i)
        files[dataSet.inputNames[i]] = dataSet.inputFiles[i];
    if (files.size() < inputs.size())
        return makeError(dataSet.directory.string(), "has " + std::to_string(files.size()) +
                                                         " input files, the model has " +
                                                         std::to_string(inputs.size()) + " inputs");
    return prepareFeeds(inputs, files, {}, 0);
}

ReferenceFiles referencesOfTestDataSet(const TestDataSet& dataSet) {
    ReferenceFiles references;
    for (std::size_t i = 0; i < dataSet.outputFiles.size() && i < dataSet.outputNames.size(); ++i)
        references.emplace_back(dataSet.outputNames[i], dataSet.outputFiles[i]);
    return references;
}

Result<std::vector<OutputComparison>> compareWithReferences(const Session& session,
                                                            const std::vector<Value>& actual,
                                                            const ReferenceFiles& references,
                                                            const Tolerance& tolerance,
                                                            int histogramBins) {
    return compareWithReferences(session.outputs(), actual, references, tolerance, histogramBins);
}

Result<std::vector<OutputComparison>> compareWithReferences(
    const std::vector<Session::IoInfo>& outputs, const std::vector<Value>& actual,
    const ReferenceFiles& references, const Tolerance& tolerance, int histogramBins) {
    std::vector<OutputComparison> comparisons;
    for (const auto& [name, file] : references) {
        std::size_t k = 0;
        while (k < outputs.size() && outputs[k].name != name) ++k;
        if (k >= outputs.size() || k >= actual.size())
            return makeError(file.string(), "the model has no output named '" + name + "'");
        auto expected = readValueFile(file, &outputs[k].type);
        if (!expected) return expected.error();
        OutputComparison c;
        c.name = name;
        c.referenceFile = file;
        c.result = compareValues(actual[k], *expected, tolerance);
        c.warning = uninformativeReferenceWarning(c.result, tolerance);
        if (histogramBins > 0 && actual[k].isTensor() && expected->isTensor())
            c.absoluteErrors =
                absoluteErrorHistogram(actual[k].tensor(), expected->tensor(), histogramBins);
        comparisons.push_back(std::move(c));
    }
    return comparisons;
}

Result<ReferenceRunResult> runAndCompare(Session& session,
                                         const std::map<std::string, Value>& feeds,
                                         const ReferenceFiles& references,
                                         const Tolerance& tolerance, RunControl* control,
                                         int histogramBins) {
    const auto start = std::chrono::steady_clock::now();
    auto outputs = session.run(feeds, control);
    if (!outputs) return outputs.error();
    ReferenceRunResult result;
    result.runMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    result.actual = std::move(*outputs);
    auto comparisons =
        compareWithReferences(session, result.actual, references, tolerance, histogramBins);
    if (!comparisons) return comparisons.error();
    result.outputs = std::move(*comparisons);
    return result;
}

}  // namespace onnxlens::engine
