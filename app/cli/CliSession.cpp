#include "CliSession.h"

#include <charconv>

namespace onnxlens::cli {

LoadedSession loadSession(const std::string& modelPath, int threads, bool optimize) {
    LoadedSession s;
    auto model = loadModel(modelPath);
    if (!model) throw UsageError(model.error().message);
    s.model = std::move(*model);
    engine::SessionOptions options;
    options.threads = threads;
    options.optimize = optimize;
    auto session = engine::Session::create(s.model, options);
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
            throw UsageError("option --dim " + text + ": '" + value + "' is not a non-negative integer");
        dims[name] = n;
    }
    return dims;
}

std::string describeTensor(const engine::Tensor& t) {
    return std::string(engine::dataTypeName(t.dtype())) + " " + engine::shapeToString(t.shape());
}

}  // namespace onnxlens::cli
