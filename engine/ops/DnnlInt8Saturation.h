#pragma once
// oneDNN's int8 kernels on processors without VNNI (AVX2, AVX-512 without VNNI) multiply u8 x s8
// with vpmaddubsw, which adds two products into a saturating int16: with full-range weights
// (|w| up to 128) and activations up to 255, a pair reaches 65,280 and is clipped to 32,767, so
// the int32 results are wrong (oneDNN documents it as the int8 saturation nuance; ONNX Runtime's
// answer is 7-bit weights, `reduce_range`). The engine keeps the exact product: weights outside
// [-64, 64] are split once, w = 2 * high + low with high = w >> 1 in [-64, 63] and low = w & 1,
// so that both products stay inside int16 pairs (255 * 64 * 2 = 32,640), and the int32 result is
// 2 * (a x high) + (a x low).
#include <cstdint>
#include <vector>

#ifdef ONNXLENS_WITH_DNNL
#include <dnnl.hpp>
#endif

namespace onnxlens::engine::ops {

// Whether oneDNN's int8 kernels on this processor accumulate pairs in int16 (no VNNI).
inline bool dnnlInt8PairsSaturate() {
#ifdef ONNXLENS_WITH_DNNL
    static const bool saturate = [] {
        using isa = dnnl::cpu_isa;
        const isa effective = dnnl::get_effective_cpu_isa();
        return !(effective == isa::avx512_core_vnni || effective == isa::avx512_core_bf16 ||
                 effective == isa::avx512_core_amx || effective == isa::avx2_vnni);
    }();
    return saturate;
#else
    return false;
#endif
}

// Whether int8 weights need the split on this processor: some weight lies outside [-64, 64].
inline bool int8WeightsNeedSplit(const std::int8_t* w, std::int64_t count) {
    if (!dnnlInt8PairsSaturate()) return false;
    for (std::int64_t i = 0; i < count; ++i)
        if (w[i] < -64 || w[i] > 64) return true;
    return false;
}

// w = 2 * high + low, high in [-64, 63], low in {0, 1}.
inline void splitInt8Weights(const std::int8_t* w, std::int64_t count,
                             std::vector<std::int8_t>& high, std::vector<std::int8_t>& low) {
    high.resize(static_cast<std::size_t>(count));
    low.resize(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) {
        high[static_cast<std::size_t>(i)] = static_cast<std::int8_t>(w[i] >> 1);  // floor(w / 2)
        low[static_cast<std::size_t>(i)] = static_cast<std::int8_t>(w[i] & 1);
    }
}

}  // namespace onnxlens::engine::ops
