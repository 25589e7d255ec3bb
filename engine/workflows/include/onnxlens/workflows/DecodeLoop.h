#pragma once
// Greedy token-by-token decoding of a decoder with an explicit KV cache (DecoderModel.h), shared
// by `onnxlens-cli generate` and the window: the prefill runs the prompt with past tensors of
// length 0; each step after it feeds the previous run's present outputs as the next past inputs
// (the same tensors: their buffers are shared, the cache is never copied by the loop), the one
// token chosen last (argmax of the last position's logits), the attention mask grown to past + 1
// ones and the position ids moved on. Runs on the caller's thread; the progress callback and the
// RunControl's cancel flag (checked between steps and, by the engine, between nodes) make it
// usable from a worker thread.
//
// Counting: --new-tokens M chooses M tokens; the prefill chooses the first, M - 1 steps the
// rest. Tokens per second is over those steps (the prefill is reported apart).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "onnxlens/engine/Session.h"
#include "onnxlens/model/Result.h"
#include "onnxlens/workflows/DecoderModel.h"
#include "onnxlens/workflows/InputPreparation.h"
#include "onnxlens/workflows/LatencyStatistics.h"

namespace onnxlens::engine {

// The most tokens one loop generates (a stated cap: a larger --new-tokens is an error).
constexpr int kMaxNewTokens = 1 << 20;

// One run of the loop, reported as it finishes.
struct DecodeStep {
    int index = 0;                   // 0: the prefill
    std::int64_t context = 0;        // tokens in the context this run attended to (past + its own)
    std::int64_t token = 0;          // the token it chose
    double ms = 0;                   // the run's time
    const Tensor* logits = nullptr;  // the run's logits [1, tokens, vocabulary], valid in the call
};

struct DecodeOptions {
    std::vector<std::int64_t> promptIds;  // at least one
    int newTokens = 32;                   // 1..kMaxNewTokens
    // The graph's integer index ranges (inferIndexRanges): input_ids' table gives the
    // vocabulary and position_ids' the longest context, both checked before the first run.
    ValueRanges indexRanges;
    // Called on the running thread after every run (the prefill included).
    std::function<void(const DecodeStep&)> onStep;
    RunControl* control = nullptr;  // its cancel flag stops the loop; the result says so
};

struct DecodeResult {
    std::vector<std::int64_t> promptIds, generatedIds;
    double prefillMs = 0;
    std::vector<double> stepMs;             // the steps after the prefill, in order
    std::vector<std::int64_t> stepContext;  // each step's context (past + 1)
    LatencyStatistics stepStatistics;       // of stepMs (runs 0 when there were none)
    double tokensPerSecond = 0;             // steps / their summed time (0 without steps)
    std::uint64_t kvCacheBytes = 0;         // the last run's present tensors together
    std::int64_t finalContext = 0;          // tokens the last run's presents hold
    bool cancelled = false;                 // stopped by the cancel flag (the rest is partial)
    // Runs (the prefill and the steps) that used fewer of the session's threads because other
    // programs kept the cores busy (SessionOptions::adaptThreadsToLoad), of `runs`, and the fewest
    // any used (0 when none was reduced).
    std::int64_t runs = 0, reducedRuns = 0;
    int fewestThreads = 0;
};

// Checks the request against the model (prompt ids inside the vocabulary, the context inside the
// position table, the cache inside the engine's tensor limit, new tokens 1..kMaxNewTokens, the
// model's other inputs) and runs the loop. Errors name what is wrong: the id and the table, the
// present whose shape disagrees with its past, the node that failed.
Result<DecodeResult> runDecodeLoop(Session& session, const DecoderModel& decoder,
                                   const DecodeOptions& options);

// The vocabulary a prompt may draw from: input_ids' table in `indexRanges`, else the logits' last
// dim; 0 when neither is known.
std::int64_t decoderVocabulary(const DecoderModel& decoder, const ValueRanges& indexRanges);

// The machine-readable report of `generate --json` and the window's export.
nlohmann::json decodeResultJson(const DecodeResult& result);

// Sets `stepStatistics` and `tokensPerSecond` from `stepMs`, as runDecodeLoop does (the window
// recomputes them from the times its engine process measured).
void computeDecodeStatistics(DecodeResult& result);

// The window's Markdown export: the settings, prefill, per-step statistics, tokens per second,
// KV-cache bytes, the per-step series by context and the token ids. `model` and `threads` as the
// report's heading says them; `decoder` (may be null) adds the cache's layout.
std::string decodeResultMarkdown(const DecodeResult& result, const std::string& model, int threads,
                                 const DecoderModel* decoder = nullptr);

}  // namespace onnxlens::engine
