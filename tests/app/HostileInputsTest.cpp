// Hostile inputs through the CLI: every file in tests/hostile/ (made by make_hostile.py) must give
// a clear one-line error naming the file and the problem, the design's exit code, and no crash.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "CliRunner.h"

using namespace onnxlens::testing;

namespace {

std::string hostile(const std::string& relative) {
    return (std::filesystem::path(ONNXLENS_SOURCE_DIR) / "tests" / "hostile" / relative).string();
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// Exit code as expected (never a signal), and stderr is exactly one line holding every part.
void expectCleanError(const CliResult& r, int exitCode, const std::vector<std::string>& parts) {
    EXPECT_LT(r.exitCode, 128) << "killed by a signal\n" << r.err;
    EXPECT_EQ(r.exitCode, exitCode) << r.out << r.err;
    ASSERT_FALSE(r.err.empty());
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "not a single line:\n" << r.err;
    for (const auto& part : parts)
        EXPECT_TRUE(contains(r.err, part)) << "no '" << part << "' in: " << r.err;
}

}  // namespace

TEST(HostileInputs, EmptyFile) {
    for (const char* command : {"info", "check", "run", "compare"})
        expectCleanError(runCli({command, hostile("empty.onnx")}), 2, {"empty.onnx", "empty"});
}

TEST(HostileInputs, RandomBytes) {
    for (const char* command : {"info", "check", "run", "compare"})
        expectCleanError(runCli({command, hostile("random_bytes.onnx")}), 2,
                         {"random_bytes.onnx", "not"});
}

TEST(HostileInputs, TruncatedModel) {
    for (const char* command : {"info", "check", "run"})
        expectCleanError(runCli({command, hostile("truncated.onnx")}), 2,
                         {"truncated.onnx", "truncated or corrupt"});
}

TEST(HostileInputs, FolderGivenAsModel) {
    for (const char* command : {"info", "check", "run", "compare"})
        expectCleanError(runCli({command, hostile("folder.onnx")}), 2,
                         {"folder.onnx", "is a folder"});
}

TEST(HostileInputs, MissingFile) {
    expectCleanError(runCli({"info", hostile("no_such_model.onnx")}), 2,
                     {"no_such_model.onnx", "no such file"});
}

TEST(HostileInputs, CyclicGraph) {
    for (const char* command : {"info", "run", "compare"})
        expectCleanError(runCli({command, hostile("cyclic_graph.onnx")}), 2,
                         {"cyclic_graph.onnx", "cycle"});
    // check reports the broken structure as a failed check, on stdout.
    auto r = runCli({"check", hostile("cyclic_graph.onnx")});
    EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "cycle")) << r.out;
}

TEST(HostileInputs, UndefinedInput) {
    for (const char* command : {"info", "run", "compare"})
        expectCleanError(runCli({command, hostile("undefined_input.onnx")}), 2,
                         {"undefined_input.onnx", "'nowhere'", "not defined"});
    auto r = runCli({"check", hostile("undefined_input.onnx")});
    EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "nowhere")) << r.out;
}

TEST(HostileInputs, NegativeDimsInInitializer) {
    expectCleanError(runCli({"run", hostile("negative_dims_initializer.onnx")}), 2,
                     {"negative_dims_initializer.onnx", "'w'", "negative"});
    auto info = runCli({"info", hostile("negative_dims_initializer.onnx")});
    EXPECT_LT(info.exitCode, 128) << info.err;
}

TEST(HostileInputs, HugeConstantOfShapeIsAMemoryLimitErrorNamingTheNode) {
    expectCleanError(runCli({"run", hostile("huge_constant_of_shape.onnx")}), 2,
                     {"huge_constant_of_shape.onnx", "huge_fill", "memory limit"});
}

TEST(HostileInputs, HugeExpandIsAMemoryLimitErrorNamingTheNode) {
    expectCleanError(runCli({"run", hostile("huge_expand.onnx")}), 2,
                     {"huge_expand.onnx", "huge_expand", "memory limit"});
    expectCleanError(runCli({"bench", "--runs", "1", "--warmup", "0", hostile("huge_expand.onnx")}),
                     2, {"huge_expand.onnx", "huge_expand", "memory limit"});
}

TEST(HostileInputs, ShapeOverflowing64BitsIsAnErrorNotAWrapAround) {
    expectCleanError(runCli({"run", hostile("overflow_expand.onnx")}), 2,
                     {"overflow_expand.onnx", "overflow_expand", "overflow"});
}

TEST(HostileInputs, HugeSymbolicDimIsAMemoryLimitErrorNamingTheInput) {
    expectCleanError(runCli({"run", hostile("dynamic_batch.onnx"), "--dim", "N=1099511627776"}), 2,
                     {"dynamic_batch.onnx", "'x'", "memory limit"});
}

TEST(HostileInputs, MaxMemoryOptionLimitsTensors) {
    // 1000 x 1024 floats = 4000 KiB: fine by default, refused under a 1M limit.
    auto ok = runCli({"run", hostile("dynamic_batch.onnx"), "--dim", "N=1000"});
    EXPECT_EQ(ok.exitCode, 0) << ok.err;
    expectCleanError(
        runCli({"run", hostile("dynamic_batch.onnx"), "--dim", "N=1000", "--max-memory", "1M"}), 2,
        {"memory limit of 1", "'x'"});
    auto big =
        runCli({"run", hostile("dynamic_batch.onnx"), "--dim", "N=1000", "--max-memory", "1G"});
    EXPECT_EQ(big.exitCode, 0) << big.err;
    expectCleanError(runCli({"run", hostile("relu.onnx"), "--max-memory", "lots"}), 2,
                     {"--max-memory", "lots"});
    expectCleanError(runCli({"run", hostile("relu.onnx"), "--max-memory", "99999999999T"}), 2,
                     {"--max-memory"});
}

TEST(HostileInputs, ExternalDataFixtureIsValid) {
    auto r = runCli({"run", hostile("external/model/valid.onnx")});
    EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
}

TEST(HostileInputs, ExternalDataLeavingTheFolderIsRefused) {
    struct Case {
        const char* file;
        std::vector<std::string> parts;
    };
    const std::vector<Case> cases = {
        {"dotdot.onnx", {"dotdot.onnx", "'../outside.bin'", "leaves the model folder"}},
        {"absolute.onnx", {"absolute.onnx", "'/etc/passwd'", "absolute path"}},
        {"symlink.onnx", {"symlink.onnx", "'link.bin'", "outside the model folder"}},
    };
    for (const auto& c : cases)
        for (const char* command : {"info", "run"})
            expectCleanError(runCli({command, hostile(std::string("external/model/") + c.file)}), 2,
                             c.parts);
}

TEST(HostileInputs, ExternalDataPastTheFileEndIsRefused) {
    expectCleanError(runCli({"info", hostile("external/model/offset_past_end.onnx")}), 2,
                     {"offset_past_end.onnx", "'w'", "offset"});
    expectCleanError(runCli({"run", hostile("external/model/length_past_end.onnx")}), 2,
                     {"length_past_end.onnx", "'w'", "length"});
}

TEST(HostileInputs, DeeplyNestedSubgraphsHitTheNestingLimit) {
    for (const char* command : {"info", "run"})
        expectCleanError(runCli({command, hostile("nested_70.onnx")}), 2,
                         {"nested_70.onnx", "nested deeper than 64"});
    // Far deeper than any limit: protobuf's recursion limit stops the parse.
    expectCleanError(runCli({"info", hostile("nested_400.onnx")}), 2,
                     {"nested_400.onnx", "nested more than"});
}

TEST(HostileInputs, TestDataDisagreeingWithTheGraph) {
    expectCleanError(runCli({"compare", hostile("mismatched_data/model.onnx")}), 2,
                     {"input_0.pb", "int64"});
}

TEST(HostileInputs, NpyWithALyingHeader) {
    expectCleanError(
        runCli({"run", hostile("relu.onnx"), "--input", "x=" + hostile("lying_header.npy")}), 2,
        {"lying_header.npy", "header"});
}

TEST(HostileInputs, TruncatedTensorFile) {
    expectCleanError(
        runCli({"run", hostile("relu.onnx"), "--input", "x=" + hostile("truncated_tensor.pb")}), 2,
        {"truncated_tensor.pb", "not a valid TensorProto"});
}

TEST(HostileInputs, TensorFileThatIsAFolder) {
    expectCleanError(
        runCli({"run", hostile("relu.onnx"), "--input", "x=" + hostile("folder.onnx")}), 2,
        {"folder.onnx", "folder"});
}

TEST(HostileInputs, NodeBreakingItsSchemaSkipsShapeInferenceInsteadOfCrashing) {
    // onnx's own Scan shape inference dereferences the missing required attribute.
    auto r = runCli({"info", "--json", hostile("scan_without_num_scan_inputs.onnx")});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "num_scan_inputs")) << r.out;
    EXPECT_TRUE(contains(r.out, "skipped")) << r.out;
    auto check = runCli({"check", hostile("scan_without_num_scan_inputs.onnx")});
    EXPECT_EQ(check.exitCode, 1) << check.out << check.err;
    EXPECT_TRUE(contains(check.out, "num_scan_inputs")) << check.out;
    expectCleanError(runCli({"run", hostile("scan_without_num_scan_inputs.onnx")}), 2,
                     {"scan_without_num_scan_inputs.onnx"});
}

TEST(HostileInputs, TensorFileWhoseDimsClaimGigabytesIsRefusedBeforeAllocating) {
    expectCleanError(
        runCli({"run", hostile("relu.onnx"), "--input", "x=" + hostile("huge_dims_tensor.pb")}), 2,
        {"huge_dims_tensor.pb", "less data than its shape"});
}

TEST(HostileInputs, InitializerClaiming2To40ElementsIsInspectableButNotRun) {
    // Its dims say 4 TiB of floats, its raw_data holds one: info reports it without allocating,
    // run refuses it before allocating.
    auto info = runCli({"info", hostile("huge_initializer.onnx")});
    EXPECT_EQ(info.exitCode, 0) << info.err;
    expectCleanError(runCli({"run", hostile("huge_initializer.onnx")}), 2,
                     {"huge_initializer.onnx", "'w'"});
}

TEST(HostileInputs, GraphInputOf2To40ElementsMeetsTheDefaultLimitOfHalfThePhysicalMemory) {
    auto info = runCli({"info", hostile("huge_input.onnx")});
    EXPECT_EQ(info.exitCode, 0) << info.err;
    // The limit in the message is the default: half of this machine's memory, printed in GiB.
    const double halfMemory = static_cast<double>(sysconf(_SC_PHYS_PAGES)) *
                              static_cast<double>(sysconf(_SC_PAGE_SIZE)) / 2;
    std::ostringstream limit;
    limit.precision(3);
    limit << "memory limit of " << halfMemory / double(1 << 30) << " GiB";
    expectCleanError(runCli({"run", hostile("huge_input.onnx")}), 2,
                     {"huge_input.onnx", "'x'", limit.str()});
}

// Attribute values that break arithmetic: info and render see the model (onnx's shape inference
// is guarded: it used to die with SIGFPE), run and check name the node, the attribute and the
// value.
TEST(HostileInputs, ZeroStridesAreAnErrorNamingNodeAttributeAndValue) {
    auto info = runCli({"info", hostile("conv_zero_strides.onnx")});
    EXPECT_EQ(info.exitCode, 0) << info.out << info.err;
    expectCleanError(runCli({"run", hostile("conv_zero_strides.onnx")}), 2,
                     {"conv_zero_strides.onnx", "zero_stride_conv", "strides", "0"});
    auto check = runCli({"check", hostile("conv_zero_strides.onnx")});
    EXPECT_EQ(check.exitCode, 1) << check.out << check.err;
    EXPECT_TRUE(contains(check.out, "engine compilation: FAILED")) << check.out;
    EXPECT_TRUE(contains(check.out, "strides")) << check.out;
}

TEST(HostileInputs, HugeBlockSizeIsAnErrorNotADivisionByZero) {
    EXPECT_EQ(runCli({"info", hostile("depth_to_space_huge_blocksize.onnx")}).exitCode, 0);
    expectCleanError(runCli({"run", hostile("depth_to_space_huge_blocksize.onnx")}), 2,
                     {"huge_block", "blocksize", "1099511627776"});
    EXPECT_EQ(runCli({"check", hostile("depth_to_space_huge_blocksize.onnx")}).exitCode, 1);
}

TEST(HostileInputs, RankZeroRecurrentInputIsAnErrorNotACrash) {
    auto info = runCli({"info", "--json", hostile("lstm_rank0_input.onnx")});
    EXPECT_EQ(info.exitCode, 0) << info.err;
    auto run = runCli({"run", hostile("lstm_rank0_input.onnx")});
    EXPECT_LT(run.exitCode, 128) << run.err;
    EXPECT_EQ(run.exitCode, 2) << run.out << run.err;
    EXPECT_TRUE(contains(run.err, "rank0_lstm")) << run.err;
}

// `check` catches what `run` will: initializers whose dims do not hold (negative, or more
// elements than the data has) fail the check, not only the run.
TEST(HostileInputs, CheckFailsOnInitializersRunCannotLoad) {
    for (const char* file : {"negative_dims_initializer.onnx", "short_data_initializer.onnx"}) {
        auto check = runCli({"check", hostile(file)});
        EXPECT_EQ(check.exitCode, 1) << file << "\n" << check.out << check.err;
        EXPECT_TRUE(contains(check.out, "'w'")) << check.out;
        auto json = runCli({"check", "--json", hostile(file)});
        EXPECT_EQ(json.exitCode, 1);
        EXPECT_TRUE(contains(json.out, "\"compilation\"")) << json.out;
    }
    expectCleanError(runCli({"run", hostile("short_data_initializer.onnx")}), 2,
                     {"short_data_initializer.onnx", "'w'"});
    EXPECT_EQ(runCli({"check", hostile("relu.onnx")}).exitCode, 0);
}
