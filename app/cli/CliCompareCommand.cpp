// onnxlens-cli compare MODEL: runs each test data set and compares every output with its reference.
#include <cstdio>

#include "CliSession.h"
#include "onnxlens/model/TestDataSet.h"
#include "onnxlens/workflows/ReferenceRun.h"

namespace onnxlens::cli {

namespace {

std::string indexToString(const std::vector<std::int64_t>& index) {
    std::string s = "[";
    for (std::size_t i = 0; i < index.size(); ++i) s += (i ? "," : "") + std::to_string(index[i]);
    return s + "]";
}

int runCompare(const Arguments& a) {
    const std::string modelPath = a.positionals()[0];
    engine::Tolerance tolerance;
    tolerance.rtol = a.doubleValue("rtol", tolerance.rtol);
    tolerance.atol = a.doubleValue("atol", tolerance.atol);
    if (tolerance.rtol < 0 || tolerance.atol < 0)
        throw UsageError("--rtol and --atol must not be negative");

    auto loaded =
        loadSession(modelPath, static_cast<int>(a.intValue("threads", 0)), !a.flag("no-optimize"),
                    parseMaxMemory(a), a.flag("allow-newer-opset"), /*adaptThreads=*/false);
    const onnx::ModelProto& proto = *loaded.model.proto;

    std::vector<TestDataSet> dataSets;
    if (a.values("data-set").empty()) {
        auto found = discoverTestDataSets(modelPath, proto);
        if (!found) throw UsageError(found.error().message);
        if (found->empty())
            throw UsageError(modelPath + ": no test_data_set_* folder beside the model");
        dataSets = std::move(*found);
    } else {
        for (const auto& dir : a.values("data-set")) {
            auto set = readTestDataSetFolder(dir, proto);
            if (!set) throw UsageError(set.error().message);
            dataSets.push_back(std::move(*set));
        }
    }

    bool allPassed = true;
    int warnings = 0;  // outputs whose pass proves little (near-zero or constant references)
    nlohmann::json doc = {{"model", modelPath},
                          {"rtol", tolerance.rtol},
                          {"atol", tolerance.atol},
                          {"data_sets", nlohmann::json::array()}};
    const bool json = a.flag("json");
    for (const auto& set : dataSets) {
        // The GUI's Compare panel goes through the same two calls: feeds read and checked against
        // the model's inputs, then every reference output compared (no histogram here).
        auto feeds = engine::feedsFromTestDataSet(*loaded.session, set);
        if (!feeds) throw UsageError(feeds.error().message);
        auto outputs = loaded.session->run(*feeds);
        if (!outputs) throw UsageError(modelPath + ": " + outputs.error().message);
        auto comparisons = engine::compareWithReferences(
            *loaded.session, *outputs, engine::referencesOfTestDataSet(set), tolerance,
            /*histogramBins=*/0);
        if (!comparisons) throw UsageError(comparisons.error().message);

        nlohmann::json setDoc = {{"directory", set.directory.string()},
                                 {"outputs", nlohmann::json::array()}};
        if (!json) std::cout << set.directory.filename().string() << ":\n";
        bool setPassed = true;
        for (const auto& comparison : *comparisons) {
            const std::string& name = comparison.name;
            const engine::ComparisonResult& r = comparison.result;
            setPassed = setPassed && r.passed;
            nlohmann::json o = {{"name", name},
                                {"passed", r.passed},
                                {"max_abs_error", r.maxAbsError},
                                {"max_rel_error", r.maxRelError},
                                {"cosine_similarity", r.cosineSimilarity},
                                {"agreement", engine::describeAgreement(r, tolerance)},
                                {"mean_abs_error", r.meanAbsError},
                                {"fraction_outside", r.fractionOutside},
                                {"outside_count", r.outsideCount},
                                {"element_count", r.elementCount},
                                {"worst_index", r.worstIndex}};
            if (!r.passed) o["problem"] = r.problem;
            if (!comparison.warning.empty()) {
                o["warning"] = comparison.warning;
                ++warnings;
            }
            if (!r.worstIndex.empty()) {
                o["worst_actual"] = r.worstActual;
                o["worst_expected"] = r.worstExpected;
            }
            setDoc["outputs"].push_back(o);
            if (!json) {
                char line[512];
                std::snprintf(line, sizeof line,
                              "  %-4s %s: max abs %.3g, max rel %.3g, cosine %.6f, mean abs %.3g, "
                              "outside %.4g%% (%lld of %lld)",
                              r.passed ? (comparison.warning.empty() ? "PASS" : "WARN") : "FAIL",
                              name.c_str(), r.maxAbsError, r.maxRelError, r.cosineSimilarity,
                              r.meanAbsError, 100.0 * r.fractionOutside,
                              static_cast<long long>(r.outsideCount),
                              static_cast<long long>(r.elementCount));
                std::cout << line;
                if (!r.worstIndex.empty())
                    std::cout << ", worst at " << indexToString(r.worstIndex) << " ("
                              << r.worstActual << " vs " << r.worstExpected << ")";
                if (!r.passed && r.elementCount == 0) std::cout << ": " << r.problem;
                std::cout << "\n";
                if (!comparison.warning.empty())
                    std::cout << "       warning: " << comparison.warning << "\n";
            }
        }
        setDoc["passed"] = setPassed;
        doc["data_sets"].push_back(setDoc);
        allPassed = allPassed && setPassed;
    }
    doc["passed"] = allPassed;
    doc["warnings"] = warnings;
    if (json)
        printJson(doc);
    else
        std::cout << (allPassed ? "all outputs match" : "MISMATCH") << " (|a - e| <= atol "
                  << tolerance.atol << " + rtol " << tolerance.rtol << " * |e|)"
                  << (allPassed && warnings > 0
                          ? "; " + std::to_string(warnings) +
                                " output(s) near zero or constant: the match proves little"
                          : std::string())
                  << "\n";
    return allPassed ? kExitOk : kExitCheckFailed;
}

}  // namespace

Command addCompareCommand(CLI::App& cli) {
    CLI::App* command = addCommand(
        cli, "compare",
        "run the model on its test data sets and compare every output with the reference (exit 1 "
        "when one differs)");
    addPositional(*command, "MODEL", "the ONNX model file");
    addRepeatedOption(*command, "data-set", "DIR",
                      "a test_data_set_* folder of input_N.pb and output_N.pb (default: every one "
                      "beside the model)");
    addValueOption(*command, "rtol", "R", "relative tolerance (default 1e-3)");
    addValueOption(*command, "atol", "A", "absolute tolerance (default 1e-5)");
    addSessionOptions(*command);
    addJsonFlag(*command, "print one JSON document instead of the report");
    return {command, runCompare};
}

}  // namespace onnxlens::cli
