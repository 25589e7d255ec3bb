#include "onnxlens/workflows/PytorchTimingServer.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <vector>

namespace onnxlens::engine {

namespace {

constexpr const char* kPrefix = "timing: ";

// The script's own "error: ..." line, when it wrote one.
std::string errorLine(const std::string& stderrText) {
    std::istringstream in(stderrText);
    std::string line, last;
    while (std::getline(in, line)) {
        if (line.rfind("error: ", 0) == 0) return line.substr(7);
        if (!line.empty()) last = line;
    }
    return last;
}

}  // namespace

Result<std::unique_ptr<PytorchTimingServer>> PytorchTimingServer::start(
    const std::string& python, const std::filesystem::path& script,
    const std::filesystem::path& folder, int threads, double startSeconds) {
    std::unique_ptr<PytorchTimingServer> server(new PytorchTimingServer);
    server->stderrFile_ = std::filesystem::temp_directory_path() /
                          ("onnxlens_timing_" + std::to_string(::getpid()) + "_" +
                           std::to_string(reinterpret_cast<std::uintptr_t>(server.get())) + ".err");
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0) return Error{"cannot create a pipe for the timing server"};
    if (::pipe2(out, O_CLOEXEC) != 0) {
        ::close(in[0]);
        ::close(in[1]);
        return Error{"cannot create a pipe for the timing server"};
    }
    std::vector<std::string> argv = {python, "-u", script.string(), "--serve-timing",
                                     folder.string()};
    if (threads > 0) {
        argv.push_back("--threads");
        argv.push_back(std::to_string(threads));
    }
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    const std::string errPath = server->stderrFile_.string();
    const pid_t pid = ::fork();
    if (pid < 0) {
        for (int fd : {in[0], in[1], out[0], out[1]}) ::close(fd);
        return Error{"cannot start " + python + " (fork failed)"};
    }
    if (pid == 0) {
        ::dup2(in[0], 0);
        ::dup2(out[1], 1);
        const int err = ::open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (err >= 0) ::dup2(err, 2);
        ::execv(args[0], args.data());
        ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    server->pid_ = pid;
    server->toChild_ = in[1];
    server->fromChild_ = out[0];
    // A server that dies must not kill us with SIGPIPE when we write to it.
    ::signal(SIGPIPE, SIG_IGN);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(startSeconds);
    while (true) {
        const double left =
            std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
        auto line = server->readLine(std::max(0.0, left));
        if (!line) {
            const std::string why = errorLine(server->stderrText());
            return Error{
                "the PyTorch timing server (" + script.filename().string() +
                " --serve-timing) did not start: " + (why.empty() ? line.error().message : why)};
        }
        if (*line == "timing: ready") break;  // other lines are the script's log
    }
    return server;
}

PytorchTimingServer::~PytorchTimingServer() {
    if (toChild_ >= 0) ::close(toChild_);
    if (pid_ > 0) {
        int status = 0;
        bool reaped = false;
        for (int i = 0; i < 50 && !reaped; ++i) {
            reaped = ::waitpid(pid_, &status, WNOHANG) == pid_;
            if (!reaped) ::usleep(20000);
        }
        if (!reaped) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, &status, 0);
        }
    }
    if (fromChild_ >= 0) ::close(fromChild_);
    std::error_code ec;
    if (!stderrFile_.empty()) std::filesystem::remove(stderrFile_, ec);
}

std::string PytorchTimingServer::stderrText() const {
    std::ifstream in(stderrFile_);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

Result<std::string> PytorchTimingServer::readLine(double timeoutSeconds) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutSeconds);
    while (true) {
        if (auto eol = buffer_.find('\n'); eol != std::string::npos) {
            std::string line = buffer_.substr(0, eol);
            buffer_.erase(0, eol + 1);
            return line;
        }
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                              deadline - std::chrono::steady_clock::now())
                              .count();
        if (left <= 0) return Error{"no answer within " + std::to_string(timeoutSeconds) + " s"};
        pollfd p{fromChild_, POLLIN, 0};
        const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
        if (ready < 0 && errno != EINTR) return Error{"poll failed"};
        if (ready <= 0) continue;
        char chunk[4096];
        const ssize_t n = ::read(fromChild_, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return Error{"it exited"};
        buffer_.append(chunk, static_cast<std::size_t>(n));
    }
}

Result<double> PytorchTimingServer::run(double timeoutSeconds) {
    static const char request[] = "run\n";
    if (::write(toChild_, request, sizeof request - 1) != static_cast<ssize_t>(sizeof request - 1))
        return Error{"the PyTorch timing server is gone: " + errorLine(stderrText())};
    while (true) {
        auto line = readLine(timeoutSeconds);
        if (!line) {
            const std::string why = errorLine(stderrText());
            return Error{"the PyTorch timing server: " +
                         (why.empty() ? line.error().message : why)};
        }
        if (line->rfind(kPrefix, 0) != 0) continue;
        try {
            return std::stod(line->substr(std::string(kPrefix).size()));
        } catch (const std::exception&) {
            return Error{"the PyTorch timing server answered '" + *line + "'"};
        }
    }
}

Result<int> PytorchTimingServer::recordModules(double timeoutSeconds) {
    static const char request[] = "record\n";
    const std::string prefix = "record: ";
    if (::write(toChild_, request, sizeof request - 1) != static_cast<ssize_t>(sizeof request - 1))
        return Error{"the PyTorch server is gone: " + errorLine(stderrText())};
    while (true) {
        auto line = readLine(timeoutSeconds);
        if (!line) {
            const std::string why = errorLine(stderrText());
            return Error{"recording PyTorch's modules: " +
                         (why.empty() ? line.error().message : why)};
        }
        if (line->rfind(prefix, 0) != 0) continue;  // the script's log
        const std::string answer = line->substr(prefix.size());
        if (answer.rfind("error ", 0) == 0)
            return Error{"recording PyTorch's modules: " + answer.substr(6)};
        try {
            return std::stoi(answer);
        } catch (const std::exception&) {
            return Error{"the PyTorch server answered '" + *line + "'"};
        }
    }
}

}  // namespace onnxlens::engine
