#pragma once
// Reading .onnx files: protobuf through the onnx library, with structural validation so that a
// model that loads is one the rest of onnxlens can walk without defensive checks.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "onnxlens/model/Result.h"

namespace onnxlens {

class ShapeInferenceCache;

struct LoadedModel {
    std::filesystem::path path;       // as given by the caller
    std::filesystem::path directory;  // folder external data is resolved against
    std::uint64_t fileBytes = 0;
    std::shared_ptr<onnx::ModelProto> proto;
    // Shape inference of `proto` as loaded, run once on first need and shared by the summary, the
    // view graph and the engine's optimizer (ShapeInference.h). Whoever changes `proto` resets it.
    std::shared_ptr<ShapeInferenceCache> shapes;
};

struct LoadLimits {
    int maxNestingDepth = 64;  // If/Loop/Scan bodies inside bodies
};

// Loads and validates a model file: parseModelFile, validateModelStructure, and every external
// data location resolved and checked (see ExternalData.h). External data stays on disk.
Result<LoadedModel> loadModel(const std::filesystem::path& path, const LoadLimits& limits = {});

// Parses serialized model bytes; `name` is used in error messages, `directory` for external data.
Result<LoadedModel> loadModelFromBytes(const std::string& bytes, const std::string& name,
                                       const std::filesystem::path& directory,
                                       const LoadLimits& limits = {});

// Parses a model file without the structural checks (for `check`, which reports them as a
// verdict instead of refusing the file): the file must exist, be a regular non-empty file and
// hold an ONNX ModelProto (a graph, a plausible ir_version, nothing unparsed).
Result<LoadedModel> parseModelFile(const std::filesystem::path& path);

// Structural checks the loader applies: an ONNX model (has a graph), every node input defined
// (graph input, initializer, earlier node output, or an outer scope for subgraphs), no cycles,
// nesting within the limit. Returns the first problem, prefixed with `name`.
Status validateModelStructure(const onnx::ModelProto& model, const std::string& name,
                              const LoadLimits& limits = {});

}  // namespace onnxlens
