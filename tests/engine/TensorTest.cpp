#include <gtest/gtest.h>

#include <limits>

#include "onnxlens/engine/Tensor.h"
#include "onnxlens/engine/TensorProto.h"

using namespace onnxlens::engine;

TEST(Shape, ElementCountAndStrides) {
    EXPECT_EQ(shapeElementCount(Shape{2, 3, 4}), 24);
    EXPECT_EQ(shapeElementCount(Shape{}), 1);
    EXPECT_EQ(shapeElementCount(Shape{5, 0, 7}), 0);
    EXPECT_EQ(shapeStrides(Shape{2, 3, 4}), (std::vector<std::int64_t>{12, 4, 1}));
}

TEST(Shape, OverflowAndNegativeDimsAreErrors) {
    Shape huge{1LL << 40, 1LL << 40};
    try {
        shapeElementCount(huge);
        FAIL() << "no error";
    } catch (const EngineError& e) {
        EXPECT_NE(std::string(e.what()).find("overflows"), std::string::npos);
    }
    EXPECT_THROW(shapeElementCount(Shape{2, -1}), EngineError);
}

TEST(Shape, Broadcasting) {
    EXPECT_EQ(broadcastShapes(Shape{2, 1, 4}, Shape{3, 1}), (Shape{2, 3, 4}));
    EXPECT_EQ(broadcastShapes(Shape{}, Shape{5}), (Shape{5}));
    EXPECT_EQ(broadcastShapes(Shape{0, 1}, Shape{1, 3}), (Shape{0, 3}));
    try {
        broadcastShapes(Shape{2, 3}, Shape{4});
        FAIL() << "no error";
    } catch (const EngineError& e) {
        EXPECT_NE(std::string(e.what()).find("[2x3] and [4]"), std::string::npos);
    }
    EXPECT_EQ(broadcastStrides(Shape{3, 1}, Shape{2, 3, 4}), (std::vector<std::int64_t>{0, 1, 0}));
}

TEST(Shape, NormalizeAxis) {
    EXPECT_EQ(normalizeAxis(-1, 3), 2);
    EXPECT_EQ(normalizeAxis(0, 3), 0);
    EXPECT_THROW(normalizeAxis(3, 3), EngineError);
    EXPECT_THROW(normalizeAxis(-4, 3), EngineError);
}

TEST(Tensor, AllocationIsAlignedAndTyped) {
    Tensor t(DataType::Float, {3, 5});
    EXPECT_EQ(t.numel(), 15);
    EXPECT_EQ(t.byteSize(), 60u);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.raw()) % 64, 0u);
    EXPECT_THROW(t.data<double>(), EngineError);
}

TEST(Tensor, MemoryLimitNamesTheShape) {
    const auto saved = maxTensorBytes();
    setMaxTensorBytes(1 << 20);
    try {
        Tensor t(DataType::Float, {1024, 1024});
        FAIL() << "no error";
    } catch (const EngineError& e) {
        EXPECT_NE(std::string(e.what()).find("[1024x1024]"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("memory limit"), std::string::npos) << e.what();
    }
    setMaxTensorBytes(saved);
}

TEST(Tensor, TerabyteShapeIsAnErrorNotAnAllocation) {
    EXPECT_THROW(Tensor(DataType::Float, {1LL << 20, 1LL << 20, 1LL << 10}), EngineError);
}

TEST(Tensor, ElementTypeOutsideTheEnumIsAnErrorNotADivisionByZero) {
    // An ONNX elem_type the engine does not know cast unchecked (fuzz find: fuzz_session_run,
    // UBSan; it was float8 = 18 before the engine had the float8 types).
    EXPECT_THROW(Tensor(static_cast<DataType>(25), {2}), EngineError);
    EXPECT_THROW(Tensor(static_cast<DataType>(-1), {2}), EngineError);
}

TEST(Tensor, ReshapeSharesAndCloneCopies) {
    auto t = Tensor::fromVector<float>({2, 2}, {1, 2, 3, 4});
    auto r = t.reshaped({4});
    EXPECT_TRUE(r.sharesStorageWith(t));
    auto c = t.clone();
    EXPECT_FALSE(c.sharesStorageWith(t));
    c.data<float>()[0] = 9;
    EXPECT_EQ(t.data<float>()[0], 1);
    EXPECT_THROW(t.reshaped({3}), EngineError);
}

TEST(Tensor, CastSaturatesAndHandlesNaN) {
    auto t = Tensor::fromVector<float>(
        {4}, {1.7f, -3.2f, std::numeric_limits<float>::quiet_NaN(), 1e10f});
    auto i = t.castTo(DataType::Int32);
    EXPECT_EQ(i.data<std::int32_t>()[0], 1);
    EXPECT_EQ(i.data<std::int32_t>()[1], -3);
    EXPECT_EQ(i.data<std::int32_t>()[2], 0);
    EXPECT_EQ(i.data<std::int32_t>()[3], std::numeric_limits<std::int32_t>::max());
    auto b = t.castTo(DataType::Bool);
    EXPECT_TRUE(b.data<bool>()[0]);
    auto h = t.castTo(DataType::Float16);
    EXPECT_NEAR(static_cast<float>(h.data<float16>()[0]), 1.7f, 1e-3);
}

TEST(Tensor, StringsAreOwned) {
    Tensor t(DataType::String, {2});
    t.data<std::string>()[0] = "hello";
    t.data<std::string>()[1] = std::string(1000, 'x');
    auto c = t.clone();
    EXPECT_EQ(c.data<std::string>()[1].size(), 1000u);
}

TEST(TensorProto, RoundTripEveryNumericType) {
    for (DataType type :
         {DataType::Float, DataType::Double, DataType::Float16, DataType::BFloat16, DataType::Int8,
          DataType::Int16, DataType::Int32, DataType::Int64, DataType::UInt8, DataType::UInt16,
          DataType::UInt32, DataType::UInt64, DataType::Bool}) {
        Tensor t = Tensor::zeros(type, {2, 3});
        auto proto = tensorToProto(t, "x");
        Tensor back = tensorFromProto(proto);
        EXPECT_EQ(back.dtype(), type);
        EXPECT_EQ(back.shape(), (Shape{2, 3}));
    }
}

TEST(TensorProto, TypedFieldsAndSizeMismatch) {
    onnx::TensorProto p;
    p.set_name("w");
    p.set_data_type(onnx::TensorProto::FLOAT);
    p.add_dims(2);
    p.add_float_data(1.5f);
    p.add_float_data(-2.0f);
    Tensor t = tensorFromProto(p);
    EXPECT_EQ(t.data<float>()[1], -2.0f);
    p.add_dims(2);  // now needs 4 values
    try {
        tensorFromProto(p);
        FAIL() << "no error";
    } catch (const EngineError& e) {
        EXPECT_NE(std::string(e.what()).find("tensor 'w'"), std::string::npos) << e.what();
    }
    onnx::TensorProto raw;
    raw.set_data_type(onnx::TensorProto::INT64);
    raw.add_dims(3);
    raw.set_raw_data(std::string(23, '\0'));
    EXPECT_THROW(tensorFromProto(raw), EngineError);
}
