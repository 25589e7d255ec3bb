#include "onnxlens/model/ModelLoader.h"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/unknown_field_set.h>
#include <onnx/common/constants.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <deque>
#include <system_error>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "onnxlens/model/ExternalData.h"
#include "onnxlens/model/MicrosoftOpSchemas.h"
#include "onnxlens/model/ShapeInference.h"

namespace onnxlens {

namespace {

namespace fs = std::filesystem;
namespace pbio = google::protobuf::io;

// Real models have ir_version 1..IR_VERSION of the onnx release that wrote them; a value far above
// any released one means the bytes are not an ONNX model.
constexpr std::int64_t kMaxPlausibleIrVersion = 64;
constexpr int kProtobufRecursionLimit = 256;

Status parseModelStream(pbio::ZeroCopyInputStream& stream, onnx::ModelProto& model,
                        const std::string& name) {
    pbio::CodedInputStream coded(&stream);
    // Large models are up to the protobuf format's 2 GB limit. Each subgraph level nests three
    // messages (node, attribute, graph), so protobuf's default recursion limit (100) would refuse
    // models well within LoadLimits::maxNestingDepth with a vague parse error; this limit lets the
    // structural check name the nesting, and still stops hostile files before the stack runs out.
    coded.SetTotalBytesLimit(INT_MAX);
    coded.SetRecursionLimit(kProtobufRecursionLimit);
    if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
        return makeError(name,
                         "not a valid ONNX model: the protobuf is truncated or corrupt (or "
                         "nested more than " +
                             std::to_string(kProtobufRecursionLimit) + " messages deep)");
    return Ok{};
}

bool hasUnknownFields(const google::protobuf::Message& message) {
    return !message.GetReflection()->GetUnknownFields(message).empty();
}

// Random bytes sometimes parse as a protobuf; these checks tell an ONNX model from them.
Status checkLooksLikeOnnx(const onnx::ModelProto& model, const std::string& name) {
    if (!model.has_graph()) return makeError(name, "not an ONNX model: the protobuf has no graph");
    if (model.ir_version() < 1 || model.ir_version() > kMaxPlausibleIrVersion)
        return makeError(name, "not an ONNX model: ir_version " +
                                   std::to_string(model.ir_version()) +
                                   " is not a valid ONNX IR version");
    // A model of an IR version this onnx release knows has no fields it does not know; newer
    // models may legitimately carry fields added after it.
    if (model.ir_version() <= onnx::Version::IR_VERSION &&
        (hasUnknownFields(model) || hasUnknownFields(model.graph())))
        return makeError(name,
                         "not an ONNX model: the protobuf has fields ModelProto does not "
                         "define (corrupt data or trailing garbage)");
    return Ok{};
}

Result<LoadedModel> finishParse(std::shared_ptr<onnx::ModelProto> proto, const std::string& name,
                                const fs::path& path, const fs::path& directory,
                                std::uint64_t bytes) {
    // Before any reader of onnx's schema registry (checker, inference, view graph, engine).
    registerMicrosoftOpSchemas();
    auto plausible = checkLooksLikeOnnx(*proto, name);
    if (!plausible) return plausible.error();
    LoadedModel loaded;
    loaded.path = path;
    loaded.directory = directory;
    loaded.fileBytes = bytes;
    loaded.proto = std::move(proto);
    loaded.shapes = std::make_shared<ShapeInferenceCache>();
    return loaded;
}

Status checkModelFiles(const LoadedModel& loaded, const std::string& name,
                       const LoadLimits& limits) {
    auto structure = validateModelStructure(*loaded.proto, name, limits);
    if (!structure) return structure;
    return checkExternalDataLocations(*loaded.proto, loaded.directory, name);
}

// ---- structural validation ----

std::string describeNode(const onnx::NodeProto& node, int index) {
    std::string text =
        node.name().empty() ? "node #" + std::to_string(index) : "node '" + node.name() + "'";
    return text + " (" + node.op_type() + ")";
}

// The names visible in one graph: its inputs, initializers and node outputs, chained to the
// enclosing graph for subgraph bodies.
struct Scope {
    const Scope* parent = nullptr;
    std::unordered_set<std::string> names;
    bool has(const std::string& name) const {
        for (const Scope* s = this; s; s = s->parent)
            if (s->names.count(name)) return true;
        return false;
    }
};

class StructureValidator {
  public:
    StructureValidator(std::string name, const LoadLimits& limits)
        : name_(std::move(name)), limits_(limits) {}

    // Validates `graph`; names it uses from enclosing scopes are added to `freeNames`.
    Status graph(const onnx::GraphProto& graph, const Scope* outer, int depth,
                 const std::string& where, std::unordered_set<std::string>& freeNames) {
        if (depth > limits_.maxNestingDepth)
            return makeError(name_, where + ": subgraphs are nested deeper than " +
                                        std::to_string(limits_.maxNestingDepth) + " levels");
        Scope scope{outer, {}};
        std::unordered_set<std::string> local;
        for (const auto& input : graph.input()) local.insert(input.name());
        for (const auto& init : graph.initializer()) local.insert(init.name());
        for (const auto& sparse : graph.sparse_initializer()) local.insert(sparse.values().name());
        std::unordered_map<std::string, int> producer;
        for (int i = 0; i < graph.node_size(); ++i)
            for (const auto& output : graph.node(i).output())
                if (!output.empty()) producer.emplace(output, i);
        scope.names = local;
        for (const auto& [output, index] : producer) scope.names.insert(output);

        // consumers[i]: the nodes that read an output of node i.
        std::vector<std::vector<int>> consumers(graph.node_size());
        std::vector<int> pending(graph.node_size(), 0);
        for (int i = 0; i < graph.node_size(); ++i) {
            const auto& node = graph.node(i);
            std::unordered_set<std::string> needed(node.input().begin(), node.input().end());
            for (const auto& attribute : node.attribute()) {
                std::vector<const onnx::GraphProto*> bodies;
                if (attribute.has_g()) bodies.push_back(&attribute.g());
                for (const auto& g : attribute.graphs()) bodies.push_back(&g);
                for (const auto* body : bodies) {
                    auto status = this->graph(*body, &scope, depth + 1,
                                              where + ", " + describeNode(node, i) +
                                                  " attribute '" + attribute.name() + "'",
                                              needed);
                    if (!status) return status;
                }
            }
            for (const auto& input : needed) {
                if (input.empty() || local.count(input)) continue;
                if (auto found = producer.find(input); found != producer.end()) {
                    consumers[found->second].push_back(i);
                    ++pending[i];
                } else if (outer && outer->has(input)) {
                    freeNames.insert(input);
                } else {
                    return makeError(name_, where + ": " + describeNode(node, i) +
                                                " reads tensor '" + input +
                                                "', which is not defined (no graph input, "
                                                "initializer or node output has that name)");
                }
            }
        }
        for (const auto& output : graph.output()) {
            if (scope.has(output.name())) {
                if (!local.count(output.name()) && !producer.count(output.name()))
                    freeNames.insert(output.name());
                continue;
            }
            return makeError(name_, where + ": graph output '" + output.name() +
                                        "' is not produced by any node");
        }
        return acyclic(graph, consumers, pending, where);
    }

    Status function(const onnx::FunctionProto& function) {
        onnx::GraphProto body;
        for (const auto& input : function.input()) body.add_input()->set_name(input);
        *body.mutable_node() = function.node();
        for (const auto& output : function.output()) body.add_output()->set_name(output);
        std::unordered_set<std::string> unused;
        return graph(body, nullptr, 0,
                     "function '" + function.domain() + "::" + function.name() + "'", unused);
    }

  private:
    // Kahn's algorithm: nodes left with unmet inputs after every ready node ran are on a cycle.
    Status acyclic(const onnx::GraphProto& graph, const std::vector<std::vector<int>>& consumers,
                   std::vector<int> pending, const std::string& where) {
        std::deque<int> ready;
        for (int i = 0; i < graph.node_size(); ++i)
            if (pending[i] == 0) ready.push_back(i);
        int visited = 0;
        while (!ready.empty()) {
            int i = ready.front();
            ready.pop_front();
            ++visited;
            for (int c : consumers[i])
                if (--pending[c] == 0) ready.push_back(c);
        }
        if (visited == graph.node_size()) return Ok{};
        for (int i = 0; i < graph.node_size(); ++i)
            if (pending[i] > 0)
                return makeError(name_, where + ": the graph has a cycle through " +
                                            describeNode(graph.node(i), i));
        return Ok{};
    }

    std::string name_;
    LoadLimits limits_;
};

}  // namespace

Result<LoadedModel> parseModelFile(const fs::path& path) {
    const std::string name = path.string();
    std::error_code ec;
    auto status = fs::status(path, ec);
    if (ec || !fs::exists(status)) return makeError(name, "no such file");
    if (fs::is_directory(status)) return makeError(name, "is a folder, not an .onnx model file");
    if (!fs::is_regular_file(status)) return makeError(name, "not a regular file");
    const std::uint64_t bytes = fs::file_size(path, ec);
    if (ec) return makeError(name, "cannot read the file size: " + ec.message());
    if (bytes == 0) return makeError(name, "the file is empty");
    if (bytes > static_cast<std::uint64_t>(INT_MAX))
        return makeError(name,
                         "the file is larger than 2 GB, the protobuf limit (models this "
                         "large keep their weights in external data)");
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return makeError(name, std::string("cannot open: ") + std::strerror(errno));
    auto proto = std::make_shared<onnx::ModelProto>();
    Status parsed = Ok{};
    {
        pbio::FileInputStream stream(fd, 1 << 20);
        stream.SetCloseOnDelete(true);
        parsed = parseModelStream(stream, *proto, name);
        if (parsed && stream.GetErrno() != 0)
            parsed =
                makeError(name, std::string("read error: ") + std::strerror(stream.GetErrno()));
    }
    if (!parsed) return parsed.error();
    fs::path directory = path.parent_path();
    if (directory.empty()) directory = ".";
    return finishParse(std::move(proto), name, path, directory, bytes);
}

Result<LoadedModel> loadModel(const fs::path& path, const LoadLimits& limits) {
    auto loaded = parseModelFile(path);
    if (!loaded) return loaded;
    auto checked = checkModelFiles(*loaded, path.string(), limits);
    if (!checked) return checked.error();
    return loaded;
}

Result<LoadedModel> loadModelFromBytes(const std::string& bytes, const std::string& name,
                                       const fs::path& directory, const LoadLimits& limits) {
    if (bytes.empty()) return makeError(name, "the model data is empty");
    if (bytes.size() > static_cast<std::size_t>(INT_MAX))
        return makeError(name, "the model is larger than 2 GB, the protobuf limit");
    auto proto = std::make_shared<onnx::ModelProto>();
    pbio::ArrayInputStream stream(bytes.data(), static_cast<int>(bytes.size()));
    auto parsed = parseModelStream(stream, *proto, name);
    if (!parsed) return parsed.error();
    auto loaded = finishParse(std::move(proto), name, name, directory, bytes.size());
    if (!loaded) return loaded;
    auto checked = checkModelFiles(*loaded, name, limits);
    if (!checked) return checked.error();
    return loaded;
}

Status validateModelStructure(const onnx::ModelProto& model, const std::string& name,
                              const LoadLimits& limits) {
    if (!model.has_graph()) return makeError(name, "not an ONNX model: no graph");
    StructureValidator validator(name, limits);
    std::unordered_set<std::string> freeNames;
    auto status = validator.graph(model.graph(), nullptr, 0, "main graph", freeNames);
    if (!status) return status;
    for (const auto& function : model.functions()) {
        status = validator.function(function);
        if (!status) return status;
    }
    return Ok{};
}

}  // namespace onnxlens
