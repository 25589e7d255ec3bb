#pragma once
// Shared by the onnxlens-cli commands: the command-line definitions on CLI11, the parsed
// arguments, exit codes, JSON output.
#include <cstdint>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "onnxlens/model/ModelSummary.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace onnxlens::cli {

// Exit codes of the design: 0 success, 1 the check failed, 2 usage or input error.
enum ExitCode : int { kExitOk = 0, kExitCheckFailed = 1, kExitUsage = 2 };

// Thrown for usage and input errors; main() prints "onnxlens-cli COMMAND: <message>" and exits 2.
class UsageError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// The arguments of one command as CLI11 parsed them: positionals in declaration order, options
// by their long name without the dashes. Asking for an option the command does not declare is a
// programming error (std::logic_error), so every option read is one `--help` describes.
class Arguments {
  public:
    explicit Arguments(const CLI::App& command);

    const std::vector<std::string>& positionals() const { return positionals_; }
    bool flag(const std::string& name) const;
    // The last value given (an option given twice keeps the later one).
    std::optional<std::string> value(const std::string& name) const;
    // Every value of a repeatable option, in order.
    std::vector<std::string> values(const std::string& name) const;
    // The occurrences of the options named in `names`, in command-line order: (name, value),
    // a flag's value empty. For commands whose options act in the order given (`edit`).
    std::vector<std::pair<std::string, std::string>> orderedValues(
        const std::vector<std::string>& names) const;
    // Typed accessors; throw UsageError naming the option on malformed numbers.
    std::int64_t intValue(const std::string& name, std::int64_t fallback) const;
    double doubleValue(const std::string& name, double fallback) const;
    // Exactly `count` positionals or a UsageError with `usage`.
    void requirePositionals(std::size_t count, const std::string& usage) const;

  private:
    const CLI::Option& option(const std::string& name) const;

    const CLI::App& command_;
    std::vector<std::string> positionals_;
};

// Parses "NAME=VALUE" (for --input, --dim); throws UsageError.
std::pair<std::string, std::string> splitAssignment(const std::string& text,
                                                    const std::string& option);

void printJson(const nlohmann::json& document);

// The checker verdict as `check --json` and `info --json` print it.
nlohmann::json checkerJson(const CheckerVerdict& verdict);
// Its lines after the verdict in the text reports (notes, nodes checked by onnxlens's schemas,
// nodes not checked), each prefixed by `indent`.
std::vector<std::string> checkerNoteLines(const CheckerVerdict& verdict);

// A subcommand of `cli` (the command files declare through these helpers, so that only the files
// that parse include the CLI11 header).
CLI::App* addCommand(CLI::App& cli, const std::string& name, const std::string& description);
// Text --help prints after the command's options (how it works, exit codes).
void setCommandFooter(CLI::App& command, const std::string& text);

// Declaring options: `name` is the long name without dashes, `valueName` what --help shows for
// the value (N, FILE, NAME=VALUE...).
CLI::Option* addFlag(CLI::App& command, const std::string& name, const std::string& description);
CLI::Option* addValueOption(CLI::App& command, const std::string& name,
                            const std::string& valueName, const std::string& description);
// Given any number of times, each time with one value.
CLI::Option* addRepeatedOption(CLI::App& command, const std::string& name,
                               const std::string& valueName, const std::string& description);
// A positional argument; `required` ones are checked by the parser, `many` takes one or more.
CLI::Option* addPositional(CLI::App& command, const std::string& name,
                           const std::string& description, bool required = true, bool many = false);

// Option groups several commands share, with one description each.
void addJsonFlag(CLI::App& command, const std::string& description);
void addThreadsOption(CLI::App& command);
void addDimOption(CLI::App& command);
void addIntRangeOption(CLI::App& command);
void addSeedOption(CLI::App& command);
// --threads, --max-memory, --no-optimize, --allow-newer-opset: how the engine loads the model.
void addSessionOptions(CLI::App& command);
// --input, --dim, --int-range, --seed: the data the model runs on.
void addFeedOptions(CLI::App& command);

// A command: its CLI11 subcommand (options and help text) and the function that runs it.
struct Command {
    CLI::App* app = nullptr;
    int (*run)(const Arguments&) = nullptr;
};

// Each adds its subcommand to the onnxlens-cli app.
Command addInfoCommand(CLI::App& cli);
Command addCheckCommand(CLI::App& cli);
Command addRunCommand(CLI::App& cli);
Command addCompareCommand(CLI::App& cli);
Command addBenchCommand(CLI::App& cli);
Command addConformanceCommand(CLI::App& cli);
Command addRenderCommand(CLI::App& cli);
Command addCostCommand(CLI::App& cli);
Command addOptimizeCommand(CLI::App& cli);
Command addExportCommand(CLI::App& cli);
Command addQuantizeCommand(CLI::App& cli);
Command addDiffCommand(CLI::App& cli);
Command addGenerateCommand(CLI::App& cli);
Command addEditCommand(CLI::App& cli);

}  // namespace onnxlens::cli
