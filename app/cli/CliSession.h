#pragma once
// Loading a model and compiling it for the engine, shared by run, compare and bench.
#include <cstdint>
#include <memory>
#include <string>

#include "CliCommon.h"
#include "onnxlens/engine/Session.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/workflows/InputPreparation.h"

namespace onnxlens::cli {

struct LoadedSession {
    // The parsed model's structure (inputs, outputs, nodes, initializer names and dims); the
    // weights themselves live only in the session.
    LoadedModel model;
    std::unique_ptr<engine::Session> session;
    // Integer inputs that index a table, read before the session released the constants' bytes
    // (a OneHot depth needs its value, not only its dims).
    engine::ValueRanges indexRanges;
};

// Throws UsageError (exit 2) with the loader's or compiler's message. `maxTensorBytes` 0 keeps
// the engine's default limit (half of physical memory). A model importing an ai.onnx opset newer
// than the engine and the onnx library know is refused, or with `allowNewerOpset` run with a
// warning on stderr (OpsetSupport.h). `adaptThreads` false keeps the thread count of every run
// (SessionOptions::adaptThreadsToLoad): for figures that must come out the same when rerun.
LoadedSession loadSession(const std::string& modelPath, int threads, bool optimize = true,
                          std::uint64_t maxTensorBytes = 0, bool allowNewerOpset = false,
                          bool adaptThreads = true);

// --max-memory BYTES or N with a K/M/G/T suffix (powers of 1024): the largest tensor the engine
// may allocate. 0 when the option is absent.
std::uint64_t parseMaxMemory(const Arguments& args);

// --dim SYMBOL=N and --dim INPUT:AXIS=N (one axis of one input, unnamed `?` dims included).
engine::SymbolBindings parseDims(const Arguments& args);

// --int-range NAME=LO,HI options: the values random data of integer input NAME takes.
engine::ValueRanges parseIntegerRanges(const Arguments& args);

// Feeds from --input NAME=FILE (files), --dim, --seed N and --int-range (random data for the
// rest; integer inputs that index a table stay inside it).
// Errors name the model (the first positional argument).
std::map<std::string, engine::Value> prepareFeedsFromArguments(const LoadedSession& loaded,
                                                               const Arguments& args);

// "float32 [1x3x224x224]"
std::string describeTensor(const engine::Tensor& t);

}  // namespace onnxlens::cli
