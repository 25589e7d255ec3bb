// Text: StringNormalizer (stop-word removal and case change), TfIdfVectorizer (n-gram counts
// over integer or string tokens, with skips) and the opset-20 string operators StringConcat,
// StringSplit and RegexFullMatch (RE2 syntax, as the operator's definition says, through RE2).
#include <re2/re2.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "Broadcast.h"
#include "OpFamilies.h"

namespace onnxlens::engine::ops {
namespace {

// ---- UTF-8 case mapping -----------------------------------------------------------------------
// The case change must not depend on which C locales the machine has, so it maps code points
// itself: ASCII, Latin-1, Greek and Cyrillic letters (the alphabets with one-to-one cases).
char32_t toUpperCodePoint(char32_t c) {
    if (c >= U'a' && c <= U'z') return c - 0x20;
    if (c >= 0xE0 && c <= 0xFE && c != 0xF7) return c - 0x20;
    if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) return c - 0x20;
    if (c >= 0x430 && c <= 0x44F) return c - 0x20;
    if (c >= 0x450 && c <= 0x45F) return c - 0x50;
    return c;
}
char32_t toLowerCodePoint(char32_t c) {
    if (c >= U'A' && c <= U'Z') return c + 0x20;
    if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 0x20;
    if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 0x20;
    if (c >= 0x410 && c <= 0x42F) return c + 0x20;
    if (c >= 0x400 && c <= 0x40F) return c + 0x50;
    return c;
}

// Applies `map` to every code point of a UTF-8 string; invalid bytes pass through unchanged.
template <class Map>
std::string mapCodePoints(const std::string& s, Map map) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        auto byte = static_cast<unsigned char>(s[i]);
        std::size_t length = byte < 0x80           ? 1
                             : (byte >> 5) == 0x6  ? 2
                             : (byte >> 4) == 0xE  ? 3
                             : (byte >> 3) == 0x1E ? 4
                                                   : 0;
        bool valid = length > 0 && i + length <= s.size();
        for (std::size_t k = 1; valid && k < length; ++k)
            valid = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
        if (!valid) {
            out += s[i++];
            continue;
        }
        char32_t c = length == 1 ? byte : byte & (0x7F >> length);
        for (std::size_t k = 1; k < length; ++k)
            c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
        c = map(c);
        if (c < 0x80) {
            out += static_cast<char>(c);
        } else if (c < 0x800) {
            out += static_cast<char>(0xC0 | (c >> 6));
            out += static_cast<char>(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            out += static_cast<char>(0xE0 | (c >> 12));
            out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (c & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (c >> 18));
            out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (c & 0x3F));
        }
        i += length;
    }
    return out;
}
std::string toUpperUtf8(const std::string& s) { return mapCodePoints(s, toUpperCodePoint); }
std::string toLowerUtf8(const std::string& s) { return mapCodePoints(s, toLowerCodePoint); }

class StringNormalizerKernel : public Kernel {
  public:
    explicit StringNormalizerKernel(const NodeInfo& node)
        : caseSensitive_(node.getInt("is_case_sensitive", 0) != 0) {
        std::string action = node.getString("case_change_action", "NONE");
        if (action == "LOWER")
            caseChange_ = CaseChange::Lower;
        else if (action == "UPPER")
            caseChange_ = CaseChange::Upper;
        else if (action != "NONE")
            fail("StringNormalizer: case_change_action must be LOWER, UPPER or NONE, got " +
                 action);
        for (const std::string& word : node.getStrings("stopwords"))
            stopwords_.insert(caseSensitive_ ? word : toLowerUtf8(word));
    }

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        require(x.dtype() == DataType::String, "StringNormalizer needs a string input");
        bool twoDim = x.rank() == 2;
        require(x.rank() == 1 || (twoDim && x.dim(0) == 1), [&] {
            return "StringNormalizer accepts [C] or [1, C] inputs, got " + shapeToString(x.shape());
        });
        std::vector<std::string> kept;
        for (const std::string& s : x.span<std::string>()) {
            if (stopwords_.count(caseSensitive_ ? s : toLowerUtf8(s))) continue;
            switch (caseChange_) {
                case CaseChange::Lower:
                    kept.push_back(toLowerUtf8(s));
                    break;
                case CaseChange::Upper:
                    kept.push_back(toUpperUtf8(s));
                    break;
                case CaseChange::None:
                    kept.push_back(s);
                    break;
            }
        }
        // Everything filtered out: one empty string, as the schema specifies.
        if (kept.empty()) kept.emplace_back();
        auto count = static_cast<std::int64_t>(kept.size());
        outputs[0] = Value(Tensor::fromVector(twoDim ? Shape{1, count} : Shape{count}, kept));
    }

  private:
    enum class CaseChange { None, Lower, Upper };
    bool caseSensitive_;
    CaseChange caseChange_ = CaseChange::None;
    std::set<std::string> stopwords_;
};

// ---- TfIdfVectorizer --------------------------------------------------------------------------
template <class Token>
using NgramPool = std::map<std::vector<Token>, std::size_t>;

class TfIdfVectorizerKernel : public Kernel {
  public:
    explicit TfIdfVectorizerKernel(const NodeInfo& node)
        : minGram_(node.getInt("min_gram_length")),
          maxGram_(node.getInt("max_gram_length")),
          maxSkip_(node.getInt("max_skip_count")),
          weights_(node.getFloats("weights")) {
        std::string mode = node.getString("mode");
        if (mode == "TF")
            mode_ = Mode::Tf;
        else if (mode == "IDF")
            mode_ = Mode::Idf;
        else if (mode == "TFIDF")
            mode_ = Mode::TfIdf;
        else
            fail("TfIdfVectorizer: mode must be TF, IDF or TFIDF, got " + mode);
        require(minGram_ >= 1 && maxGram_ >= minGram_ && maxSkip_ >= 0,
                "TfIdfVectorizer: need 1 <= min_gram_length <= max_gram_length and "
                "max_skip_count >= 0");
        std::vector<std::int64_t> counts = node.getInts("ngram_counts");
        ngramIndexes_ = node.getInts("ngram_indexes");
        for (std::int64_t index : ngramIndexes_) {
            require(index >= 0, "TfIdfVectorizer: negative value in ngram_indexes");
            outputWidth_ = std::max(outputWidth_, index + 1);
        }
        bool strings = node.hasAttribute("pool_strings");
        require(strings != node.hasAttribute("pool_int64s"),
                "TfIdfVectorizer: exactly one of pool_strings and pool_int64s must be set");
        std::size_t ordinal = 0;
        if (strings)
            buildPool(node.getStrings("pool_strings"), counts, stringPool_, ordinal);
        else
            buildPool(node.getInts("pool_int64s"), counts, intPool_, ordinal);
        require(ordinal == ngramIndexes_.size(), [&] {
            return "TfIdfVectorizer: the pool holds " + std::to_string(ordinal) +
                   " n-grams but ngram_indexes has " + std::to_string(ngramIndexes_.size());
        });
        require(weights_.empty() || weights_.size() == ordinal,
                "TfIdfVectorizer: weights must have one value per n-gram of the pool");
        stringInput_ = strings;
    }

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        require(x.rank() == 1 || x.rank() == 2, [&] {
            return "TfIdfVectorizer accepts [C] or [N, C] inputs, got " + shapeToString(x.shape());
        });
        std::int64_t rows = x.rank() == 2 ? x.dim(0) : 1;
        std::int64_t columns = x.rank() == 2 ? x.dim(1) : (x.rank() == 1 ? x.dim(0) : 0);
        Tensor y = Tensor::zeros(DataType::Float,
                                 x.rank() == 2 ? Shape{rows, outputWidth_} : Shape{outputWidth_});
        float* out = y.data<float>();
        if (stringInput_) {
            require(x.dtype() == DataType::String,
                    "TfIdfVectorizer: pool_strings needs a string input");
            countRows(x.data<std::string>(), rows, columns, stringPool_, out);
        } else {
            require(x.dtype() == DataType::Int32 || x.dtype() == DataType::Int64,
                    "TfIdfVectorizer: pool_int64s needs an int32 or int64 input");
            std::vector<std::int64_t> tokens = x.toInt64Vector();
            countRows(tokens.data(), rows, columns, intPool_, out);
        }
        outputs[0] = Value(std::move(y));
    }

  private:
    enum class Mode { Tf, Idf, TfIdf };

    // ngram_counts[k] is where the (k+1)-grams start in the pool; each group runs to the next.
    template <class Token>
    static void buildPool(const std::vector<Token>& pool, const std::vector<std::int64_t>& counts,
                          NgramPool<Token>& out, std::size_t& ordinal) {
        for (std::size_t k = 0; k < counts.size(); ++k) {
            auto n = static_cast<std::int64_t>(k + 1);
            std::int64_t begin = counts[k];
            std::int64_t end =
                k + 1 < counts.size() ? counts[k + 1] : static_cast<std::int64_t>(pool.size());
            require(begin >= 0 && begin <= end && end <= static_cast<std::int64_t>(pool.size()) &&
                        (end - begin) % n == 0,
                    "TfIdfVectorizer: ngram_counts does not split the pool into whole n-grams");
            for (std::int64_t i = begin; i < end; i += n) {
                std::vector<Token> gram(pool.begin() + i, pool.begin() + i + n);
                out.emplace(std::move(gram), ordinal++);
            }
        }
    }

    template <class Token>
    void countRows(const Token* tokens, std::int64_t rows, std::int64_t columns,
                   const NgramPool<Token>& pool, float* out) const {
        std::vector<double> counts(ngramIndexes_.size());
        std::vector<Token> gram;
        for (std::int64_t r = 0; r < rows; ++r) {
            std::fill(counts.begin(), counts.end(), 0.0);
            const Token* row = tokens + r * columns;
            for (std::int64_t start = 0; start < columns; ++start) {
                for (std::int64_t n = minGram_; n <= maxGram_; ++n) {
                    // Unigrams have no gaps, so they are counted once, not once per skip.
                    std::int64_t skips = n == 1 ? 0 : maxSkip_;
                    for (std::int64_t skip = 0; skip <= skips; ++skip) {
                        std::int64_t step = skip + 1;
                        if (start + (n - 1) * step >= columns) break;
                        gram.clear();
                        for (std::int64_t k = 0; k < n; ++k) gram.push_back(row[start + k * step]);
                        auto it = pool.find(gram);
                        if (it != pool.end()) counts[it->second] += 1;
                    }
                }
            }
            float* dst = out + r * outputWidth_;
            for (std::size_t i = 0; i < counts.size(); ++i) {
                if (counts[i] == 0) continue;
                double weight = weights_.empty() ? 1.0 : weights_[i];
                double value = mode_ == Mode::Tf    ? counts[i]
                               : mode_ == Mode::Idf ? weight
                                                    : counts[i] * weight;
                dst[ngramIndexes_[i]] = static_cast<float>(value);
            }
        }
    }

    std::int64_t minGram_, maxGram_, maxSkip_;
    std::vector<float> weights_;
    Mode mode_ = Mode::Tf;
    std::vector<std::int64_t> ngramIndexes_;
    std::int64_t outputWidth_ = 0;
    bool stringInput_ = false;
    NgramPool<std::int64_t> intPool_;
    NgramPool<std::string> stringPool_;
};

// StringConcat-20: elementwise concatenation with numpy broadcasting.
class StringConcatKernel : public Kernel {
  public:
    explicit StringConcatKernel(const NodeInfo&) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const Tensor& y = inputTensor(inputs, 1);
        require(x.dtype() == DataType::String && y.dtype() == DataType::String,
                "StringConcat needs two string inputs");
        outputs[0] = Value(broadcastBinary<std::string, std::string, std::string>(
            ctx, x, y, 8.0, [](const std::string& a, const std::string& b) { return a + b; }));
    }
};

// RegexFullMatch-20: whether each whole string matches the pattern (RE2 syntax).
class RegexFullMatchKernel : public Kernel {
  public:
    explicit RegexFullMatchKernel(const NodeInfo& node) {
        const std::string pattern = node.getString("pattern", "");
        RE2::Options options;
        options.set_log_errors(false);
        regex_ = std::make_unique<RE2>(pattern, options);
        require(regex_->ok(), [&] {
            return "RegexFullMatch: pattern '" + pattern +
                   "' is not a valid RE2 expression: " + regex_->error();
        });
    }

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        require(x.dtype() == DataType::String, "RegexFullMatch needs a string input");
        Tensor y(DataType::Bool, x.shape());
        auto* out = y.data<bool>();
        const auto strings = x.span<std::string>();
        for (std::size_t i = 0; i < strings.size(); ++i)
            out[i] = RE2::FullMatch(strings[i], *regex_);
        outputs[0] = Value(std::move(y));
    }

  private:
    std::unique_ptr<RE2> regex_;
};

// StringSplit-20: each string cut at `delimiter` (or at whitespace runs, trimmed, when the
// delimiter is empty or absent), at most `maxsplit` times from the left. Y gains a last axis as
// long as the longest split, padded with empty strings; Z holds each element's part count.
class StringSplitKernel : public Kernel {
  public:
    explicit StringSplitKernel(const NodeInfo& node)
        : delimiter_(node.getString("delimiter", "")),
          maxSplit_(node.hasAttribute("maxsplit") ? node.getInt("maxsplit", -1) : -1) {}

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        require(x.dtype() == DataType::String, "StringSplit needs a string input");
        std::vector<std::vector<std::string>> parts;
        std::size_t widest = 0;
        for (const std::string& s : x.span<std::string>()) {
            parts.push_back(split(s));
            widest = std::max(widest, parts.back().size());
        }
        Shape yShape = x.shape();
        yShape.push_back(static_cast<std::int64_t>(widest));
        Tensor y(DataType::String, yShape);
        Tensor z(DataType::Int64, x.shape());
        auto* strings = y.data<std::string>();
        auto* counts = z.data<std::int64_t>();
        for (std::size_t i = 0; i < parts.size(); ++i) {
            counts[i] = static_cast<std::int64_t>(parts[i].size());
            for (std::size_t k = 0; k < parts[i].size(); ++k)
                strings[i * widest + k] = std::move(parts[i][k]);
        }
        outputs[0] = Value(std::move(y));
        if (outputs.size() > 1) outputs[1] = Value(std::move(z));
    }

  private:
    static bool isSpace(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
    }

    bool splitsLeft(std::size_t made) const {
        return maxSplit_ < 0 || made < static_cast<std::size_t>(maxSplit_);
    }

    std::vector<std::string> split(const std::string& s) const {
        std::vector<std::string> out;
        if (delimiter_.empty()) {
            std::size_t i = 0;
            while (i < s.size() && isSpace(s[i])) ++i;
            while (i < s.size()) {
                if (!splitsLeft(out.size())) {  // the rest as it is (as Python's str.split)
                    out.push_back(s.substr(i));
                    break;
                }
                std::size_t end = i;
                while (end < s.size() && !isSpace(s[end])) ++end;
                out.push_back(s.substr(i, end - i));
                i = end;
                while (i < s.size() && isSpace(s[i])) ++i;
            }
            return out;
        }
        std::size_t start = 0;
        while (splitsLeft(out.size())) {
            const std::size_t at = s.find(delimiter_, start);
            if (at == std::string::npos) break;
            out.push_back(s.substr(start, at - start));
            start = at + delimiter_.size();
        }
        out.push_back(s.substr(start));
        return out;
    }

    std::string delimiter_;
    std::int64_t maxSplit_;
};

}  // namespace

void registerTextOps(KernelRegistry& registry) {
    registry.add<StringNormalizerKernel>("StringNormalizer", 10);
    registry.add<TfIdfVectorizerKernel>("TfIdfVectorizer", 9);
    registry.add<StringConcatKernel>("StringConcat", 20);
    registry.add<RegexFullMatchKernel>("RegexFullMatch", 20);
    registry.add<StringSplitKernel>("StringSplit", 20);
}

}  // namespace onnxlens::engine::ops
