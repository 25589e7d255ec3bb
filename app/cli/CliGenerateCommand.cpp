// `onnxlens-cli generate MODEL`: greedy decoding of a decoder with an explicit KV cache (the
// prefill, then one run per new token feeding every present into the next past), timed per step.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <string>

#include "CliSession.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/engine/ThreadUse.h"
#include "onnxlens/model/TensorFile.h"
#include "onnxlens/workflows/DecodeLoop.h"
#include "onnxlens/workflows/DecoderModel.h"

namespace onnxlens::cli {

namespace {

// The process's peak resident set (VmHWM), in bytes; 0 when /proc does not say.
std::uint64_t peakRssBytes() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
    return 0;
}

std::vector<std::int64_t> parseIdList(const std::string& text) {
    std::vector<std::int64_t> ids;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = std::min(text.find(',', start), text.size());
        const std::string item = text.substr(start, end - start);
        std::int64_t id = 0;
        auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), id);
        if (item.empty() || ec != std::errc() || ptr != item.data() + item.size())
            throw UsageError("option --prompt-ids " + text + ": '" + item +
                             "' is not an integer (expected ids like 1,2,3)");
        ids.push_back(id);
        if (ids.size() > static_cast<std::size_t>(engine::kMaxNewTokens))
            throw UsageError("option --prompt-ids: more than " +
                             std::to_string(engine::kMaxNewTokens) + " ids");
        start = end + 1;
    }
    return ids;
}

std::string humanBytes(double bytes) {
    const char* units[] = {"B", "KB", "MB", "GB", "TB"};
    int unit = 0;
    while (bytes >= 1024 && unit < 4) {
        bytes /= 1024;
        ++unit;
    }
    char text[32];
    std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", bytes, units[unit]);
    return text;
}

std::string idsText(const std::vector<std::int64_t>& ids) {
    std::string text;
    for (auto id : ids) text += (text.empty() ? "" : " ") + std::to_string(id);
    return text;
}

int runGenerate(const Arguments& a) {
    const std::string& model = a.positionals()[0];
    const bool json = a.flag("json");
    if (a.value("prompt-ids") && a.value("prompt-tokens"))
        throw UsageError("--prompt-ids and --prompt-tokens exclude each other");
    const std::int64_t newTokens = a.intValue("new-tokens", 32);
    if (newTokens < 1 || newTokens > engine::kMaxNewTokens)
        throw UsageError("option --new-tokens " + std::to_string(newTokens) + ": must be 1 to " +
                         std::to_string(engine::kMaxNewTokens));
    const std::int64_t promptTokens = a.intValue("prompt-tokens", 8);
    if (promptTokens < 1 || promptTokens > engine::kMaxNewTokens)
        throw UsageError("option --prompt-tokens " + std::to_string(promptTokens) +
                         ": must be 1 to " + std::to_string(engine::kMaxNewTokens));
    const std::int64_t threads = a.intValue("threads", 0);
    if (threads < 0 || threads > 4096) throw UsageError("option --threads: must be 0 to 4096");

    auto loaded = loadSession(model, static_cast<int>(threads), !a.flag("no-optimize"),
                              parseMaxMemory(a), a.flag("allow-newer-opset"));
    auto decoder = engine::recognizeDecoder(loaded.model.proto->graph());
    if (!decoder) throw UsageError(model + ": " + decoder.error().message);

    engine::DecodeOptions options;
    options.newTokens = static_cast<int>(newTokens);
    options.indexRanges = loaded.indexRanges;
    if (auto ids = a.value("prompt-ids")) {
        options.promptIds = parseIdList(*ids);
    } else {
        const std::int64_t vocabulary = engine::decoderVocabulary(*decoder, loaded.indexRanges);
        if (vocabulary <= 0)
            throw UsageError(model +
                             ": the vocabulary size is unknown (input_ids indexes no "
                             "table and the logits' last dim is symbolic): give "
                             "--prompt-ids");
        const auto t = engine::randomTensorInRange(
            decoder->idsType == engine::DataType::Int32 ? engine::DataType::Int32
                                                        : engine::DataType::Int64,
            {promptTokens}, static_cast<std::uint64_t>(a.intValue("seed", 0)), 0,
            static_cast<double>(vocabulary - 1));
        options.promptIds = t.toInt64Vector();
    }
    // --logits: the last position's logits of every run, one row each.
    std::vector<float> logitRows;
    std::int64_t vocabularyWidth = 0;
    const auto logitsFile = a.value("logits");
    if (logitsFile)
        options.onStep = [&](const engine::DecodeStep& step) {
            const engine::Tensor row = step.logits->castTo(engine::DataType::Float);
            vocabularyWidth = row.dim(2);
            const float* data = row.data<float>() + (row.dim(1) - 1) * vocabularyWidth;
            logitRows.insert(logitRows.end(), data, data + vocabularyWidth);
        };

    auto result = engine::runDecodeLoop(*loaded.session, *decoder, options);
    if (!result) throw UsageError(model + ": " + result.error().message);
    const auto& r = *result;
    if (logitsFile && vocabularyWidth > 0) {
        const auto rows = static_cast<std::int64_t>(logitRows.size()) / vocabularyWidth;
        const auto tensor = engine::Tensor::fromVector<float>({rows, vocabularyWidth}, logitRows);
        if (auto st = writeNpyFile(*logitsFile, engine::tensorToProto(tensor, "logits")); !st)
            throw UsageError(st.error().message);
    }
    const std::uint64_t peakRss = peakRssBytes();

    if (json) {
        nlohmann::json doc = engine::decodeResultJson(r);
        doc["model"] = model;
        doc["threads"] = loaded.session->threads();
        doc["peak_rss_bytes"] = peakRss;
        doc["kv_cache"] = engine::decoderModelJson(*decoder);
        printJson(doc);
        return kExitOk;
    }
    const auto& d = *decoder;
    std::printf("%s: decoder, %d layers, %s kv heads x %s, %s cache, %s per token of context\n",
                model.c_str(), d.layers, d.heads ? std::to_string(d.heads).c_str() : "?",
                d.headSize ? std::to_string(d.headSize).c_str() : "?",
                engine::dataTypeName(d.cacheType),
                d.bytesPerToken ? humanBytes(static_cast<double>(d.bytesPerToken)).c_str() : "?");
    std::printf("  %d threads; prompt %zu tokens, prefill %.3f ms\n", loaded.session->threads(),
                r.promptIds.size(), r.prefillMs);
    if (r.reducedRuns > 0)
        std::printf("  fewer threads ran: %s\n",
                    engine::reducedThreadsNote(r.reducedRuns, r.runs, r.fewestThreads).c_str());
    if (!r.stepMs.empty()) {
        const auto& st = r.stepStatistics;
        std::printf(
            "  %zu steps after the prefill: median %.3f ms, p90 %.3f ms, min %.3f ms, "
            "max %.3f ms; %.1f tokens/s\n",
            r.stepMs.size(), st.medianMs, st.p90Ms, st.minMs, st.maxMs, r.tokensPerSecond);
        // The series as the context grows, at most ten points.
        std::printf("  step ms by context:");
        const std::size_t n = r.stepMs.size();
        const std::size_t points = std::min<std::size_t>(n, 10);
        for (std::size_t p = 0; p < points; ++p) {
            const std::size_t i = points == 1 ? 0 : p * (n - 1) / (points - 1);
            std::printf(" %lld: %.3f", static_cast<long long>(r.stepContext[i]), r.stepMs[i]);
        }
        std::printf("\n");
    }
    std::printf("  KV cache at the end: %lld tokens, %s; peak RSS %s\n",
                static_cast<long long>(r.finalContext),
                humanBytes(static_cast<double>(r.kvCacheBytes)).c_str(),
                humanBytes(static_cast<double>(peakRss)).c_str());
    std::printf("  prompt ids: %s\n", idsText(r.promptIds).c_str());
    std::printf("  generated ids: %s\n", idsText(r.generatedIds).c_str());
    if (r.cancelled) std::printf("  cancelled after %zu tokens\n", r.generatedIds.size());
    return kExitOk;
}

}  // namespace

Command addGenerateCommand(CLI::App& cli) {
    CLI::App* command =
        addCommand(cli, "generate",
                   "greedy decoding of a decoder with a KV cache: prefill, per-step ms, tokens/s");
    setCommandFooter(
        *command,
        "The model must take token ids, past key/value inputs and return logits and present "
        "outputs (past_key_values.N.key/value -> present.N.key/value, past_k_N/past_v_N -> "
        "present_k_N/present_v_N, past.N -> present.N stacked, or another past input with a "
        "symbolic length), with attention_mask and position_ids when it has them (info shows "
        "what it recognizes as kv_cache). The prefill runs the prompt with past tensors of "
        "length 0 and chooses the first new token (argmax of the last position's logits); each "
        "of the NEW_TOKENS - 1 steps after it feeds every present output as the next past input "
        "(the same buffers, no copy), the token chosen last, the mask grown to past + 1 and the "
        "next position. Tokens per second is over those steps. Exit 2 when the model is not such "
        "a decoder (the message says what is missing), a prompt id is outside the vocabulary, "
        "the context exceeds the position table or a present disagrees with its past.");
    addPositional(*command, "MODEL", "the ONNX decoder model file");
    addValueOption(*command, "prompt-tokens", "N",
                   "a prompt of N seeded random ids from the vocabulary (default 8)");
    addValueOption(*command, "prompt-ids", "ID,ID,...", "the prompt's token ids");
    addValueOption(*command, "new-tokens", "M",
                   "tokens to generate, the prefill's included (default 32, at most 1048576)");
    addSessionOptions(*command);
    addSeedOption(*command);
    addValueOption(*command, "logits", "FILE",
                   "write the last position's logits of every run as float32 .npy [runs, vocab]");
    addJsonFlag(*command, "print one JSON document instead of the report");
    return {command, runGenerate};
}

}  // namespace onnxlens::cli
