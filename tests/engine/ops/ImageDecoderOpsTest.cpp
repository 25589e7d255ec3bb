// ImageDecoder-20 on JPEG and PNG test images. The expected pixels are what the ONNX reference
// implementation (PIL) decodes them to: tests/engine/data/image_decoder/make_images.py wrote the
// images and their .rgb/.gray files.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "OpTestHarness.h"

namespace onnxlens::testing {
namespace {

std::vector<std::uint8_t> readBytes(const std::string& name) {
    const auto path =
        std::filesystem::path(ONNXLENS_SOURCE_DIR) / "tests/engine/data/image_decoder" / name;
    std::ifstream in(path, std::ios::binary);
    EXPECT_TRUE(in.good()) << path;
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

Tensor encoded(const std::vector<std::uint8_t>& bytes) {
    Tensor t(DataType::UInt8, {static_cast<std::int64_t>(bytes.size())});
    if (!bytes.empty()) std::memcpy(t.raw(), bytes.data(), bytes.size());
    return t;
}

OneNodeSpec decoder(const Tensor& stream, const std::string& format = {}) {
    OneNodeSpec spec{"ImageDecoder", "", 20, {Value(stream)}, 1, {}};
    if (!format.empty())
        spec.attributes = [=](onnx::NodeProto& n) { setAttr(n, "pixel_format", format); };
    return spec;
}

std::vector<std::uint8_t> bytesOf(const Tensor& t) {
    const auto* p = t.data<std::uint8_t>();
    return {p, p + t.numel()};
}

void expectDecodes(const std::string& name, std::int64_t height, std::int64_t width) {
    SCOPED_TRACE(name);
    const Tensor stream = encoded(readBytes(name));
    const std::vector<std::uint8_t> rgb = readBytes(name + ".rgb");
    const std::vector<std::uint8_t> gray = readBytes(name + ".gray");

    Tensor byDefault = runOneNodeTensor(decoder(stream));
    EXPECT_EQ(byDefault.dtype(), DataType::UInt8);
    EXPECT_EQ(byDefault.shape(), (Shape{height, width, 3}));
    EXPECT_EQ(bytesOf(byDefault), rgb);

    Tensor bgr = runOneNodeTensor(decoder(stream, "BGR"));
    std::vector<std::uint8_t> swapped = rgb;
    for (std::size_t p = 0; p + 2 < swapped.size(); p += 3) std::swap(swapped[p], swapped[p + 2]);
    EXPECT_EQ(bytesOf(bgr), swapped);

    Tensor grayscale = runOneNodeTensor(decoder(stream, "Grayscale"));
    EXPECT_EQ(grayscale.shape(), (Shape{height, width, 1}));
    EXPECT_EQ(bytesOf(grayscale), gray);
}

std::string errorOf(const OneNodeSpec& spec) {
    auto result = runOneNode(spec);
    return result.ok() ? std::string("no error") : result.error().message;
}

}  // namespace

TEST(ImageDecoderOps, PngPixelsAsTheReferenceDecodesThem) {
    expectDecodes("small.png", 2, 3);
    // A palette with a transparent entry: expanded to RGB, the alpha dropped.
    expectDecodes("palette_alpha.png", 3, 5);
}

TEST(ImageDecoderOps, JpegPixelsAsTheReferenceDecodesThem) { expectDecodes("small.jpg", 8, 8); }

TEST(ImageDecoderOps, BadStreamsAreClearErrors) {
    const std::vector<std::uint8_t> png = readBytes("small.png");
    const std::vector<std::uint8_t> jpg = readBytes("small.jpg");
    // Truncated at every length: an error naming the operator, never a crash (a PNG cut after
    // its pixel data, or a JPEG whose missing rows libjpeg fills in, still decodes).
    for (const auto* image : {&png, &jpg}) {
        for (std::size_t length = 0; length < image->size(); ++length) {
            auto result = runOneNode(decoder(encoded({image->begin(), image->begin() + length})));
            if (!result.ok()) {
                EXPECT_NE(result.error().message.find("ImageDecoder:"), std::string::npos)
                    << length << ": " << result.error().message;
            }
        }
    }
    EXPECT_NE(errorOf(decoder(encoded({png.begin(), png.begin() + 40}))).find("bad PNG data"),
              std::string::npos);
    // Damaged header bytes: the CRC of IHDR no longer matches.
    std::vector<std::uint8_t> damaged = png;
    damaged[17] ^= 0x40;
    EXPECT_NE(errorOf(decoder(encoded(damaged))).find("bad PNG data"), std::string::npos);
    std::vector<std::uint8_t> noise(64);
    for (std::size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<std::uint8_t>(i * 37);
    EXPECT_NE(errorOf(decoder(encoded(noise))).find("neither JPEG nor PNG"), std::string::npos);
    EXPECT_NE(errorOf(decoder(encoded(jpg), "CMYK")).find("pixel_format"), std::string::npos);
    Tensor floats = makeTensor<float>({2}, {1, 2});
    EXPECT_NE(errorOf(decoder(floats)).find("1-D uint8"), std::string::npos);
}

}  // namespace onnxlens::testing
