#include "CliCommon.h"

#include <algorithm>
#include <charconv>

namespace onnxlens::cli {

Arguments::Arguments(const std::vector<std::string>& args,
                     const std::vector<std::string>& valueOptions,
                     const std::vector<std::string>& flagOptions) {
    auto isIn = [](const std::vector<std::string>& list, const std::string& s) {
        return std::find(list.begin(), list.end(), s) != list.end();
    };
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg.size() > 2 && arg.rfind("--", 0) == 0) {
            std::string name = arg.substr(2);
            std::optional<std::string> inlineValue;
            if (auto eq = name.find('='); eq != std::string::npos) {
                inlineValue = name.substr(eq + 1);
                name = name.substr(0, eq);
            }
            if (isIn(flagOptions, name)) {
                if (inlineValue) throw UsageError("option --" + name + " takes no value");
                flags_[name]++;
            } else if (isIn(valueOptions, name)) {
                if (inlineValue) {
                    values_[name].push_back(*inlineValue);
                } else {
                    if (i + 1 >= args.size())
                        throw UsageError("option --" + name + " needs a value");
                    values_[name].push_back(args[++i]);
                }
            } else {
                throw UsageError("unknown option --" + name);
            }
        } else {
            positionals_.push_back(arg);
        }
    }
}

std::optional<std::string> Arguments::value(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end() || it->second.empty()) return std::nullopt;
    return it->second.back();
}

std::vector<std::string> Arguments::values(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? std::vector<std::string>{} : it->second;
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

void printJson(const nlohmann::json& document) {
    std::cout << document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

}  // namespace onnxlens::cli
