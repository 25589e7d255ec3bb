#pragma once
// Shared by the onnxlens-cli commands: argument parsing, exit codes, JSON output.
#include <cstdint>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace onnxlens::cli {

// Exit codes of the design: 0 success, 1 the check failed, 2 usage or input error.
enum ExitCode : int { kExitOk = 0, kExitCheckFailed = 1, kExitUsage = 2 };

// Thrown for usage and input errors; main() prints "onnxlens-cli: <message>" and exits 2.
class UsageError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// A tiny argv parser: positionals, `--flag`, `--key value`, `--key=value`, repeatable keys.
class Arguments {
  public:
    // `valueOptions`: options that take a value; `flagOptions`: options without one.
    Arguments(const std::vector<std::string>& args, const std::vector<std::string>& valueOptions,
              const std::vector<std::string>& flagOptions);

    const std::vector<std::string>& positionals() const { return positionals_; }
    bool flag(const std::string& name) const { return flags_.count(name) > 0; }
    std::optional<std::string> value(const std::string& name) const;
    std::vector<std::string> values(const std::string& name) const;
    // Typed accessors; throw UsageError naming the option on malformed numbers.
    std::int64_t intValue(const std::string& name, std::int64_t fallback) const;
    double doubleValue(const std::string& name, double fallback) const;
    // Exactly `count` positionals or a UsageError with `usage`.
    void requirePositionals(std::size_t count, const std::string& usage) const;

  private:
    std::vector<std::string> positionals_;
    std::map<std::string, std::vector<std::string>> values_;
    std::map<std::string, int> flags_;
};

// Parses "NAME=VALUE" (for --input, --dim); throws UsageError.
std::pair<std::string, std::string> splitAssignment(const std::string& text,
                                                    const std::string& option);

void printJson(const nlohmann::json& document);

// The commands. Each receives the arguments after its name and returns the exit code.
int runInfoCommand(const std::vector<std::string>& args);
int runCheckCommand(const std::vector<std::string>& args);
int runRunCommand(const std::vector<std::string>& args);
int runCompareCommand(const std::vector<std::string>& args);
int runBenchCommand(const std::vector<std::string>& args);
int runConformanceCommand(const std::vector<std::string>& args);
int runRenderCommand(const std::vector<std::string>& args);
int runCostCommand(const std::vector<std::string>& args);
int runOptimizeCommand(const std::vector<std::string>& args);
int runExportCommand(const std::vector<std::string>& args);
int runQuantizeCommand(const std::vector<std::string>& args);
int runDiffCommand(const std::vector<std::string>& args);

}  // namespace onnxlens::cli
