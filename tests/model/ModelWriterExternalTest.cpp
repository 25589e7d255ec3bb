// Models over the external-data threshold (2 GB; lowered here so the files stay small) are
// written with their weights in "<model>.data" beside the model, at 64-byte aligned offsets, and
// tensors still external in the source are copied through their mapping.
#include <gtest/gtest.h>

#include "ModelTestSupport.h"
#include "onnxlens/model/ExternalData.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/ModelWriter.h"

using namespace onnxlens;
using namespace onnxlens::testing;

namespace {

std::vector<float> ramp(int n, float start) {
    std::vector<float> v;
    for (int i = 0; i < n; ++i) v.push_back(start + static_cast<float>(i) * 0.5f);
    return v;
}

std::string bytesOf(const std::vector<float>& v) {
    return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

// addReluModel with two more initializers of 1,000 and 333 floats (4,000 and 1,332 bytes).
onnx::ModelProto modelWithWeights() {
    auto model = addReluModel();
    *model.mutable_graph()->add_initializer() = floatTensor("big", {1000}, ramp(1000, 1));
    *model.mutable_graph()->add_initializer() = floatTensor("odd", {333}, ramp(333, -7));
    return model;
}

std::string externalBytes(const onnx::TensorProto& tensor, const std::filesystem::path& dir) {
    auto bytes = readExternalData(tensor, dir);
    EXPECT_TRUE(bytes) << (bytes ? "" : bytes.error().message);
    return bytes ? *bytes : std::string();
}

}  // namespace

TEST(ModelWriterExternal, OverTheLoweredThresholdWeightsGoBesideTheModel) {
    ScratchDir dir;
    auto model = modelWithWeights();
    ModelWriteOptions options;
    options.externalDataThreshold = 2048;  // the model is ~5.4 KB
    auto written = writeModelFile(model, dir / "m.onnx", options);
    ASSERT_TRUE(written) << written.error().message;
    EXPECT_EQ(written->externalDataFile, dir / "m.onnx.data");
    EXPECT_TRUE(std::filesystem::exists(dir / "m.onnx.data"));
    EXPECT_LT(std::filesystem::file_size(dir / "m.onnx"), 1024u);

    auto loaded = loadModel(dir / "m.onnx");
    ASSERT_TRUE(loaded) << loaded.error().message;
    const auto& inits = loaded->proto->graph().initializer();
    ASSERT_EQ(inits.size(), 3);
    EXPECT_FALSE(usesExternalData(inits[0]));  // 16 bytes: under externalTensorMinBytes
    for (int i = 1; i < 3; ++i) {
        ASSERT_TRUE(usesExternalData(inits[i])) << inits[i].name();
        auto location = resolveExternalData(inits[i], loaded->directory);
        ASSERT_TRUE(location);
        EXPECT_EQ(location->file.filename(), "m.onnx.data");
        EXPECT_EQ(location->offset % 64, 0u) << inits[i].name();
    }
    EXPECT_EQ(externalBytes(inits[1], loaded->directory), bytesOf(ramp(1000, 1)));
    EXPECT_EQ(externalBytes(inits[2], loaded->directory), bytesOf(ramp(333, -7)));
}

TEST(ModelWriterExternal, UnderTheThresholdEverythingIsInline) {
    ScratchDir dir;
    auto model = modelWithWeights();
    auto written = writeModelFile(model, dir / "m.onnx");
    ASSERT_TRUE(written) << written.error().message;
    EXPECT_TRUE(written->externalDataFile.empty());
    EXPECT_FALSE(std::filesystem::exists(dir / "m.onnx.data"));
}

// A model loaded with its weights still external (as `optimize` saves it) is written without
// reading them into the model: over the threshold they are copied file to file, under it inlined.
TEST(ModelWriterExternal, SourceExternalTensorsAreCopiedOrInlined) {
    ScratchDir source, over, under;
    {
        auto model = modelWithWeights();
        ModelWriteOptions options;
        options.forceExternalData = true;
        ASSERT_TRUE(writeModelFile(model, source / "src.onnx", options));
    }
    for (bool external : {true, false}) {
        auto loaded = loadModel(source / "src.onnx");
        ASSERT_TRUE(loaded) << loaded.error().message;
        ModelWriteOptions options;
        options.sourceDirectory = loaded->directory;
        if (external) options.externalDataThreshold = 2048;
        const auto target = (external ? over : under) / "out.onnx";
        auto written = writeModelFile(*loaded->proto, target, options);
        ASSERT_TRUE(written) << written.error().message;
        auto reread = loadModel(target);
        ASSERT_TRUE(reread) << reread.error().message;
        const auto& big = reread->proto->graph().initializer(1);
        EXPECT_EQ(usesExternalData(big), external);
        EXPECT_EQ(external ? externalBytes(big, reread->directory) : big.raw_data(),
                  bytesOf(ramp(1000, 1)));
        if (external) {
            auto location = resolveExternalData(big, reread->directory);
            ASSERT_TRUE(location);
            EXPECT_EQ(location->file.parent_path(), std::filesystem::canonical(over.path()));
        }
    }
}

TEST(ModelWriterExternal, ExternalTensorWithoutASourceFolderIsAnError) {
    ScratchDir dir;
    auto model = modelWithWeights();
    ModelWriteOptions options;
    options.forceExternalData = true;
    ASSERT_TRUE(writeModelFile(model, dir / "src.onnx", options));
    auto loaded = loadModel(dir / "src.onnx");
    ASSERT_TRUE(loaded);
    auto written = writeModelFile(*loaded->proto, dir / "again.onnx");
    ASSERT_FALSE(written);
    EXPECT_NE(written.error().message.find("big"), std::string::npos) << written.error().message;
}

TEST(ModelWriterExternal, ATensorThatLostItsDataIsNotWritten) {
    // A tool that dropped a weight's bytes (onnx's version converter drops external-data fields)
    // must not leave a model that cannot load: the write is refused and nothing is created.
    ScratchDir dir;
    auto model = modelWithWeights();
    for (auto& t : *model.mutable_graph()->mutable_initializer())
        if (t.name() == "odd") t.clear_raw_data();
    auto written = writeModelFile(model, dir / "lost.onnx");
    ASSERT_FALSE(written);
    EXPECT_NE(written.error().message.find("'odd' has a shape but no data"), std::string::npos)
        << written.error().message;
    EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "something was written";
}
