// The command line as a new user meets it: --help for every command, --version, typo suggestions
// and the completion scripts, checked against the README's command reference.
#include <google/protobuf/stubs/common.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "CliRunner.h"

using onnxlens::testing::runCli;

namespace {

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

std::string readFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// The options the README documents per command: every --option on a line that starts (after
// optional indentation or a backquote) with `onnxlens-cli COMMAND`.
std::map<std::string, std::set<std::string>> readmeOptions() {
    std::map<std::string, std::set<std::string>> options;
    std::istringstream readme(readFile(std::string(ONNXLENS_SOURCE_DIR) + "/README.md"));
    const std::regex commandLine(R"(onnxlens-cli ([a-z]+)\b)");
    const std::regex option(R"(--[a-z][a-z0-9-]*)");
    for (std::string line; std::getline(readme, line);) {
        std::smatch command;
        if (!std::regex_search(line, command, commandLine)) continue;
        // Only the part of the line after the command, up to a comment.
        std::string rest = command.suffix();
        rest = rest.substr(0, rest.find(" # "));
        auto& set = options[command[1]];
        for (std::sregex_iterator it(rest.begin(), rest.end(), option), end; it != end; ++it)
            set.insert(it->str());
    }
    return options;
}

// The command names `onnxlens-cli --help` lists under SUBCOMMANDS.
std::vector<std::string> listedCommands() {
    auto r = runCli({"--help"});
    std::vector<std::string> names;
    const auto start = r.out.find("Subcommands:");
    if (start == std::string::npos) return names;
    std::istringstream lines(r.out.substr(start));
    std::string line;
    std::getline(lines, line);
    while (std::getline(lines, line) && !line.empty()) {  // the list ends at a blank line
        std::istringstream words(line);
        std::string name;
        if (words >> name) names.push_back(name);
    }
    return names;
}

}  // namespace

TEST(CliHelp, TopLevelHelpListsEveryCommandAndExitsZero) {
    auto r = runCli({"--help"});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    const std::vector<std::string> expected = {"info",        "check",    "run",    "compare",
                                               "bench",       "cost",     "render", "optimize",
                                               "conformance", "quantize", "export"};
    const auto listed = listedCommands();
    for (const auto& name : expected)
        EXPECT_NE(std::find(listed.begin(), listed.end(), name), listed.end()) << name << r.out;
    EXPECT_EQ(runCli({"-h"}).exitCode, 0);
    EXPECT_EQ(runCli({"help"}).exitCode, 0);
}

TEST(CliHelp, EveryCommandsHelpExitsZeroAndNamesEveryOptionTheReadmeDocuments) {
    const auto documented = readmeOptions();
    ASSERT_GE(documented.size(), 10u) << "the README's command reference was not found";
    for (const auto& name : listedCommands()) {
        auto r = runCli({name, "--help"});
        EXPECT_EQ(r.exitCode, 0) << name << ": " << r.err;
        EXPECT_TRUE(r.err.empty()) << name << ": " << r.err;
        EXPECT_TRUE(contains(r.out, "onnxlens-cli " + name)) << r.out;
        auto it = documented.find(name);
        ASSERT_NE(it, documented.end()) << "the README does not document " << name;
        for (const auto& option : it->second)
            EXPECT_TRUE(contains(r.out, option + " ")) << name << " --help lacks " << option;
        // Every option is described: no option line without text after its value name.
        std::istringstream lines(r.out);
        for (std::string line; std::getline(lines, line);) {
            std::smatch m;
            if (std::regex_match(line, m, std::regex(R"(\s+(--[a-z0-9-]+)(\s\S+)?\s*)")))
                ADD_FAILURE() << name << ": " << m[1] << " has no description";
        }
    }
}

TEST(CliHelp, VersionPrintsTheVersionsOfWhatItWasBuiltWith) {
    auto r = runCli({"--version"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    // The first line is "onnxlens-cli VERSION", VERSION as the top-level CMakeLists.txt declares.
    std::smatch project;
    const std::string cmake = readFile(std::string(ONNXLENS_SOURCE_DIR) + "/CMakeLists.txt");
    ASSERT_TRUE(
        std::regex_search(cmake, project, std::regex(R"(project\(onnxlens VERSION (\S+))")));
    EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "onnxlens-cli " + project[1].str());
    const int pb = GOOGLE_PROTOBUF_VERSION;
    const std::string protobuf = std::to_string(pb / 1000000) + "." +
                                 std::to_string(pb / 1000 % 1000) + "." + std::to_string(pb % 1000);
    EXPECT_TRUE(contains(r.out, "protobuf: " + protobuf)) << r.out;
    EXPECT_TRUE(
        std::regex_search(r.out, std::regex(R"(\n  onnx: \d+\.\d+\.\d+ \(newest opset \d+\))")))
        << r.out;
    EXPECT_TRUE(
        std::regex_search(r.out, std::regex(R"(\n  git revision: (unknown|\S*[0-9a-f]{7}))")))
        << r.out;
#ifdef ONNXLENS_WITH_DNNL
    EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\n  oneDNN: \d+\.\d+\.\d+)"))) << r.out;
#else
    EXPECT_TRUE(contains(r.out, "oneDNN: not used")) << r.out;
#endif
    EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\n  Qt: (\d+\.\d+\.\d+|not built))")))
        << r.out;
    EXPECT_TRUE(
        std::regex_search(r.out, std::regex(R"(\n  engine build: (release|portable|eigen-only))")))
        << r.out;
    EXPECT_TRUE(contains(r.out, "\n  -march: ")) << r.out;
    // The kernels' instruction set chosen at run time, and what the build dispatches between.
    EXPECT_TRUE(std::regex_search(
        r.out, std::regex(R"(\n  kernels: (native \(built with -march=native|\S+ \(built for ))")))
        << r.out;
}

// Sets or clears an environment variable for this scope (children inherit it).
class ScopedVariable {
  public:
    ScopedVariable(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        if (value)
            ::setenv(name, value, 1);
        else
            ::unsetenv(name);
    }
    ~ScopedVariable() {
        if (old_)
            ::setenv(name_, old_->c_str(), 1);
        else
            ::unsetenv(name_);
    }

  private:
    const char* name_;
    std::optional<std::string> old_;
};

TEST(CliHelp, TheEnginesThreadsSpinBoundedUnlessTheUserChose) {
    // libgomp's long default spinning makes 2 threads slower than 1 on a busy machine: the CLI
    // starts itself again with GOMP_SPINCOUNT bounded, and keeps what the user set.
    ScopedVariable keep("ONNXLENS_KEEP_OPENMP_SPINNING", nullptr);
    {
        ScopedVariable policy("OMP_WAIT_POLICY", nullptr), spins("GOMP_SPINCOUNT", nullptr);
        auto r = runCli({"--version"});
        ASSERT_EQ(r.exitCode, 0) << r.err;
        if (contains(r.out, "threads: Eigen thread pool"))
            GTEST_SKIP() << "no OpenMP in this build";
        EXPECT_TRUE(contains(r.out,
                             "\n  threads: OpenMP, idle threads spin GOMP_SPINCOUNT=10000 "
                             "then sleep; "))
            << r.out;
    }
    {
        // Runs use fewer threads while other programs keep the cores busy, unless turned off.
        ScopedVariable adaptive("ONNXLENS_ADAPTIVE_THREADS", nullptr);
        auto r = runCli({"--version"});
        EXPECT_TRUE(contains(r.out, "; fewer threads while other programs keep the cores busy\n") ||
                    contains(r.out, "; thread count fixed (the kernel reports no waits"))
            << r.out;
        ScopedVariable off("ONNXLENS_ADAPTIVE_THREADS", "0");
        EXPECT_TRUE(contains(runCli({"--version"}).out, "; thread count fixed\n"));
    }
    {
        ScopedVariable policy("OMP_WAIT_POLICY", nullptr), spins("GOMP_SPINCOUNT", "50");
        auto r = runCli({"--version"});
        EXPECT_TRUE(contains(r.out, "threads: OpenMP, idle threads spin GOMP_SPINCOUNT=50 then"))
            << r.out;
    }
    {
        ScopedVariable policy("OMP_WAIT_POLICY", "passive"), spins("GOMP_SPINCOUNT", nullptr);
        auto r = runCli({"--version"});
        EXPECT_TRUE(contains(r.out, "threads: OpenMP, OMP_WAIT_POLICY=passive")) << r.out;
    }
}

TEST(CliHelp, TyposGetASuggestionAndExitTwo) {
    auto command = runCli({"infx", "model.onnx"});
    EXPECT_EQ(command.exitCode, 2);
    EXPECT_TRUE(contains(command.err, "unknown command 'infx'")) << command.err;
    EXPECT_TRUE(contains(command.err, "did you mean 'info'")) << command.err;

    auto option = runCli({"bench", "model.onnx", "--warmpu", "3"});
    EXPECT_EQ(option.exitCode, 2);
    EXPECT_TRUE(contains(option.err, "--warmpu")) << option.err;
    EXPECT_TRUE(contains(option.err, "did you mean --warmup")) << option.err;
    EXPECT_TRUE(contains(option.err, "usage: onnxlens-cli bench [OPTIONS] MODEL")) << option.err;

    auto missing = runCli({"bench", "model.onnx", "--runs"});
    EXPECT_EQ(missing.exitCode, 2);
    EXPECT_TRUE(contains(missing.err, "--runs")) << missing.err;

    EXPECT_EQ(runCli({}).exitCode, 2);
    EXPECT_EQ(runCli({"--no-such-option"}).exitCode, 2);
}

// A positional that takes several values: every one reaches the command.
TEST(CliHelp, ConformanceTakesSeveralFolders) {
    const std::string samples = std::string(ONNXLENS_SOURCE_DIR) + "/resources/samples/";
    auto r = runCli({"conformance", samples + "mnist_cnn", samples + "lstm_classifier"});
    EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "2 passed, 0 failed")) << r.out;
    auto none = runCli({"conformance"});
    EXPECT_EQ(none.exitCode, 2);
    EXPECT_TRUE(contains(none.err, "usage: onnxlens-cli conformance [OPTIONS] DIR...")) << none.err;
}

// The completion scripts name the same commands and options as --help, and bash completes with
// them (the script sourced in a bash that calls its function as completion would).
TEST(CliHelp, BashCompletionCompletesCommandsAndOptions) {
    auto script = runCli({"--completion", "bash"});
    ASSERT_EQ(script.exitCode, 0) << script.err;
    const auto dir = std::filesystem::temp_directory_path() /
                     ("onnxlens-completion-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "onnxlens-cli.bash") << script.out;
    auto complete = [&](const std::string& words, int current) {
        const std::string command =
            "bash -c 'source " + (dir / "onnxlens-cli.bash").string() + "; COMP_WORDS=(" + words +
            "); COMP_CWORD=" + std::to_string(current) +
            "; _onnxlens_cli; printf \"%s\\n\" \"${COMPREPLY[@]}\"' > " + (dir / "out").string();
        EXPECT_EQ(std::system(command.c_str()), 0) << command;
        return readFile((dir / "out").string());
    };
    EXPECT_EQ(complete("onnxlens-cli qu", 1), "quantize\n");
    EXPECT_EQ(complete("onnxlens-cli bench m.onnx --war", 3), "--warmup\n");
    EXPECT_EQ(complete("onnxlens-cli quantize m.onnx o.onnx --format q", 5), "qoperator\nqdq\n");
    const auto commands = complete("onnxlens-cli \"\"", 1);
    for (const auto& name : listedCommands())
        EXPECT_TRUE(contains(commands, name + "\n")) << name << " not completed: " << commands;

    auto zsh = runCli({"--completion", "zsh"});
    ASSERT_EQ(zsh.exitCode, 0) << zsh.err;
    EXPECT_EQ(zsh.out.rfind("#compdef onnxlens-cli\n", 0), 0u);
    // zsh parses it (zsh is in the CI packages for this).
    std::ofstream(dir / "_onnxlens-cli") << zsh.out;
    const std::string zshCheck = "zsh -n " + (dir / "_onnxlens-cli").string();
    EXPECT_EQ(std::system(zshCheck.c_str()), 0) << zshCheck;
    EXPECT_TRUE(contains(zsh.out, "'--warmup=[untimed runs first (default 5)]:N: '")) << zsh.out;
    EXPECT_EQ(runCli({"--completion", "fish"}).exitCode, 2);
    std::filesystem::remove_all(dir);
}
