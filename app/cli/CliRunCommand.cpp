// onnxlens-cli run MODEL: runs the engine on given or seeded random inputs.
#include <cmath>
#include <filesystem>
#include <limits>

#include "CliSession.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/TensorFile.h"

namespace onnxlens::cli {

namespace {

struct TensorStats {
    double min = 0, max = 0, mean = 0;
    bool numeric = false;
};

TensorStats statsOf(const engine::Tensor& t) {
    TensorStats s;
    if (t.dtype() == engine::DataType::String || t.numel() == 0 ||
        t.dtype() == engine::DataType::Complex64 || t.dtype() == engine::DataType::Complex128)
        return s;
    s.numeric = true;
    s.min = std::numeric_limits<double>::infinity();
    s.max = -std::numeric_limits<double>::infinity();
    double sum = 0;
    for (std::int64_t i = 0; i < t.numel(); ++i) {
        double v = t.valueAsDouble(i);
        s.min = std::min(s.min, v);
        s.max = std::max(s.max, v);
        sum += v;
    }
    s.mean = sum / static_cast<double>(t.numel());
    return s;
}

nlohmann::json jsonNumber(double v) {
    if (std::isfinite(v)) return v;
    return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
}

int runRun(const Arguments& a) {
    auto loaded =
        loadSession(a.positionals()[0], static_cast<int>(a.intValue("threads", 0)),
                    !a.flag("no-optimize"), parseMaxMemory(a), a.flag("allow-newer-opset"));
    auto feeds = prepareFeedsFromArguments(loaded, a);
    auto outputs = loaded.session->run(feeds);
    if (!outputs) throw UsageError(a.positionals()[0] + ": " + outputs.error().message);

    std::filesystem::path outDir;
    if (auto out = a.value("out")) {
        outDir = *out;
        std::error_code ec;
        std::filesystem::create_directories(outDir, ec);
        if (ec)
            throw UsageError(outDir.string() + ": cannot create the folder (" + ec.message() + ")");
    }
    nlohmann::json doc = {{"model", a.positionals()[0]}, {"outputs", nlohmann::json::array()}};
    const auto& infos = loaded.session->outputs();
    for (std::size_t k = 0; k < outputs->size(); ++k) {
        const engine::Value& value = (*outputs)[k];
        nlohmann::json entry = {{"name", infos[k].name}};
        const bool optionalOutput = infos[k].type.has_optional_type();
        if (optionalOutput) entry["optional"] = true;
        if (value.isTensor()) {
            const auto& t = value.tensor();
            auto s = statsOf(t);
            entry["dtype"] = engine::dataTypeName(t.dtype());
            entry["shape"] = t.shape();
            if (s.numeric) {
                entry["min"] = jsonNumber(s.min);
                entry["max"] = jsonNumber(s.max);
                entry["mean"] = jsonNumber(s.mean);
            }
            if (!a.flag("json")) {
                std::cout << infos[k].name << ": " << describeTensor(t);
                if (s.numeric)
                    std::cout << "  min " << s.min << "  max " << s.max << "  mean " << s.mean;
                std::cout << "\n";
            }
            if (!outDir.empty() && optionalOutput) {
                // Test data stores optional outputs as OptionalProto (no .npy form).
                auto file = outDir / ("output_" + std::to_string(k) + ".pb");
                if (auto st = engine::writeValuePbFile(file, value, infos[k].name, &infos[k].type);
                    !st)
                    throw UsageError(st.error().message);
            } else if (!outDir.empty()) {
                auto proto = engine::tensorToProto(t, infos[k].name);
                auto base = outDir / ("output_" + std::to_string(k));
                if (auto st = writeTensorPbFile(base.string() + ".pb", proto); !st)
                    throw UsageError(st.error().message);
                // numpy has no dtype for bfloat16, float8, 4-bit and e8m0: .pb only.
                if (t.dtype() != engine::DataType::BFloat16 &&
                    t.dtype() != engine::DataType::String && !engine::isLowPrecision(t.dtype()))
                    if (auto st = writeNpyFile(base.string() + ".npy", proto); !st)
                        throw UsageError(st.error().message);
            }
        } else {
            entry["kind"] = value.isSequence()      ? "sequence"
                            : value.isMap()         ? "map"
                            : value.isMapSequence() ? "sequence of maps"
                                                    : "none";
            std::string described = "empty optional";
            if (value.isSequence()) {
                entry["length"] = value.sequence().size();
                described = "sequence of " + std::to_string(value.sequence().size()) + " tensors";
            } else if (value.isMap() || value.isMapSequence()) {
                const std::string types = std::string("map<") +
                                          engine::dataTypeName(value.mapKeyType()) + "," +
                                          engine::dataTypeName(value.mapValueType()) + ">";
                entry["key_type"] = engine::dataTypeName(value.mapKeyType());
                entry["value_type"] = engine::dataTypeName(value.mapValueType());
                if (value.isMap()) {
                    entry["length"] = value.mapKeys().numel();
                    described =
                        types + " of " + std::to_string(value.mapKeys().numel()) + " entries";
                } else {
                    entry["length"] = value.maps().size();
                    described = "sequence of " + std::to_string(value.maps().size()) + " " + types;
                }
            }
            if (!a.flag("json")) std::cout << infos[k].name << ": " << described << "\n";
            if (!outDir.empty()) {  // an empty optional is written as an empty OptionalProto
                auto file = outDir / ("output_" + std::to_string(k) + ".pb");
                if (auto st = engine::writeValuePbFile(file, value, infos[k].name, &infos[k].type);
                    !st)
                    throw UsageError(st.error().message);
            }
        }
        doc["outputs"].push_back(entry);
    }
    if (a.flag("json")) printJson(doc);
    return kExitOk;
}

}  // namespace

Command addRunCommand(CLI::App& cli) {
    CLI::App* command =
        addCommand(cli, "run",
                   "run the model once on given or seeded random inputs and summarize the outputs");
    addPositional(*command, "MODEL", "the ONNX model file");
    addFeedOptions(*command);
    addValueOption(*command, "out", "DIR",
                   "write each output to DIR as output_N.pb (TensorProto) and output_N.npy");
    addSessionOptions(*command);
    addJsonFlag(*command, "print one JSON document instead of the summary");
    return {command, runRun};
}

}  // namespace onnxlens::cli
