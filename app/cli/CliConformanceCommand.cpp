// onnxlens-cli conformance DIR...: runs ONNX backend test cases. Each case runs in a forked child
// process with a time limit, so that a crash or hang in one kernel is one failed case, not a lost
// run.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "CliCommon.h"
#include "onnxlens/workflows/Conformance.h"

namespace onnxlens::cli {

namespace {

namespace fs = std::filesystem;
using engine::ConformanceCaseResult;
using Outcome = ConformanceCaseResult::Outcome;

struct RunningCase {
    pid_t pid = -1;
    int fd = -1;
    std::size_t index = 0;
    std::string buffer;
    std::chrono::steady_clock::time_point started;
};

// Child side: run the case, write "P|F|S\n<seconds>\n<reason>" to the pipe.
[[noreturn]] void runChild(const fs::path& dir, const engine::ConformanceOptions& options, int fd) {
    ConformanceCaseResult r;
    try {
        r = engine::runConformanceCase(dir, options);
    } catch (const std::exception& e) {
        r.outcome = Outcome::Failed;
        r.reason = std::string("uncaught exception: ") + e.what();
    }
    std::string text = r.outcome == Outcome::Passed    ? "P"
                       : r.outcome == Outcome::Skipped ? "S"
                                                       : "F";
    text += "\n" + std::to_string(r.seconds) + "\n" + r.reason;
    const char* p = text.data();
    std::size_t left = text.size();
    while (left > 0) {
        ssize_t n = ::write(fd, p, left);
        if (n <= 0) break;
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    ::close(fd);
    std::fflush(nullptr);
    ::_exit(0);
}

ConformanceCaseResult parseChildResult(const fs::path& dir, const std::string& text, int status) {
    ConformanceCaseResult r;
    r.directory = dir;
    r.name = dir.filename().string();
    r.suite = dir.parent_path().filename().string();
    if (text.empty()) {
        r.outcome = Outcome::Failed;
        if (WIFSIGNALED(status))
            r.reason = std::string("crashed: ") + strsignal(WTERMSIG(status));
        else
            r.reason = "the case's process ended without a result";
        return r;
    }
    r.outcome = text[0] == 'P'   ? Outcome::Passed
                : text[0] == 'S' ? Outcome::Skipped
                                 : Outcome::Failed;
    auto firstNl = text.find('\n');
    auto secondNl = firstNl == std::string::npos ? std::string::npos : text.find('\n', firstNl + 1);
    if (secondNl != std::string::npos) {
        r.seconds = std::atof(text.substr(firstNl + 1, secondNl - firstNl - 1).c_str());
        r.reason = text.substr(secondNl + 1);
    }
    return r;
}

std::vector<ConformanceCaseResult> runIsolated(const std::vector<fs::path>& cases,
                                               const engine::ConformanceOptions& options, int jobs,
                                               double timeoutSeconds) {
    std::vector<ConformanceCaseResult> results(cases.size());
    std::vector<RunningCase> running;
    std::size_t next = 0;
    std::fflush(nullptr);
    while (next < cases.size() || !running.empty()) {
        while (next < cases.size() && static_cast<int>(running.size()) < jobs) {
            int fds[2];
            if (::pipe(fds) != 0) throw std::runtime_error("cannot create a pipe");
            pid_t pid = ::fork();
            if (pid < 0) throw std::runtime_error("cannot fork");
            if (pid == 0) {
                ::close(fds[0]);
                runChild(cases[next], options, fds[1]);
            }
            ::close(fds[1]);
            running.push_back({pid, fds[0], next, {}, std::chrono::steady_clock::now()});
            ++next;
        }
        std::vector<pollfd> polls;
        for (const auto& r : running) polls.push_back({r.fd, POLLIN, 0});
        ::poll(polls.data(), polls.size(), 200);
        for (std::size_t i = 0; i < running.size();) {
            RunningCase& rc = running[i];
            bool done = false;
            if (polls[i].revents & (POLLIN | POLLHUP | POLLERR)) {
                char buf[4096];
                ssize_t n = ::read(rc.fd, buf, sizeof buf);
                if (n > 0)
                    rc.buffer.append(buf, static_cast<std::size_t>(n));
                else
                    done = true;
            }
            const double elapsed =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - rc.started)
                    .count();
            if (!done && elapsed > timeoutSeconds) {
                ::kill(rc.pid, SIGKILL);
                ::waitpid(rc.pid, nullptr, 0);
                ::close(rc.fd);
                auto& r = results[rc.index];
                r = parseChildResult(cases[rc.index], "", 0);
                r.reason =
                    "timed out after " + std::to_string(static_cast<int>(timeoutSeconds)) + " s";
                r.seconds = elapsed;
                running.erase(running.begin() + static_cast<long>(i));
                polls.erase(polls.begin() + static_cast<long>(i));
                continue;
            }
            if (done) {
                int status = 0;
                ::waitpid(rc.pid, &status, 0);
                ::close(rc.fd);
                results[rc.index] = parseChildResult(cases[rc.index], rc.buffer, status);
                running.erase(running.begin() + static_cast<long>(i));
                polls.erase(polls.begin() + static_cast<long>(i));
                continue;
            }
            ++i;
        }
    }
    return results;
}

std::set<std::string> readBaseline(const fs::path& file) {
    std::ifstream in(file);
    if (!in) throw UsageError(file.string() + ": cannot be read");
    std::set<std::string> names;
    std::string line;
    while (std::getline(in, line)) {
        if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
        line.erase(std::remove_if(line.begin(), line.end(), ::isspace), line.end());
        if (!line.empty()) names.insert(line);
    }
    return names;
}

const char* outcomeName(Outcome o) {
    return o == Outcome::Passed ? "passed" : o == Outcome::Skipped ? "skipped" : "failed";
}

int runConformance(const Arguments& a) {
    engine::ConformanceOptions options;
    options.tolerance.rtol = a.doubleValue("rtol", options.tolerance.rtol);
    options.tolerance.atol = a.doubleValue("atol", options.tolerance.atol);
    options.threads = static_cast<int>(a.intValue("threads", 1));
    const int jobs = static_cast<int>(std::max<std::int64_t>(
        1, a.intValue("jobs", std::max(1u, std::thread::hardware_concurrency()))));
    const double timeout = a.doubleValue("timeout", 120.0);
    const std::string filter = a.value("filter").value_or("");

    std::vector<fs::path> cases;
    for (const auto& dir : a.positionals()) {
        std::error_code ec;
        if (!fs::is_directory(dir, ec)) throw UsageError(dir + ": not a folder");
        auto found = engine::findConformanceCases(dir);
        if (found.empty())
            throw UsageError(dir + ": holds no test case (no model.onnx in it or its subfolders)");
        for (auto& c : found)
            if (filter.empty() || c.filename().string().find(filter) != std::string::npos)
                cases.push_back(c);
    }

    auto results = runIsolated(cases, options, jobs, timeout);

    // Suites in the order given.
    std::vector<std::string> suiteOrder;
    std::map<std::string, std::array<int, 3>> perSuite;  // passed, failed, skipped
    int passed = 0, failed = 0, skipped = 0;
    for (const auto& r : results) {
        if (!perSuite.count(r.suite)) suiteOrder.push_back(r.suite);
        auto& counts = perSuite[r.suite];
        if (r.outcome == Outcome::Passed) {
            ++passed;
            ++counts[0];
            if (a.flag("verbose")) std::cout << "PASS " << r.suite << "/" << r.name << "\n";
        } else if (r.outcome == Outcome::Failed) {
            ++failed;
            ++counts[1];
            std::cout << "FAIL " << r.suite << "/" << r.name << ": " << r.reason << "\n";
        } else {
            ++skipped;
            ++counts[2];
            std::cout << "SKIP " << r.suite << "/" << r.name << ": " << r.reason << "\n";
        }
    }
    for (const auto& suite : suiteOrder) {
        const auto& c = perSuite[suite];
        std::cout << suite << ": " << c[0] << " passed, " << c[1] << " failed, " << c[2]
                  << " skipped\n";
    }

    if (auto jsonFile = a.value("json")) {
        nlohmann::json doc;
        doc["passed"] = passed;
        doc["failed"] = failed;
        doc["skipped"] = skipped;
        auto& list = doc["cases"] = nlohmann::json::array();
        for (const auto& r : results)
            list.push_back({{"suite", r.suite},
                            {"name", r.name},
                            {"outcome", outcomeName(r.outcome)},
                            {"reason", r.reason},
                            {"seconds", r.seconds}});
        std::ofstream out(*jsonFile);
        if (!out) throw UsageError(*jsonFile + ": cannot be written");
        out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    }
    if (auto baselineOut = a.value("write-baseline")) {
        std::ofstream out(*baselineOut);
        if (!out) throw UsageError(*baselineOut + ": cannot be written");
        out << "# Conformance cases that pass; `conformance --baseline` fails when one of them "
               "stops passing.\n";
        for (const auto& r : results)
            if (r.outcome == Outcome::Passed) out << r.suite << "/" << r.name << "\n";
    }

    int exitCode = failed > 0 ? kExitCheckFailed : kExitOk;
    if (auto baselineFile = a.value("baseline")) {
        // With a baseline, only regressions fail: cases listed there that no longer pass.
        auto expected = readBaseline(*baselineFile);
        std::set<std::string> nowPassing;
        for (const auto& r : results)
            if (r.outcome == Outcome::Passed) nowPassing.insert(r.suite + "/" + r.name);
        int regressions = 0;
        for (const auto& name : expected) {
            bool ran = std::any_of(results.begin(), results.end(),
                                   [&](const auto& r) { return r.suite + "/" + r.name == name; });
            if (ran && !nowPassing.count(name)) {
                std::cout << "REGRESSION " << name << " passed in the baseline and fails now\n";
                ++regressions;
            }
        }
        std::cout << "baseline: " << expected.size() << " cases, " << regressions
                  << " regressions\n";
        exitCode = regressions > 0 ? kExitCheckFailed : kExitOk;
    }
    std::cout << passed << " passed, " << failed << " failed" << std::endl;
    return exitCode;
}

}  // namespace

Command addConformanceCommand(CLI::App& cli) {
    CLI::App* command = addCommand(
        cli, "conformance",
        "run ONNX backend test cases (model.onnx and test_data_set_*), each in a child process "
        "with a time limit (exit 1 when one fails)");
    addPositional(*command, "DIR", "a test case folder, or a folder of them", true, true);
    addValueOption(*command, "filter", "SUBSTRING", "run only the cases whose name holds it");
    addValueOption(*command, "rtol", "R", "relative tolerance (default 1e-3)");
    addValueOption(*command, "atol", "A", "absolute tolerance (default 1e-5)");
    addValueOption(*command, "jobs", "N", "cases run at once (default: one per core)");
    addValueOption(*command, "threads", "N", "engine threads of each case (default 1)");
    addValueOption(*command, "timeout", "SECONDS", "time limit of one case (default 120)");
    addValueOption(*command, "json", "FILE", "write every case's outcome to FILE as JSON");
    addValueOption(*command, "baseline", "FILE",
                   "fail only when a case listed in FILE (--write-baseline) stops passing");
    addValueOption(*command, "write-baseline", "FILE", "write the passing cases to FILE");
    addFlag(*command, "verbose", "print the passing cases too");
    return {command, runConformance};
}

}  // namespace onnxlens::cli
