#pragma once
// The dynamic-axes check: does a model exported with symbolic dims really accept other values?
// Runs batch 1, then batch 2 whose first item is the batch-1 input, then (when there are other
// symbols) batch 2 with a second value for each other symbol; checks that every output's shape
// follows its declared dims and that the batch-2 run's first item equals the batch-1 run within
// tolerance. A model without symbolic input dims is reported as such: the most common export
// mistake (torch.onnx.export without dynamic_axes).
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "onnxlens/workflows/InputPreparation.h"
#include "onnxlens/workflows/ReferenceComparison.h"
#include "onnxlens/engine/Session.h"

namespace onnxlens::engine {

using FeedMaker = std::function<Result<std::map<std::string, Value>>(const SymbolBindings&)>;

struct DynamicAxesCheckOptions {
    // First-run values of the symbols other than the batch symbol; unbound ones use
    // `defaultDim`. The second value of a symbol is its first value + 1.
    SymbolBindings base;
    std::int64_t defaultDim = 4;
    Tolerance tolerance;
    std::uint64_t seed = 0;
    // Feeds for given bindings. Default: seeded random data (prepareFeeds).
    FeedMaker makeFeeds;
    // Called before each run (1-based step of `steps`), on the calling thread.
    std::function<void(int step, int steps, const std::string& what)> progress;
};

struct DynamicAxesRun {
    std::string label;  // "batch 1", "batch 2", "batch 2, other dims changed"
    SymbolBindings bindings;
    bool ok = false;
    std::string error;                // why the run failed
    std::vector<Shape> outputShapes;  // session output order (empty shape for non-tensors)
};

struct DynamicOutputCheck {
    std::string name;
    std::string declared;       // "[batch x 10]"
    std::vector<Shape> shapes;  // one per successful run, in run order
    bool shapesFollow = true;
    std::string problem;  // why the shapes do not follow the symbols
    bool firstItemCompared = false;
    ComparisonResult firstItem;  // batch-2 item 0 against the batch-1 output
};

struct DynamicAxesCheckResult {
    enum class Verdict { NoDynamicAxes, Passed, Failed };
    Verdict verdict = Verdict::Failed;
    std::vector<std::string> symbols;  // symbolic input dims, in first-seen order
    std::string batchSymbol;           // the symbol of dim 0, empty when dim 0 is fixed everywhere
    std::vector<DynamicAxesRun> runs;
    std::vector<DynamicOutputCheck> outputs;
    std::vector<std::string> problems;  // every reason for Failed, one sentence each
    std::string summary;                // plain words for the person who exported the model
    bool passed() const { return verdict == Verdict::Passed; }
};

// The symbols (dim_param) of the session's inputs in first-seen order.
std::vector<std::string> inputSymbols(const std::vector<Session::IoInfo>& inputs);
// "[batch x 3 x 224 x 224]" with "?" for unknown dims.
std::string describeDeclaredShape(const onnx::TypeProto& type);
// The first item along axis 0 (shape [1, ...]); throws EngineError for rank-0 or empty tensors.
Tensor firstItem(const Tensor& tensor);

// Errors only when cancelled (control->cancel) or when the feeds cannot be made; a run that
// fails is part of a Failed verdict.
Result<DynamicAxesCheckResult> checkDynamicAxes(Session& session,
                                                const DynamicAxesCheckOptions& options,
                                                RunControl* control = nullptr);

}  // namespace onnxlens::engine
