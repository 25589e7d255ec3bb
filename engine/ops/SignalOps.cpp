// Signal processing: DFT, STFT, the Hann / Hamming / Blackman windows and MelWeightMatrix.
// Fourier transforms use Eigen's FFT module (kissfft: mixed radix, any length), in double.
#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>
#include <unsupported/Eigen/FFT>
#include <vector>

#include "OpFamilies.h"

namespace onnxlens::engine::ops {

namespace {

using Complex = std::complex<double>;

// The last dim of a signal tensor holds 1 (real) or 2 (real, imaginary) components.
std::int64_t componentsOf(const Tensor& t, const char* name) {
    require(t.rank() >= 2 && (t.shape().back() == 1 || t.shape().back() == 2), [&] {
        return std::string(name) + " must end with a dim of 1 (real) or 2 (complex), got " +
               shapeToString(t.shape());
    });
    return t.shape().back();
}

// Transforms one line of `length` complex values in place-agnostic buffers.
class FourierTransform {
  public:
    void run(const std::vector<Complex>& in, std::vector<Complex>& out, bool inverse) {
        if (in.empty()) {
            out.clear();
            return;
        }
        // A single sample is its own transform (either direction, 1/n = 1). Eigen's kissfft
        // reads an empty scratch buffer for n = 1 (UBSan, found by fuzz_operator_attributes).
        if (in.size() == 1) {
            out = in;
            return;
        }
        if (inverse)
            fft_.inv(out, in);  // scaled by 1/n
        else
            fft_.fwd(out, in);
    }

  private:
    Eigen::FFT<double> fft_;
};

class DftKernel : public Kernel {
  public:
    explicit DftKernel(const NodeInfo& node)
        : axis_(node.getInt("axis", 1)),
          inverse_(node.getInt("inverse", 0) != 0),
          onesided_(node.getInt("onesided", 0) != 0) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const Tensor* dftLength = optionalInputTensor(inputs, 1);
        const std::int64_t components = componentsOf(x, "DFT input");
        const std::int64_t rank = x.rank();
        // The axis counts signal dims; the trailing component dim is not one of them.
        const std::int64_t axis = normalizeAxis(axis_, rank);
        require(axis < rank - 1, [&] {
            return "DFT axis " + std::to_string(axis_) + " must not be the component (last) dim";
        });
        const std::int64_t inLength = x.dim(axis);
        std::int64_t n = inLength;
        if (dftLength && dftLength->numel() > 0) {
            n = dftLength->valueAsInt64(0);
            require(n > 0, "dft_length must be positive");
        }
        require(!(onesided_ && inverse_), "DFT with both onesided and inverse is not supported");
        const std::int64_t outLength = onesided_ ? n / 2 + 1 : n;
        Shape outShape = x.shape();
        outShape[axis] = outLength;
        outShape.back() = 2;

        std::int64_t outer = 1, inner = 1;
        for (std::int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
        for (std::int64_t d = axis + 1; d < rank - 1; ++d) inner *= x.dim(d);
        Tensor xd = x.castTo(DataType::Double);
        const double* in = xd.data<double>();
        Tensor y(DataType::Double, outShape);
        double* out = y.data<double>();
        ctx.pool().parallelFor(
            outer * inner, 5.0 * n * std::log2(n + 1.0), [&](std::int64_t b, std::int64_t e) {
                FourierTransform fft;
                std::vector<Complex> line(static_cast<std::size_t>(n)), result;
                for (std::int64_t item = b; item < e; ++item) {
                    const std::int64_t o = item / inner, i = item % inner;
                    for (std::int64_t k = 0; k < n; ++k) {
                        if (k >= inLength) {
                            line[k] = 0;
                            continue;
                        }
                        const double* v = in + ((o * inLength + k) * inner + i) * components;
                        line[k] = Complex(v[0], components == 2 ? v[1] : 0.0);
                    }
                    fft.run(line, result, inverse_);
                    for (std::int64_t k = 0; k < outLength; ++k) {
                        double* w = out + ((o * outLength + k) * inner + i) * 2;
                        w[0] = result[k].real();
                        w[1] = result[k].imag();
                    }
                }
            });
        outputs[0] = Value(y.castTo(x.dtype()));
    }

  private:
    std::int64_t axis_;
    bool inverse_, onesided_;
};

class StftKernel : public Kernel {
  public:
    explicit StftKernel(const NodeInfo& node) : onesided_(node.getInt("onesided", 1) != 0) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& signal = inputTensor(inputs, 0);
        const Tensor& step = inputTensor(inputs, 1);
        const Tensor* window = optionalInputTensor(inputs, 2);
        const Tensor* frameLengthInput = optionalInputTensor(inputs, 3);
        const std::int64_t components = componentsOf(signal, "STFT signal");
        require(signal.rank() == 3, [&] {
            return "STFT signal must have shape [batch, length, 1 or 2], got " +
                   shapeToString(signal.shape());
        });
        require(step.numel() == 1, "frame_step must be a scalar");
        const std::int64_t frameStep = step.valueAsInt64(0);
        require(frameStep > 0, "frame_step must be positive");
        std::int64_t frameLength = -1;
        if (window) {
            require(window->rank() == 1, "window must be 1-D");
            frameLength = window->dim(0);
        }
        if (frameLengthInput && frameLengthInput->numel() > 0) {
            const std::int64_t given = frameLengthInput->valueAsInt64(0);
            require(frameLength < 0 || given == frameLength, [&] {
                return "frame_length " + std::to_string(given) +
                       " does not match the window length " + std::to_string(frameLength);
            });
            frameLength = given;
        }
        const std::int64_t batch = signal.dim(0), length = signal.dim(1);
        if (frameLength < 0) frameLength = length;
        require(frameLength > 0 && frameLength <= length, [&] {
            return "frame length " + std::to_string(frameLength) +
                   " must be in [1, signal length " + std::to_string(length) + "]";
        });
        require(!(onesided_ && components == 2), "onesided STFT needs a real signal");
        const std::int64_t frames = (length - frameLength) / frameStep + 1;
        const std::int64_t bins = onesided_ ? frameLength / 2 + 1 : frameLength;
        std::vector<double> weights(static_cast<std::size_t>(frameLength), 1.0);
        if (window)
            for (std::int64_t k = 0; k < frameLength; ++k) weights[k] = window->valueAsDouble(k);

        Tensor sd = signal.castTo(DataType::Double);
        const double* in = sd.data<double>();
        Tensor y(DataType::Double, {batch, frames, bins, 2});
        double* out = y.data<double>();
        ctx.pool().parallelFor(
            batch * frames, 5.0 * frameLength * std::log2(frameLength + 1.0),
            [&](std::int64_t b, std::int64_t e) {
                FourierTransform fft;
                std::vector<Complex> line(static_cast<std::size_t>(frameLength)), result;
                for (std::int64_t item = b; item < e; ++item) {
                    const std::int64_t n = item / frames, f = item % frames;
                    const double* start = in + (n * length + f * frameStep) * components;
                    for (std::int64_t k = 0; k < frameLength; ++k)
                        line[k] = Complex(start[k * components],
                                          components == 2 ? start[k * components + 1] : 0.0) *
                                  weights[k];
                    fft.run(line, result, false);
                    double* w = out + item * bins * 2;
                    for (std::int64_t k = 0; k < bins; ++k) {
                        w[2 * k] = result[k].real();
                        w[2 * k + 1] = result[k].imag();
                    }
                }
            });
        outputs[0] = Value(y.castTo(signal.dtype()));
    }

  private:
    bool onesided_;
};

DataType outputDataType(const NodeInfo& node) {
    const DataType type = dataTypeFromOnnx(static_cast<int>(node.getInt("output_datatype", 1)));
    require(isFloatingPoint(type) || isInteger(type), [&] {
        return std::string("output_datatype must be numeric, got ") + dataTypeName(type);
    });
    return type;
}

// Cosine-sum windows: w[k] = sum_i (-1)^i a_i cos(2 pi i k / N), N = size (periodic) or size - 1.
class CosineWindowKernel : public Kernel {
  public:
    CosineWindowKernel(const NodeInfo& node, std::vector<double> coefficients)
        : type_(outputDataType(node)),
          periodic_(node.getInt("periodic", 1) != 0),
          coefficients_(std::move(coefficients)) {}

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& sizeTensor = inputTensor(inputs, 0);
        require(sizeTensor.numel() == 1, "window size must be a scalar");
        const std::int64_t size = sizeTensor.valueAsInt64(0);
        require(size >= 0, "window size must not be negative");
        const double N = static_cast<double>(periodic_ ? size : size - 1);
        Tensor w(DataType::Double, {size});
        double* v = w.data<double>();
        for (std::int64_t k = 0; k < size; ++k) {
            double sum = 0, sign = 1;
            for (std::size_t i = 0; i < coefficients_.size(); ++i, sign = -sign) {
                const double angle =
                    N > 0 ? 2 * std::numbers::pi * static_cast<double>(i * k) / N : 0;
                sum += sign * coefficients_[i] * std::cos(angle);
            }
            v[k] = sum;
        }
        outputs[0] = Value(w.castTo(type_));
    }

  private:
    DataType type_;
    bool periodic_;
    std::vector<double> coefficients_;
};

struct HannWindowKernel : CosineWindowKernel {
    explicit HannWindowKernel(const NodeInfo& node) : CosineWindowKernel(node, {0.5, 0.5}) {}
};
struct HammingWindowKernel : CosineWindowKernel {
    explicit HammingWindowKernel(const NodeInfo& node)
        : CosineWindowKernel(node, {25.0 / 46.0, 21.0 / 46.0}) {}
};
struct BlackmanWindowKernel : CosineWindowKernel {
    explicit BlackmanWindowKernel(const NodeInfo& node)
        : CosineWindowKernel(node, {0.42, 0.5, 0.08}) {}
};

// Triangular mel filters over [lower_edge_hertz, upper_edge_hertz], each peaking at 1, as the
// ONNX reference defines them (band edges snapped down to DFT bins).
class MelWeightMatrixKernel : public Kernel {
  public:
    explicit MelWeightMatrixKernel(const NodeInfo& node) : type_(outputDataType(node)) {}

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        auto scalar = [&](std::size_t i, const char* name) {
            const Tensor& t = inputTensor(inputs, i);
            require(t.numel() == 1, [&] { return std::string(name) + " must be a scalar"; });
            return t;
        };
        const std::int64_t melBins = scalar(0, "num_mel_bins").valueAsInt64(0);
        const std::int64_t dftLength = scalar(1, "dft_length").valueAsInt64(0);
        const std::int64_t sampleRate = scalar(2, "sample_rate").valueAsInt64(0);
        const float lower = static_cast<float>(scalar(3, "lower_edge_hertz").valueAsDouble(0));
        const float upper = static_cast<float>(scalar(4, "upper_edge_hertz").valueAsDouble(0));
        require(melBins > 0 && dftLength > 0 && sampleRate > 0,
                "num_mel_bins, dft_length and sample_rate must be positive");
        require(lower >= 0 && lower < upper && std::isfinite(upper),
                "need 0 <= lower_edge_hertz < upper_edge_hertz, both finite");
        const std::int64_t spectrogramBins = dftLength / 2 + 1;
        auto toMel = [](float hz) { return 2595.0f * std::log10(1.0f + hz / 700.0f); };
        const float lowMel = toMel(lower), highMel = toMel(upper);
        const double step =
            static_cast<double>((highMel - lowMel) / static_cast<float>(melBins + 2));
        Tensor m = Tensor::zeros(DataType::Double, {spectrogramBins, melBins});
        std::vector<std::int64_t> edges(static_cast<std::size_t>(melBins + 2));
        for (std::int64_t i = 0; i < melBins + 2; ++i) {
            const double mel = static_cast<double>(i) * step + static_cast<double>(lowMel);
            const double hz = 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0);
            const double bin = std::floor(static_cast<double>(dftLength + 1) * hz /
                                          static_cast<double>(sampleRate));
            // Edges beyond the spectrum only matter as "outside": clamping keeps loops short.
            edges[i] = static_cast<std::int64_t>(
                std::clamp(bin, -1.0, static_cast<double>(spectrogramBins + 1)));
        }
        double* v = m.data<double>();
        auto set = [&](std::int64_t row, std::int64_t column, double value) {
            if (row >= 0 && row < spectrogramBins) v[row * melBins + column] = value;
        };
        for (std::int64_t i = 0; i < melBins; ++i) {
            const std::int64_t left = edges[i], center = edges[i + 1], right = edges[i + 2];
            if (center == left) {
                set(center, i, 1.0);
            } else {
                for (std::int64_t j = left; j <= center; ++j)
                    set(j, i, static_cast<double>(j - left) / static_cast<double>(center - left));
            }
            for (std::int64_t j = center; j < right; ++j)
                set(j, i, static_cast<double>(right - j) / static_cast<double>(right - center));
        }
        outputs[0] = Value(m.castTo(type_));
    }

  private:
    DataType type_;
};

}  // namespace

void registerSignalOps(KernelRegistry& registry) {
    registry.add<DftKernel>("DFT", 17);
    registry.add<StftKernel>("STFT", 17);
    registry.add<HannWindowKernel>("HannWindow", 17);
    registry.add<HammingWindowKernel>("HammingWindow", 17);
    registry.add<BlackmanWindowKernel>("BlackmanWindow", 17);
    registry.add<MelWeightMatrixKernel>("MelWeightMatrix", 17);
}

}  // namespace onnxlens::engine::ops
