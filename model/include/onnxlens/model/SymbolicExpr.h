#pragma once
// A symbolic tensor dim as an expression over the model's named dims: a polynomial with integer
// coefficients over symbols ("batch", "sequence", or an opaque "floor(sequence/2)"), kept in one
// canonical form so that `past + sequence` built by Add(Gather(Shape(past)), Gather(Shape(ids)))
// and `sequence + past` read back from a dim_param compare equal. Printed as an ONNX dim_param
// ("past_sequence + sequence", "batch*sequence", "sequence - 1", "12*batch").
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace onnxlens {

class SymbolicExpr {
  public:
    // A product of symbols, sorted (a symbol repeats for a power); empty for the constant term.
    using Monomial = std::vector<std::string>;

    SymbolicExpr() = default;  // 0
    static SymbolicExpr constant(std::int64_t value);
    static SymbolicExpr symbol(const std::string& name);
    // Reads a dim_param: a printed expression becomes that expression again; any other text
    // (including one that would read as a plain number) is one opaque symbol.
    static SymbolicExpr parse(const std::string& dimParam);

    bool isConstant() const;
    std::optional<std::int64_t> constantValue() const;
    // True when every value the symbols can take (each >= 0) gives a value >= 0: all
    // coefficients and the constant non-negative.
    bool nonNegative() const;
    std::string toString() const;
    const std::map<Monomial, std::int64_t>& terms() const { return terms_; }

    bool operator==(const SymbolicExpr& other) const = default;

    // Arithmetic; nullopt on integer overflow or when the result would grow past the size limits
    // (a dim that big is treated as unknown, never as a wrong number).
    static std::optional<SymbolicExpr> add(const SymbolicExpr& a, const SymbolicExpr& b);
    static std::optional<SymbolicExpr> sub(const SymbolicExpr& a, const SymbolicExpr& b);
    static std::optional<SymbolicExpr> mul(const SymbolicExpr& a, const SymbolicExpr& b);
    // a / b when it divides exactly (polynomial division leaving no remainder).
    static std::optional<SymbolicExpr> exactDiv(const SymbolicExpr& a, const SymbolicExpr& b);
    // floor(a / d) for a constant d > 0: exact when it divides, a constant when a is one, else
    // the opaque symbol "floor(a/d)" (only for a non-negative a; nullopt otherwise).
    static std::optional<SymbolicExpr> floorDiv(const SymbolicExpr& a, std::int64_t d);

  private:
    std::map<Monomial, std::int64_t> terms_;  // no zero coefficients
};

}  // namespace onnxlens
