#pragma once
// Recognizing a decoder with an explicit KV cache from its graph inputs and outputs: the past
// inputs and the present outputs that continue them, token ids, attention mask, position ids and
// logits. Shared by `onnxlens-cli info` (the kv_cache report), `onnxlens-cli generate` and the
// decoding loop (DecodeLoop.h).
//
// Past/present pairs, by name first:
//   past_key_values.N.key / .value  ->  present.N.key / .value    (optimum, onnxruntime-genai)
//   past_k_N / past_v_N             ->  present_k_N / present_v_N
//   past.N                          ->  present.N, key and value stacked: [2, batch, heads, past,
//                                       head_size]
// then any other input whose name says "past" (or "cache") and that has a symbolic dim, paired
// with the output named with "present" in its place, else with the first unpaired output of the
// same type, rank and static dims. The past axis is the dim that is neither the batch (input_ids'
// first dim) nor a number; the present must have the past's rank, type and static dims.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "onnxlens/engine/DataType.h"
#include "onnxlens/model/Result.h"

namespace onnxlens::engine {

// One past input and the present output that continues it.
struct KvCacheEntry {
    enum class Role { Key, Value, KeyValue };  // KeyValue: both stacked on a leading axis of 2
    std::string past, present;
    int layer = 0;
    Role role = Role::Key;
    int batchAxis = -1;  // -1: no batch axis
    int pastAxis = 0;
    // The past's dims: numbers, -1 where symbolic or unknown (the batch and past axes at least).
    std::vector<std::int64_t> dims;
    std::vector<std::string> symbols;  // per axis: the dim's symbol, "" for numbers and `?`
    DataType dtype = DataType::Float;
    // Elements per token of context for one batch item: the product of the other dims (0 when
    // one of them is not a number).
    std::int64_t elementsPerToken = 0;
};

struct DecoderModel {
    std::string inputIds;        // token ids [batch, sequence]
    std::string attentionMask;   // [batch, past + sequence]; empty when the model has none
    std::string positionIds;     // [batch, sequence]; empty when the model has none
    std::string logits;          // [batch, sequence, vocabulary]
    std::string useCacheBranch;  // a merged decoder's bool switch (optimum); empty when none
    std::vector<KvCacheEntry> cache;
    bool stacked = false;  // past.N layout: key and value in one tensor per layer
    std::string naming;    // "past_key_values.N.key/value", "past_k_N/past_v_N", "past.N", "other"
    int layers = 0;
    std::int64_t heads = 0;     // key/value heads (0: not a number)
    std::int64_t headSize = 0;  // 0: not a number
    std::string batchSymbol, pastSymbol, sequenceSymbol;
    DataType idsType = DataType::Int64;
    DataType cacheType = DataType::Float;
    std::int64_t vocabulary = 0;  // the logits' last dim; 0 when symbolic
    // Bytes of cache one token of context takes, for one batch item (0 when a dim is unknown).
    std::uint64_t bytesPerToken = 0;
    // Inputs a decoding loop does not know how to fill.
    std::vector<std::string> otherInputs;
};

// The decoder's structure, or an error whose message says what is missing ("not a decoder with a
// KV cache: no past key/value inputs ..., no logits output") or what disagrees (a present whose
// shape is not its past's).
Result<DecoderModel> recognizeDecoder(const onnx::GraphProto& graph);

// info --json's kv_cache: layers, heads, head_size, dims (batch, past, sequence symbols),
// bytes_per_token, dtype, layout, the inputs and the pairs.
nlohmann::json decoderModelJson(const DecoderModel& decoder);

}  // namespace onnxlens::engine
