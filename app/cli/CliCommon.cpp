#include "CliCommon.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <map>

namespace onnxlens::cli {

Arguments::Arguments(const CLI::App& command) : command_(command) {
    for (const CLI::Option* option : command.get_options()) {
        if (!option->get_positional() || !option->get_lnames().empty()) continue;
        for (const auto& value : option->results()) positionals_.push_back(value);
    }
}

const CLI::Option& Arguments::option(const std::string& name) const {
    const CLI::Option* found = command_.get_option_no_throw("--" + name);
    if (!found)
        throw std::logic_error("onnxlens-cli " + command_.get_name() + " reads --" + name +
                               " but does not declare it");
    return *found;
}

bool Arguments::flag(const std::string& name) const { return option(name).count() > 0; }

std::optional<std::string> Arguments::value(const std::string& name) const {
    const auto& results = option(name).results();
    if (results.empty()) return std::nullopt;
    return results.back();
}

std::vector<std::string> Arguments::values(const std::string& name) const {
    return option(name).results();
}

std::vector<std::pair<std::string, std::string>> Arguments::orderedValues(
    const std::vector<std::string>& names) const {
    std::vector<std::pair<std::string, std::string>> ordered;
    std::map<const CLI::Option*, std::size_t> used;
    for (const CLI::Option* occurrence : command_.parse_order()) {
        for (const auto& name : names) {
            const CLI::Option* wanted = &option(name);
            if (wanted != occurrence) continue;
            const std::size_t index = used[wanted]++;
            const auto& results = wanted->results();
            const bool isFlag = wanted->get_type_size() == 0;
            ordered.emplace_back(name, !isFlag && index < results.size() ? results[index] : "");
        }
    }
    return ordered;
}

std::int64_t Arguments::intValue(const std::string& name, std::int64_t fallback) const {
    auto text = value(name);
    if (!text) return fallback;
    std::int64_t result = 0;
    auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), result);
    if (ec != std::errc() || ptr != text->data() + text->size())
        throw UsageError("option --" + name + ": '" + *text + "' is not an integer");
    return result;
}

double Arguments::doubleValue(const std::string& name, double fallback) const {
    auto text = value(name);
    if (!text) return fallback;
    try {
        std::size_t used = 0;
        double result = std::stod(*text, &used);
        if (used != text->size()) throw std::invalid_argument("trailing");
        return result;
    } catch (const std::exception&) {
        throw UsageError("option --" + name + ": '" + *text + "' is not a number");
    }
}

void Arguments::requirePositionals(std::size_t count, const std::string& usage) const {
    if (positionals_.size() != count) throw UsageError("usage: " + usage);
}

std::pair<std::string, std::string> splitAssignment(const std::string& text,
                                                    const std::string& option) {
    auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0)
        throw UsageError("option --" + option + ": expected NAME=VALUE, got '" + text + "'");
    return {text.substr(0, eq), text.substr(eq + 1)};
}

nlohmann::json checkerJson(const CheckerVerdict& v) {
    return {{"ok", v.ok},
            {"message", v.message},
            {"note", v.note},
            {"nodes_checked_by_onnxlens", v.nodesCheckedByOnnxlens},
            {"newer_opset_warning", v.newerOpsetWarning},
            {"microsoft_note", v.microsoftNote},
            {"nodes_checked_by_onnxlens_schemas", v.checkedByOnnxlensSchemas},
            {"nodes_not_checked", v.notChecked},
            {"ort_extension_nodes", v.ortExtensionNodes}};
}

std::vector<std::string> checkerNoteLines(const CheckerVerdict& v) {
    std::vector<std::string> lines;
    if (!v.note.empty()) lines.push_back(v.note);
    if (!v.microsoftNote.empty()) lines.push_back(v.microsoftNote);
    return lines;
}

void printJson(const nlohmann::json& document) {
    std::cout << document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

CLI::Option* addFlag(CLI::App& command, const std::string& name, const std::string& description) {
    return command.add_flag("--" + name, description);
}

CLI::Option* addValueOption(CLI::App& command, const std::string& name,
                            const std::string& valueName, const std::string& description) {
    // Values are checked by the command (Arguments::intValue...), which names the option.
    return command.add_option("--" + name, description)->type_name(valueName)->take_last();
}

CLI::Option* addRepeatedOption(CLI::App& command, const std::string& name,
                               const std::string& valueName, const std::string& description) {
    return command.add_option("--" + name, description)
        ->type_name(valueName)
        ->take_all()
        ->description(description + " (repeatable)");
}

CLI::Option* addPositional(CLI::App& command, const std::string& name,
                           const std::string& description, bool required, bool many) {
    CLI::Option* option = command.add_option(name, description)->type_name("");
    if (required) option->required();
    if (many) option->expected(1, -1)->allow_extra_args();  // CLI11 2.3: expected(-1) is "one"
    return option;
}

CLI::App* addCommand(CLI::App& cli, const std::string& name, const std::string& description) {
    return cli.add_subcommand(name, description);
}

void setCommandFooter(CLI::App& command, const std::string& text) { command.footer(text); }

void addJsonFlag(CLI::App& command, const std::string& description) {
    addFlag(command, "json", description);
}

void addThreadsOption(CLI::App& command) {
    addValueOption(command, "threads", "N", "engine threads (default: one per core)");
}

void addDimOption(CLI::App& command) {
    addRepeatedOption(command, "dim", "SYMBOL=N|INPUT:AXIS=N",
                      "the size of a symbolic dim, or of one axis of one input (unnamed dims "
                      "too)");
}

void addIntRangeOption(CLI::App& command) {
    addRepeatedOption(command, "int-range", "NAME=LO,HI",
                      "the values random data of integer input NAME takes");
}

void addSeedOption(CLI::App& command) {
    addValueOption(command, "seed", "N", "seed of the random input data (default 0)");
}

void addSessionOptions(CLI::App& command) {
    addThreadsOption(command);
    addValueOption(command, "max-memory", "BYTES|NK|NM|NG|NT",
                   "the largest tensor the engine may allocate (default: half of the memory)");
    addFlag(command, "no-optimize", "run the graph as written, without the optimizer's passes");
    addFlag(command, "allow-newer-opset",
            "run a model importing an opset newer than the engine knows, as the newest it knows");
}

void addFeedOptions(CLI::App& command) {
    addRepeatedOption(command, "input", "NAME=FILE",
                      "input NAME from a tensor file (.pb TensorProto or .npy); random data for "
                      "the others");
    addDimOption(command);
    addIntRangeOption(command);
    addSeedOption(command);
}

}  // namespace onnxlens::cli
