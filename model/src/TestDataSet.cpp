#include "onnxlens/model/TestDataSet.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <system_error>
#include <unordered_set>

namespace onnxlens {

namespace {

namespace fs = std::filesystem;

// "prefix123" -> 123
std::optional<std::uint64_t> numberAfter(const std::string& text, const std::string& prefix) {
    if (text.size() <= prefix.size() || text.compare(0, prefix.size(), prefix) != 0)
        return std::nullopt;
    std::uint64_t value = 0;
    const char* begin = text.data() + prefix.size();
    const char* end = text.data() + text.size();
    auto [stop, ec] = std::from_chars(begin, end, value);
    if (ec != std::errc() || stop != end) return std::nullopt;
    return value;
}

// Collects `stem_K.pb` / `stem_K.npy` into K order; K must run 0..n-1.
Result<std::vector<fs::path>> collectIndexed(
    const std::map<std::uint64_t, std::vector<fs::path>>& files, const fs::path& folder,
    const std::string& stem) {
    std::vector<fs::path> ordered;
    std::uint64_t expected = 0;
    for (const auto& [index, paths] : files) {
        if (index != expected)
            return makeError(folder.string(), stem + "_" + std::to_string(expected) +
                                                  " is missing (found " + stem + "_" +
                                                  std::to_string(index) + ")");
        if (paths.size() > 1)
            return makeError(folder.string(), "both " + paths[0].filename().string() + " and " +
                                                  paths[1].filename().string() + " exist");
        ordered.push_back(paths.front());
        ++expected;
    }
    return ordered;
}

}  // namespace

std::vector<std::string> feedableInputNames(const onnx::GraphProto& graph) {
    std::unordered_set<std::string> initializers;
    for (const auto& init : graph.initializer()) initializers.insert(init.name());
    for (const auto& sparse : graph.sparse_initializer())
        initializers.insert(sparse.values().name());
    std::vector<std::string> names;
    for (const auto& input : graph.input())
        if (!initializers.count(input.name())) names.push_back(input.name());
    return names;
}

Result<TestDataSet> readTestDataSetFolder(const fs::path& folder, const onnx::ModelProto& model) {
    std::error_code ec;
    if (!fs::is_directory(folder, ec)) return makeError(folder.string(), "is not a folder");
    std::map<std::uint64_t, std::vector<fs::path>> inputs, outputs;
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
        const auto extension = entry.path().extension().string();
        if (extension != ".pb" && extension != ".npy") continue;
        const auto stem = entry.path().stem().string();
        if (auto k = numberAfter(stem, "input_"))
            inputs[*k].push_back(entry.path());
        else if (auto k = numberAfter(stem, "output_"))
            outputs[*k].push_back(entry.path());
    }
    if (ec) return makeError(folder.string(), "cannot list the folder: " + ec.message());
    for (auto* files : {&inputs, &outputs})
        for (auto& [index, paths] : *files) std::sort(paths.begin(), paths.end());
    TestDataSet set;
    set.directory = folder;
    auto inputFiles = collectIndexed(inputs, folder, "input");
    if (!inputFiles) return inputFiles.error();
    auto outputFiles = collectIndexed(outputs, folder, "output");
    if (!outputFiles) return outputFiles.error();
    set.inputFiles = std::move(inputFiles.value());
    set.outputFiles = std::move(outputFiles.value());
    const auto inputNames = feedableInputNames(model.graph());
    if (set.inputFiles.size() > inputNames.size())
        return makeError(folder.string(), std::to_string(set.inputFiles.size()) +
                                              " input files but the graph has only " +
                                              std::to_string(inputNames.size()) + " inputs");
    if (set.outputFiles.size() > static_cast<std::size_t>(model.graph().output_size()))
        return makeError(folder.string(), std::to_string(set.outputFiles.size()) +
                                              " output files but the graph has only " +
                                              std::to_string(model.graph().output_size()) +
                                              " outputs");
    set.inputNames.assign(inputNames.begin(),
                          inputNames.begin() + static_cast<std::ptrdiff_t>(set.inputFiles.size()));
    for (std::size_t k = 0; k < set.outputFiles.size(); ++k)
        set.outputNames.push_back(model.graph().output(static_cast<int>(k)).name());
    return set;
}

Result<std::vector<TestDataSet>> discoverTestDataSets(const fs::path& modelPath,
                                                      const onnx::ModelProto& model) {
    fs::path directory = modelPath.parent_path();
    if (directory.empty()) directory = ".";
    std::error_code ec;
    std::vector<std::pair<std::uint64_t, fs::path>> folders;
    for (const auto& entry : fs::directory_iterator(directory, ec)) {
        if (!entry.is_directory()) continue;
        if (auto n = numberAfter(entry.path().filename().string(), "test_data_set_"))
            folders.emplace_back(*n, entry.path());
    }
    if (ec) return makeError(directory.string(), "cannot list the folder: " + ec.message());
    std::sort(folders.begin(), folders.end());
    std::vector<TestDataSet> sets;
    for (const auto& [n, folder] : folders) {
        auto set = readTestDataSetFolder(folder, model);
        if (!set) return set.error();
        sets.push_back(std::move(set.value()));
    }
    return sets;
}

}  // namespace onnxlens
