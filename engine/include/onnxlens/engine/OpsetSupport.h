#pragma once
// The newest ai.onnx opset the engine knows. A kernel registered "from version N on" runs the
// semantics of the newest operator version the engine knows; for an opset beyond this one that
// could be silently wrong (an operator changed in an opset nobody here has read), so run,
// compare and bench refuse such models unless told otherwise (--allow-newer-opset).
#include <onnx/onnx_pb.h>

#include <optional>
#include <string>

#include "onnxlens/model/OnnxDomains.h"

namespace onnxlens::engine {

// Every operator change of opsets 18 to 24 is either implemented by a kernel registered with
// its exact version range, or refused: by the registry (no kernel for that version, e.g.
// Attention-24, TensorScatter-24, the string ops), by the kernel (an attribute value it does not
// implement, e.g. Resize antialias) or by the type (float8, int4, float4 tensors). See
// docs/opsets.md for the list.
inline constexpr int kNewestEngineOpset = 24;

// "model.onnx imports ai.onnx opset 99, newer than this build knows (engine: 24, onnx
// library: 17)" when the model's (or a local function's) default-domain opset is beyond both the
// engine's and `libraryOpset`; nullopt otherwise.
inline std::optional<std::string> newerOpsetProblem(const onnx::ModelProto& model, int libraryOpset,
                                                    const std::string& where) {
    const int newestKnown = libraryOpset > kNewestEngineOpset ? libraryOpset : kNewestEngineOpset;
    auto check = [&](const auto& imports) -> std::optional<std::string> {
        for (const auto& o : imports)
            if (isDefaultDomain(o.domain()) && o.version() > newestKnown)
                return where + " imports ai.onnx opset " + std::to_string(o.version()) +
                       ", newer than this build knows (engine: " +
                       std::to_string(kNewestEngineOpset) +
                       ", onnx library: " + std::to_string(libraryOpset) + ")";
        return std::nullopt;
    };
    if (auto problem = check(model.opset_import())) return problem;
    for (const auto& f : model.functions())
        if (auto problem = check(f.opset_import())) return problem;
    return std::nullopt;
}

}  // namespace onnxlens::engine
