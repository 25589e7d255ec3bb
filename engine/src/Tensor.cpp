#include "onnxlens/engine/Tensor.h"

#include "PhysicalMemory.h"
#include "onnxlens/engine/LowPrecisionFloat.h"
#include "onnxlens/engine/TensorByteLimit.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <sstream>

namespace onnxlens::engine {

namespace {

std::uint64_t defaultMaxTensorBytes() {
    const auto memory = physicalMemoryBytes();
    return memory ? *memory / 2 : std::uint64_t{8} << 30;
}

std::atomic<std::uint64_t>& maxBytesSetting() {
    static std::atomic<std::uint64_t> value{defaultMaxTensorBytes()};
    return value;
}

constexpr std::size_t kAlignment = 64;

// glibc serves blocks above its mmap threshold (128 KB at first) with fresh mappings and trims
// the heap top after a run frees its tensors, so every run page-faulted its activations in again:
// BERT-base at 1 thread spent half its time in the kernel (590 ms -> 305 ms with these settings,
// `onnxlens-cli bench --threads 1`). Keeping blocks up to 32 MB on the heap and the freed heap
// mapped (up to 256 MB) makes steady-state runs reuse the same pages.
void keepTensorPagesMapped() {
#if defined(__GLIBC__)
    static const bool configured = [] {
        mallopt(M_MMAP_THRESHOLD, 32 << 20);
        mallopt(M_TRIM_THRESHOLD, 256 << 20);
        return true;
    }();
    (void)configured;
#endif
}

std::string formatBytes(std::uint64_t bytes) {
    std::ostringstream s;
    s.precision(3);
    if (bytes >= (std::uint64_t{1} << 30))
        s << static_cast<double>(bytes) / double(1 << 30) << " GiB";
    else if (bytes >= (1u << 20))
        s << static_cast<double>(bytes) / double(1 << 20) << " MiB";
    else
        s << bytes << " bytes";
    return s.str();
}

// Converts one element between engine types; floats to integers saturate (NaN gives 0) so that
// out-of-range values are defined instead of undefined behaviour.
template <class To, class From>
To convertElement(const From& v) {
    if constexpr (std::is_same_v<To, From>) {
        return v;
    } else if constexpr (std::is_same_v<To, std::string> || std::is_same_v<From, std::string>) {
        if constexpr (std::is_same_v<To, std::string>) {
            if constexpr (std::is_same_v<From, bool>) {
                return v ? "1" : "0";
            } else if constexpr (std::is_integral_v<From>) {
                return std::to_string(v);
            } else if constexpr (std::is_same_v<From, std::complex<float>> ||
                                 std::is_same_v<From, std::complex<double>>) {
                throw EngineError("cannot convert complex to string");
            } else {
                double d = toDouble(v);
                if (std::isnan(d)) return "NaN";
                if (std::isinf(d)) return d > 0 ? "INF" : "-INF";
                std::ostringstream s;
                s.precision(std::is_same_v<From, double> ? 17 : 9);
                s << d;
                return s.str();
            }
        } else {
            if constexpr (std::is_same_v<To, std::complex<float>> ||
                          std::is_same_v<To, std::complex<double>>) {
                throw EngineError("cannot convert string to complex");
            } else {
                double d = 0;
                try {
                    std::size_t used = 0;
                    d = std::stod(v, &used);
                } catch (const std::exception&) {
                    d = std::numeric_limits<double>::quiet_NaN();
                }
                return convertElement<To>(d);
            }
        }
    } else if constexpr (std::is_same_v<From, std::complex<float>> ||
                         std::is_same_v<From, std::complex<double>> ||
                         std::is_same_v<To, std::complex<float>> ||
                         std::is_same_v<To, std::complex<double>>) {
        if constexpr ((std::is_same_v<From, std::complex<float>> ||
                       std::is_same_v<
                           From, std::complex<double>>)&&(std::is_same_v<To, std::complex<float>> ||
                                                          std::is_same_v<To,
                                                                         std::complex<double>>)) {
            return To(v);
        } else {
            throw EngineError("cannot convert between complex and real types");
        }
    } else if constexpr (std::is_same_v<To, bool>) {
        return toDouble(v) != 0.0;
    } else if constexpr (std::is_integral_v<To>) {
        if constexpr (std::is_integral_v<From>) {
            return static_cast<To>(v);
        } else {
            double d = toDouble(v);
            if (std::isnan(d)) return To(0);
            if (d <= static_cast<double>(std::numeric_limits<To>::lowest()))
                return std::numeric_limits<To>::lowest();
            if (d >= static_cast<double>(std::numeric_limits<To>::max()))
                return std::numeric_limits<To>::max();
            return static_cast<To>(d);
        }
    } else if constexpr (std::is_same_v<To, float16> || std::is_same_v<To, bfloat16>) {
        if constexpr (std::is_same_v<From, float16> || std::is_same_v<From, bfloat16>)
            return To(static_cast<float>(v));
        else
            return To(static_cast<float>(v));
    } else {
        if constexpr (std::is_same_v<From, float16> || std::is_same_v<From, bfloat16>)
            return static_cast<To>(static_cast<float>(v));
        else
            return static_cast<To>(v);
    }
}

}  // namespace

// The calling thread's session limit (ScopedTensorByteLimit), 0 when none is set.
thread_local std::uint64_t sessionMaxTensorBytes = 0;

std::uint64_t maxTensorBytes() {
    return sessionMaxTensorBytes ? sessionMaxTensorBytes : maxBytesSetting().load();
}

ScopedTensorByteLimit::ScopedTensorByteLimit(std::uint64_t bytes) : saved_(sessionMaxTensorBytes) {
    if (bytes > 0) sessionMaxTensorBytes = bytes;
}

ScopedTensorByteLimit::~ScopedTensorByteLimit() { sessionMaxTensorBytes = saved_; }

void setMaxTensorBytes(std::uint64_t bytes) { maxBytesSetting().store(bytes); }

Tensor::Tensor(DataType type, Shape shape) : type_(type), shape_(std::move(shape)) {
    if (type == DataType::Undefined)
        throw EngineError("cannot allocate a tensor of undefined type");
    numel_ = shapeElementCount(shape_);
    const std::uint64_t elementSize = dataTypeSize(type);
    if (elementSize == 0)  // a value outside the enum, cast from an unchecked ONNX elem_type
        throw EngineError("cannot allocate a tensor of unknown element type " +
                          std::to_string(static_cast<int>(type)));
    if (numel_ > 0 && static_cast<std::uint64_t>(numel_) >
                          std::numeric_limits<std::uint64_t>::max() / elementSize)
        throw EngineError("tensor of shape " + shapeToString(shape_) + " overflows memory size");
    const std::uint64_t bytes = static_cast<std::uint64_t>(numel_) * elementSize;
    if (bytes > maxTensorBytes())
        throw EngineError("tensor of shape " + shapeToString(shape_) + " (" + dataTypeName(type) +
                          ") needs " + formatBytes(bytes) + ", above the memory limit of " +
                          formatBytes(maxTensorBytes()));
    const std::size_t allocBytes = std::max<std::size_t>(
        kAlignment, (static_cast<std::size_t>(bytes) + kAlignment - 1) / kAlignment * kAlignment);
    keepTensorPagesMapped();
    void* p = std::aligned_alloc(kAlignment, allocBytes);
    if (!p)
        throw EngineError("out of memory allocating " + formatBytes(bytes) +
                          " for a tensor of shape " + shapeToString(shape_));
    if (type == DataType::String) {
        auto* strings = static_cast<std::string*>(p);
        for (std::int64_t i = 0; i < numel_; ++i) new (strings + i) std::string();
        const std::int64_t n = numel_;
        storage_ = std::shared_ptr<void>(p, [n](void* q) {
            auto* s = static_cast<std::string*>(q);
            for (std::int64_t i = 0; i < n; ++i) s[i].~basic_string();
            std::free(q);
        });
    } else {
        storage_ = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
    }
}

Tensor Tensor::zeros(DataType type, Shape shape) {
    Tensor t(type, std::move(shape));
    if (type != DataType::String && t.byteSize() > 0) std::memset(t.raw(), 0, t.byteSize());
    return t;
}

Tensor Tensor::view(DataType type, Shape shape, std::shared_ptr<const void> owner,
                    const void* bytes) {
    if (type == DataType::Undefined || type == DataType::String || dataTypeSize(type) == 0)
        throw EngineError(std::string("cannot view memory as a tensor of type ") +
                          dataTypeName(type));
    if (reinterpret_cast<std::uintptr_t>(bytes) % kAlignment != 0)
        throw EngineError("tensor view of shape " + shapeToString(shape) +
                          " is not 64-byte aligned");
    Tensor t;
    t.type_ = type;
    t.numel_ = shapeElementCount(shape);
    t.shape_ = std::move(shape);
    if (t.numel_ > 0 && static_cast<std::uint64_t>(t.numel_) >
                            std::numeric_limits<std::uint64_t>::max() / dataTypeSize(type))
        throw EngineError("tensor of shape " + shapeToString(t.shape_) + " overflows memory size");
    // The aliasing constructor: shares ownership of `owner`, points at `bytes`. Kernels only write
    // into buffers they own alone (uniquelyOwned), which a session's constants never are.
    t.storage_ = std::shared_ptr<void>(std::const_pointer_cast<void>(std::move(owner)),
                                       const_cast<void*>(bytes));
    return t;
}

void Tensor::checkType(DataType requested) const {
    if (requested != type_)
        throw EngineError(std::string("tensor of type ") + dataTypeName(type_) + " accessed as " +
                          dataTypeName(requested));
}

double Tensor::valueAsDouble(std::int64_t index) const {
    if (index < 0 || index >= numel_) throw EngineError("element index out of range");
    if (isLowPrecision(type_))  // float8, 4-bit, e8m0: decoded (exact in a double)
        return lowp::lowPrecisionToDouble(type_, static_cast<const std::uint8_t*>(raw())[index]);
    return dispatchNumericOrBool(type_, [&]<class T>() { return toDouble(data<T>()[index]); });
}

std::int64_t Tensor::valueAsInt64(std::int64_t index) const {
    if (index < 0 || index >= numel_) throw EngineError("element index out of range");
    if (isFloatingPoint(type_) || isLowPrecision(type_)) {
        const double v = valueAsDouble(index);
        return std::isfinite(v) ? static_cast<std::int64_t>(v) : 0;
    }
    return dispatchNumericOrBool(type_, [&]<class T>() -> std::int64_t {
        if constexpr (std::is_integral_v<T>)
            return static_cast<std::int64_t>(data<T>()[index]);
        else
            return static_cast<std::int64_t>(toDouble(data<T>()[index]));
    });
}

std::vector<std::int64_t> Tensor::toInt64Vector() const {
    std::vector<std::int64_t> out(static_cast<std::size_t>(numel_));
    if (type_ == DataType::Int64) {
        // An empty tensor has no buffer: memcpy from null is undefined even for 0 bytes (UBSan).
        if (!out.empty()) std::memcpy(out.data(), raw(), out.size() * sizeof(std::int64_t));
        return out;
    }
    for (std::int64_t i = 0; i < numel_; ++i) out[static_cast<std::size_t>(i)] = valueAsInt64(i);
    return out;
}

Tensor Tensor::reshaped(Shape shape) const {
    if (shapeElementCount(shape) != numel_)
        throw EngineError("cannot reshape " + shapeToString(shape_) + " to " +
                          shapeToString(shape));
    Tensor t = *this;
    t.shape_ = std::move(shape);
    return t;
}

Tensor Tensor::clone() const {
    if (!defined()) return {};
    Tensor t(type_, shape_);
    if (type_ == DataType::String) {
        const auto* src = static_cast<const std::string*>(raw());
        auto* dst = static_cast<std::string*>(t.raw());
        for (std::int64_t i = 0; i < numel_; ++i) dst[i] = src[i];
    } else if (byteSize() > 0) {
        std::memcpy(t.raw(), raw(), byteSize());
    }
    return t;
}

Tensor Tensor::castTo(DataType target) const {
    if (target == type_) return *this;
    Tensor out(target, shape_);
    dispatchAny(type_, [&]<class From>() {
        const From* src = data<From>();
        dispatchAny(target, [&]<class To>() {
            To* dst = out.data<To>();
            for (std::int64_t i = 0; i < numel_; ++i) dst[i] = convertElement<To, From>(src[i]);
        });
    });
    return out;
}

}  // namespace onnxlens::engine
