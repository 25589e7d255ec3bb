#pragma once
// What the export tests share: the scripts in tests/app/data, whether Debian's Python has the
// exporter's packages, and the lines of an export report (report.json).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace onnxlens::testing {

inline std::string exportDataScript(const std::string& name) {
    return (std::filesystem::path(ONNXLENS_SOURCE_DIR) / "tests" / "app" / "data" / name).string();
}

// find_spec looks the packages up without importing them (torch takes seconds on a busy machine).
inline bool pythonHasModules(std::initializer_list<const char*> modules) {
    std::string list;
    for (const char* m : modules) list += std::string(list.empty() ? "" : ", ") + "\"" + m + "\"";
    const std::string command =
        "/usr/bin/python3 -c 'import importlib.util as u, sys; sys.exit(not all("
        "u.find_spec(m) for m in (" +
        list + ",)))'";
    return std::system(command.c_str()) == 0;
}

inline nlohmann::json readJsonFile(const std::filesystem::path& file) {
    std::ifstream in(file);
    return nlohmann::json::parse(in);
}

inline const nlohmann::json& reportLine(const nlohmann::json& report, const std::string& key) {
    for (const auto& l : report["lines"])
        if (l["key"] == key) return l;
    throw std::runtime_error("report has no line " + key);
}

}  // namespace onnxlens::testing
