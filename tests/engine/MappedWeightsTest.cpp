// External initializers used in place from their file's read-only mapping (issue 25): no copy
// counted for Gather and MatMul on mapped weights, a copy counted for an unaligned offset, and a
// file truncated or replaced under a live session is an error, not a crash.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "GraphBuilding.h"
#include "onnxlens/engine/Session.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/MappedFile.h"

using namespace onnxlens;
using namespace onnxlens::testing;
namespace fs = std::filesystem;

namespace {

constexpr std::int64_t kRows = 64, kWidth = 32, kOut = 8;  // table 8 KB, W 1 KB

class MappedWeights : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("onnxlens-mapped-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        for (std::int64_t i = 0; i < kRows * kWidth; ++i)
            table_.push_back(static_cast<float>(i % 97) * 0.25f - 3.0f);
        for (std::int64_t i = 0; i < kWidth * kOut; ++i)
            w_.push_back(static_cast<float>((i * 7) % 13) - 6.0f);
    }
    void TearDown() override { fs::remove_all(dir_); }

    // weights.bin (written unless `writeWeights` is false): the table at offset 0, W at
    // `wOffset`; ids -> Gather(table) -> rows, rows x W -> y.
    LoadedModel writeModel(std::uint64_t wOffset, bool writeWeights = true) {
        std::string bytes(reinterpret_cast<const char*>(table_.data()), table_.size() * 4);
        bytes.resize(wOffset, '\0');
        bytes.append(reinterpret_cast<const char*>(w_.data()), w_.size() * 4);
        if (writeWeights)
            std::ofstream(dir_ / "weights.bin", std::ios::binary).write(bytes.data(), bytes.size());

        onnx::ModelProto model = emptyModel(13);
        auto& g = *model.mutable_graph();
        g.set_name("mapped");
        auto* ids = g.add_input();
        ids->set_name("ids");
        ids->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
        ids->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(3);
        addExternal(g, "table", {kRows, kWidth}, 0);
        addExternal(g, "W", {kWidth, kOut}, wOffset);
        addNode(g, "Gather", {"table", "ids"}, {"rows"});
        addNode(g, "MatMul", {"rows", "W"}, {"y"});
        g.add_output()->set_name("rows");
        g.add_output()->set_name("y");
        LoadedModel loaded;
        loaded.path = dir_ / "mapped.onnx";
        loaded.directory = dir_;
        loaded.proto = std::make_shared<onnx::ModelProto>(model);
        return loaded;
    }

    static void addExternal(onnx::GraphProto& g, const std::string& name,
                            std::vector<std::int64_t> dims, std::uint64_t offset) {
        auto* t = g.add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::FLOAT);
        std::uint64_t count = 1;
        for (auto d : dims) {
            t->add_dims(d);
            count *= static_cast<std::uint64_t>(d);
        }
        t->set_data_location(onnx::TensorProto::EXTERNAL);
        for (auto [key, value] : {std::pair<std::string, std::string>{"location", "weights.bin"},
                                  {"offset", std::to_string(offset)},
                                  {"length", std::to_string(count * 4)}}) {
            auto* entry = t->add_external_data();
            entry->set_key(key);
            entry->set_value(value);
        }
    }

    std::map<std::string, engine::Value> feeds() const {
        return {{"ids", engine::Value(Tensor::fromVector<std::int64_t>({3}, {5, 0, 63}))}};
    }

    // rows and y computed here from the same numbers, row by row.
    void expectOutputs(const std::vector<engine::Value>& outputs) const {
        const std::int64_t ids[3] = {5, 0, 63};
        const auto& rows = outputs[0].tensor();
        const auto& y = outputs[1].tensor();
        ASSERT_EQ(rows.shape(), (Shape{3, kWidth}));
        ASSERT_EQ(y.shape(), (Shape{3, kOut}));
        for (int r = 0; r < 3; ++r) {
            for (std::int64_t c = 0; c < kWidth; ++c)
                EXPECT_EQ(rows.data<float>()[r * kWidth + c], table_[ids[r] * kWidth + c]);
            for (std::int64_t o = 0; o < kOut; ++o) {
                double sum = 0;
                for (std::int64_t k = 0; k < kWidth; ++k)
                    sum += double(table_[ids[r] * kWidth + k]) * w_[k * kOut + o];
                EXPECT_NEAR(y.data<float>()[r * kOut + o], sum, 1e-3) << r << "," << o;
            }
        }
    }

    fs::path dir_;
    std::vector<float> table_, w_;
};

}  // namespace

TEST_F(MappedWeights, GatherAndMatMulReadTheMappingInPlace) {
    const std::uint64_t before = MappedFile::mappedBytesInProcess();
    {
        auto session = engine::Session::create(writeModel(8192));
        ASSERT_TRUE(session) << session.error().message;
        const auto memory = (*session)->weightMemory();
        EXPECT_EQ(memory.mappedBytes, std::uint64_t(kRows * kWidth + kWidth * kOut) * 4);
        EXPECT_EQ(memory.copiedBytes, 0u);
        EXPECT_EQ(MappedFile::mappedBytesInProcess() - before, fs::file_size(dir_ / "weights.bin"));
        auto outputs = (*session)->run(feeds());
        ASSERT_TRUE(outputs) << outputs.error().message;
        expectOutputs(*outputs);
        EXPECT_EQ((*session)->weightMemory().reorderedBytes, 0u);
    }
    // The last user of the mapping is gone: unmapped.
    EXPECT_EQ(MappedFile::mappedBytesInProcess(), before);
}

TEST_F(MappedWeights, UnalignedOffsetIsCopiedAndCounted) {
    auto session = engine::Session::create(writeModel(8192 + 4));
    ASSERT_TRUE(session) << session.error().message;
    const auto memory = (*session)->weightMemory();
    EXPECT_EQ(memory.mappedBytes, std::uint64_t(kRows * kWidth) * 4);
    EXPECT_EQ(memory.copiedBytes, std::uint64_t(kWidth * kOut) * 4);
    auto outputs = (*session)->run(feeds());
    ASSERT_TRUE(outputs) << outputs.error().message;
    expectOutputs(*outputs);
}

TEST_F(MappedWeights, TwoSessionsShareOneMapping) {
    const std::uint64_t before = MappedFile::mappedBytesInProcess();
    auto first = engine::Session::create(writeModel(8192));
    auto second = engine::Session::create(writeModel(8192, false));  // the same file
    ASSERT_TRUE(first && second);
    EXPECT_EQ(MappedFile::mappedBytesInProcess() - before, fs::file_size(dir_ / "weights.bin"));
}

TEST_F(MappedWeights, TruncatedFileUnderALiveSessionIsAnError) {
    auto session = engine::Session::create(writeModel(8192));
    ASSERT_TRUE(session) << session.error().message;
    ASSERT_TRUE((*session)->run(feeds()));
    ASSERT_EQ(::truncate((dir_ / "weights.bin").c_str(), 100), 0);
    auto outputs = (*session)->run(feeds());
    ASSERT_FALSE(outputs);
    EXPECT_NE(outputs.error().message.find("weights.bin"), std::string::npos);
    EXPECT_NE(outputs.error().message.find("truncated"), std::string::npos)
        << outputs.error().message;
}

TEST_F(MappedWeights, ReplacedFileUnderALiveSessionIsAnError) {
    auto session = engine::Session::create(writeModel(8192));
    ASSERT_TRUE(session) << session.error().message;
    const fs::path file = dir_ / "weights.bin";
    fs::copy_file(file, dir_ / "new.bin");
    fs::rename(dir_ / "new.bin", file);  // same bytes, another file (an atomic save's rename)
    auto outputs = (*session)->run(feeds());
    ASSERT_FALSE(outputs);
    EXPECT_NE(outputs.error().message.find("replaced"), std::string::npos)
        << outputs.error().message;
}

// A truncation between the check and a read (during a run) faults: the guard turns the fault
// into zero pages and faulted(), the caller's error, instead of the process dying of SIGBUS.
TEST_F(MappedWeights, ReadPastATruncationFaultsIntoAnError) {
    const fs::path file = dir_ / "pages.bin";
    std::string bytes(3 * 4096, '\x5a');
    std::ofstream(file, std::ios::binary).write(bytes.data(), bytes.size());
    auto mapped = MappedFile::open(file);
    ASSERT_TRUE(mapped) << mapped.error().message;
    const char* data = (*mapped)->data();
    EXPECT_EQ(data[5000], '\x5a');
    EXPECT_FALSE((*mapped)->faulted());
    ASSERT_EQ(::truncate(file.c_str(), 0), 0);
    volatile const char* page = data + 2 * 4096;
    EXPECT_EQ(page[0], '\0');  // would be SIGBUS without the guard
    EXPECT_TRUE((*mapped)->faulted());
    auto st = (*mapped)->checkUnchanged();
    ASSERT_FALSE(st);
    EXPECT_NE(st.error().message.find("pages.bin"), std::string::npos);
    // A later open maps the file afresh instead of sharing the faulted mapping.
    auto again = MappedFile::open(file);
    ASSERT_TRUE(again);
    EXPECT_NE(again->get(), mapped->get());
    EXPECT_FALSE((*again)->faulted());
}
