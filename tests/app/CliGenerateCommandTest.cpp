// Decoders with a KV cache: recognition (DecoderModel), the greedy loop (DecodeLoop) and
// `onnxlens-cli generate` / `info --json`'s kv_cache, on toy decoders whose tokens are worked by
// hand (DecoderTestModels.h), with the hostile requests of issue 30.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "CliModelFiles.h"
#include "CliRunner.h"
#include "DecoderTestModels.h"
#include "onnxlens/engine/Session.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/TensorFile.h"
#include "onnxlens/workflows/DecodeLoop.h"
#include "onnxlens/workflows/DecoderModel.h"
#include "onnxlens/workflows/InputPreparation.h"

namespace onnxlens::testing {
namespace {

using engine::DecoderModel;
using engine::KvCacheEntry;

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// A compiled toy decoder, its recognition and its index ranges.
struct ToySession {
    std::unique_ptr<engine::Session> session;
    DecoderModel decoder;
    engine::ValueRanges ranges;
};

ToySession compileToy(const onnx::ModelProto& model) {
    std::string bytes;
    model.SerializeToString(&bytes);
    auto loaded = loadModelFromBytes(bytes, "toy.onnx", ".");
    EXPECT_TRUE(loaded) << loaded.error().message;
    ToySession t;
    auto decoder = engine::recognizeDecoder(loaded->proto->graph());
    EXPECT_TRUE(decoder) << decoder.error().message;
    if (decoder) t.decoder = *decoder;
    t.ranges = engine::inferIndexRanges(loaded->proto->graph());
    engine::SessionOptions options;
    options.threads = 1;
    auto session = engine::Session::create(*loaded, options);
    EXPECT_TRUE(session) << session.error().message;
    if (session) t.session = std::move(*session);
    return t;
}

Result<engine::DecodeResult> decode(ToySession& t, std::vector<std::int64_t> prompt,
                                    int newTokens) {
    engine::DecodeOptions options;
    options.promptIds = std::move(prompt);
    options.newTokens = newTokens;
    options.indexRanges = t.ranges;
    return engine::runDecodeLoop(*t.session, t.decoder, options);
}

// --- Recognition ------------------------------------------------------------------------------

TEST(DecoderModel, RecognizesOptimumNames) {
    auto d = engine::recognizeDecoder(toyDecoder({ToyLayout::Optimum}).graph());
    ASSERT_TRUE(d) << d.error().message;
    EXPECT_EQ(d->naming, "past_key_values.N.key/value");
    EXPECT_EQ(d->layers, 2);
    ASSERT_EQ(d->cache.size(), 4u);
    EXPECT_EQ(d->cache[0].past, "past_key_values.0.key");
    EXPECT_EQ(d->cache[0].present, "present.0.key");
    EXPECT_EQ(d->cache[1].present, "present.0.value");
    EXPECT_EQ(d->cache[1].role, KvCacheEntry::Role::Value);
    EXPECT_EQ(d->cache[3].past, "past_key_values.1.value");
    EXPECT_EQ(d->cache[0].batchAxis, 0);
    EXPECT_EQ(d->cache[0].pastAxis, 2);
    EXPECT_FALSE(d->stacked);
    EXPECT_EQ(d->heads, 1);
    EXPECT_EQ(d->headSize, 1);
    EXPECT_EQ(d->inputIds, "input_ids");
    EXPECT_EQ(d->attentionMask, "attention_mask");
    EXPECT_EQ(d->positionIds, "position_ids");
    EXPECT_EQ(d->logits, "logits");
    EXPECT_EQ(d->vocabulary, 7);
    EXPECT_EQ(d->batchSymbol, "batch_size");
    EXPECT_EQ(d->pastSymbol, "past_sequence_length");
    EXPECT_EQ(d->sequenceSymbol, "sequence_length");
    EXPECT_EQ(d->bytesPerToken, 4u * 4u);  // 4 tensors x 1 head x 1 x float32
    EXPECT_TRUE(d->otherInputs.empty());
}

TEST(DecoderModel, RecognizesSplitKvNames) {
    auto d = engine::recognizeDecoder(toyDecoder({ToyLayout::SplitKv, 3}).graph());
    ASSERT_TRUE(d) << d.error().message;
    EXPECT_EQ(d->naming, "past_k_N/past_v_N");
    EXPECT_EQ(d->layers, 3);
    ASSERT_EQ(d->cache.size(), 6u);
    EXPECT_EQ(d->cache[4].past, "past_k_2");
    EXPECT_EQ(d->cache[4].present, "present_k_2");
    EXPECT_EQ(d->cache[5].present, "present_v_2");
}

TEST(DecoderModel, RecognizesStackedPastN) {
    auto d = engine::recognizeDecoder(toyDecoder({ToyLayout::Stacked}).graph());
    ASSERT_TRUE(d) << d.error().message;
    EXPECT_TRUE(d->stacked);
    EXPECT_EQ(d->naming, "past.N");
    ASSERT_EQ(d->cache.size(), 2u);
    EXPECT_EQ(d->cache[1].past, "past.1");
    EXPECT_EQ(d->cache[1].present, "present.1");
    EXPECT_EQ(d->cache[0].role, KvCacheEntry::Role::KeyValue);
    EXPECT_EQ(d->cache[0].batchAxis, 1);
    EXPECT_EQ(d->cache[0].pastAxis, 3);
    EXPECT_EQ(d->heads, 1);
    EXPECT_EQ(d->headSize, 1);
    EXPECT_EQ(d->bytesPerToken, 2u * 2u * 4u);  // 2 layers x (key + value) x float32
}

// Other names: paired by the present named like the past, or by layout; the past axis is the
// symbolic dim that is not the batch.
TEST(DecoderModel, RecognizesOtherNamesByShape) {
    onnx::GraphProto g;
    const auto F = onnx::TensorProto::FLOAT;
    setType(g.add_input(), "input_ids", onnx::TensorProto::INT64, {"batch", "seq"});
    setType(g.add_input(), "cache_key_in_0", F, {"batch", 4, "past", 8});
    setType(g.add_input(), "past_state_3", F, {"batch", "past", 4, 8});
    setType(g.add_output(), "logits", F, {"batch", "seq", 50});
    setType(g.add_output(), "cache_key_out_0", F, {"batch", 4, "total", 8});
    setType(g.add_output(), "present_state_3", F, {"batch", "total", 4, 8});
    auto d = engine::recognizeDecoder(g);
    ASSERT_TRUE(d) << d.error().message;
    EXPECT_EQ(d->naming, "other");
    ASSERT_EQ(d->cache.size(), 2u);
    EXPECT_EQ(d->cache[0].past, "cache_key_in_0");
    EXPECT_EQ(d->cache[0].present, "cache_key_out_0");  // by layout
    EXPECT_EQ(d->cache[0].pastAxis, 2);
    EXPECT_EQ(d->cache[1].past, "past_state_3");
    EXPECT_EQ(d->cache[1].present, "present_state_3");  // by name
    EXPECT_EQ(d->cache[1].pastAxis, 1);
    EXPECT_EQ(d->cache[1].layer, 3);
    EXPECT_EQ(d->bytesPerToken, 2u * 32u * 4u);
}

TEST(DecoderModel, NonDecoderErrorListsWhatIsMissing) {
    auto d = engine::recognizeDecoder(reluModel().graph());
    ASSERT_FALSE(d);
    EXPECT_TRUE(contains(d.error().message, "not a decoder with a KV cache")) << d.error().message;
    EXPECT_TRUE(contains(d.error().message, "no past key/value inputs")) << d.error().message;
    EXPECT_TRUE(contains(d.error().message, "no input_ids")) << d.error().message;
    EXPECT_TRUE(contains(d.error().message, "no logits output")) << d.error().message;
}

TEST(DecoderModel, PresentDeclaredAgainstItsPastIsAnError) {
    ToyOptions o;
    o.presentDeclaredWrong = true;
    auto d = engine::recognizeDecoder(toyDecoder(o).graph());
    ASSERT_FALSE(d);
    EXPECT_TRUE(contains(d.error().message, "present output 'present.0.key'")) << d.error().message;
    EXPECT_TRUE(contains(d.error().message, "disagrees with its past input")) << d.error().message;
}

TEST(DecoderModel, PastWithoutItsPresentIsAnError) {
    onnx::GraphProto g;
    const auto F = onnx::TensorProto::FLOAT;
    setType(g.add_input(), "input_ids", onnx::TensorProto::INT64, {"b", "s"});
    setType(g.add_input(), "past_key_values.0.key", F, {"b", 2, "p", 4});
    setType(g.add_output(), "logits", F, {"b", "s", 9});
    setType(g.add_output(), "present.0.value", F, {"b", 2, "t", 4});
    auto d = engine::recognizeDecoder(g);
    ASSERT_FALSE(d);
    EXPECT_TRUE(contains(d.error().message, "has no present output 'present.0.key'"))
        << d.error().message;
}

TEST(DecoderModel, PresentWithAFixedLengthIsAnError) {
    onnx::GraphProto g;
    const auto F = onnx::TensorProto::FLOAT;
    setType(g.add_input(), "input_ids", onnx::TensorProto::INT64, {"b", "s"});
    setType(g.add_input(), "past_k_0", F, {"b", 2, "p", 4});
    setType(g.add_output(), "logits", F, {"b", "s", 9});
    setType(g.add_output(), "present_k_0", F, {"b", 2, 5, 4});
    auto d = engine::recognizeDecoder(g);
    ASSERT_FALSE(d);
    EXPECT_TRUE(contains(d.error().message, "fixed length on axis 2")) << d.error().message;
}

// --- The loop ---------------------------------------------------------------------------------

class DecodeLoopLayouts : public ::testing::TestWithParam<ToyLayout> {};

TEST_P(DecodeLoopLayouts, GeneratesTheWorkedTokens) {
    ToyOptions o;
    o.layout = GetParam();
    auto t = compileToy(toyDecoder(o));
    ASSERT_TRUE(t.session);
    const std::vector<std::int64_t> prompt = {3, 1, 4, 1, 5};
    std::vector<engine::DecodeStep> steps;
    engine::DecodeOptions options;
    options.promptIds = prompt;
    options.newTokens = 9;
    options.indexRanges = t.ranges;
    options.onStep = [&](const engine::DecodeStep& s) {
        ASSERT_NE(s.logits, nullptr);
        EXPECT_EQ(s.logits->dim(1), s.index == 0 ? 5 : 1);
        steps.push_back(s);
    };
    auto r = engine::runDecodeLoop(*t.session, t.decoder, options);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->generatedIds, toyExpectedIds(prompt, 9, 7));
    EXPECT_EQ(r->promptIds, prompt);
    ASSERT_EQ(r->stepMs.size(), 8u);
    // The context grows by one per step; the prefill attends to the prompt.
    ASSERT_EQ(steps.size(), 9u);
    EXPECT_EQ(steps[0].context, 5);
    for (std::size_t i = 0; i < r->stepContext.size(); ++i)
        EXPECT_EQ(r->stepContext[i], 6 + static_cast<std::int64_t>(i));
    EXPECT_EQ(r->finalContext, 13);
    // 13 tokens x 2 layers x (key + value) x 4 bytes.
    EXPECT_EQ(r->kvCacheBytes, 13u * 2u * 2u * 4u);
    EXPECT_GT(r->tokensPerSecond, 0);
    EXPECT_EQ(r->stepStatistics.runs, 8);
    EXPECT_FALSE(r->cancelled);
}

INSTANTIATE_TEST_SUITE_P(Layouts, DecodeLoopLayouts,
                         ::testing::Values(ToyLayout::Optimum, ToyLayout::SplitKv,
                                           ToyLayout::Stacked));

// Without position ids and mask the model's formula loses those terms: the loop still runs and
// feeds only what the model takes.
TEST(DecodeLoop, ModelWithoutMaskAndPositions) {
    ToyOptions o;
    o.attentionMask = false;
    o.positionIds = false;
    auto t = compileToy(toyDecoder(o));
    ASSERT_TRUE(t.session);
    auto r = decode(t, {2, 6}, 5);
    ASSERT_TRUE(r) << r.error().message;
    // next = (sum of the context's ids) mod 7: the value cache holds zeros here.
    std::vector<std::int64_t> context = {2, 6}, expected;
    for (int i = 0; i < 5; ++i) {
        std::int64_t sum = 0;
        for (auto id : context) sum += id;
        expected.push_back(sum % 7);
        context.push_back(sum % 7);
    }
    EXPECT_EQ(r->generatedIds, expected);
}

TEST(DecodeLoop, OneNewTokenIsThePrefillAlone) {
    auto t = compileToy(toyDecoder());
    auto r = decode(t, {1, 2, 3}, 1);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->generatedIds, toyExpectedIds({1, 2, 3}, 1, 7));
    EXPECT_TRUE(r->stepMs.empty());
    EXPECT_EQ(r->tokensPerSecond, 0);
}

TEST(DecodeLoop, CancelStopsBetweenSteps) {
    auto t = compileToy(toyDecoder());
    engine::RunControl control;
    engine::DecodeOptions options;
    options.promptIds = {1, 2};
    options.newTokens = 10;
    options.indexRanges = t.ranges;
    options.control = &control;
    options.onStep = [&](const engine::DecodeStep& s) {
        if (s.index == 2) control.cancel = true;
    };
    auto r = engine::runDecodeLoop(*t.session, t.decoder, options);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_TRUE(r->cancelled);
    EXPECT_EQ(r->generatedIds, toyExpectedIds({1, 2}, 3, 7));
}

TEST(DecodeLoop, PromptIdBeyondTheVocabulary) {
    auto t = compileToy(toyDecoder());
    auto r = decode(t, {1, 7}, 3);
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(r.error().message, "prompt id 7 is beyond the vocabulary"))
        << r.error().message;
    EXPECT_TRUE(contains(r.error().message, "indexes the 7 rows of 'embedding'"))
        << r.error().message;
    auto negative = decode(t, {-1}, 3);
    ASSERT_FALSE(negative);
    EXPECT_TRUE(contains(negative.error().message, "prompt id -1 is negative"));
}

TEST(DecodeLoop, ContextBeyondThePositionTable) {
    auto t = compileToy(toyDecoder());        // 16 positions
    auto fits = decode(t, {1, 2, 3, 4}, 13);  // the last run attends to 16 tokens
    ASSERT_TRUE(fits) << fits.error().message;
    auto r = decode(t, {1, 2, 3, 4}, 14);
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(r.error().message, "a context of 17 tokens")) << r.error().message;
    EXPECT_TRUE(contains(r.error().message, "indexes the 16 rows of 'position_table'"))
        << r.error().message;
}

TEST(DecodeLoop, NewTokensOutOfRange) {
    auto t = compileToy(toyDecoder());
    for (int n : {0, -3, engine::kMaxNewTokens + 1}) {
        auto r = decode(t, {1}, n);
        ASSERT_FALSE(r) << n;
        EXPECT_TRUE(contains(r.error().message, "new tokens must be 1 to 1048576"))
            << r.error().message;
    }
    EXPECT_FALSE(decode(t, {}, 3));
}

TEST(DecodeLoop, PresentThatDisagreesWithItsPastAtRun) {
    ToyOptions o;
    o.presentGrowsTwice = true;
    auto t = compileToy(toyDecoder(o));
    ASSERT_TRUE(t.session);
    auto r = decode(t, {1, 2}, 4);
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(r.error().message, "the prefill (context 2)")) << r.error().message;
    EXPECT_TRUE(contains(r.error().message,
                         "present 'present.0.key' is float32 [1x1x4x1], "
                         "expected float32 [1x1x2x1]"))
        << r.error().message;
}

// --- The command line -------------------------------------------------------------------------

TEST(CliGenerate, JsonReportsTheLoop) {
    CliScratchDir dir;
    const auto model = writeModel(dir, "toy.onnx", toyDecoder());
    auto r = runCli({"generate", model.string(), "--prompt-ids", "3,1,4", "--new-tokens", "6",
                     "--threads", "1", "--json", "--logits", (dir / "logits.npy").string()});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(doc["generated_ids"].get<std::vector<std::int64_t>>(),
              toyExpectedIds({3, 1, 4}, 6, 7));
    EXPECT_EQ(doc["prompt_tokens"], 3);
    EXPECT_EQ(doc["new_tokens"], 6);
    EXPECT_EQ(doc["steps"]["count"], 5);
    EXPECT_EQ(doc["step_context"].get<std::vector<std::int64_t>>(),
              (std::vector<std::int64_t>{4, 5, 6, 7, 8}));
    EXPECT_EQ(doc["context"], 8);
    EXPECT_EQ(doc["kv_cache_bytes"], 8 * 16);
    EXPECT_GT(doc["tokens_per_second"].get<double>(), 0);
    EXPECT_GT(doc["peak_rss_bytes"].get<double>(), 0);
    EXPECT_GE(doc["prefill_ms"].get<double>(), 0);
    EXPECT_EQ(doc["kv_cache"]["layers"], 2);
    // The logits file: one row per run, peaked at the chosen token.
    auto logits = readNpyFile(dir / "logits.npy");
    ASSERT_TRUE(logits) << logits.error().message;
    ASSERT_EQ(logits->dims_size(), 2);
    EXPECT_EQ(logits->dims(0), 6);
    EXPECT_EQ(logits->dims(1), 7);
}

TEST(CliGenerate, TextReportAndRandomPrompt) {
    CliScratchDir dir;
    const auto model = writeModel(dir, "toy.onnx", toyDecoder({ToyLayout::Stacked}));
    auto r = runCli({"generate", model.string(), "--prompt-tokens", "4", "--new-tokens", "3",
                     "--seed", "5", "--threads", "1"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "decoder, 2 layers, 1 kv heads x 1")) << r.out;
    EXPECT_TRUE(contains(r.out, "prompt 4 tokens")) << r.out;
    EXPECT_TRUE(contains(r.out, "tokens/s")) << r.out;
    EXPECT_TRUE(contains(r.out, "generated ids: ")) << r.out;
    auto again = runCli({"generate", model.string(), "--prompt-tokens", "4", "--new-tokens", "3",
                         "--seed", "5", "--threads", "1", "--json"});
    ASSERT_EQ(again.exitCode, 0) << again.err;
    const auto doc = nlohmann::json::parse(again.out);
    const auto prompt = doc["prompt_ids"].get<std::vector<std::int64_t>>();
    ASSERT_EQ(prompt.size(), 4u);
    for (auto id : prompt) EXPECT_TRUE(id >= 0 && id < 7) << id;
    EXPECT_EQ(doc["generated_ids"].get<std::vector<std::int64_t>>(), toyExpectedIds(prompt, 3, 7));
}

TEST(CliGenerate, HostileRequestsAreUsageErrors) {
    CliScratchDir dir;
    const auto model = writeModel(dir, "toy.onnx", toyDecoder()).string();
    const auto relu = writeModel(dir, "relu.onnx", reluModel()).string();
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"generate", model, "--prompt-ids", "1,99"}, "prompt id 99 is beyond the vocabulary"},
        {{"generate", model, "--prompt-ids", "1,x"}, "'x' is not an integer"},
        {{"generate", model, "--prompt-ids", "1,,2"}, "'' is not an integer"},
        {{"generate", model, "--new-tokens", "0"}, "--new-tokens 0: must be 1 to 1048576"},
        {{"generate", model, "--new-tokens", "99999999999"}, "must be 1 to 1048576"},
        {{"generate", model, "--prompt-tokens", "4", "--new-tokens", "100"},
         "longer than the position table"},
        {{"generate", model, "--prompt-tokens", "2", "--prompt-ids", "1"}, "exclude each other"},
        {{"generate", relu}, "not a decoder with a KV cache"},
    };
    for (const auto& [args, message] : cases) {
        auto r = runCli(args);
        EXPECT_EQ(r.exitCode, 2) << args.back() << ": " << r.err;
        EXPECT_TRUE(contains(r.err, message)) << r.err;
    }
}

TEST(CliInfo, KvCacheOfADecoder) {
    CliScratchDir dir;
    const auto model = writeModel(dir, "toy.onnx", toyDecoder({ToyLayout::SplitKv}));
    auto r = runCli({"info", model.string(), "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto kv = nlohmann::json::parse(r.out)["kv_cache"];
    ASSERT_TRUE(kv.is_object()) << r.out;
    EXPECT_EQ(kv["layers"], 2);
    EXPECT_EQ(kv["heads"], 1);
    EXPECT_EQ(kv["head_size"], 1);
    EXPECT_EQ(kv["bytes_per_token"], 16);
    EXPECT_EQ(kv["dims"]["batch"], "batch_size");
    EXPECT_EQ(kv["dims"]["past"], "past_sequence_length");
    EXPECT_EQ(kv["dims"]["sequence"], "sequence_length");
    EXPECT_EQ(kv["layout"], "separate");
    EXPECT_EQ(kv["pairs"][0]["past"], "past_k_0");
    EXPECT_EQ(kv["pairs"][0]["present"], "present_k_0");
    auto text = runCli({"info", model.string()});
    ASSERT_EQ(text.exitCode, 0) << text.err;
    EXPECT_TRUE(contains(text.out, "KV cache")) << text.out;

    const auto relu = writeModel(dir, "relu.onnx", reluModel());
    auto plain = runCli({"info", relu.string(), "--json"});
    ASSERT_EQ(plain.exitCode, 0) << plain.err;
    EXPECT_TRUE(nlohmann::json::parse(plain.out)["kv_cache"].is_null());
}

}  // namespace
}  // namespace onnxlens::testing
