// onnxlens-cli edit MODEL OUT [edits...]: the model edits of ModelEdits.h from the command line,
// applied in the order given, then saved through the atomic writer (ModelWriter.h).
//
// Saving: OUT is written through a temporary file in its folder renamed over it, so a failed
// save (full disk, read-only folder) leaves every existing file as it was. A model whose weights
// were external, or one over 2 GB, is saved with its weights in a new "OUT.data" beside OUT (the
// source's data file is read through its mapping and never written: the edited model does not
// depend on the files of the original). OUT equal to MODEL needs --force.
#include <algorithm>
#include <filesystem>
#include <set>

#include "CliCommon.h"
#include "onnxlens/model/ExternalData.h"
#include "onnxlens/model/ModelEdits.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/ModelWriter.h"
#include "onnxlens/model/NodeNames.h"
#include "onnxlens/workflows/EditScript.h"

namespace onnxlens::cli {

namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kEditOptions = {
    "set-dim",       "make-batch-dynamic", "rename", "add-output", "remove-output",
    "extract-input", "extract-output",     "delete", "set-attr",   "set-initializer",
    "opset",         "metadata",           "prune",  "script"};

// What the model names, for reading option values that could split more than one way.
struct ModelNames {
    std::set<std::string> values, nodes, inputsOutputs, initializers;
    explicit ModelNames(const onnx::ModelProto& model) {
        const auto& g = model.graph();
        for (const auto& v : g.input()) inputsOutputs.insert(v.name());
        for (const auto& v : g.output()) inputsOutputs.insert(v.name());
        for (const auto& t : g.initializer()) initializers.insert(t.name());
        values = inputsOutputs;
        values.insert(initializers.begin(), initializers.end());
        for (const auto& n : g.node()) {
            nodes.insert(n.name().empty() ? profileNameOf(n) : n.name());
            for (const auto& o : n.output()) values.insert(o);
            for (const auto& i : n.input()) values.insert(i);
        }
    }
};

bool isInteger(const std::string& text) {
    std::size_t start = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
    return text.size() > start && std::all_of(text.begin() + static_cast<long>(start), text.end(),
                                              [](char c) { return c >= '0' && c <= '9'; });
}

bool isIdentifier(const std::string& text) {
    if (text.empty() || std::isdigit(static_cast<unsigned char>(text[0]))) return false;
    return std::all_of(text.begin(), text.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
}

// Picks one of the readings of an option's value: those naming something the model has win; one
// reading left is taken, several are ambiguous.
template <class Reading>
Reading choose(const std::string& option, const std::string& text,
               const std::vector<Reading>& readings, const std::vector<bool>& known) {
    if (readings.empty()) throw UsageError("option --" + option + ": cannot read '" + text + "'");
    std::vector<std::size_t> good;
    for (std::size_t i = 0; i < readings.size(); ++i)
        if (known[i]) good.push_back(i);
    if (good.size() == 1) return readings[good[0]];
    if (good.empty() && readings.size() == 1) return readings[0];
    if (good.empty()) return readings.back();  // names the model lacks: the edit says which
    throw UsageError("option --" + option + ": '" + text +
                     "' can be read more than one way; use --script to spell the edit out");
}

ModelEdit parseSetDim(const std::string& text, const ModelNames& names) {
    struct R {
        std::string tensor, axis, value;
    };
    std::vector<R> readings;
    std::vector<bool> known;
    for (std::size_t eq = text.find('='); eq != std::string::npos; eq = text.find('=', eq + 1)) {
        const std::string left = text.substr(0, eq);
        const auto colon = left.rfind(':');
        if (colon == std::string::npos || colon == 0) continue;
        const std::string axis = left.substr(colon + 1);
        if (!isInteger(axis) || axis.size() > 18) continue;
        readings.push_back({left.substr(0, colon), axis, text.substr(eq + 1)});
        known.push_back(names.inputsOutputs.count(left.substr(0, colon)) > 0);
    }
    if (readings.empty())
        throw UsageError("option --set-dim: expected INPUT:AXIS=N or INPUT:AXIS=SYMBOL, got '" +
                         text + "'");
    const R r = choose("set-dim", text, readings, known);
    return setDimEdit(r.tensor, std::stoll(r.axis), r.value);
}

// NAME=VALUE where NAME should be in `known`.
std::pair<std::string, std::string> splitKnown(const std::string& option, const std::string& text,
                                               const std::set<std::string>& knownNames) {
    std::vector<std::pair<std::string, std::string>> readings;
    std::vector<bool> known;
    for (std::size_t eq = text.find('='); eq != std::string::npos; eq = text.find('=', eq + 1)) {
        if (eq == 0) continue;
        readings.emplace_back(text.substr(0, eq), text.substr(eq + 1));
        known.push_back(knownNames.count(text.substr(0, eq)) > 0);
    }
    if (readings.empty())
        throw UsageError("option --" + option + ": expected NAME=VALUE, got '" + text + "'");
    return choose(option, text, readings, known);
}

ModelEdit parseSetAttr(const std::string& text, const ModelNames& names) {
    struct R {
        std::string node, attribute, value;
    };
    std::vector<R> readings;
    std::vector<bool> known;
    for (std::size_t dot = text.find('.'); dot != std::string::npos;
         dot = text.find('.', dot + 1)) {
        const auto eq = text.find('=', dot + 1);
        if (eq == std::string::npos || dot == 0) continue;
        const std::string attribute = text.substr(dot + 1, eq - dot - 1);
        if (!isIdentifier(attribute)) continue;
        readings.push_back({text.substr(0, dot), attribute, text.substr(eq + 1)});
        known.push_back(names.nodes.count(text.substr(0, dot)) > 0);
    }
    if (readings.empty())
        throw UsageError("option --set-attr: expected NODE.ATTRIBUTE=VALUE, got '" + text + "'");
    const R r = choose("set-attr", text, readings, known);
    return setAttributeEdit(r.node, r.attribute, r.value);
}

// The edits of the command line, in order; --extract-input/--extract-output gather into one
// extract edit at the place of the first of them.
std::vector<ModelEdit> editsFromArguments(const Arguments& a, const onnx::ModelProto& model) {
    const ModelNames names(model);
    std::vector<ModelEdit> edits;
    int extractIndex = -1;
    const std::string symbol = a.value("batch-symbol").value_or("batch");
    for (const auto& [option, value] : a.orderedValues(kEditOptions)) {
        if (option == "set-dim") {
            edits.push_back(parseSetDim(value, names));
        } else if (option == "make-batch-dynamic") {
            edits.push_back(makeBatchDynamicEdit(symbol));
        } else if (option == "rename") {
            std::set<std::string> known = names.values;
            known.insert(names.nodes.begin(), names.nodes.end());
            auto [from, to] = splitKnown("rename", value, known);
            edits.push_back(renameEdit(from, to));
        } else if (option == "add-output") {
            edits.push_back(addOutputEdit(value));
        } else if (option == "remove-output") {
            edits.push_back(removeOutputEdit(value));
        } else if (option == "extract-input" || option == "extract-output") {
            if (extractIndex < 0) {
                extractIndex = static_cast<int>(edits.size());
                edits.push_back(extractEdit({}, {}));
            }
            auto& e = edits[static_cast<std::size_t>(extractIndex)];
            (option == "extract-input" ? e.inputs : e.outputs).push_back(value);
        } else if (option == "delete") {
            edits.push_back(deleteNodeEdit(value));
        } else if (option == "set-attr") {
            edits.push_back(parseSetAttr(value, names));
        } else if (option == "set-initializer") {
            auto [name, file] = splitKnown("set-initializer", value, names.initializers);
            edits.push_back(setInitializerEdit(name, fs::path(file)));
        } else if (option == "opset") {
            if (!isInteger(value) || value.size() > 6)
                throw UsageError("option --opset: '" + value + "' is not an opset version");
            edits.push_back(convertOpsetEdit(std::stoi(value)));
        } else if (option == "metadata") {
            auto [key, text] = splitAssignment(value, "metadata");
            edits.push_back(setMetadataEdit(key, text));
        } else if (option == "prune") {
            edits.push_back(pruneEdit());
        } else if (option == "script") {
            auto script = engine::readEditScriptFile(value);
            if (!script) throw UsageError(script.error().message);
            edits.insert(edits.end(), script->begin(), script->end());
        }
    }
    if (extractIndex >= 0 && edits[static_cast<std::size_t>(extractIndex)].outputs.empty())
        throw UsageError("--extract-input needs at least one --extract-output");
    return edits;
}

bool sameFile(const fs::path& a, const fs::path& b) {
    std::error_code ec;
    if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
    return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}

bool hasExternalData(const onnx::ModelProto& model) {
    for (const auto& t : model.graph().initializer())
        if (usesExternalData(t)) return true;
    return false;
}

int runEdit(const Arguments& a) {
    a.requirePositionals(2, "onnxlens-cli edit MODEL OUT [edit options, applied in order]");
    const std::string input = a.positionals()[0], output = a.positionals()[1];
    const bool dryRun = a.flag("dry-run"), json = a.flag("json");
    if (!dryRun && sameFile(input, output) && !a.flag("force"))
        throw UsageError(output + ": OUT is the model itself; give --force to overwrite it");
    auto loaded = loadModel(input);
    if (!loaded) throw UsageError(loaded.error().message);
    onnx::ModelProto& model = *loaded->proto;
    const bool external = hasExternalData(model);
    const auto edits = editsFromArguments(a, model);
    if (edits.empty() && !a.flag("cleanup"))
        throw UsageError("no edit given (--set-dim, --rename, --script, ...: see --help)");

    engine::EditScriptOptions options;
    options.editOptions.baseDirectory = fs::current_path();
    options.cleanup = a.flag("cleanup");
    options.dryRun = dryRun;
    const auto result = engine::applyEditScript(model, edits, options);

    nlohmann::json doc = {{"input", input},
                          {"output", output},
                          {"dry_run", dryRun},
                          {"edits", nlohmann::json::array()}};
    for (const auto& report : result.reports)
        doc["edits"].push_back({{"description", report.description},
                                {"changes", report.changes},
                                {"nodes_removed", report.nodesRemoved},
                                {"nodes_added", report.nodesAdded},
                                {"initializers_removed", report.initializersRemoved}});
    if (!json)
        for (std::size_t i = 0; i < result.reports.size(); ++i) {
            std::cout << (dryRun ? "would " : "") << i + 1 << ". " << result.reports[i].description
                      << "\n";
            for (const auto& change : result.reports[i].changes)
                std::cout << "     " << change << "\n";
        }
    if (!result.ok()) {
        if (json) {
            doc["error"] = result.error;
            doc["failed_edit"] = result.failedIndex + 1;
            printJson(doc);
        }
        throw UsageError(result.error + "; nothing written");
    }
    if (options.cleanup && !dryRun) {
        doc["cleanup"] = {{"rewrites", result.cleanupRewrites}, {"passes", result.cleanupPasses}};
        if (!json) std::cout << "cleanup: " << result.cleanupRewrites << " rewrites\n";
    }
    int exitCode = kExitOk;
    const bool madeDynamic = std::any_of(edits.begin(), edits.end(), [](const ModelEdit& e) {
        return e.kind == ModelEditKind::MakeBatchDynamic;
    });
    if (madeDynamic && !dryRun && !a.flag("no-verify")) {
        std::string symbol = a.value("batch-symbol").value_or("batch");
        for (const auto& e : edits)
            if (e.kind == ModelEditKind::MakeBatchDynamic) symbol = e.value;
        auto check = engine::verifyDynamicBatch(model, loaded->directory, symbol, 4);
        nlohmann::json batch = {{"symbol", symbol}, {"batch", 4}};
        if (!check) {
            batch["error"] = check.error().message;
            if (!json) std::cout << "batch check: not run (" << check.error().message << ")\n";
        } else {
            batch["ran"] = check->ran;
            batch["error"] = check->error;
            batch["max_abs_difference"] = check->maxAbsDifference;
            batch["outputs"] = check->outputs;
            batch["passed"] = check->passed();
            if (!json) {
                if (check->ran)
                    std::cout << "batch check: batch 4 against each sample alone, max abs "
                                 "difference "
                              << check->maxAbsDifference << " over " << check->outputs.size()
                              << " outputs: " << (check->passed() ? "pass" : "FAIL") << "\n";
                else
                    std::cout << "batch check: FAIL (" << check->error << ")\n";
            }
            if (!check->passed()) {
                doc["batch_check"] = batch;
                if (json) printJson(doc);
                std::cerr << "onnxlens-cli edit: the batch check failed; nothing written "
                             "(--no-verify saves anyway)\n";
                return kExitCheckFailed;
            }
        }
        doc["batch_check"] = batch;
    }
    if (dryRun) {
        if (json)
            printJson(doc);
        else
            std::cout << "dry run: nothing written\n";
        return exitCode;
    }
    ModelWriteOptions writeOptions;
    writeOptions.sourceDirectory = loaded->directory;
    writeOptions.forceExternalData = external;
    auto written = writeModelFile(model, output, writeOptions);
    if (!written)
        throw UsageError("saving failed, every existing file is as it was: " +
                         written.error().message);
    doc["written"] = {{"file", written->file.string()},
                      {"external_data_file", written->externalDataFile.string()},
                      {"model_bytes", written->modelBytes},
                      {"external_bytes", written->externalBytes}};
    if (json) {
        printJson(doc);
    } else {
        std::cout << "wrote " << output << " (" << written->modelBytes << " bytes";
        if (!written->externalDataFile.empty())
            std::cout << ", weights in " << written->externalDataFile.string() << ": "
                      << written->externalBytes << " bytes";
        std::cout << ")\n";
    }
    return exitCode;
}

}  // namespace

Command addEditCommand(CLI::App& cli) {
    CLI::App* command = addCommand(
        cli, "edit",
        "edit a model (dims, names, outputs, extraction, nodes, attributes, opset) and save it");
    addPositional(*command, "MODEL", "the ONNX model file", false);
    addPositional(*command, "OUT", "the edited model to write (.onnx)", false);
    addRepeatedOption(*command, "set-dim", "INPUT:AXIS=N|SYMBOL",
                      "fix an input's or output's dim to N > 0 or make it the symbol");
    addFlag(*command, "make-batch-dynamic",
            "make dim 0 symbolic and repair the Reshape/Expand/ConstantOfShape/Tile constants "
            "that bake the exported batch; then run batch 4 against each sample alone");
    addValueOption(*command, "batch-symbol", "NAME",
                   "the symbol of --make-batch-dynamic (default: batch)");
    addFlag(*command, "no-verify", "save after --make-batch-dynamic without the batch check");
    addRepeatedOption(*command, "rename", "OLD=NEW",
                      "rename a tensor, input, output or node (subgraphs included)");
    addRepeatedOption(*command, "add-output", "TENSOR", "make any tensor a graph output");
    addRepeatedOption(*command, "remove-output", "NAME", "remove a graph output");
    addRepeatedOption(*command, "extract-input", "TENSOR",
                      "with --extract-output: keep the subgraph between these tensors");
    addRepeatedOption(*command, "extract-output", "TENSOR",
                      "an output of the extracted subgraph (onnx.utils.extract_model)");
    addRepeatedOption(*command, "delete", "NODE",
                      "delete a node: bypassed when an input has its output's type and shape, "
                      "else cut with what follows it");
    addRepeatedOption(*command, "set-attr", "NODE.ATTR=VALUE",
                      "set an attribute, checked against the operator's schema (lists as [1,2])");
    addRepeatedOption(
        *command, "set-initializer", "NAME=FILE",
        "replace an initializer's data from a .npy or .pb of the same type and shape");
    addRepeatedOption(*command, "opset", "N", "convert to ai.onnx opset N (onnx's converter)");
    addRepeatedOption(*command, "metadata", "KEY=VALUE",
                      "set metadata_props (doc_string, producer_name, producer_version, domain "
                      "set those fields; an empty VALUE removes the entry)");
    addFlag(*command, "prune", "remove dead nodes and unused initializers (in order)");
    addRepeatedOption(*command, "script", "EDITS.json",
                      "apply the edits of a JSON edit script (the window's edit history)");
    addFlag(*command, "cleanup",
            "after the edits: the optimizer's cleanup passes (identity elimination, constant "
            "folding), never fusions");
    addFlag(*command, "dry-run", "print what would change and write nothing");
    addFlag(*command, "force", "allow OUT to be MODEL itself");
    addJsonFlag(*command, "print what was done as one JSON document");
    setCommandFooter(*command,
                     "The edit options apply in the order given. Names may hold ':', '.' and "
                     "'=': the reading that names something in the model is taken. A failed "
                     "edit writes nothing (exit 2); a failed batch check exits 1.");
    return {command, runEdit};
}

}  // namespace onnxlens::cli
