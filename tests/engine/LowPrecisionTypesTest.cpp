// The float8, 4-bit and e8m0 element types (ONNX 17..24): sizes, names, TensorProto reading and
// writing (4-bit packed two per byte, low nibble first), and data movement through kernels.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "OpTestHarness.h"
#include "onnxlens/engine/Tensor.h"
#include "onnxlens/engine/TensorProto.h"

using namespace onnxlens::engine;
using onnxlens::testing::OneNodeSpec;
using onnxlens::testing::runOneNodeTensor;
using onnxlens::testing::setAttr;

namespace {

// A tensor of one of the one-byte-per-element types with the given in-memory bytes.
Tensor byteTensor(DataType type, Shape shape, const std::vector<std::uint8_t>& bytes) {
    Tensor t(type, std::move(shape));
    EXPECT_EQ(static_cast<std::size_t>(t.numel()), bytes.size());
    if (!bytes.empty()) std::memcpy(t.raw(), bytes.data(), bytes.size());
    return t;
}

std::vector<std::uint8_t> bytesOf(const Tensor& t) {
    const auto* p = static_cast<const std::uint8_t*>(t.raw());
    return {p, p + t.byteSize()};
}

std::string errorOf(const onnx::TensorProto& proto) {
    try {
        tensorFromProto(proto);
    } catch (const EngineError& e) {
        return e.what();
    }
    return "no error";
}

onnx::TensorProto protoOf(int type, std::vector<std::int64_t> dims, const std::string& name = "q") {
    onnx::TensorProto p;
    p.set_name(name);
    p.set_data_type(type);
    for (auto d : dims) p.add_dims(d);
    return p;
}

}  // namespace

TEST(LowPrecisionTypes, OneBytePerElementWithOnnxNumbersAndNames) {
    const std::pair<DataType, const char*> types[] = {
        {DataType::Float8E4M3FN, "float8e4m3fn"},
        {DataType::Float8E4M3FNUZ, "float8e4m3fnuz"},
        {DataType::Float8E5M2, "float8e5m2"},
        {DataType::Float8E5M2FNUZ, "float8e5m2fnuz"},
        {DataType::UInt4, "uint4"},
        {DataType::Int4, "int4"},
        {DataType::Float4E2M1, "float4e2m1"},
        {DataType::Float8E8M0, "float8e8m0"},
    };
    int number = 17;
    for (const auto& [type, name] : types) {
        EXPECT_EQ(static_cast<int>(type), number);
        EXPECT_EQ(dataTypeFromOnnx(number), type);
        EXPECT_EQ(dataTypeSize(type), 1u);
        EXPECT_STREQ(dataTypeName(type), name);
        EXPECT_TRUE(isLowPrecision(type));
        EXPECT_FALSE(isFloatingPoint(type));
        EXPECT_FALSE(isInteger(type));
        ++number;
    }
    EXPECT_FALSE(isLowPrecision(DataType::BFloat16));
    EXPECT_THROW(dataTypeFromOnnx(25), EngineError);
    // No arithmetic family takes them.
    EXPECT_THROW(dispatchNumeric(DataType::Float8E4M3FN, []<class T>() {}), EngineError);
    EXPECT_THROW(dispatchFloat(DataType::Float8E5M2, []<class T>() {}), EngineError);
    EXPECT_THROW(dispatchInteger(DataType::Int4, []<class T>() {}), EngineError);
}

TEST(LowPrecisionTypes, Int4RawDataOddCountUnpacksSignExtended) {
    // Elements -8, -1, 0, 7, 3: nibbles 8 F 0 7 3, packed low nibble first, the last byte's
    // high nibble padding: 0xF8 0x70 0x03.
    auto p = protoOf(22, {5});
    p.set_raw_data(std::string("\xF8\x70\x03", 3));
    Tensor t = tensorFromProto(p);
    EXPECT_EQ(t.dtype(), DataType::Int4);
    ASSERT_EQ(t.numel(), 5);
    const auto* v = static_cast<const std::int8_t*>(t.raw());
    EXPECT_EQ((std::vector<int>{v[0], v[1], v[2], v[3], v[4]}),
              (std::vector<int>{-8, -1, 0, 7, 3}));
    // Written back packed the same way.
    auto back = tensorToProto(t, "q");
    EXPECT_EQ(back.data_type(), 22);
    EXPECT_EQ(back.raw_data(), std::string("\xF8\x70\x03", 3));
    EXPECT_EQ(bytesOf(tensorFromProto(back)), bytesOf(t));
}

TEST(LowPrecisionTypes, UInt4AndFloat4KeepTheirCodeInTheLowNibble) {
    for (int type : {21, 23}) {
        auto p = protoOf(type, {2, 2});
        p.set_raw_data(std::string("\x9F\x21", 2));  // 15, 9, 1, 2
        Tensor t = tensorFromProto(p);
        EXPECT_EQ(bytesOf(t), (std::vector<std::uint8_t>{15, 9, 1, 2})) << type;
        EXPECT_EQ(tensorToProto(t).raw_data(), std::string("\x9F\x21", 2)) << type;
    }
}

TEST(LowPrecisionTypes, FourBitInt32DataHoldsTwoElementsPerValue) {
    // onnx.proto: "For 4-bit data types, each int32_data stores two elements".
    auto p = protoOf(21, {3});
    p.add_int32_data(0x21);  // 1, 2
    p.add_int32_data(0x0F);  // 15, padding
    EXPECT_EQ(bytesOf(tensorFromProto(p)), (std::vector<std::uint8_t>{1, 2, 15}));
    auto s = protoOf(22, {2});
    s.add_int32_data(0x9E);  // -2, -7
    Tensor t = tensorFromProto(s);
    const auto* v = static_cast<const std::int8_t*>(t.raw());
    EXPECT_EQ(v[0], -2);
    EXPECT_EQ(v[1], -7);
    s.add_int32_data(0x11);  // one value too many for 2 elements
    EXPECT_NE(errorOf(s).find("tensor 'q': has 2 int32 values"), std::string::npos) << errorOf(s);
}

TEST(LowPrecisionTypes, Float8BitPatternsFromRawDataAndInt32Data) {
    for (int type : {17, 18, 19, 20, 24}) {
        auto p = protoOf(type, {3});
        p.add_int32_data(0x7E);  // one bit pattern per int32
        p.add_int32_data(0xFE);
        p.add_int32_data(0x00);
        Tensor t = tensorFromProto(p);
        EXPECT_EQ(static_cast<int>(t.dtype()), type);
        EXPECT_EQ(bytesOf(t), (std::vector<std::uint8_t>{0x7E, 0xFE, 0x00}));
        auto back = tensorToProto(t);
        EXPECT_EQ(back.raw_data(), std::string("\x7E\xFE\x00", 3));
        EXPECT_EQ(bytesOf(tensorFromProto(back)), bytesOf(t));
    }
}

TEST(LowPrecisionTypes, WrongBufferLengthsAreErrorsNamingTheTensor) {
    auto shortInt4 = protoOf(22, {5}, "w4");
    shortInt4.set_raw_data(std::string(2, '\0'));  // 5 elements need 3 bytes
    EXPECT_NE(errorOf(shortInt4).find("tensor 'w4'"), std::string::npos) << errorOf(shortInt4);
    auto longInt4 = protoOf(22, {5}, "w4");
    longInt4.set_raw_data(std::string(4, '\0'));
    EXPECT_NE(errorOf(longInt4).find("tensor 'w4': has 4 bytes of data, its shape [5] (int4) "
                                     "needs 3"),
              std::string::npos)
        << errorOf(longInt4);
    auto shortFloat8 = protoOf(19, {2, 3}, "w8");
    shortFloat8.set_raw_data(std::string(5, '\0'));
    EXPECT_NE(errorOf(shortFloat8).find("tensor 'w8'"), std::string::npos) << errorOf(shortFloat8);
    auto typedFloat8 = protoOf(17, {2}, "w8");
    typedFloat8.add_int32_data(1);
    EXPECT_NE(errorOf(typedFloat8).find("tensor 'w8'"), std::string::npos) << errorOf(typedFloat8);
    // Dims claiming far more than the data holds fail before any allocation.
    auto huge = protoOf(21, {1LL << 40}, "big");
    huge.set_raw_data(std::string(8, '\0'));
    EXPECT_NE(errorOf(huge).find("tensor 'big'"), std::string::npos) << errorOf(huge);
}

TEST(LowPrecisionTypes, EmptyFourBitTensorRoundTrips) {
    auto p = protoOf(22, {0, 3});
    p.set_raw_data(std::string());
    Tensor t = tensorFromProto(p);
    EXPECT_EQ(t.numel(), 0);
    EXPECT_EQ(tensorToProto(t).raw_data(), std::string());
}

TEST(LowPrecisionTypes, FourBitExternalDataIsUnpackedAndSizeChecked) {
    const auto dir = std::filesystem::temp_directory_path() / "onnxlens_lowprecision_external";
    std::filesystem::create_directories(dir);
    {
        std::ofstream out(dir / "w.bin", std::ios::binary | std::ios::trunc);
        out.write("\xF8\x70\x03", 3);  // int4 -8, -1, 0, 7, 3 (last high nibble padding)
    }
    auto external = [&](std::int64_t count, const std::string& length) {
        auto p = protoOf(22, {count}, "ext");
        p.set_data_location(onnx::TensorProto::EXTERNAL);
        for (auto [key, value] : {std::pair<std::string, std::string>{"location", "w.bin"},
                                  {"offset", "0"},
                                  {"length", length}}) {
            auto* entry = p.add_external_data();
            entry->set_key(key);
            entry->set_value(value);
        }
        return p;
    };
    Tensor t = tensorFromProto(external(5, "3"), dir);
    const auto* v = static_cast<const std::int8_t*>(t.raw());
    EXPECT_EQ((std::vector<int>{v[0], v[1], v[2], v[3], v[4]}),
              (std::vector<int>{-8, -1, 0, 7, 3}));
    // 7 elements need 4 bytes: an error naming the tensor, not a read past the data.
    try {
        tensorFromProto(external(7, "3"), dir);
        ADD_FAILURE() << "no error";
    } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find("'ext'"), std::string::npos) << e.what();
    }
    std::filesystem::remove_all(dir);
}

TEST(LowPrecisionTypes, ReshapeAndTransposeMoveInt4AndFloat8Data) {
    // Int4 [[-8, -1, 0], [7, 3, 5]] transposed: [[-8, 7], [-1, 3], [0, 5]].
    Tensor int4 = byteTensor(DataType::Int4, {2, 3}, {0xF8, 0xFF, 0x00, 0x07, 0x03, 0x05});
    Tensor transposed = runOneNodeTensor({"Transpose", "", 21, {Value(int4)}, 1, nullptr});
    EXPECT_EQ(transposed.dtype(), DataType::Int4);
    EXPECT_EQ(transposed.shape(), (Shape{3, 2}));
    EXPECT_EQ(bytesOf(transposed), (std::vector<std::uint8_t>{0xF8, 0x07, 0xFF, 0x03, 0x00, 0x05}));

    Tensor float8 = byteTensor(DataType::Float8E4M3FN, {2, 3}, {1, 2, 3, 4, 5, 6});
    Tensor shape = Tensor::fromVector<std::int64_t>({2}, {3, -1});
    Tensor reshaped =
        runOneNodeTensor({"Reshape", "", 21, {Value(float8), Value(shape)}, 1, nullptr});
    EXPECT_EQ(reshaped.dtype(), DataType::Float8E4M3FN);
    EXPECT_EQ(reshaped.shape(), (Shape{3, 2}));
    EXPECT_EQ(bytesOf(reshaped), (std::vector<std::uint8_t>{1, 2, 3, 4, 5, 6}));

    Tensor uint4 = byteTensor(DataType::UInt4, {4}, {1, 15, 2, 9});
    Tensor indices = Tensor::fromVector<std::int64_t>({2}, {3, 1});
    Tensor gathered = runOneNodeTensor(
        {"Gather", "", 21, {Value(uint4), Value(indices)}, 1, [](onnx::NodeProto& n) {
             setAttr(n, "axis", std::int64_t{0});
         }});
    EXPECT_EQ(gathered.dtype(), DataType::UInt4);
    EXPECT_EQ(bytesOf(gathered), (std::vector<std::uint8_t>{9, 15}));
}

TEST(LowPrecisionTypes, ArithmeticOnFloat8IsAClearErrorNotACrash) {
    Tensor a = byteTensor(DataType::Float8E5M2, {2}, {0x3C, 0x40});
    auto result = onnxlens::testing::runOneNode({"Add", "", 21, {Value(a), Value(a)}, 1, nullptr});
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.error().message.find("float8e5m2"), std::string::npos)
        << result.error().message;
}
