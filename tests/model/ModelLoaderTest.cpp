#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "ModelTestSupport.h"
#include "onnxlens/model/ModelLoader.h"

using namespace onnxlens;
using namespace onnxlens::testing;
using ::testing::HasSubstr;

namespace {

std::string loadError(const std::filesystem::path& path) {
    auto loaded = loadModel(path);
    EXPECT_FALSE(loaded.ok()) << path;
    return loaded.ok() ? std::string() : loaded.error().message;
}

// An If node whose branches are built by the caller.
onnx::NodeProto* addIf(onnx::GraphProto& graph, const std::string& cond, const std::string& out,
                       const onnx::GraphProto& thenBranch, const onnx::GraphProto& elseBranch) {
    auto* node = addNode(graph, "If", {cond}, {out}, "if_" + out);
    auto* a = node->add_attribute();
    a->set_name("then_branch");
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = thenBranch;
    auto* b = node->add_attribute();
    b->set_name("else_branch");
    b->set_type(onnx::AttributeProto::GRAPH);
    *b->mutable_g() = elseBranch;
    return node;
}

// A branch graph with one Identity node reading `source` (from an outer scope) into `out`.
onnx::GraphProto identityBranch(const std::string& source, const std::string& out) {
    onnx::GraphProto branch;
    branch.set_name("branch_" + out);
    addNode(branch, "Identity", {source}, {out});
    setTensorType(branch.add_output(), onnx::TensorProto::FLOAT, {"N", "4"});
    branch.mutable_output(0)->set_name(out);
    return branch;
}

onnx::ModelProto ifModel(const onnx::GraphProto& thenBranch, const onnx::GraphProto& elseBranch) {
    auto model = addReluModel();
    auto& graph = *model.mutable_graph();
    setTensorType(graph.add_input(), onnx::TensorProto::BOOL, {});
    graph.mutable_input(1)->set_name("cond");
    addIf(graph, "cond", "chosen", thenBranch, elseBranch);
    graph.mutable_output(0)->set_name("chosen");
    return model;
}

}  // namespace

TEST(ModelLoader, LoadsAValidModel) {
    ScratchDir dir;
    writeFile(dir / "m.onnx", serialize(addReluModel()));
    auto loaded = loadModel(dir / "m.onnx");
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    EXPECT_EQ(loaded->proto->graph().node_size(), 2);
    EXPECT_EQ(loaded->directory, dir.path());
    EXPECT_EQ(loaded->fileBytes, std::filesystem::file_size(dir / "m.onnx"));
}

TEST(ModelLoader, MissingFileIsAnErrorNamingIt) {
    ScratchDir dir;
    auto message = loadError(dir / "absent.onnx");
    EXPECT_THAT(message, HasSubstr("absent.onnx"));
    EXPECT_THAT(message, HasSubstr("no such file"));
}

TEST(ModelLoader, FolderIsAnError) {
    ScratchDir dir;
    std::filesystem::create_directory(dir / "folder.onnx");
    auto message = loadError(dir / "folder.onnx");
    EXPECT_THAT(message, HasSubstr("folder.onnx"));
    EXPECT_THAT(message, HasSubstr("is a folder"));
}

TEST(ModelLoader, EmptyFileIsAnError) {
    ScratchDir dir;
    writeFile(dir / "empty.onnx", "");
    auto message = loadError(dir / "empty.onnx");
    EXPECT_THAT(message, HasSubstr("empty.onnx"));
    EXPECT_THAT(message, HasSubstr("empty"));
}

TEST(ModelLoader, RandomBytesAreRejected) {
    ScratchDir dir;
    std::mt19937 random(42);
    for (int trial = 0; trial < 200; ++trial) {
        std::string bytes(1 + random() % 4096, '\0');
        for (auto& c : bytes) c = static_cast<char>(random());
        writeFile(dir / "random.onnx", bytes);
        auto message = loadError(dir / "random.onnx");
        EXPECT_THAT(message, HasSubstr("random.onnx")) << "trial " << trial;
        EXPECT_THAT(message, HasSubstr("not")) << "trial " << trial;
    }
}

TEST(ModelLoader, AnotherProtobufIsNotAModel) {
    // A TensorProto parses as a ModelProto (its dims land in ir_version), but has no graph.
    ScratchDir dir;
    auto tensor = floatTensor("", {7}, {1, 2, 3, 4, 5, 6, 7});
    std::string bytes;
    tensor.SerializeToString(&bytes);
    writeFile(dir / "tensor.onnx", bytes);
    auto message = loadError(dir / "tensor.onnx");
    EXPECT_THAT(message, HasSubstr("tensor.onnx"));
    EXPECT_THAT(message, HasSubstr("not an ONNX model"));
}

TEST(ModelLoader, ImplausibleIrVersionIsRejected) {
    ScratchDir dir;
    auto model = addReluModel();
    model.set_ir_version(123456);
    writeFile(dir / "ir.onnx", serialize(model));
    auto message = loadError(dir / "ir.onnx");
    EXPECT_THAT(message, HasSubstr("ir.onnx"));
    EXPECT_THAT(message, HasSubstr("ir_version 123456"));
    model.set_ir_version(0);
    writeFile(dir / "ir.onnx", serialize(model));
    EXPECT_THAT(loadError(dir / "ir.onnx"), HasSubstr("ir_version 0"));
}

TEST(ModelLoader, TruncatedProtobufIsAnError) {
    ScratchDir dir;
    auto model = addReluModel();
    *model.mutable_graph()->mutable_initializer(0) = floatTensor("bias", {4}, {1, 2, 3, 4});
    model.mutable_graph()->mutable_initializer(0)->mutable_raw_data()->append(4000, 'x');
    const auto bytes = serialize(model);
    // Cut inside the large raw_data field: a length that runs past the end of the file.
    writeFile(dir / "cut.onnx", bytes.substr(0, bytes.size() / 2));
    auto message = loadError(dir / "cut.onnx");
    EXPECT_THAT(message, HasSubstr("cut.onnx"));
    EXPECT_THAT(message, HasSubstr("truncated"));
}

TEST(ModelLoader, TrailingGarbageIsRejected) {
    ScratchDir dir;
    std::mt19937 random(7);
    for (int trial = 0; trial < 50; ++trial) {
        std::string garbage(8 + random() % 64, '\0');
        for (auto& c : garbage) c = static_cast<char>(random());
        writeFile(dir / "tail.onnx", serialize(addReluModel()) + garbage);
        auto message = loadError(dir / "tail.onnx");
        EXPECT_THAT(message, HasSubstr("tail.onnx")) << "trial " << trial;
    }
}

TEST(ModelLoader, UndefinedTensorIsNamed) {
    ScratchDir dir;
    auto model = addReluModel();
    model.mutable_graph()->mutable_node(1)->set_input(0, "no_such_tensor");
    writeFile(dir / "undefined.onnx", serialize(model));
    auto message = loadError(dir / "undefined.onnx");
    EXPECT_THAT(message, HasSubstr("undefined.onnx"));
    EXPECT_THAT(message, HasSubstr("'no_such_tensor'"));
    EXPECT_THAT(message, HasSubstr("not defined"));
    EXPECT_THAT(message, HasSubstr("node 'relu' (Relu)"));
}

TEST(ModelLoader, UndefinedGraphOutputIsNamed) {
    ScratchDir dir;
    auto model = addReluModel();
    model.mutable_graph()->mutable_output(0)->set_name("ghost");
    writeFile(dir / "ghost.onnx", serialize(model));
    auto message = loadError(dir / "ghost.onnx");
    EXPECT_THAT(message, HasSubstr("ghost.onnx"));
    EXPECT_THAT(message, HasSubstr("graph output 'ghost'"));
}

TEST(ModelLoader, CycleIsAnError) {
    ScratchDir dir;
    auto model = addReluModel();
    // add reads relu's output and relu reads add's: a two-node cycle.
    model.mutable_graph()->mutable_node(0)->set_input(1, "y");
    writeFile(dir / "cycle.onnx", serialize(model));
    auto message = loadError(dir / "cycle.onnx");
    EXPECT_THAT(message, HasSubstr("cycle.onnx"));
    EXPECT_THAT(message, HasSubstr("cycle through node"));
}

TEST(ModelLoader, SelfLoopIsACycle) {
    auto model = addReluModel();
    model.mutable_graph()->mutable_node(1)->set_input(0, "y");
    auto status = validateModelStructure(model, "self.onnx");
    ASSERT_FALSE(status.ok());
    EXPECT_THAT(status.error().message,
                HasSubstr("self.onnx: main graph: the graph has a cycle through node 'relu'"));
}

TEST(ModelLoader, NodesOutOfOrderAreNotACycle) {
    auto model = addReluModel();
    model.mutable_graph()->mutable_node()->SwapElements(0, 1);
    EXPECT_TRUE(validateModelStructure(model, "m").ok());
}

TEST(ModelLoader, SubgraphsMayReadOuterScopes) {
    auto model = ifModel(identityBranch("x", "a"), identityBranch("sum", "b"));
    auto status = validateModelStructure(model, "if.onnx");
    EXPECT_TRUE(status.ok()) << status.error().message;
}

TEST(ModelLoader, UndefinedNameInSubgraphIsNamed) {
    auto model = ifModel(identityBranch("x", "a"), identityBranch("nowhere", "b"));
    auto status = validateModelStructure(model, "if.onnx");
    ASSERT_FALSE(status.ok());
    EXPECT_THAT(status.error().message, HasSubstr("if.onnx"));
    EXPECT_THAT(status.error().message, HasSubstr("'nowhere'"));
    EXPECT_THAT(status.error().message, HasSubstr("else_branch"));
}

TEST(ModelLoader, SubgraphReadsCountForCycles) {
    // The If's branch reads `y`, which Relu computes from the If's own output: a cycle that only
    // shows through the subgraph's outer-scope reads.
    auto model = ifModel(identityBranch("y", "a"), identityBranch("x", "b"));
    auto& graph = *model.mutable_graph();
    graph.mutable_node(1)->set_input(0, "chosen");  // relu reads the If's output
    graph.mutable_output(0)->set_name("y");
    auto status = validateModelStructure(model, "loop.onnx");
    ASSERT_FALSE(status.ok());
    EXPECT_THAT(status.error().message, HasSubstr("cycle"));
}

TEST(ModelLoader, NestingDepthIsLimited) {
    auto branch = identityBranch("x", "inner");
    for (int level = 0; level < 5; ++level) {
        onnx::GraphProto outer;
        outer.set_name("level" + std::to_string(level));
        addIf(outer, "cond", "nested" + std::to_string(level), branch, branch);
        setTensorType(outer.add_output(), onnx::TensorProto::FLOAT, {"N", "4"});
        outer.mutable_output(0)->set_name("nested" + std::to_string(level));
        branch = outer;
    }
    auto model = ifModel(branch, branch);
    EXPECT_TRUE(validateModelStructure(model, "deep.onnx").ok());
    LoadLimits limits;
    limits.maxNestingDepth = 3;
    auto status = validateModelStructure(model, "deep.onnx", limits);
    ASSERT_FALSE(status.ok());
    EXPECT_THAT(status.error().message, HasSubstr("nested deeper than 3 levels"));
}

TEST(ModelLoader, ProtobufRecursionLimitStopsTheParseOfDeepNesting) {
    // 100 If levels are 300 nested messages, past the parser's limit of 256: a parse error that
    // says so, before the structural check (or the stack) is reached.
    auto branch = identityBranch("x", "inner");
    for (int level = 0; level < 100; ++level) {
        onnx::GraphProto outer;
        outer.set_name("level" + std::to_string(level));
        addIf(outer, "cond", "nested" + std::to_string(level), branch, identityBranch("x", "e"));
        branch = std::move(outer);
    }
    auto loaded = loadModelFromBytes(serialize(ifModel(branch, branch)), "deep.onnx", ".");
    ASSERT_FALSE(loaded.ok());
    EXPECT_THAT(loaded.error().message, HasSubstr("deep.onnx"));
    EXPECT_THAT(loaded.error().message, HasSubstr("nested more than 256 messages deep"));
}

TEST(ModelLoader, FileAboveTheProtobufSizeLimitIsRefusedBeforeReading) {
    ScratchDir dir;
    writeFile(dir / "huge.onnx", "");
    std::filesystem::resize_file(dir / "huge.onnx", std::uint64_t{1} << 31);  // sparse: no disk
    auto message = loadError(dir / "huge.onnx");
    EXPECT_THAT(message, HasSubstr("huge.onnx"));
    EXPECT_THAT(message, HasSubstr("larger than 2 GB"));
}

TEST(ModelLoader, LoadsFromBytes) {
    auto loaded = loadModelFromBytes(serialize(addReluModel()), "memory.onnx", ".");
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    EXPECT_EQ(loaded->proto->graph().name(), "add_relu");
    auto bad = loadModelFromBytes("\x08\x07garbage", "memory.onnx", ".");
    ASSERT_FALSE(bad.ok());
    EXPECT_THAT(bad.error().message, HasSubstr("memory.onnx"));
}

TEST(ModelLoader, ParseModelFileSkipsStructuralChecks) {
    ScratchDir dir;
    auto model = addReluModel();
    model.mutable_graph()->mutable_node(1)->set_input(0, "no_such_tensor");
    writeFile(dir / "undefined.onnx", serialize(model));
    EXPECT_TRUE(parseModelFile(dir / "undefined.onnx").ok());
}

TEST(ModelLoader, LoadsEveryBackendTestModel) {
    const std::filesystem::path root = ONNXLENS_TESTDATA_DIR;
    if (!std::filesystem::exists(root)) GTEST_SKIP() << "no ONNX backend test data at " << root;
    int models = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
        if (entry.path().filename() != "model.onnx") continue;
        auto loaded = loadModel(entry.path());
        EXPECT_TRUE(loaded.ok()) << loaded.error().message;
        ++models;
    }
    EXPECT_GT(models, 1000);
}
