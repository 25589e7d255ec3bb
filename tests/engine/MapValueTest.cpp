// Maps and sequences of maps (ZipMap's output): construction checks, comparison independent of
// key order, and the MapProto / SequenceProto round trip of test data.
#include <gtest/gtest.h>

#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/workflows/ReferenceComparison.h"

namespace onnxlens::engine {
namespace {

Value stringMap(std::vector<std::string> keys, std::vector<float> values) {
    const auto n = static_cast<std::int64_t>(keys.size());
    return Value::map(Tensor::fromVector<std::string>({n}, keys),
                      Tensor::fromVector<float>({n}, values));
}

TEST(MapValue, RejectsKeysAndValuesOfDifferentLengthOrFloatKeys) {
    EXPECT_THROW(Value::map(Tensor::fromVector<std::int64_t>({2}, {1, 2}),
                            Tensor::fromVector<float>({1}, {1.0f})),
                 EngineError);
    EXPECT_THROW(
        Value::map(Tensor::fromVector<float>({1}, {1.0f}), Tensor::fromVector<float>({1}, {1.0f})),
        EngineError);
    EXPECT_THROW(Value::mapSequence({stringMap({"a"}, {1.0f})}, DataType::Int64, DataType::Float),
                 EngineError);
    EXPECT_THROW(stringMap({"a"}, {1.0f}).tensor(), EngineError);
}

TEST(MapValue, ComparesEntriesWhateverTheKeyOrder) {
    const Value a = stringMap({"cat", "dog"}, {0.25f, 0.75f});
    const Value b = stringMap({"dog", "cat"}, {0.75f, 0.25f});
    EXPECT_TRUE(compareValues(a, b).passed);
    const Value off = stringMap({"dog", "cat"}, {0.70f, 0.25f});
    const auto r = compareValues(a, off, {0.0, 1e-5});
    EXPECT_FALSE(r.passed);
    EXPECT_NEAR(r.maxAbsError, 0.05, 1e-6);
    EXPECT_FALSE(compareValues(a, stringMap({"cat", "eel"}, {0.25f, 0.75f})).passed);
    EXPECT_FALSE(compareValues(a, Value(Tensor::scalar<float>(1.0f))).passed);
}

TEST(MapValue, SequenceOfMapsRoundTripsThroughSequenceProto) {
    const Value seq = Value::mapSequence(
        {stringMap({"x", "y"}, {0.5f, 0.5f}), stringMap({"x", "y"}, {0.1f, 0.9f})},
        DataType::String, DataType::Float);
    const onnx::SequenceProto proto = sequenceToProto(seq, "probabilities");
    EXPECT_EQ(proto.elem_type(), onnx::SequenceProto::MAP);
    ASSERT_EQ(proto.map_values_size(), 2);
    EXPECT_EQ(proto.map_values(1).string_keys(1), "y");
    const Value back = valueFromSequenceProto(proto);
    ASSERT_TRUE(back.isMapSequence());
    ASSERT_EQ(back.maps().size(), 2u);
    EXPECT_FLOAT_EQ(back.maps()[1].mapValues().data<float>()[1], 0.9f);
    EXPECT_TRUE(compareValues(back, seq).passed);
}

TEST(MapValue, Int64KeyedMapRoundTripsThroughMapProto) {
    const Value m = Value::map(Tensor::fromVector<std::int64_t>({3}, {5, 2, 9}),
                               Tensor::fromVector<double>({3}, {1.5, -2, 4}));
    const Value back = valueFromMapProto(mapToProto(m));
    ASSERT_TRUE(back.isMap());
    EXPECT_EQ(back.mapKeyType(), DataType::Int64);
    EXPECT_EQ(back.mapValueType(), DataType::Double);
    EXPECT_EQ(back.mapKeys().data<std::int64_t>()[2], 9);
    EXPECT_DOUBLE_EQ(back.mapValues().data<double>()[1], -2.0);
}

}  // namespace
}  // namespace onnxlens::engine
