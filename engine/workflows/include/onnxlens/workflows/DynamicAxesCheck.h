#pragma once
// The dynamic-axes check: does a model exported with symbolic dims really accept other values?
// Runs batch 1, then batch 2 whose first item is the batch-1 input, then (when there are other
// symbols) batch 2 with a second value for each other symbol; checks that every output's shape
// follows its declared dims and that the batch-2 run's first item equals the batch-1 run within
// tolerance. Values are picked so that the model can accept them: the first values of the other
// symbols are the example (test data set, Run dock) or tried from candidates a convolution's
// strides can divide; second values are tried in turn (x2, +1, + the strides' product, x3), and a
// value the model rejects is reported as such, not as a failure of the axes. The verdict is
// Failed only when no accepted value changes the outputs consistently. A model without symbolic
// input dims is reported as such: the most common export mistake (torch.onnx.export without
// dynamic_axes); one whose only free dims are unnamed (`?`) cannot be judged.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "onnxlens/engine/Session.h"
#include "onnxlens/workflows/InputPreparation.h"
#include "onnxlens/workflows/ReferenceComparison.h"

namespace onnxlens::engine {

using FeedMaker = std::function<Result<std::map<std::string, Value>>(const SymbolBindings&)>;

struct DynamicAxesCheckOptions {
    // First-run values of the symbols other than the batch symbol (an example's: a test data
    // set's or the Run dock's); unbound ones are tried from `defaultDim` up. "INPUT:AXIS" entries
    // set unnamed dims (kept fixed through the check; unbound ones are 1).
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
    bool ok = false;                  // the model ran
    bool rejected = false;            // it did not, with a value the check then replaced by another
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
    // The symbols whose change between two successful runs changed this output's shape.
    std::vector<std::string> movedWith;
};

struct DynamicAxesCheckResult {
    // CannotTell: the model ran with no value tried, or its only free dims are unnamed.
    // NotExercised: nothing failed, but some symbol changed between runs without changing any
    // output's shape (`unexercised`), so the runs cannot show that its axis works (a model that
    // pools an axis away, or one whose outputs were baked at the exported size).
    enum class Verdict { NoDynamicAxes, Passed, Failed, CannotTell, NotExercised };
    Verdict verdict = Verdict::Failed;
    std::vector<std::string> symbols;      // symbolic input dims, in first-seen order
    std::vector<std::string> unknownDims;  // unnamed input dims, as "input:axis"
    std::string batchSymbol;           // the symbol of dim 0, empty when dim 0 is fixed everywhere
    std::vector<DynamicAxesRun> runs;  // the runs the verdict rests on
    std::vector<DynamicAxesRun> rejected;  // values the model refused, replaced by others
    // "width 5 rejected: Reshape /Reshape_3: ..." per entry of `rejected`
    std::vector<std::string> rejections;
    std::vector<DynamicOutputCheck> outputs;
    std::vector<std::string> unexercised;  // symbols changed that moved no output's shape
    std::vector<std::string> problems;     // every reason for Failed, one sentence each
    std::string summary;                   // plain words for the person who exported the model
    bool passed() const { return verdict == Verdict::Passed; }
};

// The symbols (dim_param) of the session's inputs in first-seen order.
std::vector<std::string> inputSymbols(const std::vector<Session::IoInfo>& inputs);
// "[batch x 3 x 224 x 224]" with "?" for unknown dims.
std::string describeDeclaredShape(const onnx::TypeProto& type);
// The first item along axis 0 (shape [1, ...]); throws EngineError for rank-0 or empty tensors.
Tensor firstItem(const Tensor& tensor);

// The process exit code of `onnxlens-cli check --dynamic-axes`: 0 Passed, 1 Failed or
// NoDynamicAxes, 2 CannotTell or NotExercised (not proven either way).
int dynamicAxesExitCode(const DynamicAxesCheckResult& result);

// The first values tried for a non-batch symbol whose example value is `example` (0: none):
// the example, then `defaultDim`, then multiples of `granularity` (16, 32, 64, 128 rounded up).
std::vector<std::int64_t> firstValueCandidates(std::int64_t example, std::int64_t defaultDim,
                                               std::int64_t granularity);
// Second values tried after `first`, in order: x2, +1, + granularity, x3, the next multiple of
// granularity above first + 1. Unique, positive, none equal to `first`.
std::vector<std::int64_t> secondValueCandidates(std::int64_t first, std::int64_t granularity);
// The product of the largest stride of every Conv and pooling node (at most 64): widths that are
// multiples of it survive the downsampling without rounding.
std::int64_t strideGranularity(const onnx::GraphProto& graph);

// Errors only when cancelled (control->cancel) or when the feeds cannot be made; a run that
// fails is part of a Failed verdict.
Result<DynamicAxesCheckResult> checkDynamicAxes(Session& session,
                                                const DynamicAxesCheckOptions& options,
                                                RunControl* control = nullptr);

}  // namespace onnxlens::engine
