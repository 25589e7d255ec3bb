// Cast and CastLike: every pair of the numeric, bool and string element types, and the float8,
// 4-bit and e8m0 types (opsets 19 to 25) to and from all of them.
#include <onnx/onnx_pb.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>

#include "ElementwiseUnary.h"
#include "OpFamilies.h"
#include "onnxlens/engine/LowPrecisionFloat.h"

namespace onnxlens::engine::ops {

namespace {

// ---------------------------------------------------------------------------------------------
// Numbers to strings the way numpy's str() prints them (what the backend tests expect): the
// shortest digits that read back to the same value, positional for 1e-4 <= |x| < 1e16
// ("0.5", "100.0"), scientific otherwise ("1e-05", "1.5e+20"), and "nan", "inf", "-inf".

// Shortest scientific digits of v (as type T) that round-trip: returns e.g. "-1.25e+03".
template <class T>
std::string shortestScientific(T v) {
    char buf[64];
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
        return std::string(buf, r.ptr);
    } else {
        // float16/bfloat16: the fewest significant digits whose parse converts back to v.
        const float f = static_cast<float>(v);
        for (int digits = 1; digits <= 9; ++digits) {
            std::snprintf(buf, sizeof buf, "%.*e", digits - 1, static_cast<double>(f));
            if (static_cast<float>(T(std::strtof(buf, nullptr))) == f) break;
        }
        return std::string(buf);
    }
}

std::string numpyStyle(const std::string& scientific, double magnitude) {
    // scientific: [-]D[.DDD]e(+|-)XX
    std::size_t pos = 0;
    std::string sign;
    if (scientific[0] == '-') {
        sign = "-";
        pos = 1;
    }
    const std::size_t ePos = scientific.find('e');
    std::string digits;
    for (std::size_t i = pos; i < ePos; ++i)
        if (scientific[i] != '.') digits += scientific[i];
    const int exponent = std::atoi(scientific.c_str() + ePos + 1);
    while (digits.size() > 1 && digits.back() == '0') digits.pop_back();

    if (magnitude == 0.0 || (magnitude >= 1e-4 && magnitude < 1e16)) {
        std::string integer, fraction;
        if (exponent >= 0) {
            const auto split = static_cast<std::size_t>(exponent) + 1;
            if (digits.size() <= split) {
                integer = digits + std::string(split - digits.size(), '0');
            } else {
                integer = digits.substr(0, split);
                fraction = digits.substr(split);
            }
        } else {
            integer = "0";
            fraction = std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
        }
        if (fraction.empty()) fraction = "0";
        return sign + integer + "." + fraction;
    }
    std::string mantissa = digits.substr(0, 1);
    if (digits.size() > 1) mantissa += "." + digits.substr(1);
    const int absExp = std::abs(exponent);
    return sign + mantissa + "e" + (exponent < 0 ? "-" : "+") + (absExp < 10 ? "0" : "") +
           std::to_string(absExp);
}

template <class T>
std::string toNumpyString(const T& v) {
    if constexpr (std::is_same_v<T, bool>) {
        return v ? "True" : "False";
    } else if constexpr (std::is_integral_v<T>) {
        return std::to_string(v);
    } else {
        const double d = toDouble(v);
        if (std::isnan(d)) return "nan";
        if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
        return numpyStyle(shortestScientific(v), std::fabs(d));
    }
}

// Strings to numbers: decimal and scientific notation, "nan"/"inf" in any case, a leading '+'.
// Text that is not a number is an error (numpy raises too).
template <class T>
T parseNumber(const std::string& text) {
    const char* begin = text.c_str();
    while (*begin == ' ' || *begin == '\t') ++begin;
    char* end = nullptr;
    if constexpr (std::is_same_v<T, bool>) {
        if (text == "True" || text == "true") return true;
        if (text == "False" || text == "false") return false;
        const double d = std::strtod(begin, &end);
        if (end != begin) return d != 0.0;
    } else if constexpr (std::is_integral_v<T>) {
        if (*begin == '+') ++begin;
        T value{};
        auto r = std::from_chars(begin, begin + std::strlen(begin), value);
        if (r.ec == std::errc() && *r.ptr == '\0') return value;
        const double d = std::strtod(begin, &end);  // "1e3", "2.0" as numpy's int(float(s))
        if (end != begin && *end == '\0') return saturatingCast<T>(d);
    } else if constexpr (std::is_same_v<T, float>) {
        const float f = std::strtof(begin, &end);
        if (end != begin) return f;
    } else if constexpr (std::is_same_v<T, double>) {
        const double d = std::strtod(begin, &end);
        if (end != begin) return d;
    } else {  // float16, bfloat16
        const float f = std::strtof(begin, &end);
        if (end != begin) return static_cast<T>(f);
    }
    fail("Cast: cannot convert the string '" + text + "' to " + dataTypeName(dataTypeOf<T>));
}

// float -> bfloat16 keeping the upper 16 bits, as the ONNX 1.12 reference data does.
bfloat16 truncateToBFloat16(float f) {
    std::uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    return Eigen::numext::bit_cast<bfloat16>(static_cast<std::uint16_t>(bits >> 16));
}

// How a cast to a low-precision type rounds (Cast-19 saturate, Cast-25 round_mode).
struct LowPrecisionOptions {
    bool saturate = true;
    lowp::E8M0Rounding rounding = lowp::E8M0Rounding::Up;
};

// Casts with a low-precision type on either side go through double: every float8, float4, e8m0
// and 4-bit integer value is exact in it, and each source value is rounded once.
Tensor castLowPrecision(KernelContext& ctx, const Tensor& x, DataType to,
                        const LowPrecisionOptions& options);

Tensor castTensor(KernelContext& ctx, const Tensor& x, DataType to,
                  const LowPrecisionOptions& options = {}) {
    if (x.dtype() == to) return x;
    if (isLowPrecision(x.dtype()) || isLowPrecision(to))
        return castLowPrecision(ctx, x, to, options);
    if (to == DataType::String) {
        Tensor out(to, x.shape());
        auto* dst = out.data<std::string>();
        dispatchNumericOrBool(x.dtype(), [&]<class T>() {
            const T* src = x.data<T>();
            for (std::int64_t i = 0; i < x.numel(); ++i) dst[i] = toNumpyString(src[i]);
        });
        return out;
    }
    if (x.dtype() == DataType::String) {
        Tensor out(to, x.shape());
        const auto* src = x.data<std::string>();
        dispatchNumericOrBool(to, [&]<class T>() {
            T* dst = out.data<T>();
            for (std::int64_t i = 0; i < x.numel(); ++i) dst[i] = parseNumber<T>(src[i]);
        });
        return out;
    }
    if (to == DataType::BFloat16 &&
        (x.dtype() == DataType::Float || x.dtype() == DataType::Double)) {
        const Tensor f = x.castTo(DataType::Float);
        Tensor out(to, x.shape());
        const float* src = f.data<float>();
        bfloat16* dst = out.data<bfloat16>();
        ctx.pool().parallelFor(x.numel(), 1.0, [&](std::int64_t begin, std::int64_t end) {
            for (std::int64_t i = begin; i < end; ++i) dst[i] = truncateToBFloat16(src[i]);
        });
        return out;
    }
    return x.castTo(to);
}

Tensor castLowPrecision(KernelContext& ctx, const Tensor& x, DataType to,
                        const LowPrecisionOptions& options) {
    const std::int64_t n = x.numel();
    if (isLowPrecision(x.dtype())) {
        // Decode to double, then the ordinary cast (float to int truncates, to string prints).
        Tensor values(DataType::Double, x.shape());
        const auto* src = static_cast<const std::uint8_t*>(x.raw());
        double* dst = values.data<double>();
        const DataType from = x.dtype();
        ctx.pool().parallelFor(n, 2.0, [&](std::int64_t begin, std::int64_t end) {
            for (std::int64_t i = begin; i < end; ++i)
                dst[i] = lowp::lowPrecisionToDouble(from, src[i]);
        });
        if (isLowPrecision(to)) return castLowPrecision(ctx, values, to, options);
        // float32 first for strings and 16-bit floats: the decoded value is exact in it.
        if (to == DataType::String || to == DataType::Float16 || to == DataType::BFloat16)
            return castTensor(ctx, values.castTo(DataType::Float), to);
        return castTensor(ctx, values, to);
    }
    if (x.dtype() == DataType::String)
        return castLowPrecision(ctx, castTensor(ctx, x, DataType::Double), to, options);
    Tensor out(to, x.shape());
    auto* dst = static_cast<std::uint8_t*>(out.raw());
    dispatchNumericOrBool(x.dtype(), [&]<class T>() {
        const T* src = x.data<T>();
        ctx.pool().parallelFor(n, 4.0, [&](std::int64_t begin, std::int64_t end) {
            for (std::int64_t i = begin; i < end; ++i)
                dst[i] = lowp::lowPrecisionFromDouble(to, toDouble(src[i]), options.saturate,
                                                      options.rounding);
        });
    });
    return out;
}

LowPrecisionOptions lowPrecisionOptions(const NodeInfo& node) {
    LowPrecisionOptions options;
    if (node.opsetVersion() >= 19) options.saturate = node.getInt("saturate", 1) != 0;
    const std::string mode = node.getString("round_mode", "up");
    if (mode == "down")
        options.rounding = lowp::E8M0Rounding::Down;
    else if (mode == "nearest")
        options.rounding = lowp::E8M0Rounding::Nearest;
    else
        require(mode == "up", [&] {
            return "Cast: round_mode must be 'up', 'down' or 'nearest', got '" + mode + "'";
        });
    return options;
}

DataType castTarget(const NodeInfo& node) {
    const onnx::AttributeProto* to = node.find("to");
    require(to != nullptr, "Cast: attribute 'to' is missing");
    if (to->type() == onnx::AttributeProto::STRING) {  // opset 1 names the type: "FLOAT"
        onnx::TensorProto_DataType type;
        require(onnx::TensorProto_DataType_Parse(to->s(), &type),
                [&] { return "Cast: unknown target type '" + to->s() + "'"; });
        return dataTypeFromOnnx(type);
    }
    return dataTypeFromOnnx(static_cast<int>(to->i()));
}

void requireCastable(DataType type) {
    require(
        type != DataType::Complex64 && type != DataType::Complex128 && type != DataType::Undefined,
        [&] { return std::string("Cast: unsupported type ") + dataTypeName(type); });
}

class CastKernel final : public Kernel {
  public:
    explicit CastKernel(const NodeInfo& node)
        : to_(castTarget(node)), options_(lowPrecisionOptions(node)) {
        requireCastable(to_);
    }
    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        requireCastable(x.dtype());
        outputs[0] = Value(castTensor(ctx, x, to_, options_));
    }

  private:
    DataType to_;
    LowPrecisionOptions options_;
};

class CastLikeKernel final : public Kernel {
  public:
    explicit CastLikeKernel(const NodeInfo& node) : options_(lowPrecisionOptions(node)) {}
    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const DataType to = inputTensor(inputs, 1).dtype();
        requireCastable(x.dtype());
        requireCastable(to);
        outputs[0] = Value(castTensor(ctx, x, to, options_));
    }

  private:
    LowPrecisionOptions options_;
};

}  // namespace

void registerCastOps(KernelRegistry& registry) {
    registry.add<CastKernel>("Cast");
    registry.add<CastLikeKernel>("CastLike");
}

}  // namespace onnxlens::engine::ops
