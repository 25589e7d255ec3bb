#include "CliSession.h"

#include <charconv>
#include <iostream>
#include <limits>
#include <map>

#include "onnxlens/engine/OpsetSupport.h"
#include "onnxlens/engine/TensorByteLimit.h"
#include "onnxlens/model/NewerOpsets.h"
#include "onnxlens/model/StructuralCopy.h"

namespace onnxlens::cli {

LoadedSession loadSession(const std::string& modelPath, int threads, bool optimize,
                          std::uint64_t maxTensorBytes, bool allowNewerOpset, bool adaptThreads) {
    LoadedSession s;
    auto model = loadModel(modelPath);
    if (!model) throw UsageError(model.error().message);
    if (auto problem = engine::newerOpsetProblem(*model->proto, onnxLibraryOpset(), modelPath)) {
        if (!allowNewerOpset)
            throw UsageError(*problem +
                             "; its operators may have changed in ways the engine does not "
                             "implement. Use --allow-newer-opset to run it anyway");
        std::cerr << "warning: " << *problem
                  << "; running it as the newest versions the engine "
                     "knows (--allow-newer-opset)\n";
    }
    // The session takes the parsed model over: the weights live once, in the engine's tensors.
    s.model.path = model->path;
    s.model.directory = model->directory;
    s.model.fileBytes = model->fileBytes;
    // The structure is what the commands read besides the session (names, types, dims).
    s.model.proto = std::make_shared<onnx::ModelProto>(copyStructure(*model->proto));
    s.model.shapes = model->shapes;
    s.indexRanges = engine::inferIndexRanges(model->proto->graph());
    engine::SessionOptions options;
    options.threads = threads;
    options.optimize = optimize;
    options.maxTensorBytes = maxTensorBytes;
    options.adaptThreadsToLoad = adaptThreads;
    auto session = engine::Session::create(std::move(*model), options);
    if (!session) throw UsageError(session.error().message);
    s.session = std::move(*session);
    return s;
}

engine::SymbolBindings parseDims(const Arguments& args) {
    engine::SymbolBindings dims;
    for (const auto& text : args.values("dim")) {
        auto [name, value] = splitAssignment(text, "dim");
        std::int64_t n = 0;
        auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
        if (ec != std::errc() || ptr != value.data() + value.size() || n < 0)
            throw UsageError("option --dim " + text + ": '" + value +
                             "' is not a non-negative integer");
        dims[name] = n;
    }
    return dims;
}

engine::ValueRanges parseIntegerRanges(const Arguments& args) {
    engine::ValueRanges ranges;
    for (const auto& text : args.values("int-range")) {
        auto range = engine::parseIntegerRange(text);
        if (!range) throw UsageError(range.error().message);
        ranges[range->first] = range->second;
    }
    return ranges;
}

std::uint64_t parseMaxMemory(const Arguments& args) {
    const auto text = args.value("max-memory");
    if (!text) return 0;
    const auto bad = [&] {
        return UsageError("option --max-memory " + *text +
                          ": expected a positive number of bytes, optionally with K, M, G or T");
    };
    std::uint64_t n = 0;
    const char* end = text->data() + text->size();
    auto [ptr, ec] = std::from_chars(text->data(), end, n);
    if (ec != std::errc() || n == 0) throw bad();
    int shift = 0;
    if (ptr != end) {
        const std::string suffix(ptr, end);
        static const std::map<std::string, int> shifts = {
            {"K", 10}, {"M", 20}, {"G", 30}, {"T", 40}};
        auto it = shifts.find(suffix);
        if (it == shifts.end()) throw bad();
        shift = it->second;
    }
    if (n > (std::numeric_limits<std::uint64_t>::max() >> shift)) throw bad();
    return n << shift;
}

std::map<std::string, engine::Value> prepareFeedsFromArguments(const LoadedSession& loaded,
                                                               const Arguments& args) {
    const engine::Session& session = *loaded.session;
    std::map<std::string, std::filesystem::path> files;
    for (const auto& text : args.values("input")) {
        auto [name, file] = splitAssignment(text, "input");
        files[name] = file;
    }
    engine::ValueRanges ranges = loaded.indexRanges;
    for (const auto& [name, range] : parseIntegerRanges(args)) ranges[name] = range;
    // Generated inputs obey --max-memory like the session's own tensors.
    const engine::ScopedTensorByteLimit limit(parseMaxMemory(args));
    auto feeds = engine::prepareFeeds(session.inputs(), files, parseDims(args),
                                      static_cast<std::uint64_t>(args.intValue("seed", 0)), ranges);
    // Named after the model too: a generated input has no file of its own to name.
    if (!feeds) {
        const auto& model = args.positionals();
        throw UsageError(model.empty() ? feeds.error().message
                                       : model[0] + ": " + feeds.error().message);
    }
    return std::move(*feeds);
}

std::string describeTensor(const engine::Tensor& t) {
    return std::string(engine::dataTypeName(t.dtype())) + " " + engine::shapeToString(t.shape());
}

}  // namespace onnxlens::cli
