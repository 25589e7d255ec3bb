#include "onnxlens/model/SymbolicExpr.h"

#include <algorithm>
#include <cctype>

namespace onnxlens {

namespace {

// Beyond these an expression is given up (the dim stays unknown): a shape computation never needs
// them, and a hostile graph (Mul of Mul of Mul...) cannot grow one without bound.
constexpr std::size_t kMaxTerms = 32;
constexpr std::size_t kMaxDegree = 6;
constexpr std::size_t kMaxAtomLength = 256;

// Graded lexicographic order: a monomial order, so polynomial division terminates.
bool monomialLess(const SymbolicExpr::Monomial& a, const SymbolicExpr::Monomial& b) {
    if (a.size() != b.size()) return a.size() < b.size();
    return a < b;
}

std::optional<std::int64_t> checkedAdd(std::int64_t a, std::int64_t b) {
    std::int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
    return r;
}

std::optional<std::int64_t> checkedMul(std::int64_t a, std::int64_t b) {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
    return r;
}

// Splits `text` at the top-level (outside parentheses) occurrences of `separator`.
std::vector<std::string> splitTopLevel(const std::string& text, const std::string& separator) {
    std::vector<std::string> parts;
    int depth = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '(') ++depth;
        if (text[i] == ')') --depth;
        if (depth == 0 && text.compare(i, separator.size(), separator) == 0) {
            parts.push_back(text.substr(start, i - start));
            i += separator.size() - 1;
            start = i + 1;
        }
    }
    parts.push_back(text.substr(start));
    return parts;
}

bool allDigits(const std::string& s) {
    return !s.empty() && s.size() <= 18 && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) != 0;
    });
}

std::optional<SymbolicExpr> parseSum(const std::string& text, int depth);

std::optional<SymbolicExpr> parseProduct(const std::string& text, int depth) {
    SymbolicExpr product = SymbolicExpr::constant(1);
    for (const auto& factor : splitTopLevel(text, "*")) {
        if (factor.empty() || factor.front() == ' ' || factor.back() == ' ') return std::nullopt;
        std::optional<SymbolicExpr> value;
        if (allDigits(factor)) {
            value = SymbolicExpr::constant(std::stoll(factor));
        } else if (factor.front() == '(' && factor.back() == ')' &&
                   splitTopLevel(factor.substr(1, factor.size() - 2), ")").size() == 1) {
            value = parseSum(factor.substr(1, factor.size() - 2), depth + 1);
        } else if (factor.front() != '-' && factor.size() <= kMaxAtomLength) {
            value = SymbolicExpr::symbol(factor);
        }
        if (!value) return std::nullopt;
        auto next = SymbolicExpr::mul(product, *value);
        if (!next) return std::nullopt;
        product = *next;
    }
    return product;
}

std::optional<SymbolicExpr> parseSum(const std::string& text, int depth) {
    if (depth > 8 || text.empty()) return std::nullopt;
    // Terms are separated by " + " and " - "; the first may carry a leading '-'.
    SymbolicExpr sum;
    std::string rest = text;
    bool negative = false;
    if (rest.front() == '-') {
        negative = true;
        rest = rest.substr(1);
    }
    for (const auto& plusPart : splitTopLevel(rest, " + ")) {
        const auto minusParts = splitTopLevel(plusPart, " - ");
        for (std::size_t k = 0; k < minusParts.size(); ++k) {
            auto term = parseProduct(minusParts[k], depth);
            if (!term) return std::nullopt;
            const bool subtract = k > 0 ? true : negative;
            negative = false;
            auto next = subtract ? SymbolicExpr::sub(sum, *term) : SymbolicExpr::add(sum, *term);
            if (!next) return std::nullopt;
            sum = *next;
        }
    }
    return sum;
}

std::optional<SymbolicExpr> withinLimits(
    SymbolicExpr e, const std::map<SymbolicExpr::Monomial, std::int64_t>& terms) {
    if (terms.size() > kMaxTerms) return std::nullopt;
    for (const auto& [m, c] : terms)
        if (m.size() > kMaxDegree) return std::nullopt;
    return e;
}

}  // namespace

SymbolicExpr SymbolicExpr::constant(std::int64_t value) {
    SymbolicExpr e;
    if (value != 0) e.terms_[{}] = value;
    return e;
}

SymbolicExpr SymbolicExpr::symbol(const std::string& name) {
    SymbolicExpr e;
    e.terms_[{name}] = 1;
    return e;
}

SymbolicExpr SymbolicExpr::parse(const std::string& dimParam) {
    auto e = parseSum(dimParam, 0);
    if (!e || e->isConstant()) return symbol(dimParam);
    return *e;
}

bool SymbolicExpr::isConstant() const {
    return terms_.empty() || (terms_.size() == 1 && terms_.begin()->first.empty());
}

std::optional<std::int64_t> SymbolicExpr::constantValue() const {
    if (terms_.empty()) return 0;
    if (isConstant()) return terms_.begin()->second;
    return std::nullopt;
}

bool SymbolicExpr::nonNegative() const {
    return std::all_of(terms_.begin(), terms_.end(), [](const auto& t) { return t.second >= 0; });
}

std::string SymbolicExpr::toString() const {
    if (terms_.empty()) return "0";
    std::string text;
    std::int64_t constantTerm = 0;
    bool first = true;
    auto append = [&](std::int64_t coefficient, const std::string& body) {
        const bool negative = coefficient < 0;
        if (first)
            text += negative ? "-" : "";
        else
            text += negative ? " - " : " + ";
        first = false;
        text += body;
    };
    for (const auto& [monomial, coefficient] : terms_) {
        if (monomial.empty()) {
            constantTerm = coefficient;
            continue;
        }
        std::string body;
        // |coefficient| without overflow at INT64_MIN: that one is printed as is.
        if (coefficient != 1 && coefficient != -1)
            body = (coefficient == INT64_MIN
                        ? std::to_string(coefficient).substr(1)
                        : std::to_string(coefficient < 0 ? -coefficient : coefficient)) +
                   "*";
        for (std::size_t k = 0; k < monomial.size(); ++k) body += (k ? "*" : "") + monomial[k];
        append(coefficient, body);
    }
    if (constantTerm != 0)
        append(constantTerm, constantTerm == INT64_MIN
                                 ? std::to_string(constantTerm).substr(1)
                                 : std::to_string(constantTerm < 0 ? -constantTerm : constantTerm));
    return text;
}

std::optional<SymbolicExpr> SymbolicExpr::add(const SymbolicExpr& a, const SymbolicExpr& b) {
    SymbolicExpr r = a;
    for (const auto& [m, c] : b.terms_) {
        auto sum = checkedAdd(r.terms_[m], c);
        if (!sum) return std::nullopt;
        if (*sum == 0)
            r.terms_.erase(m);
        else
            r.terms_[m] = *sum;
    }
    return withinLimits(r, r.terms_);
}

std::optional<SymbolicExpr> SymbolicExpr::sub(const SymbolicExpr& a, const SymbolicExpr& b) {
    SymbolicExpr negated;
    for (const auto& [m, c] : b.terms_) {
        if (c == INT64_MIN) return std::nullopt;
        negated.terms_[m] = -c;
    }
    return add(a, negated);
}

std::optional<SymbolicExpr> SymbolicExpr::mul(const SymbolicExpr& a, const SymbolicExpr& b) {
    SymbolicExpr r;
    for (const auto& [ma, ca] : a.terms_)
        for (const auto& [mb, cb] : b.terms_) {
            if (ma.size() + mb.size() > kMaxDegree) return std::nullopt;
            Monomial m = ma;
            m.insert(m.end(), mb.begin(), mb.end());
            std::sort(m.begin(), m.end());
            auto c = checkedMul(ca, cb);
            if (!c) return std::nullopt;
            auto sum = checkedAdd(r.terms_[m], *c);
            if (!sum) return std::nullopt;
            if (*sum == 0)
                r.terms_.erase(m);
            else
                r.terms_[m] = *sum;
            if (r.terms_.size() > kMaxTerms) return std::nullopt;
        }
    return r;
}

std::optional<SymbolicExpr> SymbolicExpr::exactDiv(const SymbolicExpr& a, const SymbolicExpr& b) {
    if (b.terms_.empty()) return std::nullopt;
    auto leading = [](const SymbolicExpr& e) {
        auto best = e.terms_.begin();
        for (auto it = e.terms_.begin(); it != e.terms_.end(); ++it)
            if (monomialLess(best->first, it->first)) best = it;
        return *best;
    };
    const auto [divisorMonomial, divisorCoefficient] = leading(b);
    SymbolicExpr remainder = a, quotient;
    for (int step = 0; !remainder.terms_.empty(); ++step) {
        if (step > 64) return std::nullopt;
        const auto [m, c] = leading(remainder);
        if (divisorCoefficient == -1 && c == INT64_MIN) return std::nullopt;
        if (c % divisorCoefficient != 0) return std::nullopt;
        // The divisor's monomial must be a sub-multiset of the remainder's.
        Monomial rest;
        std::size_t j = 0;
        for (const auto& atom : m) {
            if (j < divisorMonomial.size() && divisorMonomial[j] == atom)
                ++j;
            else
                rest.push_back(atom);
        }
        if (j != divisorMonomial.size()) return std::nullopt;
        SymbolicExpr term;
        term.terms_[rest] = c / divisorCoefficient;
        auto q = add(quotient, term);
        auto product = mul(term, b);
        if (!q || !product) return std::nullopt;
        auto r = sub(remainder, *product);
        if (!r) return std::nullopt;
        quotient = *q;
        remainder = *r;
    }
    return quotient;
}

std::optional<SymbolicExpr> SymbolicExpr::floorDiv(const SymbolicExpr& a, std::int64_t d) {
    if (d <= 0) return std::nullopt;
    if (auto value = a.constantValue()) {
        std::int64_t q = *value / d;
        if ((*value % d != 0) && (*value < 0)) --q;
        return constant(q);
    }
    if (auto exact = exactDiv(a, constant(d))) return exact;
    // floor((d*X + r) / d) = X + floor(r / d) when every symbolic coefficient divides by d.
    SymbolicExpr symbolic = a;
    std::int64_t constantTerm = 0;
    if (auto it = symbolic.terms_.find({}); it != symbolic.terms_.end()) {
        constantTerm = it->second;
        symbolic.terms_.erase(it);
    }
    if (auto exact = exactDiv(symbolic, constant(d))) {
        auto rest = floorDiv(constant(constantTerm), d);
        return add(*exact, *rest);
    }
    if (!a.nonNegative()) return std::nullopt;
    const std::string body = a.terms_.size() > 1 ? "(" + a.toString() + ")" : a.toString();
    const std::string name = "floor(" + body + "/" + std::to_string(d) + ")";
    if (name.size() > kMaxAtomLength) return std::nullopt;
    return symbol(name);
}

}  // namespace onnxlens
