// ai.onnx.ml feature preprocessing: Scaler, Normalizer, Binarizer, Imputer, ArrayFeatureExtractor
// and FeatureVectorizer, elementwise or per row of a [N, F] input.
#include <cmath>

#include "MlCommon.h"
#include "OpFamilies.h"

namespace onnxlens::engine::ops {
namespace {

// Y = (X - offset) * scale, offset and scale one value or one per feature; Y is float.
class ScalerKernel : public Kernel {
  public:
    explicit ScalerKernel(const NodeInfo& node)
        : offset_(node.getFloats("offset")), scale_(node.getFloats("scale")) {}

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& input = inputTensor(inputs, 0);
        const std::int64_t features = input.rank() == 0 ? 1 : input.dim(input.rank() - 1);
        auto check = [&](const std::vector<float>& v, const char* name) {
            if (v.size() > 1 && static_cast<std::int64_t>(v.size()) != features)
                throw EngineError(std::string("Scaler: ") + name + " has " +
                                  std::to_string(v.size()) + " values, the input " +
                                  std::to_string(features) + " features");
        };
        check(offset_, "offset");
        check(scale_, "scale");
        Tensor x = input.dtype() == DataType::Float ? input : input.castTo(DataType::Float);
        Tensor y(DataType::Float, input.shape());
        const float* in = x.data<float>();
        float* out = y.data<float>();
        for (std::int64_t i = 0; i < y.numel(); ++i) {
            const auto f = static_cast<std::size_t>(features > 0 ? i % features : 0);
            const float o = offset_.empty() ? 0.0f : offset_[offset_.size() == 1 ? 0 : f];
            const float s = scale_.empty() ? 1.0f : scale_[scale_.size() == 1 ? 0 : f];
            out[i] = (in[i] - o) * s;
        }
        outputs[0] = std::move(y);
    }

  private:
    std::vector<float> offset_, scale_;
};

// Each row divided by its MAX, L1 or L2 norm; a row whose norm is 0 stays as it is.
class NormalizerKernel : public Kernel {
  public:
    explicit NormalizerKernel(const NodeInfo& node) : norm_(node.getString("norm", "MAX")) {
        if (norm_ != "MAX" && norm_ != "L1" && norm_ != "L2")
            throw EngineError("Normalizer: unknown norm '" + norm_ + "'");
    }

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& input = inputTensor(inputs, 0);
        Tensor x = input.castTo(DataType::Double);
        const auto shape = ml::rowShapeOf(input);
        Tensor y(DataType::Float, input.shape());
        const double* in = x.data<double>();
        float* out = y.data<float>();
        for (std::int64_t r = 0; r < shape.rows; ++r) {
            const double* row = in + r * shape.features;
            double norm = 0;
            if (norm_ == "MAX") {
                norm = shape.features > 0 ? row[0] : 0;
                for (std::int64_t f = 1; f < shape.features; ++f) norm = std::max(norm, row[f]);
            } else if (norm_ == "L1") {
                for (std::int64_t f = 0; f < shape.features; ++f) norm += std::fabs(row[f]);
            } else {
                for (std::int64_t f = 0; f < shape.features; ++f) norm += row[f] * row[f];
                norm = std::sqrt(norm);
            }
            for (std::int64_t f = 0; f < shape.features; ++f)
                out[r * shape.features + f] =
                    static_cast<float>(norm != 0 ? row[f] / norm : row[f]);
        }
        outputs[0] = std::move(y);
    }

  private:
    std::string norm_;
};

// 1 where X > threshold, else 0, in X's type.
class BinarizerKernel : public Kernel {
  public:
    explicit BinarizerKernel(const NodeInfo& node) : threshold_(node.getFloat("threshold", 0.0f)) {}

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        Tensor y(x.dtype(), x.shape());
        dispatchNumeric(x.dtype(), [&]<class T>() {
            const T* in = x.data<T>();
            T* out = y.data<T>();
            for (std::int64_t i = 0; i < x.numel(); ++i)
                out[i] = static_cast<T>(toDouble(in[i]) > static_cast<double>(threshold_) ? 1 : 0);
        });
        outputs[0] = std::move(y);
    }

  private:
    float threshold_;
};

// Replaces replaced_value (NaN matches NaN) by the imputed value of the element's feature.
class ImputerKernel : public Kernel {
  public:
    explicit ImputerKernel(const NodeInfo& node)
        : floats_(node.getFloats("imputed_value_floats")),
          ints_(node.getInts("imputed_value_int64s")),
          replacedFloat_(node.getFloat("replaced_value_float", 0.0f)),
          replacedInt_(node.getInt("replaced_value_int64", 0)) {
        if (floats_.empty() == ints_.empty())
            throw EngineError(
                "Imputer: exactly one of imputed_value_floats and imputed_value_int64s must be "
                "set");
    }

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const std::int64_t features = x.rank() == 0 ? 1 : x.dim(x.rank() - 1);
        const std::size_t count = floats_.empty() ? ints_.size() : floats_.size();
        if (count != 1 && static_cast<std::int64_t>(count) != features)
            throw EngineError("Imputer: " + std::to_string(count) + " imputed values for " +
                              std::to_string(features) + " features");
        Tensor y = x.clone();
        auto pick = [&](std::int64_t i) {
            return count == 1 ? 0 : static_cast<std::size_t>(i % features);
        };
        if (x.dtype() == DataType::Float || x.dtype() == DataType::Double) {
            if (floats_.empty())
                throw EngineError("Imputer: float input needs imputed_value_floats");
            dispatchFloat(x.dtype(), [&]<class T>() {
                T* v = y.data<T>();
                const bool nanMatch = std::isnan(replacedFloat_);
                for (std::int64_t i = 0; i < y.numel(); ++i) {
                    const double d = toDouble(v[i]);
                    if (nanMatch ? std::isnan(d) : d == static_cast<double>(replacedFloat_))
                        v[i] = static_cast<T>(floats_[pick(i)]);
                }
            });
        } else if (x.dtype() == DataType::Int64 || x.dtype() == DataType::Int32) {
            if (ints_.empty())
                throw EngineError("Imputer: integer input needs imputed_value_int64s");
            dispatchInteger(x.dtype(), [&]<class T>() {
                T* v = y.data<T>();
                for (std::int64_t i = 0; i < y.numel(); ++i)
                    if (static_cast<std::int64_t>(v[i]) == replacedInt_)
                        v[i] = static_cast<T>(ints_[pick(i)]);
            });
        } else {
            throw EngineError(std::string("Imputer: unsupported input type ") +
                              dataTypeName(x.dtype()));
        }
        outputs[0] = std::move(y);
    }

  private:
    std::vector<float> floats_;
    std::vector<std::int64_t> ints_;
    float replacedFloat_;
    std::int64_t replacedInt_;
};

// Z = X[..., Y]: the given indices of the last axis (a 1-D X gives one row).
class ArrayFeatureExtractorKernel : public Kernel {
  public:
    explicit ArrayFeatureExtractorKernel(const NodeInfo&) {}

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const auto indices = inputTensor(inputs, 1).toInt64Vector();
        if (x.rank() == 0)
            throw EngineError("ArrayFeatureExtractor: X must have at least one dimension");
        const std::int64_t last = x.dim(x.rank() - 1);
        for (auto i : indices)
            if (i < 0 || i >= last)
                throw EngineError("ArrayFeatureExtractor: index " + std::to_string(i) +
                                  " is outside the last axis of " + std::to_string(last));
        Shape shape = x.rank() == 1 ? Shape{1} : Shape(x.shape().begin(), x.shape().end() - 1);
        const std::int64_t rows = shapeElementCount(shape);
        shape.push_back(static_cast<std::int64_t>(indices.size()));
        Tensor z(x.dtype(), shape);
        dispatchBySize(x.dtype(), [&]<class T>() {
            const T* in = static_cast<const T*>(x.raw());
            T* out = static_cast<T*>(z.raw());
            for (std::int64_t r = 0; r < rows; ++r)
                for (std::size_t k = 0; k < indices.size(); ++k)
                    out[r * static_cast<std::int64_t>(indices.size()) +
                        static_cast<std::int64_t>(k)] = in[r * last + indices[k]];
        });
        outputs[0] = std::move(z);
    }
};

// Concatenates the inputs' columns into one float [N, sum(inputdimensions)], each input cut or
// zero-padded to its declared width.
class FeatureVectorizerKernel : public Kernel {
  public:
    explicit FeatureVectorizerKernel(const NodeInfo& node)
        : widths_(node.getInts("inputdimensions")) {
        if (static_cast<int>(widths_.size()) != node.inputCount())
            throw EngineError("FeatureVectorizer: inputdimensions has " +
                              std::to_string(widths_.size()) + " entries for " +
                              std::to_string(node.inputCount()) + " inputs");
        for (auto w : widths_) {
            if (w < 0) throw EngineError("FeatureVectorizer: negative input dimension");
            total_ += w;
        }
    }

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        std::int64_t rows = -1;
        std::vector<Tensor> parts;
        for (std::size_t i = 0; i < widths_.size(); ++i) {
            const Tensor& x = inputTensor(inputs, i);
            const auto shape = ml::rowShapeOf(x);
            if (rows >= 0 && shape.rows != rows)
                throw EngineError("FeatureVectorizer: inputs have " + std::to_string(rows) +
                                  " and " + std::to_string(shape.rows) + " rows");
            rows = shape.rows;
            parts.push_back(x.castTo(DataType::Float));
        }
        Tensor y = Tensor::zeros(DataType::Float, {std::max<std::int64_t>(rows, 0), total_});
        float* out = y.data<float>();
        std::int64_t column = 0;
        for (std::size_t i = 0; i < parts.size(); ++i) {
            const auto shape = ml::rowShapeOf(parts[i]);
            const float* in = parts[i].data<float>();
            const auto copy = std::min(shape.features, widths_[i]);
            for (std::int64_t r = 0; r < rows; ++r)
                for (std::int64_t f = 0; f < copy; ++f)
                    out[r * total_ + column + f] = in[r * shape.features + f];
            column += widths_[i];
        }
        outputs[0] = std::move(y);
    }

  private:
    std::vector<std::int64_t> widths_;
    std::int64_t total_ = 0;
};

}  // namespace

void registerMlPreprocessOps(KernelRegistry& registry) {
    const std::string ml = "ai.onnx.ml";
    registry.add<ScalerKernel>("Scaler", 1, kLatestOpset, ml);
    registry.add<NormalizerKernel>("Normalizer", 1, kLatestOpset, ml);
    registry.add<BinarizerKernel>("Binarizer", 1, kLatestOpset, ml);
    registry.add<ImputerKernel>("Imputer", 1, kLatestOpset, ml);
    registry.add<ArrayFeatureExtractorKernel>("ArrayFeatureExtractor", 1, kLatestOpset, ml);
    registry.add<FeatureVectorizerKernel>("FeatureVectorizer", 1, kLatestOpset, ml);
}

}  // namespace onnxlens::engine::ops
