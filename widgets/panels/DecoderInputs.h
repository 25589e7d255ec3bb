#pragma once
// The Run dock's inputs for a decoder with a KV cache (DecoderModel.h): the past inputs get
// length 0 (the prefill), the attention mask ones over past + sequence, the position ids
// past, past + 1, ..., a merged decoder's use_cache_branch true; the user types no dims. Plain
// data, copied with the input choices to the engine thread.
#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <vector>

#include "widgets/panels/InputSources.h"

namespace onnxlens::widgets {

struct DecoderRunInputs {
    std::string inputIds;
    std::string pastSymbol;  // the past length's symbol; "" when the past axis is unnamed
    struct Past {
        std::string input;
        int axis = 0;
    };
    std::vector<Past> pasts;
    std::string mask;        // "" when the model has none
    int maskAxis = -1;       // its last axis: past + sequence
    std::string maskSymbol;  // that axis's symbol ("total_sequence_length"); may be ""
    std::string positions;   // "" when the model has none
    std::string useCacheBranch;
};

// The decoder's inputs to fill, or nullopt when the graph is not a decoder with a KV cache.
std::optional<DecoderRunInputs> decoderRunInputs(const onnx::GraphProto& graph);

// The past length a run uses: the past symbol's value in `choices`, else 0.
std::int64_t decoderPastLength(const DecoderRunInputs& decoder, const InputChoices& choices);

// Binds every past input's past axis to the past length and the mask's last axis to past +
// sequence ("input:axis" keys, which win over the symbols), and moves the positions source on
// by the past length. The sources themselves (ones, positions) are the Run dock's rows.
void applyDecoderRunInputs(const DecoderRunInputs& decoder, InputChoices& choices);

}  // namespace onnxlens::widgets
