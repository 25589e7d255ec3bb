#pragma once
// The windows of a pooling operator on one plane, from its resolved geometry (ConvGeometry.h):
// which input positions each output position reads, and how many window positions fall inside
// the padded input. Shared by the float pools (PoolOps.cpp) and the com.microsoft quantized ones
// (MsQLinearPoolOps.cpp).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "ConvGeometry.h"

namespace onnxlens::engine::ops {

// For one output coordinate along one axis: where its window starts, the range of kernel taps
// that fall inside the input, and how many taps fall inside the padded input.
struct AxisWindow {
    std::int64_t start = 0, first = 0, last = 0, padded = 0;
};

// Computed from the bounds, not by walking the taps: a hostile kernel of millions of taps costs
// nothing more per output position.
inline std::vector<AxisWindow> axisWindows(const WindowGeometry& g, int axis) {
    std::vector<AxisWindow> windows(static_cast<std::size_t>(g.output[axis]));
    const std::int64_t in = g.input[axis], d = g.dilation[axis], kernel = g.kernel[axis];
    const auto ceilDiv = [d](std::int64_t n) { return (n + d - 1) / d; };  // n >= 0
    for (std::int64_t o = 0; o < g.output[axis]; ++o) {
        AxisWindow& w = windows[static_cast<std::size_t>(o)];
        w.start = o * g.stride[axis] - g.padBegin[axis];
        // Taps k in [first, last) land on start + k * d in [0, in).
        const std::int64_t first = w.start >= 0 ? 0 : ceilDiv(-w.start);
        const std::int64_t last =
            w.start > in - 1 ? 0 : std::min(kernel, (in - 1 - w.start) / d + 1);
        if (first < last) {
            w.first = first;
            w.last = last;
        }
        // Taps inside the padded input: start + k * d < in + padEnd (start is never below it).
        const std::int64_t room = in + g.padEnd[axis] - w.start;
        w.padded = room <= 0 ? 0 : std::min(kernel, ceilDiv(room));
    }
    return windows;
}

// Visits every window of one plane: for each output position, `visit(out, taps, tapCount,
// paddedCount)` receives the input offsets inside the input and the number of window positions
// inside the padded input (AveragePool's count_include_pad divisor).
template <class Visit>
void forEachWindow(const WindowGeometry& g, Visit&& visit) {
    const auto [IZ, IY, IX] = g.input;
    (void)IZ;
    const std::vector<AxisWindow> wz = axisWindows(g, 0), wy = axisWindows(g, 1),
                                  wx = axisWindows(g, 2);
    // As many taps as the most any window keeps inside the input: sized by the kernel, a
    // hostile kernel of millions of columns over a small input asked for gigabytes.
    auto widest = [](const std::vector<AxisWindow>& windows) {
        std::int64_t most = 0;
        for (const AxisWindow& w : windows) most = std::max(most, w.last - w.first);
        return most;
    };
    std::vector<std::int64_t> taps(static_cast<std::size_t>(widest(wz) * widest(wy) * widest(wx)));
    std::int64_t out = 0;
    for (const AxisWindow& z : wz)
        for (const AxisWindow& y : wy)
            for (const AxisWindow& x : wx) {
                std::int64_t count = 0;
                for (std::int64_t kz = z.first; kz < z.last; ++kz) {
                    const std::int64_t rowZ = (z.start + kz * g.dilation[0]) * IY;
                    for (std::int64_t ky = y.first; ky < y.last; ++ky) {
                        const std::int64_t row =
                            (rowZ + y.start + ky * g.dilation[1]) * IX + x.start;
                        for (std::int64_t kx = x.first; kx < x.last; ++kx)
                            taps[count++] = row + kx * g.dilation[2];
                    }
                }
                visit(out++, taps.data(), count, z.padded * y.padded * x.padded);
            }
}

}  // namespace onnxlens::engine::ops
