// ai.onnx.ml encoders and map conversions: LabelEncoder (opset 1 and 2+), CategoryMapper,
// OneHotEncoder, and the operators on maps: ZipMap (class scores to one map per row),
// DictVectorizer (map to a dense row) and CastMap (int64-keyed map to a dense or sparse row).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <unordered_map>

#include "MlCommon.h"
#include "OpFamilies.h"

namespace onnxlens::engine::ops {
namespace {

// A lookup table from int64, string or floating-point keys to positions.
class KeyIndex {
  public:
    DataType keyType = DataType::Undefined;

    void addStrings(const std::vector<std::string>& keys) {
        keyType = DataType::String;
        for (std::size_t i = 0; i < keys.size(); ++i)
            strings_.emplace(keys[i], static_cast<std::int64_t>(i));
    }
    void addInts(const std::vector<std::int64_t>& keys) {
        keyType = DataType::Int64;
        for (std::size_t i = 0; i < keys.size(); ++i)
            ints_.emplace(keys[i], static_cast<std::int64_t>(i));
    }
    void addDoubles(const std::vector<double>& keys, DataType type) {
        keyType = type;
        for (std::size_t i = 0; i < keys.size(); ++i)
            doubles_.emplace(keys[i], static_cast<std::int64_t>(i));
    }
    // Position of element i of `x`, or -1.
    std::int64_t find(const Tensor& x, std::int64_t i) const {
        if (x.dtype() == DataType::String) {
            auto it = strings_.find(x.data<std::string>()[i]);
            return it == strings_.end() ? -1 : it->second;
        }
        if (isInteger(x.dtype())) {
            auto it = ints_.find(x.valueAsInt64(i));
            return it == ints_.end() ? -1 : it->second;
        }
        auto it = doubles_.find(x.valueAsDouble(i));
        return it == doubles_.end() ? -1 : it->second;
    }
    bool accepts(DataType input) const {
        if (keyType == DataType::String) return input == DataType::String;
        if (keyType == DataType::Int64) return isInteger(input);
        return isFloatingPoint(input);
    }

  private:
    std::unordered_map<std::string, std::int64_t> strings_;
    std::unordered_map<std::int64_t, std::int64_t> ints_;
    std::unordered_map<double, std::int64_t> doubles_;
};

// Copies values[position] (or the default) for every element.
Tensor lookUp(const Tensor& x, const KeyIndex& keys, const Tensor& values, const Tensor& fallback) {
    Tensor y(values.dtype(), x.shape());
    dispatchAny(values.dtype(), [&]<class T>() {
        const T* v = values.data<T>();
        const T d = *fallback.data<T>();
        T* out = y.data<T>();
        for (std::int64_t i = 0; i < x.numel(); ++i) {
            const auto p = keys.find(x, i);
            out[i] = p >= 0 ? v[p] : d;
        }
    });
    return y;
}

class LabelEncoderKernel : public Kernel {
  public:
    explicit LabelEncoderKernel(const NodeInfo& node) {
        if (node.opsetVersion() < 2) {
            // Opset 1: strings <-> their position in classes_strings.
            auto classes = node.getStrings("classes_strings");
            std::vector<std::int64_t> positions(classes.size());
            std::iota(positions.begin(), positions.end(), 0);
            stringToInt_.addStrings(classes);
            intToString_.addInts(positions);
            positionsTensor_ = Tensor::fromVector<std::int64_t>(
                {static_cast<std::int64_t>(positions.size())}, positions);
            classesTensor_ = Tensor::fromVector<std::string>(
                {static_cast<std::int64_t>(classes.size())}, classes);
            defaultInt_ = Tensor::scalar<std::int64_t>(node.getInt("default_int64", -1));
            defaultString_ =
                Tensor::scalar<std::string>(node.getString("default_string", "_Unused"));
            opset1_ = true;
            return;
        }
        if (auto keys = node.getTensor("keys_tensor")) {
            keysFromTensor(*keys);
        } else if (node.hasAttribute("keys_strings")) {
            keys_.addStrings(node.getStrings("keys_strings"));
            keyCount_ = node.getStrings("keys_strings").size();
        } else if (node.hasAttribute("keys_int64s")) {
            keys_.addInts(node.getInts("keys_int64s"));
            keyCount_ = node.getInts("keys_int64s").size();
        } else if (node.hasAttribute("keys_floats")) {
            auto f = node.getFloats("keys_floats");
            keys_.addDoubles({f.begin(), f.end()}, DataType::Float);
            keyCount_ = f.size();
        } else {
            throw EngineError("LabelEncoder: no keys");
        }
        if (auto values = node.getTensor("values_tensor")) {
            values_ = values->reshaped({values->numel()});
        } else if (node.hasAttribute("values_strings")) {
            auto v = node.getStrings("values_strings");
            values_ = Tensor::fromVector<std::string>({static_cast<std::int64_t>(v.size())}, v);
        } else if (node.hasAttribute("values_int64s")) {
            auto v = node.getInts("values_int64s");
            values_ = Tensor::fromVector<std::int64_t>({static_cast<std::int64_t>(v.size())}, v);
        } else if (node.hasAttribute("values_floats")) {
            auto v = node.getFloats("values_floats");
            values_ = Tensor::fromVector<float>({static_cast<std::int64_t>(v.size())}, v);
        } else {
            throw EngineError("LabelEncoder: no values");
        }
        if (static_cast<std::size_t>(values_.numel()) != keyCount_)
            throw EngineError("LabelEncoder: " + std::to_string(keyCount_) + " keys but " +
                              std::to_string(values_.numel()) + " values");
        if (auto d = node.getTensor("default_tensor")) {
            fallback_ = d->reshaped({});
            if (fallback_.dtype() != values_.dtype()) fallback_ = fallback_.castTo(values_.dtype());
        } else if (values_.dtype() == DataType::String) {
            fallback_ = Tensor::scalar<std::string>(node.getString("default_string", "_Unused"));
        } else if (values_.dtype() == DataType::Int64) {
            fallback_ = Tensor::scalar<std::int64_t>(node.getInt("default_int64", -1));
        } else {
            fallback_ = Tensor::scalar<float>(node.getFloat("default_float", -0.0f))
                            .castTo(values_.dtype());
        }
    }

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        if (opset1_) {
            if (x.dtype() == DataType::String)
                outputs[0] = lookUp(x, stringToInt_, positionsTensor_, defaultInt_);
            else if (x.dtype() == DataType::Int64)
                outputs[0] = lookUp(x, intToString_, classesTensor_, defaultString_);
            else
                throw EngineError(std::string("LabelEncoder: input of type ") +
                                  dataTypeName(x.dtype()));
            return;
        }
        if (!keys_.accepts(x.dtype()))
            throw EngineError(std::string("LabelEncoder: ") + dataTypeName(x.dtype()) +
                              " input for " + dataTypeName(keys_.keyType) + " keys");
        outputs[0] = lookUp(x, keys_, values_, fallback_);
    }

  private:
    void keysFromTensor(const Tensor& t) {
        keyCount_ = static_cast<std::size_t>(t.numel());
        if (t.dtype() == DataType::String) {
            keys_.addStrings({t.data<std::string>(), t.data<std::string>() + t.numel()});
        } else if (isInteger(t.dtype())) {
            keys_.addInts(t.toInt64Vector());
        } else {
            std::vector<double> d(keyCount_);
            for (std::size_t i = 0; i < keyCount_; ++i)
                d[i] = t.valueAsDouble(static_cast<std::int64_t>(i));
            keys_.addDoubles(d, t.dtype());
        }
    }

    bool opset1_ = false;
    KeyIndex stringToInt_, intToString_, keys_;
    Tensor positionsTensor_, classesTensor_, defaultInt_, defaultString_, values_, fallback_;
    std::size_t keyCount_ = 0;
};

// strings -> int64 through the cats_strings/cats_int64s pairs, and back.
class CategoryMapperKernel : public Kernel {
  public:
    explicit CategoryMapperKernel(const NodeInfo& node) {
        auto strings = node.getStrings("cats_strings");
        auto ints = node.getInts("cats_int64s");
        if (strings.size() != ints.size())
            throw EngineError("CategoryMapper: cats_strings and cats_int64s differ in length");
        toInt_.addStrings(strings);
        toString_.addInts(ints);
        ints_ = Tensor::fromVector<std::int64_t>({static_cast<std::int64_t>(ints.size())}, ints);
        strings_ =
            Tensor::fromVector<std::string>({static_cast<std::int64_t>(strings.size())}, strings);
        defaultInt_ = Tensor::scalar<std::int64_t>(node.getInt("default_int64", -1));
        defaultString_ = Tensor::scalar<std::string>(node.getString("default_string", "_Unused"));
    }

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        if (x.dtype() == DataType::String)
            outputs[0] = lookUp(x, toInt_, ints_, defaultInt_);
        else if (x.dtype() == DataType::Int64)
            outputs[0] = lookUp(x, toString_, strings_, defaultString_);
        else
            throw EngineError(std::string("CategoryMapper: input of type ") +
                              dataTypeName(x.dtype()));
    }

  private:
    KeyIndex toInt_, toString_;
    Tensor ints_, strings_, defaultInt_, defaultString_;
};

// One float column per category: 1 where the element is that category. An unknown category
// gives an all-zero row, or an error when zeros = 0.
class OneHotEncoderKernel : public Kernel {
  public:
    explicit OneHotEncoderKernel(const NodeInfo& node) : zeros_(node.getInt("zeros", 1) != 0) {
        auto strings = node.getStrings("cats_strings");
        auto ints = node.getInts("cats_int64s");
        if (strings.empty() == ints.empty())
            throw EngineError(
                "OneHotEncoder: exactly one of cats_strings and cats_int64s must be set");
        if (!strings.empty()) {
            categories_.addStrings(strings);
            count_ = static_cast<std::int64_t>(strings.size());
        } else {
            categories_.addInts(ints);
            count_ = static_cast<std::int64_t>(ints.size());
        }
    }

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& input = inputTensor(inputs, 0);
        if ((input.dtype() == DataType::String) != (categories_.keyType == DataType::String))
            throw EngineError(std::string("OneHotEncoder: ") + dataTypeName(input.dtype()) +
                              " input does not match the categories");
        // Floating-point inputs are categories by their integer value.
        Tensor x = isFloatingPoint(input.dtype()) ? input.castTo(DataType::Int64) : input;
        Shape shape = x.shape();
        shape.push_back(count_);
        Tensor y = Tensor::zeros(DataType::Float, shape);
        float* out = y.data<float>();
        for (std::int64_t i = 0; i < x.numel(); ++i) {
            const auto p = categories_.find(x, i);
            if (p >= 0)
                out[i * count_ + p] = 1.0f;
            else if (!zeros_)
                throw EngineError("OneHotEncoder: element " + std::to_string(i) +
                                  " is no known category");
        }
        outputs[0] = std::move(y);
    }

  private:
    KeyIndex categories_;
    std::int64_t count_ = 0;
    bool zeros_;
};

// [N, C] scores -> N maps from the class labels to the row's scores.
class ZipMapKernel : public Kernel {
  public:
    explicit ZipMapKernel(const NodeInfo& node) {
        auto strings = node.getStrings("classlabels_strings");
        auto ints = node.getInts("classlabels_int64s");
        if (strings.empty() == ints.empty())
            throw EngineError(
                "ZipMap: exactly one of classlabels_strings and classlabels_int64s must be set");
        keys_ = strings.empty() ? Tensor::fromVector<std::int64_t>(
                                      {static_cast<std::int64_t>(ints.size())}, ints)
                                : Tensor::fromVector<std::string>(
                                      {static_cast<std::int64_t>(strings.size())}, strings);
    }

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& input = inputTensor(inputs, 0);
        if (input.dtype() != DataType::Float) throw EngineError("ZipMap: input must be float");
        if (input.rank() > 2) throw EngineError("ZipMap: input must be [N, C] or [C]");
        const auto shape = ml::rowShapeOf(input);
        if (shape.features != keys_.numel())
            throw EngineError("ZipMap: " + std::to_string(shape.features) + " columns for " +
                              std::to_string(keys_.numel()) + " class labels");
        std::vector<Value> maps;
        maps.reserve(static_cast<std::size_t>(shape.rows));
        const float* in = input.data<float>();
        for (std::int64_t r = 0; r < shape.rows; ++r) {
            Tensor values(DataType::Float, {shape.features});
            std::copy(in + r * shape.features, in + (r + 1) * shape.features, values.data<float>());
            maps.push_back(Value::map(keys_, std::move(values)));  // the keys' buffer is shared
        }
        outputs[0] = Value::mapSequence(std::move(maps), keys_.dtype(), DataType::Float);
    }

  private:
    Tensor keys_;
};

const Value& inputMap(const std::vector<const Value*>& inputs, const char* op) {
    if (inputs.empty() || inputs[0] == nullptr || !inputs[0]->isMap())
        throw EngineError(std::string(op) + ": the input must be a map");
    return *inputs[0];
}

// A map -> [1, V] row: the value of each vocabulary key, 0 (or "") where the map lacks it.
class DictVectorizerKernel : public Kernel {
  public:
    explicit DictVectorizerKernel(const NodeInfo& node) {
        auto strings = node.getStrings("string_vocabulary");
        auto ints = node.getInts("int64_vocabulary");
        if (strings.empty() == ints.empty())
            throw EngineError(
                "DictVectorizer: exactly one of string_vocabulary and int64_vocabulary must be "
                "set");
        if (!strings.empty()) {
            vocabulary_.addStrings(strings);
            size_ = static_cast<std::int64_t>(strings.size());
        } else {
            vocabulary_.addInts(ints);
            size_ = static_cast<std::int64_t>(ints.size());
        }
    }

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Value& map = inputMap(inputs, "DictVectorizer");
        const Tensor& keys = map.mapKeys();
        const Tensor& values = map.mapValues();
        if (keys.dtype() != vocabulary_.keyType)
            throw EngineError(std::string("DictVectorizer: map keys of type ") +
                              dataTypeName(keys.dtype()) + " for a " +
                              dataTypeName(vocabulary_.keyType) + " vocabulary");
        Tensor y = values.dtype() == DataType::String ? Tensor(DataType::String, {1, size_})
                                                      : Tensor::zeros(values.dtype(), {1, size_});
        dispatchAny(values.dtype(), [&]<class T>() {
            const T* v = values.data<T>();
            T* out = y.data<T>();
            for (std::int64_t i = 0; i < keys.numel(); ++i) {
                const auto p = vocabulary_.find(keys, i);
                if (p >= 0) out[p] = v[i];
            }
        });
        outputs[0] = std::move(y);
    }

  private:
    KeyIndex vocabulary_;
    std::int64_t size_ = 0;
};

// An int64-keyed map -> [1, N]: its values in key order (DENSE), or at the position of their key
// in a row of max_map (SPARSE, missing keys 0), cast to float, int64 or string.
class CastMapKernel : public Kernel {
  public:
    explicit CastMapKernel(const NodeInfo& node)
        : castTo_(node.getString("cast_to", "TO_FLOAT")),
          sparse_(node.getString("map_form", "DENSE") == "SPARSE"),
          maxMap_(node.getInt("max_map", 1)) {
        if (castTo_ != "TO_FLOAT" && castTo_ != "TO_STRING" && castTo_ != "TO_INT64")
            throw EngineError("CastMap: unknown cast_to '" + castTo_ + "'");
        if (sparse_ && maxMap_ <= 0) throw EngineError("CastMap: max_map must be positive");
    }

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Value& map = inputMap(inputs, "CastMap");
        const Tensor& keys = map.mapKeys();
        if (keys.dtype() != DataType::Int64) throw EngineError("CastMap: map keys must be int64");
        const Tensor& values = map.mapValues();
        const std::int64_t* k = keys.data<std::int64_t>();
        std::vector<std::int64_t> order(static_cast<std::size_t>(keys.numel()));
        std::iota(order.begin(), order.end(), 0);
        std::sort(order.begin(), order.end(), [&](auto a, auto b) { return k[a] < k[b]; });
        const std::int64_t width = sparse_ ? maxMap_ : keys.numel();
        const DataType target = castTo_ == "TO_FLOAT"   ? DataType::Float
                                : castTo_ == "TO_INT64" ? DataType::Int64
                                                        : DataType::String;
        Tensor y(target, {1, width});
        std::vector<std::int64_t> column(order.size());
        for (std::size_t i = 0; i < order.size(); ++i) {
            column[i] = sparse_ ? k[order[i]] : static_cast<std::int64_t>(i);
            if (column[i] < 0 || column[i] >= width)
                throw EngineError("CastMap: key " + std::to_string(k[order[i]]) +
                                  " is outside max_map " + std::to_string(maxMap_));
        }
        auto numberAt = [&](std::int64_t index) -> double {
            if (values.dtype() == DataType::String) {
                const std::string& s = values.data<std::string>()[index];
                char* end = nullptr;
                const double d = std::strtod(s.c_str(), &end);
                return end != s.c_str() ? d : NAN;
            }
            return values.valueAsDouble(index);
        };
        auto stringAt = [&](std::int64_t index) -> std::string {
            if (values.dtype() == DataType::String) return values.data<std::string>()[index];
            if (isInteger(values.dtype())) return std::to_string(values.valueAsInt64(index));
            return std::to_string(values.valueAsDouble(index));
        };
        if (target == DataType::String) {
            auto* out = y.data<std::string>();
            std::fill(out, out + width, std::string("0"));
            for (std::size_t i = 0; i < order.size(); ++i) out[column[i]] = stringAt(order[i]);
        } else if (target == DataType::Float) {
            auto* out = y.data<float>();
            std::fill(out, out + width, 0.0f);
            for (std::size_t i = 0; i < order.size(); ++i)
                out[column[i]] = static_cast<float>(numberAt(order[i]));
        } else {
            auto* out = y.data<std::int64_t>();
            std::fill(out, out + width, 0);
            for (std::size_t i = 0; i < order.size(); ++i) {
                const double d = numberAt(order[i]);
                out[column[i]] = std::isfinite(d) ? static_cast<std::int64_t>(d) : 0;
            }
        }
        outputs[0] = std::move(y);
    }

  private:
    std::string castTo_;
    bool sparse_;
    std::int64_t maxMap_;
};

}  // namespace

void registerMlEncodingOps(KernelRegistry& registry) {
    const std::string ml = "ai.onnx.ml";
    registry.add<LabelEncoderKernel>("LabelEncoder", 1, kLatestOpset, ml);
    registry.add<CategoryMapperKernel>("CategoryMapper", 1, kLatestOpset, ml);
    registry.add<OneHotEncoderKernel>("OneHotEncoder", 1, kLatestOpset, ml);
    registry.add<ZipMapKernel>("ZipMap", 1, kLatestOpset, ml);
    registry.add<DictVectorizerKernel>("DictVectorizer", 1, kLatestOpset, ml);
    registry.add<CastMapKernel>("CastMap", 1, kLatestOpset, ml);
}

}  // namespace onnxlens::engine::ops
