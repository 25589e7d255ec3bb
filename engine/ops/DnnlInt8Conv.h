#pragma once
// 8-bit convolutions on oneDNN's int8 convolution primitive (u8 source x s8 weights with int32
// accumulation), for ConvInteger, QLinearConv and the com.onnxlens ConvIntegerToFloat fusion of
// what dynamic quantizers write (DynamicQuantizeLinear -> ConvInteger -> Cast -> Mul [-> Add]
// [-> Relu]).
//
// The engine's tensors are NCHW; oneDNN's int8 kernels read and write channels-last. One pass
// moves the source to channels-last (16 x 16 byte transposes, ByteTranspose.h), pads it with the
// zero point (so padding contributes (z - z) * w = 0, exactly as the reference loop's centred
// values) and moves int8 to uint8 (+128, zero point too); the primitive runs without padding,
// zero-point or scale attributes (its fastest kernels); the zero point comes off exactly in the
// epilogue (sum((x - z) * w) = sum(x * w) - z * sum(w), the sums kept with the weights), which
// runs per pixel on the contiguous channels (int32, float through scale/bias/activation, or
// requantized 8-bit). The requantized result is transposed into y's NC... layout a tile of 64
// pixels at a time; int32 and float results go through oneDNN's reorder. The source pass and the
// requantizing epilogue share their rows or tiles over the pool's threads.
//
// Exactness without VNNI: on AVX2 / AVX-512 processors without VNNI oneDNN's kernels add pairs of
// u8 x s8 products in int16 with saturation (vpmaddubsw): 255 * 127 * 2 overflows. There the
// primitive gets the source's low 7 bits (x & 127: 127 * 128 * 2 fits) and the high bit is added
// back exactly: 128 * w for every source value >= 128 in the window (a sparse pass adding rows of
// the transposed weights), or, when more than 1/8 of the source has the high bit, a second
// convolution of the 0/1 high-bit plane. Weights all in [-64, 64] (7-bit, quantize_static's
// reduce_range) cannot saturate a pair: the primitive then takes the whole source, in one
// convolution. The result is the exact integer sum on every processor.
// Which processors saturate: dnnlInt8PairsSaturate() (DnnlInt8Saturation.h), the test the int8
// matmul uses too (it splits its constant weights instead).
//
// The weights are constant in quantized models (initializers): they are reordered once into the
// layout oneDNN's kernels read and kept while the same weight buffer comes back.
#include <cstdint>
#include <memory>

#include "ConvGeometry.h"
#include "FusedActivation.h"
#include "onnxlens/engine/Tensor.h"
#include "onnxlens/engine/ThreadPool.h"

namespace onnxlens::engine::ops {

// What happens to the exact int32 accumulators acc = sum((x - x_zero_point) * w) of output
// channel m before they are written.
struct Int8ConvEpilogue {
    enum class Output { Int32, Float, Quantized };
    Output output = Output::Int32;
    // Added to the accumulators (QLinearConv's B), M values, or null.
    const std::int32_t* intBias = nullptr;
    // Float: y = activation(float(acc) * scale[m] + bias[m]).
    // Quantized: y = saturate(nearbyint(float(acc + intBias[m]) * scale[m]) + outputZeroPoint),
    // the 8-bit type being y's (QLinearConv's requantization, scale = x_scale * w_scale / y_scale).
    const float* scale = nullptr;
    std::int64_t scaleCount = 1;  // 1 or M
    const float* bias = nullptr;  // Float only: M values, or null
    FusedActivation activation;   // Float only
    std::int32_t outputZeroPoint = 0;
};

class DnnlInt8Conv {
  public:
    DnnlInt8Conv();
    ~DnnlInt8Conv();
    DnnlInt8Conv(const DnnlInt8Conv&) = delete;
    DnnlInt8Conv& operator=(const DnnlInt8Conv&) = delete;

    // The convolution `pr` of x (uint8/int8 [N, C, in...], scalar zero point xZeroPoint) with w
    // (int8 [M, C/G, k...], zero point 0), into y (allocated with the output shape; int32, float
    // or an 8-bit type as the epilogue says). Returns false, having done nothing, when the build
    // has no oneDNN or the problem is not of that form (the caller then computes it itself).
    // `channelsLast`: x is [N, in..., C] and y [N, out..., M] (the optimizer's
    // QLinearConvChannelsLast); requantized 8-bit outputs only.
    bool run(ThreadPool& pool, const ConvProblem& pr, const Tensor& x, std::int32_t xZeroPoint,
             const Tensor& w, const Int8ConvEpilogue& epilogue, Tensor& y,
             bool channelsLast = false);

  private:
    // Depthwise layers on the engine's own kernel (Int8DepthwiseConv.h); under the lock.
    void runDepthwise(ThreadPool& pool, const ConvProblem& pr, const Tensor& x,
                      std::int32_t xZeroPoint, const Tensor& w, const Int8ConvEpilogue& epilogue,
                      Tensor& y);

    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace onnxlens::engine::ops
