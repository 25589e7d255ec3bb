// The decode messages of the window's engine process (EngineWorkerProtocol.h): a DecodeResult,
// a step's progress line and the index ranges survive the JSON line; the statistics come back
// recomputed as runDecodeLoop computes them; malformed replies are errors naming the field.
// Also the Decode tab's Markdown report.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "onnxlens/workflows/DecodeLoop.h"
#include "onnxlens/workflows/EngineWorkerProtocol.h"

namespace onnxlens::engine {
namespace {

DecodeResult sampleResult() {
    DecodeResult r;
    r.promptIds = {3, 1, 4};
    r.generatedIds = {1, 5, 9, 2};
    r.prefillMs = 2.5;
    r.stepMs = {1.0, 3.0, 2.0};
    r.stepContext = {4, 5, 6};
    r.kvCacheBytes = 6144;
    r.finalContext = 6;
    r.runs = 4;  // the prefill and three steps, two of them on one thread of two
    r.reducedRuns = 2;
    r.fewestThreads = 1;
    computeDecodeStatistics(r);
    return r;
}

TEST(EngineWorkerProtocolTest, DecodeResultRoundTripsThroughOneJsonLine) {
    const DecodeResult r = sampleResult();
    // Statistics worked by hand: median of {1, 3, 2} is 2; 3 steps in 6 ms are 500 tokens/s.
    EXPECT_DOUBLE_EQ(r.stepStatistics.medianMs, 2.0);
    EXPECT_DOUBLE_EQ(r.stepStatistics.minMs, 1.0);
    EXPECT_DOUBLE_EQ(r.stepStatistics.maxMs, 3.0);
    EXPECT_DOUBLE_EQ(r.tokensPerSecond, 500.0);

    const std::string line = decodeMeasurementsToJson(r).dump();
    EXPECT_EQ(line.find('\n'), std::string::npos);
    EXPECT_EQ(line.find("tokensPerSecond"), std::string::npos);  // recomputed, not sent
    auto back = decodeFromMeasurementsJson(nlohmann::json::parse(line));
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(back->promptIds, r.promptIds);
    EXPECT_EQ(back->generatedIds, r.generatedIds);
    EXPECT_EQ(back->prefillMs, r.prefillMs);
    EXPECT_EQ(back->stepMs, r.stepMs);
    EXPECT_EQ(back->stepContext, r.stepContext);
    EXPECT_EQ(back->kvCacheBytes, r.kvCacheBytes);
    EXPECT_EQ(back->finalContext, r.finalContext);
    EXPECT_FALSE(back->cancelled);
    EXPECT_EQ(back->runs, 4);
    EXPECT_EQ(back->reducedRuns, 2);
    EXPECT_EQ(back->fewestThreads, 1);
    EXPECT_DOUBLE_EQ(back->stepStatistics.medianMs, 2.0);
    EXPECT_EQ(back->stepStatistics.runs, 3);
    EXPECT_DOUBLE_EQ(back->tokensPerSecond, 500.0);
    EXPECT_EQ(decodeResultJson(*back), decodeResultJson(r));
}

TEST(EngineWorkerProtocolTest, DecodeWithoutStepsAndCancelledRoundTrips) {
    DecodeResult r;
    r.promptIds = {0};
    r.generatedIds = {6};
    r.prefillMs = 0.25;
    r.cancelled = true;
    computeDecodeStatistics(r);
    EXPECT_EQ(r.tokensPerSecond, 0);
    auto back = decodeFromMeasurementsJson(decodeMeasurementsToJson(r));
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_TRUE(back->stepMs.empty());
    EXPECT_TRUE(back->cancelled);
    EXPECT_EQ(back->stepStatistics.runs, 0);
    EXPECT_EQ(back->tokensPerSecond, 0);
}

TEST(EngineWorkerProtocolTest, MalformedDecodeRepliesAreErrorsNamingTheField) {
    auto json = decodeMeasurementsToJson(sampleResult());
    json.erase("generatedIds");
    auto missing = decodeFromMeasurementsJson(json);
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().message.find("generatedIds"), std::string::npos)
        << missing.error().message;

    json = decodeMeasurementsToJson(sampleResult());
    json["stepContext"] = {4, 5};
    auto uneven = decodeFromMeasurementsJson(json);
    ASSERT_FALSE(uneven);
    EXPECT_NE(uneven.error().message.find("3 step times but 2 contexts"), std::string::npos)
        << uneven.error().message;

    json = decodeMeasurementsToJson(sampleResult());
    json["kvCacheBytes"] = "many";
    EXPECT_FALSE(decodeFromMeasurementsJson(json));
    EXPECT_FALSE(decodeFromMeasurementsJson(nlohmann::json::array()));
    EXPECT_FALSE(decodeStepFromJson(nlohmann::json{1, 2}));
    EXPECT_FALSE(valueRangesFromJson(nlohmann::json::array()));
    EXPECT_FALSE(valueRangesFromJson(nlohmann::json{{"input_ids", {0, "x", "r"}}}));
}

TEST(EngineWorkerProtocolTest, DecodeStepAndIndexRangesRoundTrip) {
    DecodeStep step;
    step.index = 7;
    step.context = 12;
    step.token = 42;
    step.ms = std::numeric_limits<double>::infinity();  // JSON has none: travels as a string
    auto back = decodeStepFromJson(nlohmann::json::parse(decodeStepToJson(step).dump()));
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(back->index, 7);
    EXPECT_EQ(back->context, 12);
    EXPECT_EQ(back->token, 42);
    EXPECT_TRUE(std::isinf(back->ms));
    EXPECT_EQ(back->logits, nullptr);

    ValueRanges ranges;
    ranges["input_ids"] = {0, 50256, "indexes the 50257 rows of 'wte'"};
    ranges["position_ids"] = {0, 1023, "indexes the 1024 rows of 'wpe'"};
    auto rangesBack = valueRangesFromJson(nlohmann::json::parse(valueRangesToJson(ranges).dump()));
    ASSERT_TRUE(rangesBack) << rangesBack.error().message;
    ASSERT_EQ(rangesBack->size(), 2u);
    EXPECT_EQ(rangesBack->at("input_ids").high, 50256);
    EXPECT_EQ(rangesBack->at("position_ids").reason, "indexes the 1024 rows of 'wpe'");
    EXPECT_TRUE(valueRangesFromJson(valueRangesToJson({}))->empty());
}

TEST(EngineWorkerProtocolTest, DecodeMarkdownReportsTheFiguresAndTheSeries) {
    const std::string md = decodeResultMarkdown(sampleResult(), "gpt.onnx", 2);
    EXPECT_EQ(md.rfind("# Decode: gpt.onnx\n", 0), 0u) << md;
    EXPECT_NE(md.find("a prompt of 3 tokens, 4 new tokens, 2 intra-op threads."), std::string::npos)
        << md;
    EXPECT_NE(md.find("Fewer threads ran: 1 thread in 2 of 4 runs: other programs kept the cores "
                      "busy."),
              std::string::npos)
        << md;
    EXPECT_NE(md.find("| prefill | 2.500 ms |"), std::string::npos) << md;
    EXPECT_NE(md.find("| step median | 2.000 ms |"), std::string::npos) << md;
    EXPECT_NE(md.find("| tokens per second | 500.0 |"), std::string::npos) << md;
    EXPECT_NE(md.find("| KV cache at the end | 6144 bytes |"), std::string::npos) << md;
    EXPECT_NE(md.find("Generated ids: 1 5 9 2"), std::string::npos) << md;
    EXPECT_NE(md.find("| 2 | 5 | 3.000 |"), std::string::npos) << md;

    DecodeResult one;
    one.promptIds = {1};
    one.generatedIds = {2};
    const std::string short_ = decodeResultMarkdown(one, "", 1);
    EXPECT_NE(short_.find("1 intra-op thread."), std::string::npos) << short_;
    EXPECT_EQ(short_.find("tokens per second"), std::string::npos) << short_;
    EXPECT_EQ(short_.find("## Step latency"), std::string::npos) << short_;
}

}  // namespace
}  // namespace onnxlens::engine
