#include "widgets/panels/DecoderInputs.h"

#include "onnxlens/workflows/DecoderModel.h"

namespace onnxlens::widgets {

std::optional<DecoderRunInputs> decoderRunInputs(const onnx::GraphProto& graph) {
    auto decoder = engine::recognizeDecoder(graph);
    if (!decoder) return std::nullopt;
    DecoderRunInputs inputs;
    inputs.inputIds = decoder->inputIds;
    inputs.pastSymbol = decoder->pastSymbol;
    for (const auto& entry : decoder->cache) inputs.pasts.push_back({entry.past, entry.pastAxis});
    inputs.positions = decoder->positionIds;
    inputs.useCacheBranch = decoder->useCacheBranch;
    inputs.mask = decoder->attentionMask;
    if (!inputs.mask.empty())
        for (const auto& input : graph.input())
            if (input.name() == inputs.mask && input.type().has_tensor_type()) {
                const auto& dims = input.type().tensor_type().shape().dim();
                inputs.maskAxis = dims.size() - 1;
                if (inputs.maskAxis >= 0 && dims[inputs.maskAxis].has_dim_param())
                    inputs.maskSymbol = dims[inputs.maskAxis].dim_param();
            }
    return inputs;
}

std::int64_t decoderPastLength(const DecoderRunInputs& decoder, const InputChoices& choices) {
    if (decoder.pastSymbol.empty()) return 0;
    auto it = choices.symbols.find(decoder.pastSymbol);
    return it == choices.symbols.end() ? 0 : std::max<std::int64_t>(0, it->second);
}

void applyDecoderRunInputs(const DecoderRunInputs& decoder, InputChoices& choices) {
    const std::int64_t past = decoderPastLength(decoder, choices);
    for (const auto& entry : decoder.pasts)
        choices.symbols[engine::axisBindingKey(entry.input, entry.axis)] = past;
    // The current tokens: input_ids' sequence axis as the choices shape it.
    std::int64_t sequence = 1;
    for (const auto& input : choices.inputs)
        if (input.name == decoder.inputIds && input.type.has_tensor_type()) {
            const engine::Shape shape =
                engine::concreteShape(input.type, choices.symbols, 1, input.name);
            if (!shape.empty()) sequence = shape.back();
        }
    if (!decoder.mask.empty() && decoder.maskAxis >= 0)
        choices.symbols[engine::axisBindingKey(decoder.mask, decoder.maskAxis)] = past + sequence;
    if (!decoder.positions.empty())
        if (auto it = choices.sources.find(decoder.positions);
            it != choices.sources.end() && it->second.kind == InputSource::Kind::Positions)
            it->second.low = static_cast<double>(past);
}

}  // namespace onnxlens::widgets
