#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "ModelTestSupport.h"
#include "onnxlens/model/TensorFile.h"
#include "onnxlens/model/TensorTypes.h"

using namespace onnxlens;
using namespace onnxlens::testing;
using ::testing::HasSubstr;
using TP = onnx::TensorProto;

namespace {

const std::vector<int> kNumericTypes = {TP::FLOAT,     TP::UINT8,      TP::INT8,    TP::UINT16,
                                        TP::INT16,     TP::INT32,      TP::INT64,   TP::BOOL,
                                        TP::FLOAT16,   TP::DOUBLE,     TP::UINT32,  TP::UINT64,
                                        TP::COMPLEX64, TP::COMPLEX128, TP::BFLOAT16};

// A 2x3 tensor of `type` whose data is in the typed field the ONNX spec assigns to it, with
// element i holding the bit pattern of small integer i + 1 (valid for every type).
TP typedFieldTensor(int type) {
    TP t;
    t.set_name("t_" + elementTypeName(type));
    t.set_data_type(type);
    t.add_dims(2);
    t.add_dims(3);
    for (int i = 0; i < 6; ++i) {
        switch (type) {
            case TP::FLOAT:
                t.add_float_data(static_cast<float>(i) + 0.5f);
                break;
            case TP::COMPLEX64:
                t.add_float_data(static_cast<float>(i));
                t.add_float_data(-1.0f * i);
                break;
            case TP::DOUBLE:
                t.add_double_data(i * 0.25);
                break;
            case TP::COMPLEX128:
                t.add_double_data(i);
                t.add_double_data(i * 2.0);
                break;
            case TP::INT64:
                t.add_int64_data(-1000000000000LL * i);
                break;
            case TP::UINT32:
                t.add_uint64_data(4000000000u - i);
                break;
            case TP::UINT64:
                t.add_uint64_data(18000000000000000000ull + i);
                break;
            case TP::BOOL:
                t.add_int32_data(i % 2);
                break;
            case TP::INT8:
                t.add_int32_data(-i * 20);
                break;
            case TP::INT16:
                t.add_int32_data(-i * 3000);
                break;
            case TP::UINT8:
                t.add_int32_data(250 - i);
                break;
            case TP::UINT16:
                t.add_int32_data(65000 - i);
                break;
            case TP::FLOAT16:
                t.add_int32_data(0x3c00 + i);
                break;  // 1.0, 1.0009765625, ...
            case TP::BFLOAT16:
                t.add_int32_data(0x3f80 + i);
                break;  // 1.0, ...
            default:
                t.add_int32_data(i * 7 - 20);
                break;
        }
    }
    return t;
}

std::string rawOf(const TP& t) {
    auto bytes = tensorRawBytes(t, "test");
    EXPECT_TRUE(bytes.ok()) << bytes.error().message;
    return bytes.ok() ? *bytes : std::string();
}

// Builds a .npy file by hand (format 1.0) with the given header dict and payload.
std::string npyBytes(const std::string& dict, const std::string& payload) {
    std::string header = dict;
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::string bytes("\x93NUMPY\x01\x00", 8);
    bytes.push_back(static_cast<char>(header.size() & 0xff));
    bytes.push_back(static_cast<char>(header.size() >> 8));
    return bytes + header + payload;
}

}  // namespace

TEST(TensorTypes, NamesAreNumpyStyle) {
    EXPECT_EQ(elementTypeName(TP::FLOAT), "float32");
    EXPECT_EQ(elementTypeName(TP::DOUBLE), "float64");
    EXPECT_EQ(elementTypeName(TP::FLOAT16), "float16");
    EXPECT_EQ(elementTypeName(TP::BFLOAT16), "bfloat16");
    EXPECT_EQ(elementTypeName(TP::BOOL), "bool");
    EXPECT_EQ(elementTypeName(TP::STRING), "string");
    EXPECT_EQ(elementTypeName(99), "type<99>");
    for (int type : kNumericTypes) EXPECT_EQ(elementTypeFromName(elementTypeName(type)), type);
}

TEST(TensorTypes, TypedFieldsBecomeLittleEndianBytes) {
    auto t = typedFieldTensor(TP::INT16);
    auto raw = rawOf(t);
    ASSERT_EQ(raw.size(), 12u);
    std::int16_t values[6];
    std::memcpy(values, raw.data(), 12);
    for (int i = 0; i < 6; ++i) EXPECT_EQ(values[i], -i * 3000);
    auto u32 = rawOf(typedFieldTensor(TP::UINT32));
    std::uint32_t first;
    std::memcpy(&first, u32.data(), 4);
    EXPECT_EQ(first, 4000000000u);
}

TEST(TensorFile, PbRoundTripForEveryType) {
    ScratchDir dir;
    for (int type : kNumericTypes) {
        const auto tensor = typedFieldTensor(type);
        const auto file = dir / ("t_" + elementTypeName(type) + ".pb");
        ASSERT_TRUE(writeTensorPbFile(file, tensor).ok());
        auto read = readTensorFile(file);
        ASSERT_TRUE(read.ok()) << read.error().message;
        EXPECT_EQ(read->SerializeAsString(), tensor.SerializeAsString()) << elementTypeName(type);
    }
    TP strings;
    strings.set_data_type(TP::STRING);
    strings.add_dims(2);
    strings.add_string_data("hello");
    strings.add_string_data(std::string("bin\0ary", 7));
    ASSERT_TRUE(writeTensorPbFile(dir / "s.pb", strings).ok());
    auto read = readTensorPbFile(dir / "s.pb");
    ASSERT_TRUE(read.ok());
    EXPECT_EQ(read->string_data(1), std::string("bin\0ary", 7));
}

TEST(TensorFile, NpyRoundTripForEveryNumpyType) {
    ScratchDir dir;
    for (int type : kNumericTypes) {
        if (type == TP::BFLOAT16) continue;
        const auto tensor = typedFieldTensor(type);
        const auto file = dir / ("t_" + elementTypeName(type) + ".npy");
        ASSERT_TRUE(writeNpyFile(file, tensor).ok()) << elementTypeName(type);
        auto read = readTensorFile(file);
        ASSERT_TRUE(read.ok()) << read.error().message;
        EXPECT_EQ(read->data_type(), type);
        EXPECT_EQ(read->dims_size(), 2);
        EXPECT_EQ(read->dims(0), 2);
        EXPECT_EQ(read->dims(1), 3);
        EXPECT_EQ(read->raw_data(), rawOf(tensor)) << elementTypeName(type);
        // Written from raw_data instead of typed fields: the same file.
        TP raw = *read;
        ASSERT_TRUE(writeNpyFile(dir / "again.npy", raw).ok());
        EXPECT_EQ(readFile(dir / "again.npy"), readFile(file));
    }
}

TEST(TensorFile, NpyHeaderIsWhatNumpyWrites) {
    ScratchDir dir;
    ASSERT_TRUE(writeNpyFile(dir / "f.npy", floatTensor("f", {3}, {1, 2, 3})).ok());
    auto bytes = readFile(dir / "f.npy");
    EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
    EXPECT_THAT(bytes, HasSubstr("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"));
    EXPECT_EQ(bytes.size(), 128u + 12u);  // the data starts 64-byte aligned, as numpy aligns it
    ASSERT_TRUE(writeNpyFile(dir / "s.npy", floatTensor("s", {}, {7})).ok());
    EXPECT_THAT(readFile(dir / "s.npy"), HasSubstr("'shape': (), }"));
}

TEST(TensorFile, NpyScalarAndEmpty) {
    ScratchDir dir;
    ASSERT_TRUE(writeNpyFile(dir / "s.npy", floatTensor("s", {}, {7})).ok());
    auto scalar = readNpyFile(dir / "s.npy");
    ASSERT_TRUE(scalar.ok());
    EXPECT_EQ(scalar->dims_size(), 0);
    EXPECT_EQ(scalar->raw_data().size(), 4u);
    ASSERT_TRUE(writeNpyFile(dir / "e.npy", floatTensor("e", {0, 5}, {})).ok());
    auto empty = readNpyFile(dir / "e.npy");
    ASSERT_TRUE(empty.ok()) << empty.error().message;
    EXPECT_EQ(empty->dims(1), 5);
    EXPECT_TRUE(empty->raw_data().empty());
}

TEST(TensorFile, NpyBigEndianIsSwapped) {
    ScratchDir dir;
    // int32 [258, -2] big-endian; float64 [1.5] big-endian.
    writeFile(dir / "be.npy", npyBytes("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }",
                                       std::string("\x00\x00\x01\x02\xff\xff\xff\xfe", 8)));
    auto t = readNpyFile(dir / "be.npy");
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(t->data_type(), TP::INT32);
    std::int32_t values[2];
    std::memcpy(values, t->raw_data().data(), 8);
    EXPECT_EQ(values[0], 258);
    EXPECT_EQ(values[1], -2);
    writeFile(dir / "bed.npy", npyBytes("{'descr': '>f8', 'fortran_order': False, 'shape': (1,), }",
                                        std::string("\x3f\xf8\x00\x00\x00\x00\x00\x00", 8)));
    auto d = readNpyFile(dir / "bed.npy");
    ASSERT_TRUE(d.ok());
    double value;
    std::memcpy(&value, d->raw_data().data(), 8);
    EXPECT_EQ(value, 1.5);
}

TEST(TensorFile, NpyFortranOrderBecomesCOrder) {
    ScratchDir dir;
    // The 2x3 matrix [[0,1,2],[3,4,5]] stored column by column: 0 3 1 4 2 5.
    std::string payload;
    for (std::uint8_t v : {0, 3, 1, 4, 2, 5}) payload.push_back(static_cast<char>(v));
    writeFile(dir / "f.npy",
              npyBytes("{'descr': '|u1', 'fortran_order': True, 'shape': (2, 3), }", payload));
    auto t = readNpyFile(dir / "f.npy");
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(t->raw_data(), std::string("\x00\x01\x02\x03\x04\x05", 6));
    // 2x2x2 with values i stored Fortran-wise: element (a,b,c) at a + 2b + 4c.
    std::string cube(8, '\0');
    for (int a = 0; a < 2; ++a)
        for (int b = 0; b < 2; ++b)
            for (int c = 0; c < 2; ++c)
                cube[a + 2 * b + 4 * c] = static_cast<char>(a * 4 + b * 2 + c);
    writeFile(dir / "cube.npy",
              npyBytes("{'descr': '|i1', 'fortran_order': True, 'shape': (2, 2, 2), }", cube));
    auto c = readNpyFile(dir / "cube.npy");
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->raw_data(), std::string("\x00\x01\x02\x03\x04\x05\x06\x07", 8));
}

TEST(TensorFile, NpyStrings) {
    ScratchDir dir;
    TP strings;
    strings.set_data_type(TP::STRING);
    strings.add_dims(2);
    strings.add_string_data("ab");
    strings.add_string_data("cdef");
    ASSERT_TRUE(writeNpyFile(dir / "s.npy", strings).ok());
    auto read = readNpyFile(dir / "s.npy");
    ASSERT_TRUE(read.ok()) << read.error().message;
    ASSERT_EQ(read->string_data_size(), 2);
    EXPECT_EQ(read->string_data(0), "ab");
    EXPECT_EQ(read->string_data(1), "cdef");
    // numpy's unicode dtype: UTF-32, here "h\u00e9" padded to 3 code points.
    std::string utf32;
    for (std::uint32_t cp : {0x68u, 0xe9u, 0u}) utf32.append(reinterpret_cast<const char*>(&cp), 4);
    writeFile(dir / "u.npy",
              npyBytes("{'descr': '<U3', 'fortran_order': False, 'shape': (1,), }", utf32));
    auto unicode = readNpyFile(dir / "u.npy");
    ASSERT_TRUE(unicode.ok()) << unicode.error().message;
    EXPECT_EQ(unicode->string_data(0), "h\xc3\xa9");
}

TEST(TensorFile, NpySizeMismatchIsNamed) {
    ScratchDir dir;
    writeFile(dir / "short.npy",
              npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                       std::string(20, '\0')));
    auto t = readNpyFile(dir / "short.npy");
    ASSERT_FALSE(t.ok());
    EXPECT_THAT(t.error().message, HasSubstr("short.npy"));
    EXPECT_THAT(
        t.error().message,
        HasSubstr("data is 20 bytes but the header's shape (2, 3) of float32 needs 24 bytes"));
}

TEST(TensorFile, NpyMalformedHeadersAreErrors) {
    ScratchDir dir;
    writeFile(dir / "magic.npy", "PK\x03\x04 not numpy at all");
    auto t = readNpyFile(dir / "magic.npy");
    ASSERT_FALSE(t.ok());
    EXPECT_THAT(t.error().message, HasSubstr("magic.npy: not a .npy file"));
    writeFile(dir / "obj.npy",
              npyBytes("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", "12345678"));
    auto o = readNpyFile(dir / "obj.npy");
    ASSERT_FALSE(o.ok());
    EXPECT_THAT(o.error().message, HasSubstr("obj.npy"));
    EXPECT_THAT(o.error().message, HasSubstr("not supported"));
    writeFile(
        dir / "cut.npy",
        npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", "").substr(0, 30));
    auto c = readNpyFile(dir / "cut.npy");
    ASSERT_FALSE(c.ok());
    EXPECT_THAT(c.error().message, HasSubstr("cut.npy: .npy header is truncated"));
}

TEST(TensorFile, PbSizeMismatchIsNamed) {
    ScratchDir dir;
    auto t = floatTensor("weights", {2, 3}, {1, 2, 3, 4, 5});
    ASSERT_TRUE(writeTensorPbFile(dir / "bad.pb", t).ok());
    auto read = readTensorPbFile(dir / "bad.pb");
    ASSERT_FALSE(read.ok());
    EXPECT_THAT(read.error().message, HasSubstr("bad.pb"));
    EXPECT_THAT(
        read.error().message,
        HasSubstr("tensor 'weights' (float32, 2x3) has 20 bytes of data, its dims need 24"));
    auto typed = typedFieldTensor(TP::INT64);
    typed.add_int64_data(1);
    ASSERT_TRUE(writeTensorPbFile(dir / "typed.pb", typed).ok());
    auto r2 = readTensorPbFile(dir / "typed.pb");
    ASSERT_FALSE(r2.ok());
    EXPECT_THAT(r2.error().message, HasSubstr("holds 7 values, its dims need 6"));
}

TEST(TensorFile, BadFilesAreNamed) {
    ScratchDir dir;
    auto missing = readTensorFile(dir / "absent.pb");
    ASSERT_FALSE(missing.ok());
    EXPECT_THAT(missing.error().message, HasSubstr("absent.pb: no such file"));
    writeFile(dir / "empty.pb", "");
    EXPECT_THAT(readTensorFile(dir / "empty.pb").error().message,
                HasSubstr("empty.pb: the file is empty"));
    writeFile(dir / "junk.pb", "\xff\xff\xff\xff\xff");
    EXPECT_THAT(readTensorFile(dir / "junk.pb").error().message,
                HasSubstr("junk.pb: not a TensorProto"));
    EXPECT_THAT(readTensorFile(dir / "x.txt").error().message,
                HasSubstr("unknown tensor file type '.txt'"));
    std::filesystem::create_directory(dir / "folder.pb");
    EXPECT_THAT(readTensorFile(dir / "folder.pb").error().message, HasSubstr("is a folder"));
}

TEST(TensorFile, BFloat16HasNoNpyDtype) {
    ScratchDir dir;
    auto status = writeNpyFile(dir / "b.npy", typedFieldTensor(TP::BFLOAT16));
    ASSERT_FALSE(status.ok());
    EXPECT_THAT(status.error().message, HasSubstr("bfloat16"));
}

TEST(TensorTypes, LowPrecisionTypesHaveNamesAndFourBitPacksTwoPerByte) {
    const char* names[] = {"float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz",
                           "uint4",        "int4",           "float4e2m1", "float8e8m0"};
    for (int type = 17; type <= 24; ++type) {
        EXPECT_EQ(elementTypeName(type), names[type - 17]);
        EXPECT_EQ(elementTypeFromName(names[type - 17]), type);
        EXPECT_EQ(elementTypeSize(type), 1u);
    }
    EXPECT_EQ(rawDataSize(22, 5), 3u);
    EXPECT_EQ(rawDataSize(21, 4), 2u);
    EXPECT_EQ(rawDataSize(23, 0), 0u);
    EXPECT_EQ(rawDataSize(17, 5), 5u);
    EXPECT_EQ(rawDataSize(TP::FLOAT, 5), 20u);

    TP int4;
    int4.set_name("w");
    int4.set_data_type(22);
    int4.add_dims(5);
    int4.set_raw_data(std::string("\xF8\x70\x03", 3));
    EXPECT_TRUE(checkTensorDataSize(int4, "m.onnx").ok());
    int4.set_raw_data(std::string(5, '\0'));  // one byte per element is not the stored form
    auto wrong = checkTensorDataSize(int4, "m.onnx");
    ASSERT_FALSE(wrong.ok());
    EXPECT_THAT(wrong.error().message,
                HasSubstr("tensor 'w' (int4, 5) has 5 bytes of data, its dims need 3"));

    // int32_data: one packed byte (two elements) per value; tensorRawBytes gives the bytes.
    TP uint4;
    uint4.set_name("u");
    uint4.set_data_type(21);
    uint4.add_dims(3);
    uint4.add_int32_data(0x21);
    uint4.add_int32_data(0x0F);
    EXPECT_EQ(rawOf(uint4), std::string("\x21\x0F", 2));
    uint4.add_int32_data(0x00);
    auto extra = checkTensorDataSize(uint4, "m.onnx");
    ASSERT_FALSE(extra.ok());
    EXPECT_THAT(extra.error().message, HasSubstr("holds 3 values, its dims need 2"));

    ScratchDir dir;
    auto npy = writeNpyFile(dir / "w.npy", typedFieldTensor(17));
    ASSERT_FALSE(npy.ok());
    EXPECT_THAT(npy.error().message, HasSubstr("float8e4m3fn"));
}

TEST(TensorFile, ReadsEveryPytorchBackendTestTensor) {
    int files = 0;
    for (const char* suite : {"pytorch-converted", "pytorch-operator"}) {
        const std::filesystem::path root = std::filesystem::path(ONNXLENS_TESTDATA_DIR) / suite;
        if (!std::filesystem::exists(root)) GTEST_SKIP() << "no ONNX backend test data";
        for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
            if (entry.path().extension() != ".pb") continue;
            auto tensor = readTensorPbFile(entry.path());
            EXPECT_TRUE(tensor.ok()) << tensor.error().message;
            ++files;
        }
    }
    EXPECT_GT(files, 200);
}

TEST(TensorFile, NpyInteropWithNumpy) {
    const std::string python = "/usr/bin/python3";
    const std::string script = std::string(ONNXLENS_SOURCE_DIR) + "/tests/model/npy_interop.py";
    if (!std::filesystem::exists(python) ||
        std::system((python + " -c 'import numpy, onnx' 2>/dev/null").c_str()) != 0)
        GTEST_SKIP() << "needs /usr/bin/python3 with numpy and onnx";
    ScratchDir dir;
    ASSERT_EQ(std::system((python + " " + script + " make " + dir.path().string()).c_str()), 0);
    std::filesystem::create_directory(dir / "ours");
    int cases = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
        if (entry.path().extension() != ".npy") continue;
        const auto stem = entry.path().stem().string();
        auto fromNumpy = readNpyFile(entry.path());
        auto reference = readTensorPbFile(dir / (stem + ".pb"));
        ASSERT_TRUE(fromNumpy.ok()) << fromNumpy.error().message;
        ASSERT_TRUE(reference.ok()) << reference.error().message;
        EXPECT_EQ(fromNumpy->data_type(), reference->data_type()) << stem;
        EXPECT_EQ(dimsText(*fromNumpy), dimsText(*reference)) << stem;
        EXPECT_EQ(fromNumpy->raw_data(), rawOf(*reference)) << stem;
        ASSERT_TRUE(writeNpyFile(dir / "ours" / (stem + ".npy"), *reference).ok()) << stem;
        ++cases;
    }
    EXPECT_GT(cases, 40);
    EXPECT_EQ(std::system((python + " " + script + " verify " + dir.path().string()).c_str()), 0);
}
