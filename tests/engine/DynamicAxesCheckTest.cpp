// The dynamic-axes check on the sample models and on small models built here, and the
// reference run against a sample's test data set and a perturbed copy of it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../model/SyntheticModels.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/TensorFile.h"
#include "onnxlens/workflows/DynamicAxesCheck.h"
#include "onnxlens/workflows/ReferenceRun.h"

using namespace onnxlens;
using namespace onnxlens::engine;
namespace fs = std::filesystem;

namespace {

const fs::path kSamples = fs::path(ONNXLENS_SOURCE_DIR) / "resources" / "samples";

std::unique_ptr<Session> compileFile(const fs::path& path) {
    auto model = loadModel(path);
    EXPECT_TRUE(model) << model.error().message;
    auto session = Session::create(*model);
    EXPECT_TRUE(session) << session.error().message;
    return std::move(*session);
}

std::unique_ptr<Session> compileProto(const std::shared_ptr<onnx::ModelProto>& proto) {
    LoadedModel loaded;
    loaded.path = "built.onnx";
    loaded.proto = proto;
    auto session = Session::create(loaded);
    EXPECT_TRUE(session) << session.error().message;
    return std::move(*session);
}

// x[N,4] -> out[N,4] through `build`, which adds nodes from "x" to "out".
template <class Build>
std::shared_ptr<onnx::ModelProto> batchModel(Build build) {
    auto model = onnxlens::testing::makeModelShell(13);
    auto& g = *model->mutable_graph();
    g.set_name("batch_model");
    *g.add_input() = onnxlens::testing::makeValueInfo("x", onnx::TensorProto::FLOAT, {"N", "4"});
    build(g);
    *g.add_output() = onnxlens::testing::makeValueInfo("out", onnx::TensorProto::FLOAT, {"N", "4"});
    return model;
}

}  // namespace

TEST(DynamicAxesCheck, MnistSampleFollowsItsBatchSymbol) {
    auto session = compileFile(kSamples / "mnist_cnn" / "model.onnx");
    ASSERT_TRUE(session);
    int progressCalls = 0;
    DynamicAxesCheckOptions options;
    options.progress = [&](int step, int steps, const std::string&) {
        ++progressCalls;
        EXPECT_LE(step, steps);
    };
    auto result = checkDynamicAxes(*session, options);
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(result->verdict, DynamicAxesCheckResult::Verdict::Passed) << result->summary;
    EXPECT_EQ(result->batchSymbol, "batch");
    ASSERT_EQ(result->runs.size(), 2u);  // no other symbol: batch 1 and batch 2
    EXPECT_EQ(progressCalls, 2);
    ASSERT_EQ(result->outputs.size(), 1u);
    const auto& out = result->outputs[0];
    EXPECT_EQ(out.declared, "[batch x 10]");
    ASSERT_EQ(out.shapes.size(), 2u);
    EXPECT_EQ(out.shapes[0], (Shape{1, 10}));
    EXPECT_EQ(out.shapes[1], (Shape{2, 10}));
    EXPECT_TRUE(out.firstItemCompared);
    EXPECT_TRUE(out.firstItem.passed);
    EXPECT_LT(out.firstItem.maxAbsError, 1e-4);
}

TEST(DynamicAxesCheck, TinyBertChangesBatchAndSequence) {
    auto session = compileFile(kSamples / "tiny_bert" / "model.onnx");
    ASSERT_TRUE(session);
    DynamicAxesCheckOptions options;
    options.base = {{"sequence", 5}};
    auto result = checkDynamicAxes(*session, options);
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_TRUE(result->passed()) << result->summary;
    EXPECT_EQ(result->symbols, (std::vector<std::string>{"batch", "sequence"}));
    ASSERT_EQ(result->runs.size(), 3u);
    EXPECT_EQ(result->runs[2].bindings.at("sequence"), 10);  // the first second value: x2
    EXPECT_EQ(result->runs[2].bindings.at("batch"), 2);
    EXPECT_EQ(result->outputs[0].shapes[2], (Shape{2, 10, 64}));
}

const fs::path kExports =
    fs::path(ONNXLENS_SOURCE_DIR) / "tests" / "engine" / "data" / "dynamic_axes";

TEST(DynamicAxesCheck, BertStyleExportWithATwoRowTypeEmbeddingPasses) {
    // token_type_ids indexes a 2-row embedding: random 0..9 made the run fail before.
    auto session = compileFile(kExports / "bert_type_embedding.onnx");
    ASSERT_TRUE(session);
    const ValueRanges ranges = integerInputRanges(*session);
    ASSERT_TRUE(ranges.count("token_type_ids"));
    EXPECT_EQ(ranges.at("token_type_ids").low, 0);
    EXPECT_EQ(ranges.at("token_type_ids").high, 1);
    EXPECT_NE(ranges.at("token_type_ids").reason.find("2 rows"), std::string::npos)
        << ranges.at("token_type_ids").reason;
    ASSERT_TRUE(ranges.count("input_ids"));
    EXPECT_EQ(ranges.at("input_ids").high, 29);  // the 30-word vocabulary
    EXPECT_FALSE(ranges.count("attention_mask"));

    auto result = checkDynamicAxes(*session, {});
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(result->verdict, DynamicAxesCheckResult::Verdict::Passed) << result->summary;
    EXPECT_EQ(dynamicAxesExitCode(*result), 0);
    ASSERT_EQ(result->runs.size(), 3u);
    EXPECT_TRUE(result->rejections.empty());
    EXPECT_EQ(result->outputs[0].shapes[2], (Shape{2, 8, 8}));  // sequence 4 -> 8
    EXPECT_TRUE(result->outputs[0].firstItemCompared);
    EXPECT_TRUE(result->outputs[0].firstItem.passed);
}

TEST(DynamicAxesCheck, TextRecognizerWidthIsTriedUntilTheModelAcceptsIt) {
    // The CNN divides the width by 4 and a Reshape pairs columns: widths must be multiples of 8.
    auto session = compileFile(kExports / "text_recognizer.onnx");
    ASSERT_TRUE(session);
    EXPECT_EQ(strideGranularity(session->optimizedModel().graph()), 4);
    auto result = checkDynamicAxes(*session, {});
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(result->verdict, DynamicAxesCheckResult::Verdict::Passed) << result->summary;
    // Width 4 (the default first value) is rejected and reported as such, not as a failure.
    ASSERT_FALSE(result->rejections.empty());
    EXPECT_EQ(result->rejections.front().rfind("width 4 rejected: ", 0), 0u)
        << result->rejections.front();
    EXPECT_NE(result->summary.find("width 4 rejected"), std::string::npos) << result->summary;
    ASSERT_EQ(result->runs.size(), 3u);
    EXPECT_EQ(result->runs[0].bindings.at("width"), 16);
    EXPECT_EQ(result->runs[2].bindings.at("width"), 32);
    EXPECT_EQ(result->outputs[0].shapes[2], (Shape{4, 2, 10}));  // time = width / 8

    // An example width (a test data set's) is tried first; +1 would be rejected, x2 is accepted.
    DynamicAxesCheckOptions options;
    options.base = {{"width", 24}};
    result = checkDynamicAxes(*session, options);
    ASSERT_TRUE(result);
    EXPECT_TRUE(result->passed()) << result->summary;
    EXPECT_EQ(result->runs[0].bindings.at("width"), 24);
    EXPECT_EQ(result->runs[2].bindings.at("width"), 48);
}

TEST(DynamicAxesCheck, AnExportWithoutADynamicBatchThatDeclaresOneFails) {
    // x.view(1, -1) traced the batch into a Reshape; dynamic_axes still declares 'batch'.
    auto session = compileFile(kExports / "fixed_batch.onnx");
    ASSERT_TRUE(session);
    auto result = checkDynamicAxes(*session, {});
    ASSERT_TRUE(result);
    EXPECT_EQ(result->verdict, DynamicAxesCheckResult::Verdict::Failed) << result->summary;
    EXPECT_EQ(dynamicAxesExitCode(*result), 1);
    EXPECT_NE(result->summary.find("batch 2 run"), std::string::npos) << result->summary;
    ASSERT_EQ(result->runs.size(), 2u);
    EXPECT_TRUE(result->runs[0].ok);
    EXPECT_FALSE(result->runs[1].ok);
    EXPECT_FALSE(result->outputs[0].shapesFollow);  // not "yes" when a run failed
}

TEST(DynamicAxesCheck, UnnamedDimsAreUnknownNotFixed) {
    auto model = onnxlens::testing::makeModelShell(13);
    auto& g = *model->mutable_graph();
    auto x = onnxlens::testing::makeValueInfo("x", onnx::TensorProto::FLOAT, {"N", "4"});
    x.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->clear_dim_param();
    *g.add_input() = x;
    onnxlens::testing::addNode(g, "Relu", "relu", {"x"}, {"out"});
    *g.add_output() = onnxlens::testing::makeValueInfo("out", onnx::TensorProto::FLOAT, {"N", "4"});
    auto session = compileProto(model);
    EXPECT_EQ(unknownInputDims(session->inputs()), (std::vector<std::string>{"x:0"}));
    auto result = checkDynamicAxes(*session, {});
    ASSERT_TRUE(result);
    EXPECT_EQ(result->verdict, DynamicAxesCheckResult::Verdict::CannotTell);
    EXPECT_EQ(dynamicAxesExitCode(*result), 2);
    EXPECT_NE(result->summary.find("x:0 are unknown"), std::string::npos) << result->summary;
    EXPECT_EQ(result->summary.find("every input dimension is a fixed number"), std::string::npos)
        << result->summary;

    // Bound per input and axis, the unnamed dim gets its value.
    auto feeds = prepareSessionFeeds(*session, {}, {{"x:0", 3}}, 0);
    ASSERT_TRUE(feeds) << feeds.error().message;
    EXPECT_EQ(feeds->at("x").tensor().shape(), (Shape{3, 4}));
}

TEST(DynamicAxesCheck, CandidateValues) {
    EXPECT_EQ(secondValueCandidates(4, 1), (std::vector<std::int64_t>{8, 5, 12}));
    EXPECT_EQ(secondValueCandidates(16, 4), (std::vector<std::int64_t>{32, 17, 20, 48}));
    EXPECT_EQ(firstValueCandidates(0, 4, 8), (std::vector<std::int64_t>{4, 8, 16, 32, 64, 128}));
    EXPECT_EQ(firstValueCandidates(24, 4, 1), (std::vector<std::int64_t>{24, 4, 16, 32, 64, 128}));
}

TEST(InputPreparation, IntegerRangesAndAxisBindings) {
    auto range = parseIntegerRange("token_type_ids=0,1");
    ASSERT_TRUE(range) << range.error().message;
    EXPECT_EQ(range->first, "token_type_ids");
    EXPECT_EQ(range->second.low, 0);
    EXPECT_EQ(range->second.high, 1);
    EXPECT_FALSE(parseIntegerRange("ids=3,1"));
    EXPECT_FALSE(parseIntegerRange("ids=1"));
    EXPECT_FALSE(parseIntegerRange("=1,2"));

    // OneHot through Cast and Unsqueeze: 0..depth-1; the narrowest of two readers wins.
    auto model = onnxlens::testing::makeModelShell(13);
    auto& g = *model->mutable_graph();
    *g.add_input() = onnxlens::testing::makeValueInfo("ids", onnx::TensorProto::INT64, {"N"});
    *g.add_initializer() = onnxlens::testing::makeInt64Initializer("depth", {5});
    *g.add_initializer() = onnxlens::testing::makeFloatInitializer("values", {2});
    *g.add_initializer() = onnxlens::testing::makeInt64Initializer("axes", {1});
    onnxlens::testing::addIntAttribute(
        onnxlens::testing::addNode(g, "Cast", "cast", {"ids"}, {"ids32"}), "to",
        onnx::TensorProto::INT32);
    onnxlens::testing::addNode(g, "Unsqueeze", "unsqueeze", {"ids32", "axes"}, {"column"});
    onnxlens::testing::addNode(g, "OneHot", "onehot", {"column", "depth", "values"}, {"out"});
    *g.add_output() =
        onnxlens::testing::makeValueInfo("out", onnx::TensorProto::FLOAT, {"N", "1", "5"});
    const ValueRanges ranges = inferIndexRanges(g);
    ASSERT_TRUE(ranges.count("ids"));
    EXPECT_EQ(ranges.at("ids").high, 4);
    EXPECT_NE(ranges.at("ids").reason.find("depth 5"), std::string::npos)
        << ranges.at("ids").reason;

    auto session = compileProto(model);
    // OneHot's depth is a constant whose bytes the session releases: read from the model.
    auto feeds = prepareFeeds(session->inputs(), {}, {{"N", 64}}, 7, ranges);
    ASSERT_TRUE(feeds) << feeds.error().message;
    const Tensor& ids = feeds->at("ids").tensor();
    std::int64_t largest = 0;
    for (std::int64_t v : ids.span<std::int64_t>()) largest = std::max(largest, v);
    EXPECT_EQ(largest, 4);  // 64 draws from 0..4
    // --int-range overrides the graph's range.
    feeds = prepareSessionFeeds(*session, {}, {{"N", 64}}, 7, {{"ids", ValueRange{2, 2, ""}}});
    ASSERT_TRUE(feeds);
    for (std::int64_t v : feeds->at("ids").tensor().span<std::int64_t>()) EXPECT_EQ(v, 2);
}

TEST(DynamicAxesCheck, AModelWithoutDynamicAxesIsReportedInPlainWords) {
    auto session = compileFile(kSamples / "legacy_opset10" / "model.onnx");
    ASSERT_TRUE(session);
    auto result = checkDynamicAxes(*session, {});
    ASSERT_TRUE(result);
    EXPECT_EQ(result->verdict, DynamicAxesCheckResult::Verdict::NoDynamicAxes);
    EXPECT_TRUE(result->runs.empty());
    EXPECT_NE(result->summary.find("no dynamic axes"), std::string::npos) << result->summary;
    EXPECT_NE(result->summary.find("image [1 x 3 x 16 x 16]"), std::string::npos)
        << result->summary;
}

TEST(DynamicAxesCheck, AHardCodedReshapeBreaksTheBatchTwoShape) {
    // Reshape to [1, -1]: the exporter traced batch 1 into the graph.
    auto session = compileProto(batchModel([](onnx::GraphProto& g) {
        *g.add_initializer() = onnxlens::testing::makeInt64Initializer("shape", {1, -1});
        onnxlens::testing::addNode(g, "Reshape", "reshape", {"x", "shape"}, {"flat"});
        onnxlens::testing::addNode(g, "Relu", "relu", {"flat"}, {"out"});
    }));
    auto result = checkDynamicAxes(*session, {});
    ASSERT_TRUE(result);
    EXPECT_EQ(result->verdict, DynamicAxesCheckResult::Verdict::Failed);
    ASSERT_EQ(result->outputs.size(), 1u);
    EXPECT_FALSE(result->outputs[0].shapesFollow);
    EXPECT_EQ(result->outputs[0].shapes[1], (Shape{1, 8}));
    EXPECT_NE(result->outputs[0].problem.find("'N' = 2 but the run gave 1"), std::string::npos)
        << result->outputs[0].problem;
}

TEST(DynamicAxesCheck, ItemsMixedAcrossTheBatchFailTheFirstItemComparison) {
    // out = x + mean over the batch: item 0 of a batch of 2 depends on item 1.
    auto session = compileProto(batchModel([](onnx::GraphProto& g) {
        auto* mean = onnxlens::testing::addNode(g, "ReduceMean", "mean", {"x"}, {"m"});
        onnxlens::testing::addIntsAttribute(mean, "axes", {0});
        onnxlens::testing::addNode(g, "Add", "add", {"x", "m"}, {"out"});
    }));
    auto result = checkDynamicAxes(*session, {});
    ASSERT_TRUE(result);
    EXPECT_EQ(result->verdict, DynamicAxesCheckResult::Verdict::Failed);
    const auto& out = result->outputs[0];
    EXPECT_TRUE(out.shapesFollow);
    ASSERT_TRUE(out.firstItemCompared);
    EXPECT_FALSE(out.firstItem.passed);
    EXPECT_GT(out.firstItem.maxAbsError, 1e-3);
    EXPECT_NE(result->summary.find("first item differs"), std::string::npos) << result->summary;
}

TEST(DynamicAxesCheck, CancelledBeforeTheFirstRunIsAnError) {
    auto session = compileFile(kSamples / "mnist_cnn" / "model.onnx");
    RunControl control;
    control.cancel = true;
    auto result = checkDynamicAxes(*session, {}, &control);
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("cancelled"), std::string::npos)
        << result.error().message;
}

TEST(ReferenceRun, MatchesTheSampleDataSetAndReportsAPerturbedCopy) {
    const fs::path modelPath = kSamples / "mnist_cnn" / "model.onnx";
    auto model = loadModel(modelPath);
    ASSERT_TRUE(model);
    auto session = Session::create(*model);
    ASSERT_TRUE(session);
    auto sets = discoverTestDataSets(modelPath, *model->proto);
    ASSERT_TRUE(sets);
    ASSERT_GE(sets->size(), 1u);
    auto feeds = feedsFromTestDataSet(**session, (*sets)[0]);
    ASSERT_TRUE(feeds) << feeds.error().message;
    auto pass = runAndCompare(**session, *feeds, referencesOfTestDataSet((*sets)[0]), Tolerance{});
    ASSERT_TRUE(pass) << pass.error().message;
    EXPECT_TRUE(pass->passed());
    ASSERT_EQ(pass->outputs.size(), 1u);
    EXPECT_EQ(pass->outputs[0].name, "log_probs");
    EXPECT_EQ(pass->outputs[0].absoluteErrors.total(), pass->outputs[0].result.elementCount);

    // The reference with element [0, 7] moved by 0.5.
    auto reference = readTensorFile((*sets)[0].outputFiles[0]);
    ASSERT_TRUE(reference);
    Tensor perturbed = tensorFromProto(*reference).clone();
    perturbed.data<float>()[7] += 0.5f;
    const fs::path file = fs::temp_directory_path() / "onnxlens_reference_run_perturbed.pb";
    ASSERT_TRUE(writeTensorPbFile(file, tensorToProto(perturbed)));
    auto fail = runAndCompare(**session, *feeds, {{"log_probs", file}}, Tolerance{});
    fs::remove(file);
    ASSERT_TRUE(fail) << fail.error().message;
    EXPECT_FALSE(fail->passed());
    const auto& r = fail->outputs[0].result;
    EXPECT_EQ(r.outsideCount, 1);
    EXPECT_NEAR(r.maxAbsError, 0.5, 1e-3);
    EXPECT_EQ(r.worstIndex, (std::vector<std::int64_t>{0, 7}));
    EXPECT_DOUBLE_EQ(r.fractionOutside, 0.1);

    auto unknown = runAndCompare(**session, *feeds, {{"no_such_output", file}}, Tolerance{});
    ASSERT_FALSE(unknown);
    EXPECT_NE(unknown.error().message.find("no output named 'no_such_output'"), std::string::npos);
}

namespace {

// x[N, 2, H, W] -> `build` -> out, declared with `outDims`.
template <class Build>
std::shared_ptr<onnx::ModelProto> imageModel(const std::vector<std::string>& outDims, Build build) {
    auto model = onnxlens::testing::makeModelShell(13);
    auto& g = *model->mutable_graph();
    g.set_name("image_model");
    *g.add_input() =
        onnxlens::testing::makeValueInfo("x", onnx::TensorProto::FLOAT, {"N", "2", "H", "W"});
    build(g);
    *g.add_output() = onnxlens::testing::makeValueInfo("out", onnx::TensorProto::FLOAT, outDims);
    return model;
}

}  // namespace

TEST(DynamicAxesCheck, AnAxisThatMovesNoOutputIsNotExercised) {
    // A detector whose map was resized to the exported 8x8: the output is declared with unnamed
    // dims, runs at every H and W, and never moves with them.
    auto session = compileProto(imageModel({"N", "2", "?", "?"}, [](onnx::GraphProto& g) {
        // The batch comes from the input (Shape -> Slice); only H and W were baked.
        *g.add_initializer() = onnxlens::testing::makeInt64Initializer("hw", {2, 8, 8});
        *g.add_initializer() = onnxlens::testing::makeInt64Initializer("zero", {0});
        *g.add_initializer() = onnxlens::testing::makeInt64Initializer("one", {1});
        onnxlens::testing::addNode(g, "Shape", "shape", {"x"}, {"xs"});
        onnxlens::testing::addNode(g, "Slice", "batch", {"xs", "zero", "one"}, {"n"});
        auto* concat =
            onnxlens::testing::addNode(g, "Concat", "sizes_of_batch", {"n", "hw"}, {"out_sizes"});
        auto* axis = concat->add_attribute();
        axis->set_name("axis");
        axis->set_type(onnx::AttributeProto::INT);
        axis->set_i(0);
        onnxlens::testing::addNode(g, "Resize", "resize", {"x", "", "", "out_sizes"}, {"out"});
    }));
    ASSERT_TRUE(session);
    DynamicAxesCheckOptions options;
    options.base = {{"H", 16}, {"W", 16}};
    auto result = checkDynamicAxes(*session, options);
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(result->verdict, DynamicAxesCheckResult::Verdict::NotExercised) << result->summary;
    EXPECT_FALSE(result->passed());
    EXPECT_EQ(dynamicAxesExitCode(*result), 2);
    EXPECT_EQ(result->unexercised, (std::vector<std::string>{"H", "W"}));
    ASSERT_EQ(result->outputs.size(), 1u);
    EXPECT_EQ(result->outputs[0].movedWith, std::vector<std::string>{"N"});
    EXPECT_NE(result->summary.find("changed no output's shape"), std::string::npos)
        << result->summary;
}

TEST(DynamicAxesCheck, AnOutputThatFollowsEveryAxisPasses) {
    auto session = compileProto(imageModel({"N", "2", "H", "W"}, [](onnx::GraphProto& g) {
        onnxlens::testing::addNode(g, "Relu", "relu", {"x"}, {"out"});
    }));
    ASSERT_TRUE(session);
    DynamicAxesCheckOptions options;
    options.base = {{"H", 16}, {"W", 16}};
    auto result = checkDynamicAxes(*session, options);
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(result->verdict, DynamicAxesCheckResult::Verdict::Passed) << result->summary;
    EXPECT_TRUE(result->unexercised.empty());
    EXPECT_EQ(result->outputs[0].movedWith, (std::vector<std::string>{"N", "H", "W"}));
}
