#include "onnxlens/workflows/EditScript.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/engine/Kernel.h"
#include "onnxlens/engine/KernelRegistry.h"
#include "onnxlens/engine/Session.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/ModelWriter.h"
#include "onnxlens/model/OnnxDomains.h"
#include "onnxlens/model/ShapeInference.h"
#include "onnxlens/model/StructuralCopy.h"
#include "onnxlens/workflows/InputPreparation.h"

namespace onnxlens::engine {

using nlohmann::json;

namespace {

const char* renameTargetName(RenameTarget target) {
    switch (target) {
        case RenameTarget::Tensor:
            return "tensor";
        case RenameTarget::Node:
            return "node";
        case RenameTarget::Auto:
            break;
    }
    return "auto";
}

// The keys each kind reads besides "op".
const std::set<std::string>& keysOf(ModelEditKind kind) {
    static const std::map<ModelEditKind, std::set<std::string>> keys = {
        {ModelEditKind::SetDim, {"tensor", "axis", "value"}},
        {ModelEditKind::MakeBatchDynamic, {"symbol"}},
        {ModelEditKind::Rename, {"from", "to", "target"}},
        {ModelEditKind::AddOutput, {"tensor"}},
        {ModelEditKind::RemoveOutput, {"tensor"}},
        {ModelEditKind::Prune, {}},
        {ModelEditKind::Extract, {"inputs", "outputs"}},
        {ModelEditKind::DeleteNode, {"node"}},
        {ModelEditKind::SetAttribute, {"node", "attribute", "value"}},
        {ModelEditKind::SetInitializer, {"initializer", "file"}},
        {ModelEditKind::SetMetadata, {"key", "value"}},
        {ModelEditKind::ConvertOpset, {"version"}},
    };
    return keys.at(kind);
}

}  // namespace

json modelEditToJson(const ModelEdit& edit) {
    json j;
    j["op"] = edit.kindName();
    switch (edit.kind) {
        case ModelEditKind::SetDim:
            j["tensor"] = edit.name;
            j["axis"] = edit.axis;
            j["value"] = edit.value;
            break;
        case ModelEditKind::MakeBatchDynamic:
            j["symbol"] = edit.value;
            break;
        case ModelEditKind::Rename:
            j["from"] = edit.name;
            j["to"] = edit.value;
            j["target"] = renameTargetName(edit.renameTarget);
            break;
        case ModelEditKind::AddOutput:
        case ModelEditKind::RemoveOutput:
            j["tensor"] = edit.name;
            break;
        case ModelEditKind::Prune:
            break;
        case ModelEditKind::Extract:
            j["inputs"] = edit.inputs;
            j["outputs"] = edit.outputs;
            break;
        case ModelEditKind::DeleteNode:
            j["node"] = edit.name;
            break;
        case ModelEditKind::SetAttribute:
            j["node"] = edit.name;
            j["attribute"] = edit.attribute;
            j["value"] = edit.value;
            break;
        case ModelEditKind::SetInitializer:
            j["initializer"] = edit.name;
            j["file"] = edit.file.string();
            break;
        case ModelEditKind::SetMetadata:
            j["key"] = edit.name;
            j["value"] = edit.value;
            break;
        case ModelEditKind::ConvertOpset:
            j["version"] = edit.opset;
            break;
    }
    return j;
}

Result<ModelEdit> modelEditFromJson(const json& j, const std::string& where) {
    if (!j.is_object()) return makeError(where, "an edit must be a JSON object");
    if (!j.contains("op") || !j["op"].is_string())
        return makeError(where, "no \"op\" naming the edit");
    ModelEdit edit;
    const std::string op = j["op"].get<std::string>();
    if (!parseModelEditKind(op, edit.kind))
        return makeError(where, "unknown op \"" + op +
                                    "\" (set-dim, make-batch-dynamic, rename, add-output, "
                                    "remove-output, prune, extract, delete-node, set-attr, "
                                    "set-initializer, metadata, opset)");
    const auto& keys = keysOf(edit.kind);
    for (const auto& [key, _] : j.items())
        if (key != "op" && !keys.count(key))
            return makeError(where, op + " has no key \"" + key + "\"");
    auto text = [&](const char* key, std::string& out, bool required) -> Status {
        if (!j.contains(key)) {
            if (required) return makeError(where, op + " needs \"" + key + "\"");
            return Ok{};
        }
        if (j[key].is_string())
            out = j[key].get<std::string>();
        else if (j[key].is_number_integer())
            out = std::to_string(j[key].get<std::int64_t>());
        else if (j[key].is_number())
            out = j[key].dump();
        else if (j[key].is_array() && edit.kind == ModelEditKind::SetAttribute)
            out = j[key].dump();
        else
            return makeError(where, "\"" + std::string(key) + "\" must be a string");
        return Ok{};
    };
    auto integer = [&](const char* key, std::int64_t& out) -> Status {
        if (!j.contains(key) || !j[key].is_number_integer())
            return makeError(where, op + " needs an integer \"" + key + "\"");
        out = j[key].get<std::int64_t>();
        return Ok{};
    };
    auto list = [&](const char* key, std::vector<std::string>& out) -> Status {
        if (!j.contains(key)) return Ok{};
        if (!j[key].is_array())
            return makeError(where, "\"" + std::string(key) + "\" must be a list");
        for (const auto& item : j[key]) {
            if (!item.is_string())
                return makeError(where, "\"" + std::string(key) + "\" must list names");
            out.push_back(item.get<std::string>());
        }
        return Ok{};
    };
    Status status = Ok{};
    auto all = [&](std::initializer_list<Status> statuses) {
        for (const auto& s : statuses)
            if (!s) return s;
        return Status(Ok{});
    };
    switch (edit.kind) {
        case ModelEditKind::SetDim:
            status = all({text("tensor", edit.name, true), integer("axis", edit.axis),
                          text("value", edit.value, true)});
            break;
        case ModelEditKind::MakeBatchDynamic:
            edit.value = "batch";
            status = text("symbol", edit.value, false);
            break;
        case ModelEditKind::Rename: {
            std::string target = "auto";
            status = all({text("from", edit.name, true), text("to", edit.value, true),
                          text("target", target, false)});
            if (status) {
                if (target == "tensor")
                    edit.renameTarget = RenameTarget::Tensor;
                else if (target == "node")
                    edit.renameTarget = RenameTarget::Node;
                else if (target != "auto")
                    status = makeError(where, "\"target\" is auto, tensor or node, not " + target);
            }
            break;
        }
        case ModelEditKind::AddOutput:
        case ModelEditKind::RemoveOutput:
            status = text("tensor", edit.name, true);
            break;
        case ModelEditKind::Prune:
            break;
        case ModelEditKind::Extract:
            status = all({list("inputs", edit.inputs), list("outputs", edit.outputs)});
            if (status && edit.outputs.empty())
                status = makeError(where, "extract needs \"outputs\"");
            break;
        case ModelEditKind::DeleteNode:
            status = text("node", edit.name, true);
            break;
        case ModelEditKind::SetAttribute:
            status = all({text("node", edit.name, true), text("attribute", edit.attribute, true),
                          text("value", edit.value, true)});
            break;
        case ModelEditKind::SetInitializer: {
            std::string file;
            status = all({text("initializer", edit.name, true), text("file", file, true)});
            edit.file = file;
            break;
        }
        case ModelEditKind::SetMetadata:
            status = all({text("key", edit.name, true), text("value", edit.value, false)});
            break;
        case ModelEditKind::ConvertOpset: {
            std::int64_t version = 0;
            status = integer("version", version);
            if (status && (version < 1 || version > 1000))
                status = makeError(where,
                                   "opset version " + std::to_string(version) + " is out of range");
            edit.opset = static_cast<int>(version);
            break;
        }
    }
    if (!status) return status.error();
    return edit;
}

Result<std::string> editScriptToJson(const std::vector<ModelEdit>& edits) {
    json list = json::array();
    for (std::size_t i = 0; i < edits.size(); ++i) {
        if (edits[i].kind == ModelEditKind::SetInitializer && edits[i].tensor &&
            edits[i].file.empty())
            return makeError("edit " + std::to_string(i + 1),
                             "set-initializer from a tensor in memory has no file to write");
        list.push_back(modelEditToJson(edits[i]));
    }
    return json{{"edits", list}}.dump(2) + "\n";
}

Result<std::vector<ModelEdit>> parseEditScript(const std::string& text,
                                               const std::filesystem::path& baseDirectory) {
    json doc;
    try {
        doc = json::parse(text);
    } catch (const std::exception& e) {
        return makeError("edit script", std::string("not JSON: ") + e.what());
    }
    const json* list = &doc;
    if (doc.is_object()) {
        if (!doc.contains("edits") || !doc["edits"].is_array())
            return makeError("edit script", "expected {\"edits\": [...]} or a list of edits");
        for (const auto& [key, _] : doc.items())
            if (key != "edits") return makeError("edit script", "unknown key \"" + key + "\"");
        list = &doc["edits"];
    } else if (!doc.is_array()) {
        return makeError("edit script", "expected {\"edits\": [...]} or a list of edits");
    }
    std::vector<ModelEdit> edits;
    for (std::size_t i = 0; i < list->size(); ++i) {
        auto edit = modelEditFromJson((*list)[i], "edit " + std::to_string(i + 1));
        if (!edit) return edit.error();
        if (edit->kind == ModelEditKind::SetInitializer && edit->file.is_relative() &&
            !baseDirectory.empty())
            edit->file = baseDirectory / edit->file;
        edits.push_back(std::move(*edit));
    }
    return edits;
}

Result<std::vector<ModelEdit>> readEditScriptFile(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return makeError(file.string(), "cannot read the edit script");
    std::stringstream text;
    text << in.rdbuf();
    auto edits = parseEditScript(text.str(), file.parent_path());
    if (!edits) return makeError(file.string(), edits.error().message);
    return edits;
}

Status writeEditScriptFile(const std::filesystem::path& file, const std::vector<ModelEdit>& edits) {
    auto text = editScriptToJson(edits);
    if (!text) return text.error();
    return writeFileAtomically(file, *text);
}

Status checkNodeWithEngineKernel(const onnx::ModelProto& model, const onnx::NodeProto& node) {
    for (const auto& a : node.attribute())
        if (a.has_g() || a.graphs_size() > 0) return Ok{};
    const std::string domain = isDefaultDomain(node.domain()) ? "" : node.domain();
    const int opset = opsetVersion(model, domain, domain.empty() ? 1 : 0);
    const KernelFactory* factory = KernelRegistry::global().find(domain, node.op_type(), opset);
    if (!factory) return Ok{};
    try {
        const NodeInfo info(node, opset,
                            [](const onnx::GraphProto&) -> std::shared_ptr<CompiledGraph> {
                                throw EngineError("no subgraph to compile");
                            });
        (void)(*factory)(info);
    } catch (const std::exception& e) {
        return makeError("", std::string("the engine refuses it: ") + e.what());
    }
    return Ok{};
}

EditScriptResult applyEditScript(onnx::ModelProto& model, const std::vector<ModelEdit>& edits,
                                 const EditScriptOptions& options) {
    EditScriptResult result;
    ModelEditOptions editOptions = options.editOptions;
    if (!editOptions.checkNode) editOptions.checkNode = checkNodeWithEngineKernel;
    onnx::ModelProto preview;
    if (options.dryRun) preview = copyWithoutBulkData(model, 4096);
    onnx::ModelProto& target = options.dryRun ? preview : model;
    for (std::size_t i = 0; i < edits.size(); ++i) {
        ModelEditReport report;
        auto status = applyModelEdit(target, edits[i], editOptions, &report);
        if (!status) {
            result.failedIndex = static_cast<int>(i);
            result.error = "edit " + std::to_string(i + 1) + " (" + status.error().message + ")";
            return result;
        }
        result.reports.push_back(std::move(report));
    }
    if (options.cleanup && !options.dryRun)
        result.cleanupRewrites =
            cleanupModel(model, options.editOptions.baseDirectory, &result.cleanupPasses);
    return result;
}

int cleanupModel(onnx::ModelProto& model, const std::filesystem::path& modelDirectory,
                 std::vector<std::string>* passesThatChanged) {
    OptimizerOptions options;
    options.passes = {"eliminate-identity", "eliminate-inference-dropout", "fold-constants"};
    const auto report = optimizeModel(model, modelDirectory, options);
    int rewrites = 0;
    for (const auto& pass : report.passes) {
        rewrites += pass.rewrites;
        if (pass.rewrites > 0 && passesThatChanged) passesThatChanged->push_back(pass.pass);
    }
    return rewrites;
}

namespace {

// Item `i` along axis 0, as a tensor of dim 0 = 1.
Tensor itemOf(const Tensor& tensor, std::int64_t i) {
    Shape shape = tensor.shape();
    shape[0] = 1;
    Tensor item(tensor.dtype(), shape);
    const std::int64_t n = item.numel();
    if (tensor.dtype() == DataType::String) {
        std::copy_n(tensor.data<std::string>() + i * n, n, item.data<std::string>());
    } else if (item.byteSize() > 0) {
        std::memcpy(item.raw(), static_cast<const char*>(tensor.raw()) + i * item.byteSize(),
                    item.byteSize());
    }
    return item;
}

}  // namespace

Result<BatchVerification> verifyDynamicBatch(const onnx::ModelProto& model,
                                             const std::filesystem::path& modelDirectory,
                                             const std::string& symbol, std::int64_t batch,
                                             std::int64_t otherDims, std::uint64_t seed) {
    BatchVerification v;
    v.symbol = symbol;
    v.batch = batch;
    if (batch < 1 || batch > 64) return makeError("batch check", "batch must be 1 to 64");
    LoadedModel loaded;
    loaded.directory = modelDirectory;
    loaded.proto = std::make_shared<onnx::ModelProto>(model);
    loaded.shapes = std::make_shared<ShapeInferenceCache>();
    auto session = Session::create(loaded);
    if (!session) return makeError("batch check", session.error().message);
    Session& s = **session;
    SymbolBindings bindings;
    for (const auto& input : s.inputs()) {
        if (!input.type.has_tensor_type()) continue;
        for (const auto& d : input.type.tensor_type().shape().dim())
            if (d.has_dim_param()) bindings[d.dim_param()] = otherDims;
    }
    bindings[symbol] = batch;
    auto feeds = prepareSessionFeeds(s, {}, bindings, seed);
    if (!feeds) return makeError("batch check", feeds.error().message);
    auto full = s.run(*feeds);
    if (!full) {
        v.error = "batch " + std::to_string(batch) + ": " + full.error().message;
        return v;
    }
    std::vector<bool> batched(s.outputs().size(), false);
    for (std::size_t o = 0; o < s.outputs().size(); ++o) {
        const Value& value = (*full)[o];
        batched[o] = value.isTensor() && value.tensor().rank() >= 1 &&
                     value.tensor().dim(0) == batch && value.tensor().dtype() != DataType::String;
        if (batched[o]) v.outputs.push_back(s.outputs()[o].name);
    }
    try {
        for (std::int64_t i = 0; i < batch; ++i) {
            std::map<std::string, Value> single;
            for (const auto& input : s.inputs()) {
                const Value& feed = feeds->at(input.name);
                const auto& dims = input.type.tensor_type().shape().dim();
                const bool isBatched = !dims.empty() && dims[0].dim_param() == symbol &&
                                       feed.isTensor() && feed.tensor().rank() >= 1;
                single[input.name] = isBatched ? Value(itemOf(feed.tensor(), i)) : feed;
            }
            auto one = s.run(single);
            if (!one) {
                v.error = "batch 1, sample " + std::to_string(i) + ": " + one.error().message;
                return v;
            }
            for (std::size_t o = 0; o < batched.size(); ++o) {
                if (!batched[o]) continue;
                const Tensor expected = itemOf((*full)[o].tensor(), i);
                const Value& got = (*one)[o];
                if (!got.isTensor() || got.tensor().shape() != expected.shape()) {
                    v.error = "output '" + s.outputs()[o].name + "' of sample " +
                              std::to_string(i) + " has another shape alone than in the batch";
                    return v;
                }
                for (std::int64_t k = 0; k < expected.numel(); ++k) {
                    const double a = got.tensor().valueAsDouble(k);
                    const double b = expected.valueAsDouble(k);
                    const double d = (std::isnan(a) && std::isnan(b)) ? 0.0 : std::fabs(a - b);
                    if (!(d <= v.maxAbsDifference)) {
                        v.maxAbsDifference = std::isnan(d) ? INFINITY : d;
                        v.worstOutput = s.outputs()[o].name;
                    }
                }
            }
        }
    } catch (const std::exception& e) {
        v.error = e.what();
        return v;
    }
    v.ran = true;
    return v;
}

}  // namespace onnxlens::engine
