// run, compare and bench through the CLI, on the committed sample exports (PyTorch references).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "CliModelFiles.h"
#include "CliRunner.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/TensorFile.h"
#include "onnxlens/workflows/ReferenceComparison.h"

using onnxlens::testing::runCli;
namespace fs = std::filesystem;

namespace {

fs::path sample(const std::string& name) {
    return fs::path(ONNXLENS_SOURCE_DIR) / "resources" / "samples" / name / "model.onnx";
}

// Copies a sample folder so a test may damage its reference data.
fs::path copySample(const std::string& name, const fs::path& scratch) {
    fs::path dest = scratch / name;
    fs::copy(sample(name).parent_path(), dest, fs::copy_options::recursive);
    return dest / "model.onnx";
}

}  // namespace

class CompareSample : public ::testing::TestWithParam<std::string> {};

TEST_P(CompareSample, MatchesPyTorchReference) {
    auto r = runCli({"compare", sample(GetParam()).string(), "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    auto doc = nlohmann::json::parse(r.out);
    EXPECT_TRUE(doc["passed"].get<bool>());
    ASSERT_GE(doc["data_sets"].size(), 1u);
    for (const auto& set : doc["data_sets"])
        for (const auto& out : set["outputs"]) {
            EXPECT_TRUE(out["passed"].get<bool>()) << out.dump();
            EXPECT_EQ(out["outside_count"].get<int>(), 0);
        }
}

INSTANTIATE_TEST_SUITE_P(Samples, CompareSample,
                         ::testing::Values("mnist_cnn", "tiny_bert", "lstm_classifier",
                                           "legacy_opset10", "squeezenet1_1"));

TEST(CliCompare, PerturbedReferenceFailsWithTheNumbers) {
    onnxlens::testing::CliScratchDir scratch;
    fs::path model = copySample("mnist_cnn", scratch / "");
    fs::path expectedFile = model.parent_path() / "test_data_set_0" / "output_0.pb";
    auto proto = onnxlens::readTensorPbFile(expectedFile);
    ASSERT_TRUE(proto) << proto.error().message;
    auto tensor = onnxlens::engine::tensorFromProto(*proto);
    ASSERT_EQ(tensor.dtype(), onnxlens::engine::DataType::Float);
    tensor.data<float>()[3] += 0.5f;  // far outside rtol 1e-3 / atol 1e-5
    ASSERT_TRUE(onnxlens::writeTensorPbFile(
        expectedFile, onnxlens::engine::tensorToProto(tensor, proto->name())));

    auto r = runCli({"compare", model.string(), "--data-set",
                     (model.parent_path() / "test_data_set_0").string(), "--json"});
    EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
    auto doc = nlohmann::json::parse(r.out);
    EXPECT_FALSE(doc["passed"].get<bool>());
    const auto& out = doc["data_sets"][0]["outputs"][0];
    EXPECT_FALSE(out["passed"].get<bool>());
    EXPECT_EQ(out["outside_count"].get<int>(), 1);
    EXPECT_NEAR(out["max_abs_error"].get<double>(), 0.5, 1e-3);
    EXPECT_EQ(out["worst_index"].back().get<int>(), 3 % tensor.shape().back());

    // The text report names the output and the numbers too.
    auto text = runCli({"compare", model.string(), "--data-set",
                        (model.parent_path() / "test_data_set_0").string()});
    EXPECT_EQ(text.exitCode, 1);
    EXPECT_NE(text.out.find("FAIL"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("max abs 0.5"), std::string::npos) << text.out;

    // A looser tolerance accepts the same data.
    auto loose = runCli({"compare", model.string(), "--data-set",
                         (model.parent_path() / "test_data_set_0").string(), "--atol", "1"});
    EXPECT_EQ(loose.exitCode, 0) << loose.out;
}

TEST(CliRun, RandomInputsAreSeededAndOutputsWritten) {
    onnxlens::testing::CliScratchDir scratch;
    auto a = runCli({"run", sample("tiny_bert").string(), "--seed", "7", "--dim", "batch=2",
                     "--dim", "sequence=5", "--json", "--out", (scratch / "out").string()});
    ASSERT_EQ(a.exitCode, 0) << a.err;
    auto b = runCli({"run", sample("tiny_bert").string(), "--seed", "7", "--dim", "batch=2",
                     "--dim", "sequence=5", "--json"});
    ASSERT_EQ(b.exitCode, 0) << b.err;
    auto docA = nlohmann::json::parse(a.out), docB = nlohmann::json::parse(b.out);
    EXPECT_EQ(docA["outputs"], docB["outputs"]);  // same seed, same statistics
    EXPECT_EQ(docA["outputs"][0]["shape"][0].get<int>(), 2);
    EXPECT_TRUE(fs::exists(scratch / "out" / "output_0.pb"));
    EXPECT_TRUE(fs::exists(scratch / "out" / "output_0.npy"));
    auto written = onnxlens::readTensorFile(scratch / "out" / "output_0.npy");
    ASSERT_TRUE(written) << written.error().message;
}

TEST(CliRun, InputFromTestDataSetReproducesTheReference) {
    onnxlens::testing::CliScratchDir scratch;
    fs::path set = sample("mnist_cnn").parent_path() / "test_data_set_0";
    auto r = runCli({"run", sample("mnist_cnn").string(), "--input",
                     "image=" + (set / "input_0.pb").string(), "--out", (scratch / "o").string()});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto got = onnxlens::readTensorFile(scratch / "o" / "output_0.pb");
    auto want = onnxlens::readTensorFile(set / "output_0.pb");
    ASSERT_TRUE(got && want);
    auto cmp = onnxlens::engine::compareTensors(onnxlens::engine::tensorFromProto(*got),
                                                onnxlens::engine::tensorFromProto(*want));
    EXPECT_TRUE(cmp.passed) << cmp.problem;
}

TEST(CliRun, OptionalOutputsAreWrittenAsOptionalProtoAndCompareReadsThem) {
    // test_if_opt returns optional<sequence<tensor>>: --out must write it as the ONNX test data
    // does (output_0.pb an OptionalProto holding the sequence), and compare must read it back.
    onnxlens::testing::CliScratchDir scratch;
    const fs::path node = fs::path(ONNXLENS_TESTDATA_DIR) / "node" / "test_if_opt";
    const fs::path set = scratch / "test_data_set_0";
    fs::create_directories(set);
    fs::copy_file(node / "test_data_set_0" / "input_0.pb", set / "input_0.pb");
    auto r = runCli({"run", (node / "model.onnx").string(), "--input",
                     "cond=" + (set / "input_0.pb").string(), "--out", set.string(), "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["outputs"][0]["optional"], true);
    std::ifstream in(set / "output_0.pb", std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    onnx::OptionalProto written;
    ASSERT_TRUE(written.ParseFromString(bytes.str()));
    EXPECT_EQ(written.elem_type(), onnx::OptionalProto::SEQUENCE);
    EXPECT_EQ(written.sequence_value().tensor_values_size(), 1);
    std::ifstream ref(node / "test_data_set_0" / "output_0.pb", std::ios::binary);
    std::stringstream refBytes;
    refBytes << ref.rdbuf();
    onnx::OptionalProto reference;
    ASSERT_TRUE(reference.ParseFromString(refBytes.str()));
    EXPECT_EQ(written.sequence_value().tensor_values(0).raw_data().size(),
              reference.sequence_value().tensor_values(0).float_data_size() * sizeof(float) +
                  reference.sequence_value().tensor_values(0).raw_data().size());
    auto compare = runCli({"compare", (node / "model.onnx").string(), "--data-set", set.string()});
    EXPECT_EQ(compare.exitCode, 0) << compare.out << compare.err;
}

TEST(CliRun, WrongInputFileIsAUsageError) {
    onnxlens::testing::CliScratchDir scratch;
    fs::path set = sample("tiny_bert").parent_path() / "test_data_set_0";
    // input_1 of tiny_bert is the attention mask; feeding the mnist image is a dtype/rank error.
    auto r = runCli(
        {"run", sample("mnist_cnn").string(), "--input",
         "image=" +
             (sample("tiny_bert").parent_path() / "test_data_set_0" / "input_0.pb").string()});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("input_0.pb"), std::string::npos) << r.err;
    auto unknown = runCli({"run", sample("mnist_cnn").string(), "--input",
                           "nosuch=" + (set / "input_0.pb").string()});
    EXPECT_EQ(unknown.exitCode, 2);
    EXPECT_NE(unknown.err.find("nosuch"), std::string::npos) << unknown.err;
}

TEST(CliBench, StatisticsAndProfileAreConsistent) {
    onnxlens::testing::CliScratchDir scratch;
    fs::path trace = scratch / "trace.json";
    auto r = runCli({"bench", sample("mnist_cnn").string(), "--warmup", "2", "--runs", "10",
                     "--threads", "1", "--profile", trace.string(), "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(doc["runs"].get<int>(), 10);
    EXPECT_EQ(doc["threads"].get<int>(), 1);
    const double mn = doc["min_ms"], med = doc["median_ms"], p90 = doc["p90_ms"],
                 p99 = doc["p99_ms"], mx = doc["max_ms"];
    EXPECT_LE(mn, med);
    EXPECT_LE(med, p90);
    EXPECT_LE(p90, p99);
    EXPECT_LE(p99, mx);
    double perRunSum = 0, shareSum = 0;
    for (const auto& op : doc["op_types"]) {
        perRunSum += op["per_run_ms"].get<double>();
        shareSum += op["share"].get<double>();
    }
    EXPECT_NEAR(shareSum, 1.0, 1e-6);
    // Node times sum to (a little less than) the run time.
    EXPECT_LE(perRunSum, doc["mean_ms"].get<double>() * 1.05);
    EXPECT_GE(perRunSum, doc["mean_ms"].get<double>() * 0.5);
    auto events = nlohmann::json::parse(std::ifstream(trace));
    ASSERT_TRUE(events.is_array());
    EXPECT_GT(events.size(), 10u);
    EXPECT_EQ(events[0]["ph"], "X");
}
