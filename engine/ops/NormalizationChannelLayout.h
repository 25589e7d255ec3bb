#pragma once
// The [N, C, spatial...] layout shared by the channel normalizations and the class losses:
// batch, channels (classes), and the product of the remaining dims.
#include <cstdint>
#include <string>

#include "onnxlens/engine/EngineError.h"
#include "onnxlens/engine/Tensor.h"

namespace onnxlens::engine::ops {

struct ChannelLayout {
    std::int64_t n = 1, c = 1, spatial = 1;
};

inline ChannelLayout channelLayout(const Tensor& x, const char* op) {
    require(x.rank() >= 2, [&] {
        return std::string(op) + " needs an input of rank >= 2 ([N, C, ...]), got " +
               shapeToString(x.shape());
    });
    ChannelLayout l;
    l.n = x.dim(0);
    l.c = x.dim(1);
    for (std::int64_t d = 2; d < x.rank(); ++d) l.spatial *= x.dim(d);
    return l;
}

}  // namespace onnxlens::engine::ops
