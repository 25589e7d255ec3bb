#pragma once
// Loading a model and compiling it for the engine, shared by run, compare and bench.
#include <cstdint>
#include <memory>
#include <string>

#include "CliCommon.h"
#include "onnxlens/workflows/InputPreparation.h"
#include "onnxlens/engine/Session.h"
#include "onnxlens/model/ModelLoader.h"

namespace onnxlens::cli {

struct LoadedSession {
    // The parsed model's structure (inputs, outputs, nodes, initializer names and dims); the
    // weights themselves live only in the session.
    LoadedModel model;
    std::unique_ptr<engine::Session> session;
};

// Throws UsageError (exit 2) with the loader's or compiler's message. `maxTensorBytes` 0 keeps
// the engine's default limit (half of physical memory). A model importing an ai.onnx opset newer
// than the engine and the onnx library know is refused, or with `allowNewerOpset` run with a
// warning on stderr (OpsetSupport.h).
LoadedSession loadSession(const std::string& modelPath, int threads, bool optimize = true,
                          std::uint64_t maxTensorBytes = 0, bool allowNewerOpset = false);

// --max-memory BYTES or N with a K/M/G/T suffix (powers of 1024): the largest tensor the engine
// may allocate. 0 when the option is absent.
std::uint64_t parseMaxMemory(const Arguments& args);

// --dim SYMBOL=N options.
engine::SymbolBindings parseDims(const Arguments& args);

// Feeds from --input NAME=FILE (files), --dim SYMBOL=N and --seed N (random data for the rest).
// Errors name the model (the first positional argument).
std::map<std::string, engine::Value> prepareFeedsFromArguments(const engine::Session& session,
                                                               const Arguments& args);

// "float32 [1x3x224x224]"
std::string describeTensor(const engine::Tensor& t);

}  // namespace onnxlens::cli
