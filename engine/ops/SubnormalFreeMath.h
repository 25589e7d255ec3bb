#pragma once
// exp and the logistic function on Eigen arrays, vectorised, without subnormal results:
// `x.unaryExpr(ExpWithoutSubnormals{})`, `x.unaryExpr(LogisticWithoutSubnormals{})`.
//
// Eigen 3.4's vectorised exp clamps its argument at -88.38 and returns 2.9e-39 there: exp(-inf)
// and exp(-100) come out as that subnormal instead of 0 and 3.7e-44, and its logistic of x < -9
// is that exp. Subnormal results cost microcode assists in the exp itself and in every multiply
// that reads them: on the 2-core Zen 3, exp of 1M values of -100 took 2.1 ms against 0.75 for
// moderate ones, and the SiLU of a decoder's MLP (Sigmoid, then Mul), whose gate values reach
// -100s, ran 4-5x slower in every layer after the first (docs/performance.md).
//
// Below kLowestNormalExp the exact result is subnormal or 0; these return 0 there: an absolute
// error below the smallest normal float (1.2e-38), smaller than Eigen's own there, and exp(-inf)
// is 0 exactly. Above it they are Eigen's functions on the same argument. NaN stays NaN.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <type_traits>

namespace onnxlens::engine::ops {

// A little above ln(the smallest normal) (-87.34 for float, -708.40 for double), so that exp of
// it is normal whatever its rounding.
template <class S>
constexpr S kLowestNormalExp = std::is_same_v<S, double> ? S(-708.0) : S(-87.0);

struct ExpWithoutSubnormals {
    template <class S>
    EIGEN_STRONG_INLINE S operator()(const S& x) const {
        return x < kLowestNormalExp<S> ? S(0) : std::exp(x);
    }
    template <class Packet>
    EIGEN_STRONG_INLINE Packet packetOp(const Packet& x) const {
        using namespace Eigen::internal;
        using S = typename unpacket_traits<Packet>::type;
        const Packet low = pset1<Packet>(kLowestNormalExp<S>);
        // pmax keeps a NaN argument (Eigen orders its operands as std::max does).
        return pandnot(pexp(pmax(x, low)), pcmp_lt(x, low));
    }
};

// Eigen's logistic of the argument clamped to [kLowestNormalExp, -kLowestNormalExp] (the
// generic form for double takes exp(-x), subnormal for large x; the float one clamps above
// itself), 0 below. Three more operations a packet than Eigen's: a branch choosing Eigen's
// rational form alone where no argument is below -9 cost more.
struct LogisticWithoutSubnormals {
    template <class S>
    EIGEN_STRONG_INLINE S operator()(const S& x) const {
        if (x < kLowestNormalExp<S>) return S(0);
        return Eigen::internal::scalar_logistic_op<S>()(std::min(x, -kLowestNormalExp<S>));
    }
    template <class Packet>
    EIGEN_STRONG_INLINE Packet packetOp(const Packet& x) const {
        using namespace Eigen::internal;
        using S = typename unpacket_traits<Packet>::type;
        const Packet low = pset1<Packet>(kLowestNormalExp<S>);
        Packet clamped = pmax(x, low);
        if constexpr (!std::is_same_v<S, float>)
            clamped = pmin(clamped, pset1<Packet>(-kLowestNormalExp<S>));
        return pandnot(scalar_logistic_op<S>().packetOp(clamped), pcmp_lt(x, low));
    }
};

}  // namespace onnxlens::engine::ops

namespace Eigen::internal {

template <>
struct functor_traits<onnxlens::engine::ops::ExpWithoutSubnormals> {
    enum { Cost = 20 * NumTraits<float>::MulCost, PacketAccess = packet_traits<float>::HasExp };
};

template <>
struct functor_traits<onnxlens::engine::ops::LogisticWithoutSubnormals> {
    enum {
        Cost = 25 * NumTraits<float>::MulCost,
        PacketAccess = packet_traits<float>::HasExp && packet_traits<float>::HasDiv
    };
};

}  // namespace Eigen::internal
