#pragma once
// Sliding-window geometry shared by the convolution and pooling kernels: the attributes
// (kernel_shape, strides, dilations, pads, auto_pad, ceil_mode) parsed once per node, and the
// per-run resolution against an input shape. Every window op here is computed on a 3-D spatial
// grid: 1-D and 2-D problems get leading spatial dims of size 1 (kernel 1, stride 1, no pads),
// which keeps one set of loops exact for all three ranks.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "onnxlens/engine/EngineError.h"
#include "onnxlens/engine/Kernel.h"
#include "onnxlens/engine/Shape.h"

namespace onnxlens::engine::ops {

inline constexpr int kMaxWindowRank = 3;

enum class AutoPad { NotSet, SameUpper, SameLower, Valid };

inline AutoPad parseAutoPad(const std::string& text) {
    if (text.empty() || text == "NOTSET") return AutoPad::NotSet;
    if (text == "SAME_UPPER") return AutoPad::SameUpper;
    if (text == "SAME_LOWER") return AutoPad::SameLower;
    if (text == "VALID") return AutoPad::Valid;
    fail("unsupported auto_pad '" + text + "'");
}

// The spatial dims of an [N, C, spatial...] tensor.
inline Shape spatialDims(const Tensor& t) { return Shape(t.shape().begin() + 2, t.shape().end()); }

// The window attributes as written on the node (empty vectors: not given).
struct WindowAttributes {
    std::vector<std::int64_t> kernelShape, strides, dilations, pads;
    AutoPad autoPad = AutoPad::NotSet;
    bool ceilMode = false;

    explicit WindowAttributes(const NodeInfo& node)
        : kernelShape(node.getInts("kernel_shape")),
          strides(node.getInts("strides")),
          dilations(node.getInts("dilations")),
          pads(node.getInts("pads")),
          autoPad(parseAutoPad(node.getString("auto_pad", "NOTSET"))),
          ceilMode(node.getInt("ceil_mode", 0) != 0) {
        for (auto s : strides) require(s > 0, "strides must be positive");
        for (auto d : dilations) require(d > 0, "dilations must be positive");
        for (auto k : kernelShape) require(k > 0, "kernel_shape values must be positive");
    }
};

// A window problem resolved against concrete sizes, normalized to 3 spatial dims.
struct WindowGeometry {
    int spatialRank = 0;  // the rank before normalization (1, 2 or 3)
    std::array<std::int64_t, kMaxWindowRank> input{1, 1, 1}, kernel{1, 1, 1}, stride{1, 1, 1},
        dilation{1, 1, 1}, padBegin{0, 0, 0}, padEnd{0, 0, 0}, output{1, 1, 1};

    std::int64_t inputSize() const { return input[0] * input[1] * input[2]; }
    std::int64_t kernelSize() const { return kernel[0] * kernel[1] * kernel[2]; }
    std::int64_t outputSize() const { return output[0] * output[1] * output[2]; }
    // The output spatial dims in their original rank.
    Shape outputShape() const { return Shape(output.end() - spatialRank, output.end()); }
    bool isPointwise() const {
        for (int i = 0; i < kMaxWindowRank; ++i)
            if (kernel[i] != 1 || stride[i] != 1 || padBegin[i] != 0 || padEnd[i] != 0)
                return false;
        return true;
    }
};

// The sizes of one grouped convolution: X [N, C, in...], W [M, C/G, k...], Y [N, M, out...]
// (ConvTranspose: W [C, M/G, k...]).
struct ConvProblem {
    std::int64_t batch = 0, inChannels = 0, outChannels = 0, groups = 1;
    WindowGeometry geometry;
    std::int64_t inChannelsPerGroup() const { return inChannels / groups; }
    std::int64_t outChannelsPerGroup() const { return outChannels / groups; }
};

namespace window_detail {
inline std::int64_t floorDiv(std::int64_t a, std::int64_t b) {
    std::int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
inline std::int64_t ceilDiv(std::int64_t a, std::int64_t b) { return -floorDiv(-a, b); }
}  // namespace window_detail

// Fills the spatial attributes of `g` (slot offset for ranks below 3) from `attrs`, with
// `kernel` the effective kernel shape. Pads are left explicit (auto_pad not yet applied).
inline WindowGeometry makeWindowGeometry(const WindowAttributes& attrs,
                                         const std::vector<std::int64_t>& inputSpatial,
                                         const std::vector<std::int64_t>& kernel) {
    const int rank = static_cast<int>(inputSpatial.size());
    require(rank >= 1 && rank <= kMaxWindowRank, [&] {
        return "window operators support 1 to 3 spatial dims, got " + std::to_string(rank);
    });
    require(static_cast<int>(kernel.size()) == rank, [&] {
        return "kernel rank " + std::to_string(kernel.size()) + " does not match the " +
               std::to_string(rank) + " spatial dims of the input";
    });
    auto checkSize = [&](const std::vector<std::int64_t>& v, std::size_t expected,
                         const char* name) {
        require(v.empty() || v.size() == expected, [&] {
            return std::string(name) + " has " + std::to_string(v.size()) + " values, expected " +
                   std::to_string(expected);
        });
    };
    checkSize(attrs.strides, rank, "strides");
    checkSize(attrs.dilations, rank, "dilations");
    checkSize(attrs.pads, 2 * rank, "pads");
    WindowGeometry g;
    g.spatialRank = rank;
    const int offset = kMaxWindowRank - rank;
    for (int i = 0; i < rank; ++i) {
        const int s = offset + i;
        g.input[s] = inputSpatial[i];
        g.kernel[s] = kernel[i];
        require(kernel[i] > 0, "kernel dims must be positive");
        if (!attrs.strides.empty()) g.stride[s] = attrs.strides[i];
        if (!attrs.dilations.empty()) g.dilation[s] = attrs.dilations[i];
        if (!attrs.pads.empty()) {
            g.padBegin[s] = attrs.pads[i];
            g.padEnd[s] = attrs.pads[i + rank];
            require(g.padBegin[s] >= 0 && g.padEnd[s] >= 0, "pads must not be negative");
        }
    }
    return g;
}

// Output size and pads of a forward window op (Conv, pools). With ceil mode the last window must
// still start inside the input or its leading padding (the PyTorch / ONNX Runtime rule).
inline void resolveForwardWindow(WindowGeometry& g, AutoPad autoPad, bool ceilMode) {
    using namespace window_detail;
    for (int s = 0; s < kMaxWindowRank; ++s) {
        const std::int64_t extent = (g.kernel[s] - 1) * g.dilation[s] + 1;
        const std::int64_t in = g.input[s];
        if (autoPad == AutoPad::SameUpper || autoPad == AutoPad::SameLower) {
            const std::int64_t out = ceilDiv(in, g.stride[s]);
            const std::int64_t total =
                std::max<std::int64_t>(0, (out - 1) * g.stride[s] + extent - in);
            const std::int64_t small = total / 2;
            g.padBegin[s] = autoPad == AutoPad::SameUpper ? small : total - small;
            g.padEnd[s] = total - g.padBegin[s];
            g.output[s] = out;
            continue;
        }
        if (autoPad == AutoPad::Valid) g.padBegin[s] = g.padEnd[s] = 0;
        const std::int64_t span = in + g.padBegin[s] + g.padEnd[s] - extent;
        if (span < 0) {
            g.output[s] = 0;
            continue;
        }
        std::int64_t out =
            (ceilMode ? ceilDiv(span, g.stride[s]) : floorDiv(span, g.stride[s])) + 1;
        if (ceilMode && (out - 1) * g.stride[s] >= in + g.padBegin[s]) --out;
        g.output[s] = out;
    }
}

}  // namespace onnxlens::engine::ops
