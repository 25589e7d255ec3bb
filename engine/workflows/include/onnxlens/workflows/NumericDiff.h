#pragma once
// Where two runs part ways (`onnxlens-cli diff A B --numeric`, the window's Colour by Error):
// both models run at once on two threads on the same inputs, and every value the two graphs share
// (same name, or the outputs of nodes ModelDiff matched with the same op type) is compared as soon
// as both runs have produced it and then let go: max abs and rel error, cosine similarity, SQNR,
// taking A as the reference. A run that gets ahead of the other by more than a byte budget of
// values waiting for their partner waits for it, so memory stays bounded by the two sessions plus
// that budget. Then: the first value in A's order outside the tolerance and the node that made
// it, the error along the path from there to a graph output, and the nodes that added the most
// error (the relative error of their output minus the largest of their inputs').
#include <onnx/onnx_pb.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/Result.h"
#include "onnxlens/workflows/InputPreparation.h"
#include "onnxlens/workflows/ModelDiff.h"
#include "onnxlens/workflows/QuantizationReport.h"
#include "onnxlens/workflows/ReferenceComparison.h"

namespace onnxlens::engine {

struct NumericDiffOptions {
    Tolerance tolerance;  // an element agrees when |b - a| <= atol + rtol * |a|
    // Each model's intra-op threads (the two run at once); <= 0: half the cores each.
    int threads = 0;
    // The engine's graph optimizer on both sessions. Off by default: every value of the graphs as
    // written exists in the runs (fusions would make some disappear or change meaning).
    bool optimize = false;
    // Inputs: `inputFiles` (by A's input names) and seeded random data for the rest, unless
    // `dataSet` names a test_data_set folder, or (`useTestDataSets`) A has one beside it.
    std::map<std::string, std::filesystem::path> inputFiles;
    std::filesystem::path dataSet;
    bool useTestDataSets = true;
    std::uint64_t seed = 0;
    SymbolBindings dims;
    // Bytes of values one run may hold waiting for the other's before it waits.
    std::uint64_t pendingBytesLimit = 256ull << 20;
    // The initializers B shares with A (same name, type, dims and bytes) held once: A's large
    // initializers are written to a scratch file in the temporary directory that both sessions
    // map, instead of each session holding its own copy. Models with external data of their own
    // are compiled as they are.
    bool shareWeights = true;
};

struct TensorDiff {
    std::string valueA, valueB;
    int nodeA = -1, nodeB = -1;                 // producers, indexes into each graph's nodes
    std::string nodeNameA, nodeNameB, opTypeA;  // node names as profileNameOf gives them
    bool graphOutput = false;                   // a graph output of A
    bool compared = false;                      // false: `problem` says why
    std::string problem;                        // "shape 1x8 vs 1x9", "not a tensor"
    AgreementFigures figures;                   // max/mean abs error, cosine, SQNR
    double maxRelError = 0;
    std::int64_t outside = 0;  // elements outside the tolerance
    bool withinTolerance = true;
    double referenceMaxAbs = 0;  // largest |a|
    double relativeError = 0;    // RMS of the error over RMS of A's values (1 when A is all 0)
    double errorAdded = 0;       // relativeError minus the largest relativeError of the inputs
};

struct NumericDiff {
    ModelDiff structure;
    std::string inputSet;  // "test_data_set_0", "random (seed 0)", "files"
    Tolerance tolerance;
    std::vector<TensorDiff> tensors;  // in A's node order
    int firstDivergence = -1;         // index into tensors; -1: every value within tolerance
    std::vector<int> growthPath;      // indexes into tensors, first divergence to a graph output
    // Up to 10 indexes into tensors, most error added first. Values far smaller than the node's
    // inputs (largest |a| under 1% of theirs: a LayerNorm's mean, a difference of near-equal
    // values) are left out: their relative error measures cancellation, not added error.
    std::vector<int> topErrorAdded;
    int notProduced = 0;  // shared values one run never produced (both waited in vain)
    bool outputsWithinTolerance = true;
    std::uint64_t peakPendingBytes = 0;   // the most bytes held waiting for a partner at once
    std::uint64_t sharedWeightBytes = 0;  // B's initializer bytes held once with A's
    double runSeconds = 0;                // both runs with the comparisons
    int threadsEach = 0;
};

struct NumericDiffProgress {
    std::string step;  // "compiling A", "running"
    int done = 0, total = 0;
};
using NumericDiffProgressCallback = std::function<void(const NumericDiffProgress&)>;

// Takes A over (its weights move into its session; a proto shared with others is copied), compiles
// it, then reads B (`loadB`), compares the structure against A's skeleton (initializer values are
// not compared: the runs compare what they do) and compiles B, so that the two models' weights
// are never held as protobuf and as tensors at once. Errors name the model: one that fails to
// load, compile or run, inputs that do not fit, cancellation.
Result<NumericDiff> numericDiff(LoadedModel&& a, const std::function<Result<LoadedModel>()>& loadB,
                                const NumericDiffOptions& options = {},
                                const NumericDiffProgressCallback& progress = {},
                                const std::atomic<bool>* cancel = nullptr);
Result<NumericDiff> numericDiff(LoadedModel&& a, const std::filesystem::path& b,
                                const NumericDiffOptions& options = {},
                                const NumericDiffProgressCallback& progress = {},
                                const std::atomic<bool>* cancel = nullptr);
Result<NumericDiff> numericDiff(LoadedModel&& a, LoadedModel&& b,
                                const NumericDiffOptions& options = {},
                                const NumericDiffProgressCallback& progress = {},
                                const std::atomic<bool>* cancel = nullptr);

// Compares one pair of values (A the reference) into `diff`'s figures.
void compareValuePair(const Value& a, const Value& b, const Tolerance& tolerance, TensorDiff& diff);

// profileNameOf(node of A) -> the lowest SQNR of its compared outputs (dB): the graph's error
// colouring.
std::map<std::string, double> sqnrByNode(const NumericDiff& diff);

nlohmann::json numericDiffJson(const NumericDiff& diff);
std::string numericDiffText(const NumericDiff& diff);

}  // namespace onnxlens::engine
