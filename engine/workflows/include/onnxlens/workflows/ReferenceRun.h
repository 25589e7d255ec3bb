#pragma once
// One run checked against reference outputs: the feeds of a test data set (or any feeds), the
// session's outputs, and per named output the comparison figures and a histogram of absolute
// errors. What the GUI's Compare panel shows, without the window.
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "onnxlens/engine/Session.h"
#include "onnxlens/model/TestDataSet.h"
#include "onnxlens/workflows/ReferenceComparison.h"

namespace onnxlens::engine {

struct OutputComparison {
    std::string name;
    std::filesystem::path referenceFile;
    ComparisonResult result;
    Histogram absoluteErrors;  // empty for non-numeric outputs or when dtype/shape differ
    std::string warning;       // uninformativeReferenceWarning: a pass here proves little
};

struct ReferenceRunResult {
    std::vector<OutputComparison> outputs;  // in the order the references were given
    std::vector<Value> actual;              // every session output, in session order
    double runMs = 0;
    bool passed() const;
};

// (output name, reference file) pairs.
using ReferenceFiles = std::vector<std::pair<std::string, std::filesystem::path>>;

// Reads every input file of a data set and checks it against the session's inputs; errors name
// the file. A data set with fewer input files than the model has inputs is an error.
Result<std::map<std::string, Value>> feedsFromTestDataSet(const Session& session,
                                                          const TestDataSet& dataSet);
// The same for a session's inputs known without the session (the window's engine process).
Result<std::map<std::string, Value>> feedsFromTestDataSet(
    const std::vector<Session::IoInfo>& inputs, const TestDataSet& dataSet);
ReferenceFiles referencesOfTestDataSet(const TestDataSet& dataSet);

// Runs with `feeds` and compares each reference. A reference naming no output of the model, or
// an unreadable reference file, is an error naming the file; a mismatch is a failed comparison.
Result<ReferenceRunResult> runAndCompare(Session& session,
                                         const std::map<std::string, Value>& feeds,
                                         const ReferenceFiles& references,
                                         const Tolerance& tolerance, RunControl* control = nullptr,
                                         int histogramBins = 40);

// Compares outputs that were already computed (session order) against references.
Result<std::vector<OutputComparison>> compareWithReferences(const Session& session,
                                                            const std::vector<Value>& actual,
                                                            const ReferenceFiles& references,
                                                            const Tolerance& tolerance,
                                                            int histogramBins = 40);
// The same for a session's outputs known without the session (the window's engine process).
Result<std::vector<OutputComparison>> compareWithReferences(
    const std::vector<Session::IoInfo>& outputs, const std::vector<Value>& actual,
    const ReferenceFiles& references, const Tolerance& tolerance, int histogramBins = 40);

}  // namespace onnxlens::engine
