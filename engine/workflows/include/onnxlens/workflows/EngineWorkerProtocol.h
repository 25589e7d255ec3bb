#pragma once
// What the window and its engine process (onnxlens-engine-worker, app/engineworker) say to each
// other: one JSON object per line on the worker's stdin (requests, and answers to the worker's
// requests for feeds) and on its stdout (progress, requests for feeds, and one reply per request).
// Tensors never travel in the JSON: feeds and outputs are .pb files (writeValuePbFile and
// readValueFile) in a folder of the window's (/dev/shm when it exists). This header holds the JSON
// forms of the results, so both sides agree on them; only figures the engine measured cross the
// process boundary, and what follows from them (latency statistics, per-node and per-op-type
// totals) is computed again on the window's side with the same functions.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/engine/Session.h"
#include "onnxlens/model/Result.h"
#include "onnxlens/workflows/BenchmarkRunner.h"
#include "onnxlens/workflows/DecodeLoop.h"
#include "onnxlens/workflows/DynamicAxesCheck.h"
#include "onnxlens/workflows/ShapeSweep.h"

namespace onnxlens::engine {

// Every function below that reads JSON fails with an error naming the field rather than throwing.

nlohmann::json ioInfosToJson(const std::vector<Session::IoInfo>& infos);
Result<std::vector<Session::IoInfo>> ioInfosFromJson(const nlohmann::json& json);

// The benchmark as the engine measured it: settings, samples, per-run node profiles, first run,
// weights and dims. The statistics and the node and op-type summaries are not sent.
nlohmann::json benchmarkMeasurementsToJson(const BenchmarkResult& result);
// The same result: the statistics and summaries recomputed from the samples and profiles.
Result<BenchmarkResult> benchmarkFromMeasurementsJson(const nlohmann::json& json);

// The options that are data (base bindings, default dim, tolerance, seed): not the callbacks.
nlohmann::json dynamicAxesOptionsToJson(const DynamicAxesCheckOptions& options);
Result<DynamicAxesCheckOptions> dynamicAxesOptionsFromJson(const nlohmann::json& json);
nlohmann::json dynamicAxesResultToJson(const DynamicAxesCheckResult& result);
Result<DynamicAxesCheckResult> dynamicAxesResultFromJson(const nlohmann::json& json);

// One point of a shape sweep, as the sweep's table shows it.
nlohmann::json sweepPointToJson(const SweepPoint& point);
Result<SweepPoint> sweepPointFromJson(const nlohmann::json& json);

// A decode request's integer index ranges (the window infers them on the model it loaded, as
// `onnxlens-cli generate` does): {input: [low, high, reason]}.
nlohmann::json valueRangesToJson(const ValueRanges& ranges);
Result<ValueRanges> valueRangesFromJson(const nlohmann::json& json);

// The decoding loop as the engine measured it: ids, prefill and step times, contexts, cache bytes,
// cancelled. The step statistics and tokens per second are not sent (computeDecodeStatistics).
nlohmann::json decodeMeasurementsToJson(const DecodeResult& result);
Result<DecodeResult> decodeFromMeasurementsJson(const nlohmann::json& json);
// One step's progress line: {index, context, token, ms}.
nlohmann::json decodeStepToJson(const DecodeStep& step);
Result<DecodeStep> decodeStepFromJson(const nlohmann::json& json);  // logits: null

// The passes and node counts (not the shape inference, which stays with the session).
nlohmann::json optimizationReportToJson(const OptimizationReport& report);
Result<OptimizationReport> optimizationReportFromJson(const nlohmann::json& json);

}  // namespace onnxlens::engine
