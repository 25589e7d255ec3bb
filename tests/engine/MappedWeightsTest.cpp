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

namespace {

// Resident kB of this process's mappings of `file` (/proc/self/smaps).
std::uint64_t residentKbOf(const fs::path& file) {
    const std::string target = fs::canonical(file).string();
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    bool inside = false;
    std::uint64_t kb = 0;
    while (std::getline(smaps, line)) {
        const std::string first = line.substr(0, line.find(' '));
        if (!first.empty() && first.find('-') != std::string::npos &&
            first.find_first_not_of("0123456789abcdef-") == std::string::npos) {
            inside = line.size() >= target.size() &&
                     line.compare(line.size() - target.size(), target.size(), target) == 0;
        } else if (inside && line.rfind("Rss:", 0) == 0) {
            kb += std::stoull(line.substr(4));
        }
    }
    return kb;
}

}  // namespace

// At load the session reads its mapped weights in (no page faults in the first run), but not a
// table that is only looked up by rows: a Gather's 4 MB table stays out of the process's memory
// at load; the same table read whole by another node is read in with the rest.
TEST_F(MappedWeights, TablesOnlyLookedUpByRowsAreNotReadInAtLoad) {
    constexpr std::int64_t kTableRows = 1024, kTableWidth = 1024;  // 4 MB
    std::vector<float> table(static_cast<std::size_t>(kTableRows * kTableWidth), 0.5f);
    std::vector<float> w(static_cast<std::size_t>(kTableWidth * 4), 0.25f);
    const std::uint64_t wOffset = table.size() * 4;
    auto write = [&](const std::string& name, bool readWhole) {
        std::ofstream out(dir_ / (name + ".bin"), std::ios::binary);
        out.write(reinterpret_cast<const char*>(table.data()),
                  static_cast<std::streamsize>(table.size() * 4));
        out.write(reinterpret_cast<const char*>(w.data()),
                  static_cast<std::streamsize>(w.size() * 4));
        out.close();
        onnx::ModelProto model = emptyModel(13);
        auto& g = *model.mutable_graph();
        auto* ids = g.add_input();
        ids->set_name("ids");
        ids->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
        ids->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(3);
        addExternal(g, "table", {kTableRows, kTableWidth}, 0);
        addExternal(g, "W", {kTableWidth, 4}, wOffset);
        for (auto& init : *g.mutable_initializer())
            for (auto& entry : *init.mutable_external_data())
                if (entry.key() == "location") entry.set_value(name + ".bin");
        addNode(g, "Gather", {"table", "ids"}, {"rows"});
        addNode(g, "MatMul", {"rows", "W"}, {"y"});
        g.add_output()->set_name("y");
        if (readWhole) {
            addNode(g, "ReduceSum", {"table"}, {"total"});
            g.add_output()->set_name("total");
        }
        LoadedModel loaded;
        loaded.path = dir_ / (name + ".onnx");
        loaded.directory = dir_;
        loaded.proto = std::make_shared<onnx::ModelProto>(model);
        return loaded;
    };
    const std::uint64_t tableKb = table.size() * 4 / 1024;
    {
        auto session = engine::Session::create(write("whole", true));
        ASSERT_TRUE(session) << session.error().message;
        if (residentKbOf(dir_ / "whole.bin") < tableKb)
            GTEST_SKIP() << "this kernel does not read mapped files in on request "
                            "(MADV_POPULATE_READ, Linux 5.14)";
    }
    engine::SessionOptions plain;
    plain.optimize = false;
    auto session = engine::Session::create(write("rows", false), plain);
    ASSERT_TRUE(session) << session.error().message;
    EXPECT_LT(residentKbOf(dir_ / "rows.bin"), tableKb / 4);
    auto outputs = (*session)->run(
        {{"ids", engine::Value(Tensor::fromVector<std::int64_t>({3}, {5, 0, 1023}))}});
    ASSERT_TRUE(outputs) << outputs.error().message;
    EXPECT_FLOAT_EQ((*outputs)[0].tensor().data<float>()[0], 0.5f * 0.25f * kTableWidth);
    // (How much of the table the run's three rows bring in is the kernel's choice: a read fault
    // maps the page cache's whole folio, up to 2 MB on recent kernels.)
}
