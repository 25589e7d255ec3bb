#include "onnxlens/workflows/DecodeLoop.h"

#include <chrono>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>

#include "onnxlens/engine/TensorProto.h"

namespace onnxlens::engine {

namespace {

std::string shapeText(const std::vector<std::int64_t>& dims) { return shapeToString(dims); }

// The index of the largest of `count` elements from `offset` (the first on ties).
std::int64_t argmaxRow(const Tensor& t, std::int64_t offset, std::int64_t count) {
    const auto scan = [&](const auto* data) {
        std::int64_t best = 0;
        double bestValue = static_cast<double>(data[offset]);
        for (std::int64_t i = 1; i < count; ++i) {
            const double v = static_cast<double>(data[offset + i]);
            if (v > bestValue) {
                bestValue = v;
                best = i;
            }
        }
        return best;
    };
    switch (t.dtype()) {
        case DataType::Float:
            return scan(t.data<float>());
        case DataType::Double:
            return scan(t.data<double>());
        case DataType::Float16:
            return scan(t.data<float16>());
        case DataType::BFloat16:
            return scan(t.data<bfloat16>());
        default:
            throw EngineError(std::string("the logits are ") + dataTypeName(t.dtype()) +
                              ", not a floating-point type");
    }
}

// [1, n] of `type` with values first, first + 1, ... (or all `first` when `step` is 0).
Tensor rowTensor(DataType type, std::int64_t n, std::int64_t first, std::int64_t step) {
    Tensor t(type, {1, n});
    for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t v = first + step * i;
        switch (type) {
            case DataType::Int64:
                t.data<std::int64_t>()[i] = v;
                break;
            case DataType::Int32:
                t.data<std::int32_t>()[i] = static_cast<std::int32_t>(v);
                break;
            case DataType::Bool:
                t.data<bool>()[i] = v != 0;
                break;
            case DataType::Float:
                t.data<float>()[i] = static_cast<float>(v);
                break;
            default:
                throw EngineError(std::string("cannot fill a ") + dataTypeName(type) + " input");
        }
    }
    return t;
}

DataType inputType(const Session& session, const std::string& name) {
    for (const auto& in : session.inputs())
        if (in.name == name) return dataTypeOfTypeProto(in.type);
    return DataType::Undefined;
}

std::string withCommas(const std::vector<std::string>& names) {
    std::string text;
    for (const auto& n : names) text += (text.empty() ? "'" : ", '") + n + "'";
    return text;
}

}  // namespace

std::int64_t decoderVocabulary(const DecoderModel& decoder, const ValueRanges& indexRanges) {
    auto it = indexRanges.find(decoder.inputIds);
    if (it != indexRanges.end() && it->second.high >= 0)
        return static_cast<std::int64_t>(it->second.high) + 1;
    return decoder.vocabulary;
}

Result<DecodeResult> runDecodeLoop(Session& session, const DecoderModel& decoder,
                                   const DecodeOptions& options) {
    const auto& prompt = options.promptIds;
    if (prompt.empty()) return makeError("", "the prompt has no tokens");
    if (prompt.size() > static_cast<std::size_t>(kMaxNewTokens))
        return makeError("", "a prompt of " + std::to_string(prompt.size()) +
                                 " tokens is more than the loop's cap of " +
                                 std::to_string(kMaxNewTokens));
    if (options.newTokens < 1 || options.newTokens > kMaxNewTokens)
        return makeError("", "new tokens must be 1 to " + std::to_string(kMaxNewTokens) + ", got " +
                                 std::to_string(options.newTokens));
    if (!decoder.otherInputs.empty())
        return makeError("", "the decoder's input(s) " + withCommas(decoder.otherInputs) +
                                 " are not token ids, mask, positions or cache: the loop "
                                 "cannot fill them");

    // The vocabulary: every prompt id must index a row of the embedding table.
    auto idsRange = options.indexRanges.find(decoder.inputIds);
    const std::int64_t vocabulary = decoderVocabulary(decoder, options.indexRanges);
    for (std::int64_t id : prompt) {
        if (id < 0) return makeError("", "prompt id " + std::to_string(id) + " is negative");
        if (vocabulary > 0 && id >= vocabulary)
            return makeError(
                "", "prompt id " + std::to_string(id) + " is beyond the vocabulary: " +
                        (idsRange != options.indexRanges.end()
                             ? decoder.inputIds + " " + idsRange->second.reason
                             : "the logits have " + std::to_string(vocabulary) + " entries"));
    }
    // The context the last run attends to: the prompt and every chosen token but the last.
    const std::int64_t promptLength = static_cast<std::int64_t>(prompt.size());
    const std::int64_t finalContext = promptLength + options.newTokens - 1;
    if (!decoder.positionIds.empty())
        if (auto it = options.indexRanges.find(decoder.positionIds);
            it != options.indexRanges.end() && finalContext > it->second.high + 1)
            return makeError("", "a context of " + std::to_string(finalContext) + " tokens (" +
                                     std::to_string(promptLength) + " of the prompt and " +
                                     std::to_string(options.newTokens - 1) +
                                     " generated) is longer than the position table: " +
                                     decoder.positionIds + " " + it->second.reason);
    // The cache at the end, against the engine's tensor limit.
    double cacheBytes = 0;
    for (const auto& e : decoder.cache) {
        for (std::size_t a = 0; a < e.dims.size(); ++a)
            if (static_cast<int>(a) != e.batchAxis && static_cast<int>(a) != e.pastAxis &&
                e.dims[a] < 0)
                return makeError("", "past input '" + e.past +
                                         "' has a dim that is not a number "
                                         "on axis " +
                                         std::to_string(a) +
                                         (e.symbols[a].empty() ? "" : " ('" + e.symbols[a] + "')") +
                                         ": the loop cannot make its empty past");
        cacheBytes += static_cast<double>(e.elementsPerToken) *
                      static_cast<double>(dataTypeSize(e.dtype)) *
                      static_cast<double>(finalContext);
    }
    if (cacheBytes > static_cast<double>(maxTensorBytes()))
        return makeError("", "the KV cache of " + std::to_string(finalContext) +
                                 " tokens would take " +
                                 std::to_string(static_cast<std::uint64_t>(cacheBytes)) +
                                 " bytes, more than the engine's limit of " +
                                 std::to_string(maxTensorBytes()) + " bytes");

    const DataType maskType =
        decoder.attentionMask.empty() ? DataType::Int64 : inputType(session, decoder.attentionMask);
    const DataType positionType =
        decoder.positionIds.empty() ? DataType::Int64 : inputType(session, decoder.positionIds);
    std::map<std::string, std::size_t> outputIndex;
    for (std::size_t i = 0; i < session.outputs().size(); ++i)
        outputIndex[session.outputs()[i].name] = i;
    const auto indexOf = [&](const std::string& name) -> std::optional<std::size_t> {
        auto it = outputIndex.find(name);
        if (it == outputIndex.end()) return std::nullopt;
        return it->second;
    };
    const auto logitsIndex = indexOf(decoder.logits);
    if (!logitsIndex) return makeError("", "the session has no output '" + decoder.logits + "'");
    std::vector<std::size_t> presentIndex;
    for (const auto& e : decoder.cache) {
        auto i = indexOf(e.present);
        if (!i) return makeError("", "the session has no output '" + e.present + "'");
        presentIndex.push_back(*i);
    }

    DecodeResult result;
    result.promptIds = prompt;
    std::map<std::string, Value> feeds;
    try {
        for (const auto& e : decoder.cache) {
            Shape shape(e.dims.begin(), e.dims.end());
            if (e.batchAxis >= 0) shape[static_cast<std::size_t>(e.batchAxis)] = 1;
            shape[static_cast<std::size_t>(e.pastAxis)] = 0;
            feeds[e.past] = Tensor(e.dtype, shape);
        }
        if (!decoder.useCacheBranch.empty())
            feeds[decoder.useCacheBranch] = Tensor::fromVector<bool>({1}, {true});
    } catch (const EngineError& e) {
        return makeError("", e.what());
    }

    std::vector<std::int64_t> current = prompt;
    std::int64_t past = 0;
    const ThreadUse before = session.threadUse();
    for (int index = 0; index < options.newTokens; ++index) {
        if (options.control && options.control->cancel.load()) {
            result.cancelled = true;
            break;
        }
        const auto n = static_cast<std::int64_t>(current.size());
        const std::int64_t context = past + n;
        try {
            Tensor ids(decoder.idsType, {1, n});
            for (std::int64_t i = 0; i < n; ++i) {
                if (decoder.idsType == DataType::Int32)
                    ids.data<std::int32_t>()[i] = static_cast<std::int32_t>(current[i]);
                else
                    ids.data<std::int64_t>()[i] = current[i];
            }
            feeds[decoder.inputIds] = std::move(ids);
            if (!decoder.attentionMask.empty())
                feeds[decoder.attentionMask] = rowTensor(maskType, context, 1, 0);
            if (!decoder.positionIds.empty())
                feeds[decoder.positionIds] = rowTensor(positionType, n, past, 1);
        } catch (const EngineError& e) {
            return makeError("", e.what());
        }
        const auto start = std::chrono::steady_clock::now();
        auto outputs = session.run(feeds, options.control);
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
        const std::string where =
            index == 0
                ? "the prefill (context " + std::to_string(context) + ")"
                : "step " + std::to_string(index) + " (context " + std::to_string(context) + ")";
        if (!outputs) {
            if (options.control && options.control->cancel.load()) {
                result.cancelled = true;
                break;
            }
            return makeError(where, outputs.error().message);
        }
        // The logits of the last position choose the token.
        const Value& logitsValue = (*outputs)[*logitsIndex];
        if (!logitsValue.isTensor())
            return makeError(where, "the logits output '" + decoder.logits + "' is not a tensor");
        const Tensor& logits = logitsValue.tensor();
        if (logits.rank() != 3 || logits.dim(0) != 1 || logits.dim(1) != n || logits.dim(2) < 1)
            return makeError(where, "the logits '" + decoder.logits + "' have shape " +
                                        shapeText(logits.shape()) + ", expected [1, " +
                                        std::to_string(n) + ", vocabulary]");
        std::int64_t token = 0;
        try {
            token = argmaxRow(logits, (n - 1) * logits.dim(2), logits.dim(2));
        } catch (const EngineError& e) {
            return makeError(where, e.what());
        }
        // Every present must be its past grown by this run's tokens; it becomes the next past.
        std::uint64_t bytes = 0;
        for (std::size_t k = 0; k < decoder.cache.size(); ++k) {
            const KvCacheEntry& e = decoder.cache[k];
            const Value& value = (*outputs)[presentIndex[k]];
            const Tensor& pastTensor = feeds[e.past].tensor();
            Shape expected = pastTensor.shape();
            expected[static_cast<std::size_t>(e.pastAxis)] = context;
            if (!value.isTensor() || value.tensor().dtype() != pastTensor.dtype() ||
                value.tensor().shape() != expected)
                return makeError(
                    where,
                    "present '" + e.present + "' is " +
                        (value.isTensor() ? std::string(dataTypeName(value.tensor().dtype())) +
                                                " " + shapeText(value.tensor().shape())
                                          : std::string("not a tensor")) +
                        ", expected " + dataTypeName(pastTensor.dtype()) + " " +
                        shapeText(expected) + " (its past '" + e.past + "' " +
                        shapeText(pastTensor.shape()) + " and the " + std::to_string(n) +
                        " token(s) of this run)");
            bytes += value.tensor().byteSize();
        }
        for (std::size_t k = 0; k < decoder.cache.size(); ++k)
            feeds[decoder.cache[k].past] = std::move((*outputs)[presentIndex[k]]);
        result.kvCacheBytes = bytes;
        result.finalContext = context;
        result.generatedIds.push_back(token);
        if (index == 0) {
            result.prefillMs = ms;
        } else {
            result.stepMs.push_back(ms);
            result.stepContext.push_back(context);
        }
        if (options.onStep) options.onStep({index, context, token, ms, &logits});
        past = context;
        current.assign(1, token);
    }
    const ThreadUse after = session.threadUse();
    result.runs = after.runs - before.runs;
    result.reducedRuns = after.reducedRuns - before.reducedRuns;
    result.fewestThreads = result.reducedRuns > 0 ? after.fewest : 0;
    computeDecodeStatistics(result);
    return result;
}

void computeDecodeStatistics(DecodeResult& result) {
    result.stepStatistics = {};
    result.tokensPerSecond = 0;
    if (result.stepMs.empty()) return;
    result.stepStatistics = computeLatencyStatistics(result.stepMs);
    double total = 0;
    for (double ms : result.stepMs) total += ms;
    if (total > 0)
        result.tokensPerSecond = 1000.0 * static_cast<double>(result.stepMs.size()) / total;
}

namespace {

std::string fixed(double value, int digits) {
    std::ostringstream text;
    text << std::fixed << std::setprecision(digits) << value;
    return text.str();
}

std::string idList(const std::vector<std::int64_t>& ids) {
    std::string text;
    for (auto id : ids) text += (text.empty() ? "" : " ") + std::to_string(id);
    return text.empty() ? "(none)" : text;
}

}  // namespace

std::string decodeResultMarkdown(const DecodeResult& r, const std::string& model, int threads,
                                 const DecoderModel* decoder) {
    std::ostringstream md;
    md << "# Decode: " << (model.empty() ? std::string("model") : model) << "\n\n";
    md << "Greedy decoding: a prompt of " << r.promptIds.size() << " tokens, "
       << r.generatedIds.size() << " new tokens, " << threads << " intra-op thread"
       << (threads == 1 ? "" : "s") << (r.cancelled ? " (cancelled: partial)" : "") << ".\n\n";
    if (r.reducedRuns > 0)
        md << "Fewer threads ran: " << reducedThreadsNote(r.reducedRuns, r.runs, r.fewestThreads)
           << ".\n\n";
    if (decoder)
        md << "KV cache: " << decoder->layers << " layers, "
           << (decoder->heads ? std::to_string(decoder->heads) : std::string("?")) << " heads x "
           << (decoder->headSize ? std::to_string(decoder->headSize) : std::string("?")) << ", "
           << dataTypeName(decoder->cacheType) << ", " << decoder->bytesPerToken
           << " bytes per token of context (" << decoder->naming << ").\n\n";
    md << "| figure | value |\n|---|---:|\n";
    md << "| prefill | " << fixed(r.prefillMs, 3) << " ms |\n";
    md << "| steps after the prefill | " << r.stepMs.size() << " |\n";
    if (!r.stepMs.empty()) {
        const auto& st = r.stepStatistics;
        md << "| step median | " << fixed(st.medianMs, 3) << " ms |\n";
        md << "| step P90 | " << fixed(st.p90Ms, 3) << " ms |\n";
        md << "| step min | " << fixed(st.minMs, 3) << " ms |\n";
        md << "| step max | " << fixed(st.maxMs, 3) << " ms |\n";
        md << "| tokens per second | " << fixed(r.tokensPerSecond, 1) << " |\n";
    }
    md << "| KV cache at the end | " << r.kvCacheBytes << " bytes |\n";
    md << "| context at the end | " << r.finalContext << " tokens |\n";
    md << "\nPrompt ids: " << idList(r.promptIds) << "\n\nGenerated ids: " << idList(r.generatedIds)
       << "\n";
    if (!r.stepMs.empty()) {
        md << "\n## Step latency by context\n\n| step | context | ms |\n|---:|---:|---:|\n";
        for (std::size_t i = 0; i < r.stepMs.size(); ++i)
            md << "| " << i + 1 << " | "
               << (i < r.stepContext.size() ? r.stepContext[i] : std::int64_t{0}) << " | "
               << fixed(r.stepMs[i], 3) << " |\n";
    }
    return md.str();
}

nlohmann::json decodeResultJson(const DecodeResult& r) {
    const auto& st = r.stepStatistics;
    nlohmann::json steps = {{"count", r.stepMs.size()}};
    if (!r.stepMs.empty()) {
        steps["median_ms"] = st.medianMs;
        steps["p90_ms"] = st.p90Ms;
        steps["min_ms"] = st.minMs;
        steps["mean_ms"] = st.meanMs;
        steps["max_ms"] = st.maxMs;
    }
    return {{"prompt_ids", r.promptIds},
            {"prompt_tokens", r.promptIds.size()},
            {"generated_ids", r.generatedIds},
            {"new_tokens", r.generatedIds.size()},
            {"prefill_ms", r.prefillMs},
            {"steps", steps},
            {"step_ms", r.stepMs},
            {"step_context", r.stepContext},
            {"tokens_per_second",
             r.tokensPerSecond > 0 ? nlohmann::json(r.tokensPerSecond) : nlohmann::json(nullptr)},
            {"kv_cache_bytes", r.kvCacheBytes},
            {"threads_reduced_runs", r.reducedRuns},
            {"fewest_threads", r.fewestThreads},
            {"context", r.finalContext},
            {"cancelled", r.cancelled}};
}

}  // namespace onnxlens::engine
