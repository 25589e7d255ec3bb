#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ModelTestSupport.h"
#include "onnxlens/model/TensorFile.h"
#include "onnxlens/model/TestDataSet.h"

using namespace onnxlens;
using namespace onnxlens::testing;
using ::testing::HasSubstr;

namespace {

void touchTensor(const std::filesystem::path& file) {
    ASSERT_TRUE(writeTensorPbFile(file, floatTensor("t", {1, 4}, {1, 2, 3, 4})).ok());
}

void makeSet(const std::filesystem::path& folder, int inputs, int outputs) {
    std::filesystem::create_directories(folder);
    for (int k = 0; k < inputs; ++k) touchTensor(folder / ("input_" + std::to_string(k) + ".pb"));
    for (int k = 0; k < outputs; ++k) touchTensor(folder / ("output_" + std::to_string(k) + ".pb"));
}

}  // namespace

TEST(TestDataSet, InitializersAreNotFeedable) {
    auto model = addReluModel();
    auto* bias = model.mutable_graph()->add_input();
    bias->set_name("bias");  // IR 3 style: initializers listed as inputs too
    EXPECT_EQ(feedableInputNames(model.graph()), std::vector<std::string>{"x"});
}

TEST(TestDataSet, DiscoversFoldersInNumericOrder) {
    ScratchDir dir;
    for (int n : {10, 2, 0, 1}) makeSet(dir / ("test_data_set_" + std::to_string(n)), 1, 1);
    std::filesystem::create_directories(dir / "test_data_set_x");
    std::filesystem::create_directories(dir / "other");
    auto sets = discoverTestDataSets(dir / "model.onnx", addReluModel());
    ASSERT_TRUE(sets.ok()) << sets.error().message;
    ASSERT_EQ(sets->size(), 4u);
    std::vector<std::string> names;
    for (const auto& s : *sets) names.push_back(s.directory.filename().string());
    EXPECT_EQ(names, (std::vector<std::string>{"test_data_set_0", "test_data_set_1",
                                               "test_data_set_2", "test_data_set_10"}));
    EXPECT_EQ(sets->at(0).inputNames, std::vector<std::string>{"x"});
    EXPECT_EQ(sets->at(0).outputNames, std::vector<std::string>{"y"});
    EXPECT_EQ(sets->at(0).inputFiles.at(0).filename(), "input_0.pb");
}

TEST(TestDataSet, FilesAreInNumericOrderAndMayBeNpy) {
    ScratchDir dir;
    auto model = addReluModel();
    auto& graph = *model.mutable_graph();
    for (int k = 1; k < 12; ++k) {
        auto* input = graph.add_input();
        input->set_name("in" + std::to_string(k));
    }
    std::filesystem::create_directories(dir / "set");
    for (int k = 0; k < 12; ++k) {
        auto file = dir / "set" / ("input_" + std::to_string(k) + (k == 3 ? ".npy" : ".pb"));
        if (k == 3)
            ASSERT_TRUE(writeNpyFile(file, floatTensor("t", {1}, {1})).ok());
        else
            touchTensor(file);
    }
    auto set = readTestDataSetFolder(dir / "set", model);
    ASSERT_TRUE(set.ok()) << set.error().message;
    ASSERT_EQ(set->inputFiles.size(), 12u);
    EXPECT_EQ(set->inputFiles[3].filename(), "input_3.npy");
    EXPECT_EQ(set->inputFiles[10].filename(), "input_10.pb");
    EXPECT_EQ(set->inputNames[10], "in10");
    EXPECT_TRUE(set->outputFiles.empty());
}

TEST(TestDataSet, MoreInputFilesThanGraphInputsIsNamed) {
    ScratchDir dir;
    makeSet(dir / "test_data_set_0", 2, 1);
    auto sets = discoverTestDataSets(dir / "model.onnx", addReluModel());
    ASSERT_FALSE(sets.ok());
    EXPECT_THAT(sets.error().message, HasSubstr("test_data_set_0"));
    EXPECT_THAT(sets.error().message, HasSubstr("2 input files but the graph has only 1 inputs"));
}

TEST(TestDataSet, MoreOutputFilesThanGraphOutputsIsNamed) {
    ScratchDir dir;
    makeSet(dir / "s", 1, 3);
    auto set = readTestDataSetFolder(dir / "s", addReluModel());
    ASSERT_FALSE(set.ok());
    EXPECT_THAT(set.error().message, HasSubstr("3 output files but the graph has only 1 outputs"));
}

TEST(TestDataSet, GapsAndDuplicatesAreErrors) {
    ScratchDir dir;
    auto model = addReluModel();
    model.mutable_graph()->add_input()->set_name("second");
    std::filesystem::create_directories(dir / "gap");
    touchTensor(dir / "gap" / "input_1.pb");
    auto gap = readTestDataSetFolder(dir / "gap", model);
    ASSERT_FALSE(gap.ok());
    EXPECT_THAT(gap.error().message, HasSubstr("gap: input_0 is missing (found input_1)"));
    std::filesystem::create_directories(dir / "dup");
    touchTensor(dir / "dup" / "input_0.pb");
    ASSERT_TRUE(writeNpyFile(dir / "dup" / "input_0.npy", floatTensor("t", {1}, {1})).ok());
    auto dup = readTestDataSetFolder(dir / "dup", model);
    ASSERT_FALSE(dup.ok());
    EXPECT_THAT(dup.error().message, HasSubstr("both input_0.npy and input_0.pb exist"));
}

TEST(TestDataSet, BackendTestCasesPairWithTheirModels) {
    const std::filesystem::path root =
        std::filesystem::path(ONNXLENS_TESTDATA_DIR) / "pytorch-converted";
    if (!std::filesystem::exists(root)) GTEST_SKIP() << "no ONNX backend test data";
    int sets = 0;
    for (const auto& entry : std::filesystem::directory_iterator(root)) {
        onnx::ModelProto model;
        std::ifstream in(entry.path() / "model.onnx", std::ios::binary);
        ASSERT_TRUE(model.ParseFromIstream(&in));
        auto found = discoverTestDataSets(entry.path() / "model.onnx", model);
        ASSERT_TRUE(found.ok()) << found.error().message;
        for (const auto& set : *found) {
            EXPECT_FALSE(set.inputFiles.empty());
            EXPECT_EQ(set.outputNames.size(), set.outputFiles.size());
            ++sets;
        }
    }
    EXPECT_GT(sets, 50);
}
