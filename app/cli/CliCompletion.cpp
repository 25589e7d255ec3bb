#include "CliCompletion.h"

#include <CLI/CLI.hpp>
#include <sstream>

namespace onnxlens::cli {

namespace {

struct OptionInfo {
    std::string name;         // --runs
    std::string valueName;    // N; empty for a flag
    std::string description;  // first sentence of the help text
    bool repeatable = false;
};

struct CommandInfo {
    std::string name, description;
    std::vector<OptionInfo> options;
    bool takesPositionals = false;
};

std::vector<CommandInfo> describe(const CLI::App& cli) {
    std::vector<CommandInfo> commands;
    for (const CLI::App* app : cli.get_subcommands({})) {
        CommandInfo command{app->get_name(), app->get_description(), {}, false};
        for (const CLI::Option* option : app->get_options()) {
            if (option->get_lnames().empty()) {
                command.takesPositionals = command.takesPositionals || option->get_positional();
                continue;
            }
            OptionInfo info;
            info.name = "--" + option->get_lnames().front();
            if (option->get_type_size() != 0) info.valueName = option->get_type_name();
            info.description = option->get_description();
            info.repeatable = option->get_multi_option_policy() == CLI::MultiOptionPolicy::TakeAll;
            command.options.push_back(info);
        }
        commands.push_back(command);
    }
    return commands;
}

// The words a value is one of ("qoperator|qdq"), when the value name lists them.
std::vector<std::string> choices(const std::string& valueName) {
    if (valueName.find('|') == std::string::npos) return {};
    std::vector<std::string> words;
    std::string word;
    for (char c : valueName + "|") {
        if (c == '|') {
            words.push_back(word);
            word.clear();
        } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_') {
            word += c;
        } else {
            return {};  // "FILE.svg|FILE.png", "BYTES|NG": placeholders, not words
        }
    }
    return words;
}

bool namesAPath(const std::string& valueName) {
    for (const char* part : {"FILE", "DIR", "PATH", ".onnx", ".pkl", "OUT"})
        if (valueName.find(part) != std::string::npos) return true;
    return false;
}

std::string bashScript(const std::vector<CommandInfo>& commands) {
    std::ostringstream s;
    s << "# bash completion for onnxlens-cli (written by `onnxlens-cli --completion bash`)\n"
         "_onnxlens_cli() {\n"
         "    local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
         "    local command=\"\" word i\n"
         "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
         "        word=\"${COMP_WORDS[i]}\"\n"
         "        if [[ $word != -* ]]; then command=$word; break; fi\n"
         "    done\n"
         "    if [[ -z $command ]]; then\n"
         "        COMPREPLY=($(compgen -W \"";
    for (const auto& c : commands) s << c.name << " ";
    s << "--help --version\" -- \"$cur\"))\n"
         "        return\n"
         "    fi\n"
         "    local options=\"\" values=\"\" paths=\"\"\n"
         "    case $command in\n";
    for (const auto& c : commands) {
        s << "        " << c.name << ")\n            options=\"";
        for (const auto& o : c.options) s << o.name << " ";
        s << "\"\n            values=\"";
        for (const auto& o : c.options)
            if (!o.valueName.empty()) s << o.name << " ";
        s << "\"\n            paths=\"";
        for (const auto& o : c.options)
            if (namesAPath(o.valueName)) s << o.name << " ";
        s << "\"\n            case $prev in\n";
        for (const auto& o : c.options)
            if (auto words = choices(o.valueName); !words.empty()) {
                s << "                " << o.name << ") COMPREPLY=($(compgen -W \"";
                for (const auto& w : words) s << w << " ";
                s << "\" -- \"$cur\")); return ;;\n";
            }
        s << "            esac\n            ;;\n";
    }
    s << "    esac\n"
         "    if [[ \" $values \" == *\" $prev \"* ]]; then\n"
         "        if [[ \" $paths \" == *\" $prev \"* ]]; then\n"
         "            COMPREPLY=($(compgen -f -- \"$cur\"))\n"
         "        fi\n"
         "        return\n"
         "    fi\n"
         "    if [[ $cur == -* ]]; then\n"
         "        COMPREPLY=($(compgen -W \"$options\" -- \"$cur\"))\n"
         "    else\n"
         "        COMPREPLY=($(compgen -f -- \"$cur\"))\n"
         "    fi\n"
         "}\n"
         "complete -o filenames -o bashdefault -F _onnxlens_cli onnxlens-cli\n";
    return s.str();
}

// Text inside a zsh _arguments spec in single quotes: brackets and colons escaped.
std::string zshEscape(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '\'')
            out += "'\\''";
        else if (c == '[' || c == ']' || c == ':' || c == '\\')
            out += std::string("\\") + c;
        else
            out += c;
    }
    return out;
}

std::string zshScript(const std::vector<CommandInfo>& commands) {
    std::ostringstream s;
    s << "#compdef onnxlens-cli\n"
         "# zsh completion for onnxlens-cli (written by `onnxlens-cli --completion zsh`)\n"
         "_onnxlens_cli() {\n"
         "    local -a commands\n"
         "    commands=(\n";
    for (const auto& c : commands)
        s << "        '" << c.name << ":" << zshEscape(c.description) << "'\n";
    s << "    )\n"
         "    if (( CURRENT == 2 )); then\n"
         "        _describe -t commands 'onnxlens-cli command' commands\n"
         "        _arguments '--help[print the help]' '--version[print the versions]'\n"
         "        return\n"
         "    fi\n"
         "    case ${words[2]} in\n";
    for (const auto& c : commands) {
        s << "        " << c.name << ")\n            _arguments -s";
        for (const auto& o : c.options) {
            s << " \\\n                '" << (o.repeatable ? "*" : "") << o.name;
            if (o.valueName.empty()) {
                s << "[" << zshEscape(o.description) << "]'";
                continue;
            }
            s << "=[" << zshEscape(o.description) << "]:" << zshEscape(o.valueName) << ":";
            if (auto words = choices(o.valueName); !words.empty()) {
                s << "(";
                for (std::size_t i = 0; i < words.size(); ++i) s << (i ? " " : "") << words[i];
                s << ")'";
            } else if (namesAPath(o.valueName)) {
                s << (o.valueName.find("DIR") != std::string::npos ? "_files -/'" : "_files'");
            } else {
                s << " '";
            }
        }
        if (c.takesPositionals) s << " \\\n                '*:file:_files'";
        s << "\n            ;;\n";
    }
    s << "    esac\n"
         "}\n"
         "_onnxlens_cli \"$@\"\n";
    return s.str();
}

}  // namespace

std::string completionScript(const CLI::App& cli, const std::string& shell) {
    const auto commands = describe(cli);
    return shell == "zsh" ? zshScript(commands) : bashScript(commands);
}

}  // namespace onnxlens::cli
