#pragma once
// Where each graph input's values come from in the Run panel, as plain data that can be copied
// to a worker thread and materialized there: seeded random data in a range, zeros, ones, a .pb /
// .npy file, an image, or positions (a decoder's position ids). A test_data_set_* folder sets every
// input to its File source.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "onnxlens/engine/Session.h"
#include "onnxlens/engine/Value.h"
#include "onnxlens/workflows/DynamicAxesCheck.h"
#include "onnxlens/workflows/InputPreparation.h"
#include "widgets/panels/ImageInput.h"

namespace onnxlens::widgets {

struct InputSource {
    // Positions: low, low + 1, ... along the last axis (every row the same).
    enum class Kind { Random, Zeros, Ones, File, Image, Positions };
    Kind kind = Kind::Random;
    double low = -1, high = 1;   // Random; Positions: low is the first position
    std::filesystem::path file;  // File, Image
};

// The random range a person expects for a dtype: floats [-1, 1), integers 0..9, bools 50/50.
std::pair<double, double> defaultRandomRange(engine::DataType type);
// "random", "zeros", "ones", "file", "image", "positions"
const char* inputSourceName(InputSource::Kind kind);

// Everything needed to make the feeds of one run.
struct InputChoices {
    std::vector<engine::Session::IoInfo> inputs;  // the session's inputs, in order
    std::map<std::string, InputSource> sources;   // by input name; missing ones are Random
    engine::SymbolBindings symbols;               // unbound symbols are 1
    engine::ValueRanges integerRanges;  // integer inputs that index a table (inferIndexRanges)
    std::uint64_t seed = 0;             // input k uses seed + k
    ImagePreprocessing image;
};

struct PreparedFeeds {
    std::map<std::string, engine::Value> feeds;
    std::map<std::string, std::string> inputErrors;  // input name -> what is wrong with its source
    bool ok() const { return inputErrors.empty(); }
    // One error naming every failed input (for callers without rows to show them on).
    Error combinedError() const;
};

// Reads files and decodes images: call it on a worker thread, never on the GUI thread.
PreparedFeeds prepareInputFeeds(const InputChoices& choices);

// For the dynamic-axes check: the same choices with other symbol values. Inputs whose source
// is a file or an image (fixed shapes) get random data instead.
engine::FeedMaker feedMakerForOtherShapes(const InputChoices& choices);

}  // namespace onnxlens::widgets
