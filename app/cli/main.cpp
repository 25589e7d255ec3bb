// onnxlens-cli: everything onnxlens does that needs no window, for scripts and CI.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <csignal>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "CliCommon.h"
#include "CliCompletion.h"
#include "buildinfo/BuildInfo.h"
#include "onnxlens/engine/ThreadPool.h"

namespace {

using onnxlens::cli::Command;

const char* kProgram = "onnxlens-cli";

// Levenshtein distance, for "did you mean" suggestions.
std::size_t editDistance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
            diagonal = above;
        }
    }
    return row[b.size()];
}

// The candidate nearest to `word`, when it is near enough to be a typo of it.
std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
    std::string best;
    std::size_t bestDistance = std::max<std::size_t>(2, word.size() / 3) + 1;
    for (const auto& candidate : candidates) {
        const std::size_t distance = editDistance(word, candidate);
        const bool prefix = candidate.rfind(word, 0) == 0 && word.size() >= 3;
        if (prefix || distance < bestDistance) {
            best = candidate;
            bestDistance = prefix ? 0 : distance;
        }
    }
    return best;
}

std::vector<std::string> longOptionNames(const CLI::App& app) {
    std::vector<std::string> names;
    for (const CLI::Option* option : app.get_options())
        for (const auto& name : option->get_lnames()) names.push_back("--" + name);
    return names;
}

// "usage: onnxlens-cli bench [OPTIONS] MODEL" from the command's declaration.
std::string usageLine(const CLI::App& command) {
    std::string line = std::string("usage: ") + kProgram + " " + command.get_name() + " [OPTIONS]";
    for (const CLI::Option* option : command.get_options()) {
        if (!option->get_positional() || !option->get_lnames().empty()) continue;
        std::string name = option->get_name();
        if (option->get_expected_max() > 1) name += "...";
        line += " " + (option->get_required() ? name : "[" + name + "]");
    }
    return line;
}

// Options of the command line that the command does not declare, with a suggestion for each.
std::string unknownOptionHints(const CLI::App& command, const std::vector<std::string>& args) {
    std::string hints;
    const auto names = longOptionNames(command);
    for (const auto& arg : args) {
        if (arg == "--") break;
        if (arg.rfind("--", 0) != 0) continue;
        const std::string name = arg.substr(0, arg.find('='));
        if (command.get_option_no_throw(name)) continue;
        const std::string suggestion = closest(name, names);
        if (!suggestion.empty()) hints += "; did you mean " + suggestion + " for " + name + "?";
    }
    return hints;
}

void printTopUsage(std::ostream& out, const CLI::App& cli) {
    out << "usage: " << kProgram << " COMMAND [OPTIONS] [ARGS]\n\ncommands:\n";
    for (const CLI::App* command : cli.get_subcommands({}))
        out << "  " << command->get_name() << std::string(13 - command->get_name().size(), ' ')
            << command->get_description() << "\n";
    out << "\n"
        << kProgram << " COMMAND --help describes a command's options; " << kProgram
        << " --version prints the versions.\n";
}

// `--help-all`: the commands' help in one text, laid out for help2man (the man page is made from
// it): a "NAME command:" heading per command, its description and usage, then one indented line
// per argument and option.
void printAllHelp(const CLI::App& cli) {
    std::cout << cli.help() << "\n";
    for (const CLI::App* command : cli.get_subcommands({})) {
        std::cout << command->get_name() << " command:\n"
                  << "  " << command->get_description() << ".\n\n"
                  << "  " << usageLine(*command) << "\n\n";
        for (const CLI::Option* option : command->get_options()) {
            if (option->get_lnames().empty() && !option->get_positional()) continue;
            if (option == command->get_help_ptr()) continue;
            std::string term = option->get_lnames().empty() ? option->get_name()
                                                            : "--" + option->get_lnames().front();
            if (!option->get_lnames().empty() && option->get_type_size() != 0)
                term += " " + option->get_type_name();
            std::cout << "  " << term << std::string(term.size() < 34 ? 34 - term.size() : 2, ' ')
                      << option->get_description() << "\n";
        }
        std::cout << "\n";
    }
}

}  // namespace

int main(int argc, char** argv) {
    // Before anything else: libgomp must start with bounded spinning (ThreadPool.h).
    onnxlens::engine::boundOpenMpSpinning(argv);
    // The CLI never dies on SIGPIPE (e.g. `onnxlens-cli info m.onnx | head`).
    std::signal(SIGPIPE, SIG_IGN);

    CLI::App cli{
        "onnxlens-cli: inspects, checks, runs, benchmarks, optimizes, quantizes and "
        "exports ONNX models without a window (exit codes: 0 success, 1 a check failed, "
        "2 usage or input error).",
        kProgram};
    cli.get_formatter()->column_width(36);
    cli.require_subcommand(0, 1);
    cli.set_version_flag("--version", onnxlens::buildinfo::versionReport(kProgram),
                         "print the versions onnxlens was built with and exit");
    std::string completionShell;
    cli.add_option("--completion", completionShell, "print the completion script for SHELL")
        ->check(CLI::IsMember({"bash", "zsh"}))
        ->group("");  // hidden: used by the build to write the installed scripts
    bool helpAll = false;
    cli.add_flag("--help-all", helpAll, "print the help of every command")->group("");

    const std::vector<Command> commands = {
        onnxlens::cli::addInfoCommand(cli),     onnxlens::cli::addCheckCommand(cli),
        onnxlens::cli::addRunCommand(cli),      onnxlens::cli::addCompareCommand(cli),
        onnxlens::cli::addBenchCommand(cli),    onnxlens::cli::addConformanceCommand(cli),
        onnxlens::cli::addCostCommand(cli),     onnxlens::cli::addRenderCommand(cli),
        onnxlens::cli::addOptimizeCommand(cli), onnxlens::cli::addQuantizeCommand(cli),
        onnxlens::cli::addExportCommand(cli),   onnxlens::cli::addDiffCommand(cli),
        onnxlens::cli::addGenerateCommand(cli), onnxlens::cli::addEditCommand(cli),
    };
    std::vector<std::string> names;
    for (const auto& command : commands) names.push_back(command.app->get_name());
    // Set after the commands: subcommands inherit the footer of their parent when added.
    cli.footer(std::string(kProgram) + " COMMAND --help describes a command's options.");

    if (argc < 2) {
        printTopUsage(std::cerr, cli);
        return onnxlens::cli::kExitUsage;
    }
    const std::string first = argv[1];
    if (first == "help") {
        printTopUsage(std::cout, cli);
        return onnxlens::cli::kExitOk;
    }
    if (first.empty() || first[0] != '-') {
        if (std::find(names.begin(), names.end(), first) == names.end()) {
            std::cerr << kProgram << ": unknown command '" << first << "'";
            if (auto suggestion = closest(first, names); !suggestion.empty())
                std::cerr << " (did you mean '" << suggestion << "'?)";
            std::cerr << "; " << kProgram << " --help lists the commands\n";
            return onnxlens::cli::kExitUsage;
        }
    }

    const std::vector<std::string> args(argv + 1, argv + argc);
    const Command* chosen = nullptr;
    try {
        cli.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
        std::cout << cli.help();  // the chosen command's help when there is one
        return onnxlens::cli::kExitOk;
    } catch (const CLI::CallForVersion& e) {
        std::cout << e.what() << std::flush;
        return onnxlens::cli::kExitOk;
    } catch (const CLI::ParseError& e) {
        for (const auto& command : commands)
            if (command.app->get_name() == first) chosen = &command;
        if (!chosen) {
            std::cerr << kProgram << ": " << e.what() << unknownOptionHints(cli, args) << "; "
                      << kProgram << " --help lists the commands and options\n";
            return onnxlens::cli::kExitUsage;
        }
        std::cerr << kProgram << " " << chosen->app->get_name() << ": " << e.what()
                  << unknownOptionHints(*chosen->app, {args.begin() + 1, args.end()}) << "\n"
                  << usageLine(*chosen->app) << " (" << kProgram << " " << chosen->app->get_name()
                  << " --help describes the options)\n";
        return onnxlens::cli::kExitUsage;
    }
    if (!completionShell.empty()) {
        std::cout << onnxlens::cli::completionScript(cli, completionShell);
        return onnxlens::cli::kExitOk;
    }
    if (helpAll) {
        printAllHelp(cli);
        return onnxlens::cli::kExitOk;
    }
    for (const auto& command : commands)
        if (command.app->parsed()) chosen = &command;
    if (!chosen) {
        printTopUsage(std::cerr, cli);
        return onnxlens::cli::kExitUsage;
    }

    const std::string name = chosen->app->get_name();
    try {
        return chosen->run(onnxlens::cli::Arguments(*chosen->app));
    } catch (const onnxlens::cli::UsageError& e) {
        std::cerr << kProgram << " " << name << ": " << e.what() << "\n";
    } catch (const std::bad_alloc&) {
        std::cerr << kProgram << " " << name << ": out of memory\n";
    } catch (const std::exception& e) {
        std::cerr << kProgram << " " << name << ": " << e.what() << "\n";
    }
    return onnxlens::cli::kExitUsage;
}
