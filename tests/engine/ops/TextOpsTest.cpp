// Text: StringNormalizer (case-insensitive stop words, UTF-8 case change, everything removed)
// and TfIdfVectorizer (string pools, skips, batches, IDF/TFIDF weights, bad attributes), and the
// opset-20 string operators with the examples of their definitions worked by hand.
#include "NumericOpTestHelpers.h"

namespace onnxlens::testing {
namespace {

Tensor strings(Shape shape, std::vector<std::string> values) {
    return makeTensor<std::string>(std::move(shape), std::move(values));
}

std::vector<std::string> stringsOf(const Tensor& t) {
    auto s = t.span<std::string>();
    return {s.begin(), s.end()};
}

OneNodeSpec normalizerSpec(Tensor x, std::string action, std::int64_t caseSensitive,
                           std::vector<std::string> stopwords) {
    OneNodeSpec spec = nodeSpec("StringNormalizer", 10, {Value(x)});
    spec.attributes = [=](onnx::NodeProto& node) {
        setAttr(node, "case_change_action", action);
        setAttr(node, "is_case_sensitive", caseSensitive);
        auto* a = node.add_attribute();
        a->set_name("stopwords");
        a->set_type(onnx::AttributeProto::STRINGS);
        for (const auto& w : stopwords) a->add_strings(w);
    };
    return spec;
}

TEST(TextOps, StringNormalizerCaseInsensitiveStopwords) {
    Tensor x = strings({1, 4}, {"The", "cat", "THE", "Hat"});
    Tensor y = runOneNodeTensor(normalizerSpec(x, "LOWER", 0, {"the"}));
    EXPECT_EQ(y.shape(), (Shape{1, 2}));
    EXPECT_EQ(stringsOf(y), (std::vector<std::string>{"cat", "hat"}));
    // Case-sensitive: only the exact "The" goes.
    Tensor kept = runOneNodeTensor(normalizerSpec(x, "NONE", 1, {"The"}));
    EXPECT_EQ(stringsOf(kept), (std::vector<std::string>{"cat", "THE", "Hat"}));
}

TEST(TextOps, StringNormalizerChangesCaseOfUtf8Letters) {
    Tensor x = strings({2}, {"crème brûlée", "Ωmega"});
    Tensor upper = runOneNodeTensor(normalizerSpec(x, "UPPER", 1, {}));
    EXPECT_EQ(stringsOf(upper), (std::vector<std::string>{"CRÈME BRÛLÉE", "ΩMEGA"}));
    Tensor lower = runOneNodeTensor(normalizerSpec(x, "LOWER", 1, {}));
    EXPECT_EQ(stringsOf(lower), (std::vector<std::string>{"crème brûlée", "ωmega"}));
}

TEST(TextOps, StringNormalizerEverythingRemoved) {
    Tensor y = runOneNodeTensor(normalizerSpec(strings({2}, {"a", "A"}), "NONE", 0, {"a"}));
    EXPECT_EQ(y.shape(), (Shape{1}));
    EXPECT_EQ(stringsOf(y), (std::vector<std::string>{""}));
    Tensor y2 = runOneNodeTensor(normalizerSpec(strings({1, 1}, {"a"}), "NONE", 0, {"a"}));
    EXPECT_EQ(y2.shape(), (Shape{1, 1}));
}

TEST(TextOps, StringNormalizerRejectsOtherShapes) {
    auto result = runOneNode(normalizerSpec(strings({2, 2}, {"a", "b", "c", "d"}), "NONE", 0, {}));
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("[1, C]"), std::string::npos);
}

struct TfIdfAttributes {
    std::string mode = "TF";
    std::int64_t minGram = 1, maxGram = 2, maxSkip = 0;
    std::vector<std::int64_t> counts, indexes;
    std::vector<std::int64_t> intPool;
    std::vector<std::string> stringPool;
    std::vector<float> weights;
};

OneNodeSpec tfidfSpec(Tensor x, const TfIdfAttributes& a) {
    OneNodeSpec spec = nodeSpec("TfIdfVectorizer", 9, {Value(x)});
    spec.attributes = [=](onnx::NodeProto& node) {
        setAttr(node, "mode", a.mode);
        setAttr(node, "min_gram_length", a.minGram);
        setAttr(node, "max_gram_length", a.maxGram);
        setAttr(node, "max_skip_count", a.maxSkip);
        setAttr(node, "ngram_counts", a.counts);
        setAttr(node, "ngram_indexes", a.indexes);
        if (!a.weights.empty()) setAttr(node, "weights", a.weights);
        if (!a.stringPool.empty()) {
            auto* attr = node.add_attribute();
            attr->set_name("pool_strings");
            attr->set_type(onnx::AttributeProto::STRINGS);
            for (const auto& s : a.stringPool) attr->add_strings(s);
        } else {
            setAttr(node, "pool_int64s", a.intPool);
        }
    };
    return spec;
}

TEST(TextOps, TfIdfCountsStringUnigramsAndSkippedBigrams) {
    TfIdfAttributes a;
    a.maxSkip = 1;
    // Unigrams "a", "b"; bigrams ("a","b"), ("a","c"); output slots reordered.
    a.stringPool = {"a", "b", "a", "b", "a", "c"};
    a.counts = {0, 2};
    a.indexes = {3, 2, 1, 0};
    // "a b c a b": a x2, b x2; (a,b) at skip 0 twice; (a,c) at skip 1 once.
    Tensor y = runOneNodeTensor(tfidfSpec(strings({5}, {"a", "b", "c", "a", "b"}), a));
    EXPECT_TRUE(tensorsClose(y, makeTensor<float>({4}, {1, 2, 2, 2})));
}

TEST(TextOps, TfIdfBatchesAndWeights) {
    TfIdfAttributes a;
    a.minGram = 1;
    a.maxGram = 1;
    a.intPool = {7, 9};
    a.counts = {0};
    a.indexes = {0, 1};
    a.weights = {0.5f, 2.0f};
    Tensor x = makeTensor<std::int64_t>({2, 3}, {7, 7, 9, 1, 2, 3});
    a.mode = "TFIDF";
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(tfidfSpec(x, a)), makeTensor<float>({2, 2}, {1, 2, 0, 0})));
    a.mode = "IDF";
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(tfidfSpec(x, a)),
                             makeTensor<float>({2, 2}, {0.5f, 2, 0, 0})));
    // An empty batch row count still gives the output width.
    Tensor empty = makeTensor<std::int32_t>({0, 3}, {});
    EXPECT_EQ(runOneNodeTensor(tfidfSpec(empty, a)).shape(), (Shape{0, 2}));
}

TEST(TextOps, TfIdfRejectsInconsistentAttributes) {
    TfIdfAttributes a;
    a.intPool = {1, 2, 3};
    a.counts = {0, 1};  // the unigram 1 and the bigram (2, 3)
    a.indexes = {0};    // one slot for two n-grams
    auto result = runOneNode(tfidfSpec(makeTensor<std::int64_t>({2}, {1, 2}), a));
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("ngram_indexes"), std::string::npos)
        << result.error().message;
}

TEST(TextOps, StringConcatBroadcasts) {
    OneNodeSpec spec =
        nodeSpec("StringConcat", 20,
                 {Value(strings({2, 1}, {"a", "bc"})), Value(strings({3}, {"x", "", "é"}))});
    Tensor z = runOneNodeTensor(spec);
    EXPECT_EQ(z.shape(), (Shape{2, 3}));
    EXPECT_EQ(stringsOf(z), (std::vector<std::string>{"ax", "a", "aé", "bcx", "bc", "bcé"}));
}

TEST(TextOps, RegexFullMatchUsesRe2AndRejectsABadPattern) {
    OneNodeSpec spec = nodeSpec("RegexFullMatch", 20,
                                {Value(strings({4}, {"www.google.com", "www.facebook.com",
                                                     "www.bbc.co.uk", "google.com"}))});
    spec.attributes = [](onnx::NodeProto& n) {
        setAttr(n, "pattern", std::string(R"(www\.[\w.-]+\.\bcom\b)"));
    };
    Tensor y = runOneNodeTensor(spec);
    ASSERT_EQ(y.dtype(), DataType::Bool);
    const bool* v = y.data<bool>();
    EXPECT_TRUE(v[0]);
    EXPECT_TRUE(v[1]);
    EXPECT_FALSE(v[2]);  // not .com
    EXPECT_FALSE(v[3]);  // a full match needs the www. prefix
    OneNodeSpec bad = nodeSpec("RegexFullMatch", 20, {Value(strings({1}, {"a"}))});
    bad.attributes = [](onnx::NodeProto& n) { setAttr(n, "pattern", std::string("(unclosed")); };
    auto result = runOneNode(bad);
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("(unclosed"), std::string::npos)
        << result.error().message;
}

TEST(TextOps, StringSplitPadsAndCounts) {
    auto split = [](Tensor x, std::optional<std::string> delimiter,
                    std::optional<std::int64_t> maxsplit) {
        OneNodeSpec spec = nodeSpec("StringSplit", 20, {Value(std::move(x))});
        spec.outputCount = 2;
        spec.attributes = [=](onnx::NodeProto& n) {
            if (delimiter) setAttr(n, "delimiter", *delimiter);
            if (maxsplit) setAttr(n, "maxsplit", *maxsplit);
        };
        auto result = runOneNode(spec);
        EXPECT_TRUE(result) << result.error().message;
        return *result;
    };
    // A delimiter keeps empty parts: "a,,b" -> a, "", b.
    auto byComma = split(strings({2}, {"a,,b", "c"}), std::string(","), std::nullopt);
    EXPECT_EQ(byComma[0].tensor().shape(), (Shape{2, 3}));
    EXPECT_EQ(stringsOf(byComma[0].tensor()),
              (std::vector<std::string>{"a", "", "b", "c", "", ""}));
    EXPECT_EQ(byComma[1].tensor().toInt64Vector(), (std::vector<std::int64_t>{3, 1}));
    // No delimiter: whitespace runs, trimmed; maxsplit 1 keeps the rest whole, as Python's
    // str.split(None, 1) does (the reference implementation's semantics).
    auto byWhitespace = split(strings({2}, {"  hello   big world ", ""}), std::nullopt, 1);
    EXPECT_EQ(byWhitespace[0].tensor().shape(), (Shape{2, 2}));
    EXPECT_EQ(stringsOf(byWhitespace[0].tensor()),
              (std::vector<std::string>{"hello", "big world ", "", ""}));
    EXPECT_EQ(byWhitespace[1].tensor().toInt64Vector(), (std::vector<std::int64_t>{2, 0}));
    // A multi-character delimiter, maxsplit 0: nothing is cut.
    auto whole = split(strings({1}, {"1<>2<>3"}), std::string("<>"), 0);
    EXPECT_EQ(stringsOf(whole[0].tensor()), (std::vector<std::string>{"1<>2<>3"}));
    auto all = split(strings({1}, {"1<>2<>3"}), std::string("<>"), std::nullopt);
    EXPECT_EQ(stringsOf(all[0].tensor()), (std::vector<std::string>{"1", "2", "3"}));
}

}  // namespace
}  // namespace onnxlens::testing
