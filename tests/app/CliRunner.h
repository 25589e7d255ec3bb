#pragma once
// Runs onnxlens-cli with arguments and captures exit code, stdout and stderr.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace onnxlens::testing {

struct CliResult {
    int exitCode = -1;
    std::string out, err;
};

inline std::string shellQuote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

inline CliResult runCli(const std::vector<std::string>& args) {
    static int counter = 0;
    auto dir =
        std::filesystem::temp_directory_path() /
        ("onnxlens-cli-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(dir);
    std::string cmd = shellQuote(ONNXLENS_CLI);
    for (const auto& a : args) cmd += " " + shellQuote(a);
    cmd += " >" + shellQuote((dir / "out").string()) + " 2>" + shellQuote((dir / "err").string());
    int status = std::system(cmd.c_str());
    CliResult r;
    r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    auto slurp = [](const std::filesystem::path& p) {
        std::ifstream in(p, std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    };
    r.out = slurp(dir / "out");
    r.err = slurp(dir / "err");
    std::filesystem::remove_all(dir);
    return r;
}

}  // namespace onnxlens::testing
