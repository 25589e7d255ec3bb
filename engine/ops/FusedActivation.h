#pragma once
// The activation a fused node (com.onnxlens FusedConv, ONNX Runtime's com.microsoft FusedConv)
// applies to its result, as the optimizer's fusion passes and ONNX Runtime describe it: attribute
// `activation` (Relu, Clip, LeakyRelu, Sigmoid, Tanh, HardSigmoid, HardSwish; absent: none) and
// `activation_params` (Clip: min, max; LeakyRelu: alpha; HardSigmoid: alpha, beta). The engine's
// own com.onnxlens FusedConv also takes Swish (x * sigmoid(alpha x); params: alpha), the SiLU of
// YOLO- and EfficientNet-style blocks after pass fuse-silu.
#include <algorithm>
#include <cmath>
#include <string>

#include "OpFamilies.h"

namespace onnxlens::engine::ops {

struct FusedActivation {
    enum class Kind { None, Relu, Clip, LeakyRelu, Sigmoid, Tanh, HardSigmoid, HardSwish, Swish };
    Kind kind = Kind::None;
    // Clip: min and max; LeakyRelu: the slope; HardSigmoid: max(0, min(1, alpha * x + beta));
    // Swish: x * sigmoid(alpha * x)
    float alpha = 0.0f, beta = 0.0f;

    static FusedActivation fromNode(const NodeInfo& node) {
        FusedActivation a;
        const std::string name = node.getString("activation", "");
        const auto params = node.getFloats("activation_params");
        // An activation with parameters takes exactly its count (as ONNX Runtime's FusedConv).
        auto param = [&](std::size_t i) {
            const std::size_t count = name == "LeakyRelu" || name == "Swish" ? 1 : 2;
            require(params.size() == count, [&] {
                return "activation " + name + " needs " + std::to_string(count) +
                       " activation_params, got " + std::to_string(params.size());
            });
            return params[i];
        };
        if (name.empty()) {
            a.kind = Kind::None;
        } else if (name == "Relu") {
            a.kind = Kind::Relu;
        } else if (name == "Clip") {
            a.kind = Kind::Clip;
            a.alpha = param(0);
            a.beta = param(1);
        } else if (name == "LeakyRelu") {
            a.kind = Kind::LeakyRelu;
            a.alpha = param(0);
        } else if (name == "Sigmoid") {
            a.kind = Kind::Sigmoid;
        } else if (name == "Tanh") {
            a.kind = Kind::Tanh;
        } else if (name == "HardSigmoid") {
            a.kind = Kind::HardSigmoid;
            a.alpha = param(0);
            a.beta = param(1);
        } else if (name == "HardSwish") {
            a.kind = Kind::HardSwish;
        } else if (name == "Swish" && node.domain() != "com.microsoft") {  // not ORT's
            a.kind = Kind::Swish;
            a.alpha = param(0);
        } else {
            throw EngineError("unknown fused activation '" + name + "'");
        }
        return a;
    }

    bool none() const { return kind == Kind::None; }

    template <class T>
    T apply(T x) const {
        switch (kind) {
            case Kind::None:
                return x;
            case Kind::Relu:
                return x > T(0) ? x : T(0);
            case Kind::Clip:
                // NaN passes through, as Clip does.
                return x < T(alpha) ? T(alpha) : (x > T(beta) ? T(beta) : x);
            case Kind::LeakyRelu:
                return x < T(0) ? T(alpha) * x : x;
            case Kind::Sigmoid:
                return T(1) / (T(1) + std::exp(-x));
            case Kind::Tanh:
                return std::tanh(x);
            case Kind::HardSigmoid:
                return hardSigmoid(x, T(alpha), T(beta));
            case Kind::HardSwish:
                return x * hardSigmoid(x, T(1) / T(6), T(0.5));
            case Kind::Swish:  // x / (1 + e^(-alpha x)): 0 (not NaN) where the exp overflows
                return x / (T(1) + std::exp(-T(alpha) * x));
        }
        return x;
    }

    template <class T>
    static T hardSigmoid(T x, T a, T b) {
        const T v = a * x + b;
        return v < T(0) ? T(0) : (v > T(1) ? T(1) : v);
    }

    template <class T>
    void applyInPlace(T* data, std::int64_t count) const {
        if (kind == Kind::None) return;
        for (std::int64_t i = 0; i < count; ++i) data[i] = apply(data[i]);
    }
};

}  // namespace onnxlens::engine::ops
