#include "onnxlens/workflows/DecoderModel.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <regex>
#include <set>

namespace onnxlens::engine {

namespace {

// A graph input or output as the recognition reads it.
struct Io {
    std::string name;
    int elem = 0;
    bool hasShape = false;
    std::vector<std::int64_t> dims;    // -1 where not a number
    std::vector<std::string> symbols;  // "" for numbers and `?`
};

Io ioOf(const onnx::ValueInfoProto& info) {
    Io io;
    io.name = info.name();
    if (!info.type().has_tensor_type()) return io;
    const auto& tensor = info.type().tensor_type();
    io.elem = tensor.elem_type();
    io.hasShape = tensor.has_shape();
    for (const auto& d : tensor.shape().dim()) {
        io.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
        io.symbols.push_back(d.has_dim_param() ? d.dim_param() : std::string());
    }
    return io;
}

bool isFloatElem(int elem) {
    return elem == onnx::TensorProto::FLOAT || elem == onnx::TensorProto::FLOAT16 ||
           elem == onnx::TensorProto::BFLOAT16 || elem == onnx::TensorProto::DOUBLE;
}

bool isIntegerElem(int elem) {
    return elem == onnx::TensorProto::INT64 || elem == onnx::TensorProto::INT32;
}

std::string lower(std::string text) {
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

std::string shapeText(const Io& io) {
    if (!io.hasShape) return "(no shape)";
    std::string text = "[";
    for (std::size_t i = 0; i < io.dims.size(); ++i) {
        if (i) text += ", ";
        text += io.dims[i] >= 0         ? std::to_string(io.dims[i])
                : io.symbols[i].empty() ? std::string("?")
                                        : io.symbols[i];
    }
    return text + "]";
}

// A past input paired by name: the present's expected name, layer and role.
struct NamedPair {
    std::string present, naming;
    int layer = 0;
    KvCacheEntry::Role role = KvCacheEntry::Role::Key;
};

std::optional<NamedPair> pairByName(const std::string& name) {
    static const std::regex optimum(R"(past_key_values\.(\d+)\.(key|value))");
    static const std::regex split(R"(past_([kv])_(\d+))");
    static const std::regex stacked(R"(past\.(\d+))");
    std::smatch m;
    const auto layerOf = [](const std::string& digits) {
        return digits.size() > 6 ? -1 : std::stoi(digits);
    };
    if (std::regex_match(name, m, optimum)) {
        const bool key = m[2] == "key";
        return NamedPair{"present." + m[1].str() + "." + m[2].str(), "past_key_values.N.key/value",
                         layerOf(m[1]), key ? KvCacheEntry::Role::Key : KvCacheEntry::Role::Value};
    }
    if (std::regex_match(name, m, split)) {
        const bool key = m[1] == "k";
        return NamedPair{"present_" + m[1].str() + "_" + m[2].str(), "past_k_N/past_v_N",
                         layerOf(m[2]), key ? KvCacheEntry::Role::Key : KvCacheEntry::Role::Value};
    }
    if (std::regex_match(name, m, stacked))
        return NamedPair{"present." + m[1].str(), "past.N", layerOf(m[1]),
                         KvCacheEntry::Role::KeyValue};
    return std::nullopt;
}

// The last number in a name ("cache_in_3_k" -> 3), or -1.
int lastNumber(const std::string& name) {
    static const std::regex digits(R"((\d{1,6})\D*$)");
    std::smatch m;
    return std::regex_search(name, m, digits) ? std::stoi(m[1]) : -1;
}

std::string replaceFirst(std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    if (at == std::string::npos) return {};
    return text.replace(at, from.size(), to);
}

// Static dims and types agree except on `pastAxis` (where the present's length grows).
bool sameLayout(const Io& past, const Io& present, int pastAxis) {
    if (past.elem != present.elem || past.dims.size() != present.dims.size()) return false;
    for (std::size_t i = 0; i < past.dims.size(); ++i)
        if (static_cast<int>(i) != pastAxis && past.dims[i] >= 0 && present.dims[i] >= 0 &&
            past.dims[i] != present.dims[i])
            return false;
    return true;
}

}  // namespace

Result<DecoderModel> recognizeDecoder(const onnx::GraphProto& graph) {
    std::set<std::string> initializers;
    for (const auto& init : graph.initializer()) initializers.insert(init.name());
    std::vector<Io> inputs, outputs;
    for (const auto& input : graph.input())
        if (!initializers.count(input.name())) inputs.push_back(ioOf(input));
    for (const auto& output : graph.output()) outputs.push_back(ioOf(output));
    std::map<std::string, const Io*> outputByName;
    for (const auto& o : outputs) outputByName[o.name] = &o;

    DecoderModel d;
    const Io* ids = nullptr;
    for (const auto& in : inputs) {
        if (in.name == "input_ids") ids = &in;
        if (in.name == "attention_mask") d.attentionMask = in.name;
        if (in.name == "position_ids") d.positionIds = in.name;
        if (in.name == "use_cache_branch") d.useCacheBranch = in.name;
    }
    if (!ids)  // another integer [batch, sequence] input that is neither mask nor positions
        for (const auto& in : inputs)
            if (isIntegerElem(in.elem) && in.dims.size() == 2 && in.name != d.attentionMask &&
                in.name != d.positionIds && lower(in.name).find("ids") != std::string::npos) {
                ids = &in;
                break;
            }
    if (ids) {
        d.inputIds = ids->name;
        d.idsType = ids->elem == onnx::TensorProto::INT32 ? DataType::Int32 : DataType::Int64;
        if (!isIntegerElem(ids->elem))
            return makeError("", "input_ids '" + ids->name +
                                     "' is not int64 or int32: not a decoder's token ids");
        if (ids->dims.size() == 2) {
            d.batchSymbol = ids->symbols[0];
            d.sequenceSymbol = ids->symbols[1];
        }
    }

    // Past inputs: by name, then by "past"/"cache" in the name and a symbolic dim.
    std::set<std::string> usedOutputs;
    std::vector<std::string> problems;
    struct Candidate {
        const Io* past;
        std::optional<NamedPair> named;
    };
    std::vector<Candidate> candidates;
    for (const auto& in : inputs) {
        if (ids && in.name == ids->name) continue;
        if (in.name == d.attentionMask || in.name == d.positionIds || in.name == d.useCacheBranch)
            continue;
        auto named = pairByName(in.name);
        const std::string n = lower(in.name);
        const bool looksLikeCache =
            n.find("past") != std::string::npos || n.find("cache") != std::string::npos;
        const bool symbolic =
            std::any_of(in.dims.begin(), in.dims.end(), [](std::int64_t v) { return v < 0; });
        if (named || (looksLikeCache && isFloatElem(in.elem) && in.hasShape && symbolic))
            candidates.push_back({&in, named});
        else
            d.otherInputs.push_back(in.name);
    }

    std::set<std::string> namings;
    int order = 0;
    for (const auto& [past, named] : candidates) {
        KvCacheEntry e;
        e.past = past->name;
        e.dtype = isFloatElem(past->elem) || isIntegerElem(past->elem)
                      ? static_cast<DataType>(past->elem)
                      : DataType::Undefined;
        if (!isFloatElem(past->elem)) {
            problems.push_back("past input '" + past->name + "' is not a floating-point tensor");
            continue;
        }
        if (!past->hasShape || past->dims.size() < 2) {
            problems.push_back("past input '" + past->name + "' has no shape of rank 2 or more " +
                               shapeText(*past));
            continue;
        }
        const int rank = static_cast<int>(past->dims.size());
        e.dims = past->dims;
        e.symbols = past->symbols;
        if (named) {
            e.layer = named->layer;
            e.role = named->role;
            namings.insert(named->naming);
        } else {
            e.layer = lastNumber(past->name);
            if (e.layer < 0) e.layer = order / 2;
            const std::string n = lower(past->name);
            e.role = rank == 5 && past->dims[0] == 2 ? KvCacheEntry::Role::KeyValue
                     : n.find("value") != std::string::npos || n.find("_v") != std::string::npos
                         ? KvCacheEntry::Role::Value
                         : KvCacheEntry::Role::Key;
            namings.insert("other");
        }
        ++order;
        if (e.role == KvCacheEntry::Role::KeyValue && (rank < 3 || past->dims[0] != 2)) {
            problems.push_back("past input '" + past->name + "' " + shapeText(*past) +
                               " is not stacked as [2, batch, heads, past, head_size]");
            continue;
        }
        // The batch axis: input_ids' batch symbol, else the conventional place.
        const int first = e.role == KvCacheEntry::Role::KeyValue ? 1 : 0;
        e.batchAxis = first;
        if (!d.batchSymbol.empty())
            for (int a = 0; a < rank; ++a)
                if (past->symbols[a] == d.batchSymbol) e.batchAxis = a;
        // The past axis: the one other dim that is not a number.
        std::vector<int> open;
        for (int a = first; a < rank; ++a)
            if (a != e.batchAxis && past->dims[a] < 0) open.push_back(a);
        if (open.empty()) {
            problems.push_back("past input '" + past->name + "' " + shapeText(*past) +
                               " has no symbolic dim for the past length");
            continue;
        }
        e.pastAxis = open.front();
        if (open.size() > 1 && rank - first == 4) e.pastAxis = first + 2;  // [b, heads, past, d]

        // Its present.
        const Io* present = nullptr;
        if (named) {
            auto it = outputByName.find(named->present);
            if (it == outputByName.end()) {
                problems.push_back("past input '" + past->name + "' has no present output '" +
                                   named->present + "'");
                continue;
            }
            present = it->second;
        } else {
            for (const std::string& guess : {replaceFirst(past->name, "past_key_values", "present"),
                                             replaceFirst(past->name, "past", "present"),
                                             replaceFirst(past->name, "Past", "Present")}) {
                auto it = guess.empty() ? outputByName.end() : outputByName.find(guess);
                if (it != outputByName.end() && !usedOutputs.count(guess)) {
                    present = it->second;
                    break;
                }
            }
            if (!present)
                for (const auto& o : outputs)
                    if (!usedOutputs.count(o.name) && o.name != "logits" &&
                        sameLayout(*past, o, e.pastAxis)) {
                        present = &o;
                        break;
                    }
            if (!present) {
                problems.push_back("past input '" + past->name +
                                   "' has no present output of the same layout");
                continue;
            }
        }
        e.present = present->name;
        if (!usedOutputs.insert(present->name).second) {
            problems.push_back("present output '" + present->name + "' continues two past inputs");
            continue;
        }
        if (!present->hasShape) {
            // Nothing declared to compare; the loop checks every run's present against its past.
        } else if (!sameLayout(*past, *present, e.pastAxis)) {
            problems.push_back("present output '" + present->name + "' " + shapeText(*present) +
                               " disagrees with its past input '" + past->name + "' " +
                               shapeText(*past) + " (type, rank or a fixed dim)");
            continue;
        } else if (present->dims[e.pastAxis] >= 0) {
            problems.push_back("present output '" + present->name + "' " + shapeText(*present) +
                               " has a fixed length on axis " + std::to_string(e.pastAxis) +
                               ", where its past input '" + past->name +
                               "' grows with the context");
            continue;
        }
        e.elementsPerToken = 1;
        for (int a = 0; a < rank; ++a) {
            if (a == e.batchAxis || a == e.pastAxis) continue;
            if (past->dims[a] < 0 || e.elementsPerToken > (std::int64_t{1} << 40)) {
                e.elementsPerToken = 0;
                break;
            }
            e.elementsPerToken *= past->dims[a];
        }
        d.cache.push_back(std::move(e));
    }

    // Logits: by name, else the first floating-point rank-3 output that is not a present.
    for (const auto& o : outputs)
        if (o.name == "logits") d.logits = o.name;
    if (d.logits.empty())
        for (const auto& o : outputs)
            if (!usedOutputs.count(o.name) && isFloatElem(o.elem) && o.dims.size() == 3) {
                d.logits = o.name;
                break;
            }
    if (!d.logits.empty()) {
        const Io& o = *outputByName[d.logits];
        if (!o.dims.empty() && o.dims.back() > 0) d.vocabulary = o.dims.back();
    }

    if (!problems.empty()) {
        std::string text;
        for (const auto& p : problems) text += (text.empty() ? "" : "; ") + p;
        return makeError("", text);
    }
    std::vector<std::string> missing;
    if (d.cache.empty())
        missing.push_back(
            "no past key/value inputs (past_key_values.N.key/value, past_k_N/past_v_N, past.N, "
            "or a past/cache input with a symbolic length and a present output)");
    if (d.inputIds.empty()) missing.push_back("no input_ids (an int64 [batch, sequence] input)");
    if (d.logits.empty()) missing.push_back("no logits output ([batch, sequence, vocabulary])");
    if (!missing.empty()) {
        std::string text = "not a decoder with a KV cache: ";
        for (std::size_t i = 0; i < missing.size(); ++i) text += (i ? "; " : "") + missing[i];
        return makeError("", text);
    }

    std::sort(d.cache.begin(), d.cache.end(), [](const KvCacheEntry& a, const KvCacheEntry& b) {
        return a.layer != b.layer ? a.layer < b.layer : a.role < b.role;
    });
    std::set<int> layers;
    for (const auto& e : d.cache) layers.insert(e.layer);
    d.layers = static_cast<int>(layers.size());
    d.stacked = d.cache.front().role == KvCacheEntry::Role::KeyValue;
    d.naming = namings.size() == 1 ? *namings.begin() : "mixed";
    const KvCacheEntry& front = d.cache.front();
    d.cacheType = front.dtype;
    d.pastSymbol = front.symbols[front.pastAxis];
    // Heads and head size: the dims besides batch, past (and the stacked 2), head size last.
    std::vector<std::int64_t> rest;
    for (int a = d.stacked ? 1 : 0; a < static_cast<int>(front.dims.size()); ++a)
        if (a != front.batchAxis && a != front.pastAxis) rest.push_back(front.dims[a]);
    if (!rest.empty() && std::all_of(rest.begin(), rest.end(), [](auto v) { return v >= 0; })) {
        d.headSize = rest.back();
        d.heads = 1;
        for (std::size_t i = 0; i + 1 < rest.size(); ++i) d.heads *= rest[i];
    }
    std::uint64_t bytes = 0;
    for (const auto& e : d.cache) {
        if (e.elementsPerToken == 0) {
            bytes = 0;
            break;
        }
        bytes += static_cast<std::uint64_t>(e.elementsPerToken) * dataTypeSize(e.dtype);
    }
    d.bytesPerToken = bytes;
    return d;
}

nlohmann::json decoderModelJson(const DecoderModel& d) {
    const auto orNull = [](const std::string& s) {
        return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
    };
    const auto numberOrNull = [](std::int64_t v) {
        return v > 0 ? nlohmann::json(v) : nlohmann::json(nullptr);
    };
    auto pairs = nlohmann::json::array();
    for (const auto& e : d.cache)
        pairs.push_back({{"past", e.past},
                         {"present", e.present},
                         {"layer", e.layer},
                         {"role", e.role == KvCacheEntry::Role::Key     ? "key"
                                  : e.role == KvCacheEntry::Role::Value ? "value"
                                                                        : "key_value"},
                         {"past_axis", e.pastAxis},
                         {"batch_axis", e.batchAxis}});
    return {{"layers", d.layers},
            {"heads", numberOrNull(d.heads)},
            {"head_size", numberOrNull(d.headSize)},
            {"dtype", dataTypeName(d.cacheType)},
            {"layout", d.stacked ? "stacked" : "separate"},
            {"naming", d.naming},
            {"dims",
             {{"batch", orNull(d.batchSymbol)},
              {"past", orNull(d.pastSymbol)},
              {"sequence", orNull(d.sequenceSymbol)}}},
            {"bytes_per_token",
             d.bytesPerToken > 0 ? nlohmann::json(d.bytesPerToken) : nlohmann::json(nullptr)},
            {"vocabulary", numberOrNull(d.vocabulary)},
            {"input_ids", d.inputIds},
            {"attention_mask", orNull(d.attentionMask)},
            {"position_ids", orNull(d.positionIds)},
            {"logits", d.logits},
            {"other_inputs", d.otherInputs},
            {"pairs", pairs}};
}

}  // namespace onnxlens::engine
