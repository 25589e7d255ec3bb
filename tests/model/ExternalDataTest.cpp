#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ModelTestSupport.h"
#include "onnxlens/model/ExternalData.h"
#include "onnxlens/model/ModelLoader.h"

using namespace onnxlens;
using namespace onnxlens::testing;
using ::testing::HasSubstr;

namespace {

void setExternal(onnx::TensorProto& tensor, const std::string& location,
                 const std::string& offset = "", const std::string& length = "") {
    tensor.clear_raw_data();
    tensor.set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const std::string& key, const std::string& value) {
        auto* entry = tensor.add_external_data();
        entry->set_key(key);
        entry->set_value(value);
    };
    add("location", location);
    if (!offset.empty()) add("offset", offset);
    if (!length.empty()) add("length", length);
}

std::string floatBytes(const std::vector<float>& values) {
    return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

// The add/relu model with its bias stored at byte 16 of weights.bin in `dir`.
onnx::ModelProto externalBiasModel(const ScratchDir& dir,
                                   const std::string& location = "weights.bin",
                                   const std::string& offset = "16",
                                   const std::string& length = "16") {
    writeFile(dir / "weights.bin", std::string(16, '\x7f') + floatBytes({10, 20, 30, 40}) + "tail");
    auto model = addReluModel();
    setExternal(*model.mutable_graph()->mutable_initializer(0), location, offset, length);
    return model;
}

std::string loadError(const ScratchDir& dir, const onnx::ModelProto& model) {
    writeFile(dir / "model.onnx", serialize(model));
    auto loaded = loadModel(dir / "model.onnx");
    EXPECT_FALSE(loaded.ok());
    return loaded.ok() ? std::string() : loaded.error().message;
}

}  // namespace

TEST(ExternalData, RoundTripHonoursOffsetAndLength) {
    ScratchDir dir;
    writeFile(dir / "model.onnx", serialize(externalBiasModel(dir)));
    auto loaded = loadModel(dir / "model.onnx");
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    const auto& bias = loaded->proto->graph().initializer(0);
    EXPECT_TRUE(usesExternalData(bias));
    auto location = resolveExternalData(bias, loaded->directory);
    ASSERT_TRUE(location.ok()) << location.error().message;
    EXPECT_EQ(location->offset, 16u);
    EXPECT_EQ(location->length, 16u);
    EXPECT_EQ(location->file, std::filesystem::canonical(dir / "weights.bin"));
    auto bytes = readExternalData(bias, loaded->directory);
    ASSERT_TRUE(bytes.ok()) << bytes.error().message;
    EXPECT_EQ(*bytes, floatBytes({10, 20, 30, 40}));

    ASSERT_TRUE(internalizeExternalData(*loaded->proto, loaded->directory).ok());
    EXPECT_FALSE(usesExternalData(loaded->proto->graph().initializer(0)));
    EXPECT_EQ(loaded->proto->graph().initializer(0).raw_data(), floatBytes({10, 20, 30, 40}));
    EXPECT_EQ(loaded->proto->graph().initializer(0).external_data_size(), 0);
}

TEST(ExternalData, LengthDefaultsToTheRestOfTheFile) {
    ScratchDir dir;
    writeFile(dir / "w.bin", floatBytes({1, 2, 3, 4}));
    auto model = addReluModel();
    setExternal(*model.mutable_graph()->mutable_initializer(0), "w.bin");
    auto location = resolveExternalData(model.graph().initializer(0), dir.path());
    ASSERT_TRUE(location.ok()) << location.error().message;
    EXPECT_EQ(location->offset, 0u);
    EXPECT_EQ(location->length, 16u);
}

TEST(ExternalData, SubfolderLocationIsAllowed) {
    ScratchDir dir;
    std::filesystem::create_directory(dir / "data");
    writeFile(dir / "data" / "w.bin", floatBytes({1, 2, 3, 4}));
    auto model = addReluModel();
    setExternal(*model.mutable_graph()->mutable_initializer(0), "data/./w.bin");
    auto bytes = readExternalData(model.graph().initializer(0), dir.path());
    ASSERT_TRUE(bytes.ok()) << bytes.error().message;
    EXPECT_EQ(*bytes, floatBytes({1, 2, 3, 4}));
}

TEST(ExternalData, PathTraversalIsRefused) {
    ScratchDir dir;
    std::filesystem::create_directory(dir / "model");
    writeFile(dir / "secret.bin", floatBytes({1, 2, 3, 4}));
    auto model = addReluModel();
    setExternal(*model.mutable_graph()->mutable_initializer(0), "../secret.bin");
    writeFile(dir / "model" / "model.onnx", serialize(model));
    auto loaded = loadModel(dir / "model" / "model.onnx");
    ASSERT_FALSE(loaded.ok());
    EXPECT_THAT(loaded.error().message, HasSubstr("model.onnx"));
    EXPECT_THAT(loaded.error().message, HasSubstr("tensor 'bias'"));
    EXPECT_THAT(loaded.error().message, HasSubstr("'../secret.bin' leaves the model folder"));
}

TEST(ExternalData, AbsolutePathIsRefused) {
    ScratchDir dir;
    writeFile(dir / "w.bin", floatBytes({1, 2, 3, 4}));
    auto model = externalBiasModel(dir, (dir / "w.bin").string(), "", "");
    auto message = loadError(dir, model);
    EXPECT_THAT(message, HasSubstr("model.onnx"));
    EXPECT_THAT(message, HasSubstr("is an absolute path"));
    EXPECT_THAT(message, HasSubstr((dir / "w.bin").string()));
}

TEST(ExternalData, SymlinkLeavingTheFolderIsRefused) {
    ScratchDir outside, dir;
    writeFile(outside / "w.bin", floatBytes({1, 2, 3, 4}));
    std::filesystem::create_symlink(outside / "w.bin", dir / "link.bin");
    auto model = addReluModel();
    setExternal(*model.mutable_graph()->mutable_initializer(0), "link.bin");
    auto message = loadError(dir, model);
    EXPECT_THAT(message, HasSubstr("model.onnx"));
    EXPECT_THAT(message, HasSubstr("'link.bin'"));
    EXPECT_THAT(message, HasSubstr("outside the model folder"));
}

TEST(ExternalData, SymlinkInsideTheFolderIsAllowed) {
    ScratchDir dir;
    writeFile(dir / "w.bin", floatBytes({1, 2, 3, 4}));
    std::filesystem::create_symlink(dir / "w.bin", dir / "link.bin");
    auto model = addReluModel();
    setExternal(*model.mutable_graph()->mutable_initializer(0), "link.bin");
    EXPECT_TRUE(readExternalData(model.graph().initializer(0), dir.path()).ok());
}

TEST(ExternalData, MissingFileIsNamed) {
    ScratchDir dir;
    auto model = addReluModel();
    setExternal(*model.mutable_graph()->mutable_initializer(0), "absent.bin");
    auto message = loadError(dir, model);
    EXPECT_THAT(message, HasSubstr("absent.bin"));
    EXPECT_THAT(message, HasSubstr("does not exist"));
}

TEST(ExternalData, OffsetPastTheEndIsAnError) {
    ScratchDir dir;
    auto message = loadError(dir, externalBiasModel(dir, "weights.bin", "100", ""));
    EXPECT_THAT(message, HasSubstr("model.onnx"));
    EXPECT_THAT(message, HasSubstr("offset 100 is past the end of 'weights.bin' (36 bytes)"));
}

TEST(ExternalData, LengthPastTheEndIsAnError) {
    ScratchDir dir;
    auto message = loadError(dir, externalBiasModel(dir, "weights.bin", "16", "64"));
    EXPECT_THAT(message,
                HasSubstr("offset 16 + length 64 is past the end of 'weights.bin' (36 bytes)"));
}

TEST(ExternalData, MalformedOffsetIsAnError) {
    ScratchDir dir;
    auto message = loadError(dir, externalBiasModel(dir, "weights.bin", "-4", ""));
    EXPECT_THAT(message, HasSubstr("offset '-4' is not a non-negative integer"));
}

TEST(ExternalData, LengthDisagreeingWithDimsIsAnErrorOnRead) {
    ScratchDir dir;
    auto model = externalBiasModel(dir, "weights.bin", "16", "12");
    auto bytes = readExternalData(model.graph().initializer(0), dir.path());
    ASSERT_FALSE(bytes.ok());
    EXPECT_THAT(bytes.error().message, HasSubstr("tensor 'bias'"));
    EXPECT_THAT(bytes.error().message, HasSubstr("is 12 bytes"));
    EXPECT_THAT(bytes.error().message, HasSubstr("need 16"));
}

TEST(ExternalData, TensorsInsideSubgraphsAreChecked) {
    ScratchDir dir;
    auto model = addReluModel();
    auto* constant = addNode(*model.mutable_graph(), "Constant", {}, {"c"}, "const");
    auto* value = constant->add_attribute();
    value->set_name("value");
    value->set_type(onnx::AttributeProto::TENSOR);
    *value->mutable_t() = floatTensor("c", {4}, {1, 2, 3, 4});
    setExternal(*value->mutable_t(), "../escape.bin");
    auto status = checkExternalDataLocations(model, dir.path(), "m.onnx");
    ASSERT_FALSE(status.ok());
    EXPECT_THAT(status.error().message, HasSubstr("m.onnx: tensor 'c'"));
}
