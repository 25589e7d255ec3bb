// onnxlens-cli edit end to end: edits in command-line order, the saved model passes `check` and
// runs with the original's outputs where the edit keeps the semantics, make-batch-dynamic on a
// PyTorch export that bakes its batch (batch 4 against each sample alone), --dry-run writes
// nothing, a failed edit or save leaves every file as it was, external data stays external.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "CliModelFiles.h"
#include "CliRunner.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/TensorFile.h"

namespace onnxlens {
namespace {

using nlohmann::json;
using testing::CliScratchDir;
using testing::runCli;
using testing::sampleModel;

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string mnist() { return sampleModel("mnist_cnn").string(); }

std::string fixedBatchExport() {
    return std::string(ONNXLENS_SOURCE_DIR) + "/tests/engine/data/dynamic_axes/fixed_batch.onnx";
}

void expectCheckPasses(const fs::path& model) {
    auto check = runCli({"check", model.string()});
    EXPECT_EQ(check.exitCode, 0) << check.out << check.err;
}

// output_K of `run --seed 7 --out` for both models, compared element by element.
void expectSameOutputs(const fs::path& a, const fs::path& b, const CliScratchDir& dir,
                       int output = 0, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argsA = {"run", a.string(), "--seed",
                                      "7",   "--out",    (dir / "out_a").string()};
    std::vector<std::string> argsB = {"run", b.string(), "--seed",
                                      "7",   "--out",    (dir / "out_b").string()};
    argsA.insert(argsA.end(), extra.begin(), extra.end());
    argsB.insert(argsB.end(), extra.begin(), extra.end());
    auto runA = runCli(argsA);
    auto runB = runCli(argsB);
    ASSERT_EQ(runA.exitCode, 0) << runA.err;
    ASSERT_EQ(runB.exitCode, 0) << runB.err;
    const std::string file = "output_" + std::to_string(output) + ".pb";
    auto ta = readTensorFile(dir / "out_a" / file);
    auto tb = readTensorFile(dir / "out_b" / file);
    ASSERT_TRUE(ta && tb);
    EXPECT_EQ(ta->raw_data(), tb->raw_data());
    EXPECT_FALSE(ta->raw_data().empty());
}

TEST(CliEdit, EditsInOrderKeepTheOutputs) {
    CliScratchDir dir;
    const auto out = dir / "edited.onnx";
    // The rename comes first, so --set-dim and --set-attr name the new names; names hold '/' and
    // '.' and ':'.
    auto r = runCli({"edit", mnist(), out.string(), "--rename", "image=pixels:0", "--rename",
                     "/conv1/Conv=/first.conv", "--set-dim", "pixels:0:0=n", "--set-attr",
                     "/first.conv.dilations=[1,1]", "--metadata", "author=me", "--add-output",
                     "/Relu_output_0"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    expectCheckPasses(out);
    auto loaded = loadModel(out);
    ASSERT_TRUE(loaded);
    const auto& g = loaded->proto->graph();
    EXPECT_EQ(g.input(0).name(), "pixels:0");
    EXPECT_EQ(g.input(0).type().tensor_type().shape().dim(0).dim_param(), "n");
    EXPECT_EQ(g.node(0).name(), "/first.conv");
    EXPECT_EQ(g.output_size(), 2);
    EXPECT_EQ(loaded->proto->metadata_props(0).value(), "me");
    expectSameOutputs(mnist(), out, dir);
}

TEST(CliEdit, ExtractAndDeleteRunAndCheck) {
    CliScratchDir dir;
    const auto cut = dir / "cut.onnx";
    auto r = runCli({"edit", mnist(), cut.string(), "--extract-input", "/MaxPool_1_output_0",
                     "--extract-output", "/fc2/Gemm_output_0", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    auto doc = json::parse(r.out);
    EXPECT_EQ(doc["edits"].size(), 1u);
    expectCheckPasses(cut);
    auto loaded = loadModel(cut);
    ASSERT_TRUE(loaded);
    EXPECT_EQ(loaded->proto->graph().node_size(), 4);  // Flatten, Gemm, Relu, Gemm
    EXPECT_EQ(loaded->proto->graph().initializer_size(), 4);

    // Deleting the final LogSoftmax bypasses it (same type and shape): the Gemm writes log_probs.
    const auto noSoftmax = dir / "no_softmax.onnx";
    r = runCli({"edit", mnist(), noSoftmax.string(), "--delete", "/LogSoftmax"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    expectCheckPasses(noSoftmax);
    // The logits before LogSoftmax: the original with that tensor as an output gives the same.
    const auto withLogits = dir / "with_logits.onnx";
    r = runCli({"edit", mnist(), withLogits.string(), "--add-output", "/fc2/Gemm_output_0"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    CliScratchDir runs;
    auto a = runCli({"run", withLogits.string(), "--seed", "3", "--out", (runs / "a").string()});
    auto b = runCli({"run", noSoftmax.string(), "--seed", "3", "--out", (runs / "b").string()});
    ASSERT_EQ(a.exitCode, 0) << a.err;
    ASSERT_EQ(b.exitCode, 0) << b.err;
    auto ta = readTensorFile(runs / "a" / "output_1.pb");
    auto tb = readTensorFile(runs / "b" / "output_0.pb");
    ASSERT_TRUE(ta && tb);
    EXPECT_EQ(ta->raw_data(), tb->raw_data());
}

TEST(CliEdit, MakeBatchDynamicRepairsABakedReshape) {
    CliScratchDir dir;
    // Before: the export's Reshape bakes batch 1, the dynamic-axes check fails.
    auto before = runCli({"check", fixedBatchExport(), "--dynamic-axes"});
    EXPECT_EQ(before.exitCode, 1) << before.out;
    const auto out = dir / "dynamic.onnx";
    auto r = runCli({"edit", fixedBatchExport(), out.string(), "--make-batch-dynamic", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    auto doc = json::parse(r.out);
    EXPECT_TRUE(doc["batch_check"]["passed"].get<bool>()) << r.out;
    EXPECT_TRUE(doc["batch_check"]["ran"].get<bool>());
    EXPECT_LE(doc["batch_check"]["max_abs_difference"].get<double>(), 1e-5);
    expectCheckPasses(out);
    auto after = runCli({"check", out.string(), "--dynamic-axes"});
    EXPECT_EQ(after.exitCode, 0) << after.out;
    // Batch 1 gives the original's outputs.
    expectSameOutputs(fixedBatchExport(), out, dir, 0, {"--dim", "batch=1"});
    // Batch 4 runs (the original refuses it).
    auto four = runCli({"run", out.string(), "--dim", "batch=4"});
    EXPECT_EQ(four.exitCode, 0) << four.err;
}

TEST(CliEdit, DryRunWritesNothing) {
    CliScratchDir dir;
    const auto out = dir / "never.onnx";
    auto r = runCli(
        {"edit", mnist(), out.string(), "--rename", "image=x", "--delete", "/Relu", "--dry-run"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("would 1. rename 'image' to 'x'"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("bypassed"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("nothing written"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(out));
    // A failing edit in a dry run: the same error as for real.
    r = runCli({"edit", mnist(), out.string(), "--rename", "image=log_probs", "--dry-run"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("already used"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
}

TEST(CliEdit, AFailedEditLeavesTheFilesAsTheyWere) {
    CliScratchDir dir;
    const auto out = dir / "existing.onnx";
    testing::writeBytes(out, "previous contents");
    for (const std::vector<std::string>& edit : std::vector<std::vector<std::string>>{
             {"--rename", "image=log_probs"},
             {"--set-dim", "image:0=0"},
             {"--extract-output", "/fc2/Gemm_output_0"},
             {"--set-attr", "/conv1/Conv.group=x"},
             {"--opset", "99"},
             {"--set-initializer", "fc2.bias=" + (dir / "missing.npy").string()}}) {
        std::vector<std::string> args = {"edit", mnist(), out.string(), "--metadata", "a=b"};
        args.insert(args.end(), edit.begin(), edit.end());
        auto r = runCli(args);
        EXPECT_EQ(r.exitCode, 2) << edit[0] << ": " << r.out << r.err;
        EXPECT_NE(r.err.find("edit 2"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("nothing written"), std::string::npos) << r.err;
        EXPECT_EQ(slurp(out), "previous contents");
    }
    // The model itself needs --force.
    CliScratchDir own;
    const auto model = own / "model.onnx";
    fs::copy_file(mnist(), model);
    const std::string original = slurp(model);
    auto r = runCli({"edit", model.string(), model.string(), "--metadata", "a=b"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;
    EXPECT_EQ(slurp(model), original);
    r = runCli({"edit", model.string(), model.string(), "--metadata", "a=b", "--force"});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    expectCheckPasses(model);
}

TEST(CliEdit, AFailedSaveLeavesTheFilesAsTheyWere) {
    CliScratchDir dir;
    // The folder of OUT is a file: no temporary file can be made there.
    testing::writeBytes(dir / "plain", "x");
    auto r = runCli({"edit", mnist(), (dir / "plain" / "out.onnx").string(), "--metadata", "a=b"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("saving failed"), std::string::npos) << r.err;
    EXPECT_EQ(slurp(dir / "plain"), "x");

    // A full disk: a 64 KB tmpfs holding a previous OUT (needs the right to mount: root in CI's
    // container or the build's namespace; skipped otherwise).
    const auto full = dir / "full";
    fs::create_directories(full);
    if (::mount("tmpfs", full.c_str(), "tmpfs", 0, "size=64k") != 0) {
        std::cout << "[ SKIPPED  ] full disk part: cannot mount a tmpfs here\n";
    } else {
        testing::writeBytes(full / "out.onnx", "previous contents");
        r = runCli({"edit", mnist(), (full / "out.onnx").string(), "--metadata", "a=b"});
        EXPECT_EQ(r.exitCode, 2);
        EXPECT_NE(r.err.find("saving failed"), std::string::npos) << r.err;
        EXPECT_EQ(slurp(full / "out.onnx"), "previous contents");
        std::size_t files = 0;
        for ([[maybe_unused]] const auto& e : fs::directory_iterator(full)) ++files;
        EXPECT_EQ(files, 1u);  // no temporary file left behind
        ::umount(full.c_str());
    }
    // A read-only folder (root may write anyway: then only the message is not checked).
    const auto readOnly = dir / "read_only";
    fs::create_directories(readOnly);
    testing::writeBytes(readOnly / "out.onnx", "previous contents");
    fs::permissions(readOnly, fs::perms::owner_read | fs::perms::owner_exec);
    if (::geteuid() != 0) {
        r = runCli(
            {"edit", mnist(), (readOnly / "out.onnx").string(), "--metadata", "a=b", "--force"});
        EXPECT_EQ(r.exitCode, 2);
        EXPECT_NE(r.err.find("saving failed"), std::string::npos) << r.err;
        EXPECT_EQ(slurp(readOnly / "out.onnx"), "previous contents");
    }
    fs::permissions(readOnly, fs::perms::owner_all);
}

TEST(CliEdit, ExternalDataStaysExternal) {
    CliScratchDir dir;
    // A first save with a low threshold puts the weights in external.onnx.data.
    ::setenv("ONNXLENS_TEST_EXTERNAL_DATA_THRESHOLD", "4096", 1);
    auto r = runCli({"edit", mnist(), (dir / "external.onnx").string(), "--metadata", "a=b"});
    ::unsetenv("ONNXLENS_TEST_EXTERNAL_DATA_THRESHOLD");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    ASSERT_TRUE(fs::exists(dir / "external.onnx.data"));
    const std::string data = slurp(dir / "external.onnx.data");
    // Editing it (default threshold) keeps the weights external, in a new file beside the new
    // model; the source's data file is not written.
    r = runCli({"edit", (dir / "external.onnx").string(), (dir / "again.onnx").string(), "--rename",
                "image=x"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_TRUE(fs::exists(dir / "again.onnx.data"));
    EXPECT_EQ(slurp(dir / "external.onnx.data"), data);
    expectCheckPasses(dir / "again.onnx");
    expectSameOutputs(mnist(), dir / "again.onnx", dir);
}

TEST(CliEdit, ScriptsAndTheirErrors) {
    CliScratchDir dir;
    testing::writeBytes(dir / "edits.json", R"({"edits": [
        {"op": "rename", "from": "image", "to": "x", "target": "tensor"},
        {"op": "set-dim", "tensor": "x", "axis": 0, "value": "2"},
        {"op": "metadata", "key": "doc_string", "value": "edited"}]})");
    const auto out = dir / "scripted.onnx";
    auto r = runCli({"edit", mnist(), out.string(), "--script", (dir / "edits.json").string(),
                     "--cleanup", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    auto doc = json::parse(r.out);
    EXPECT_EQ(doc["edits"].size(), 3u);
    auto loaded = loadModel(out);
    ASSERT_TRUE(loaded);
    EXPECT_EQ(loaded->proto->graph().input(0).type().tensor_type().shape().dim(0).dim_value(), 2);
    EXPECT_EQ(loaded->proto->doc_string(), "edited");
    expectCheckPasses(out);

    testing::writeBytes(dir / "typo.json", R"({"edits": [{"op": "rename", "form": "a"}]})");
    r = runCli({"edit", mnist(), out.string(), "--script", (dir / "typo.json").string()});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("edit 1: rename has no key \"form\""), std::string::npos) << r.err;
    r = runCli({"edit", mnist(), out.string()});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("no edit given"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace onnxlens
