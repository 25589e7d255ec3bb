#include "ChildProcess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace onnxlens::cli {

namespace {

volatile sig_atomic_t gInterrupted = 0;

void onInterrupt(int) { gInterrupted = 1; }

// Restores the previous SIGINT/SIGTERM handlers when the run ends.
class InterruptGuard {
  public:
    InterruptGuard() {
        gInterrupted = 0;
        struct sigaction action {};
        action.sa_handler = onInterrupt;
        sigemptyset(&action.sa_mask);
        sigaction(SIGINT, &action, &oldInt_);
        sigaction(SIGTERM, &action, &oldTerm_);
    }
    ~InterruptGuard() {
        sigaction(SIGINT, &oldInt_, nullptr);
        sigaction(SIGTERM, &oldTerm_, nullptr);
    }

  private:
    struct sigaction oldInt_ {
    }, oldTerm_{};
};

// Kills the child's process group: SIGTERM, then SIGKILL when it has not exited after a grace
// period. Returns the wait status.
int stopAndReap(pid_t pid) {
    kill(-pid, SIGTERM);
    int status = 0;
    for (int i = 0; i < 20; ++i) {
        if (waitpid(pid, &status, WNOHANG) == pid) return status;
        usleep(50 * 1000);
    }
    kill(-pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
}

}  // namespace

ChildProcessResult runChildProcess(const std::vector<std::string>& argv, double timeoutSeconds,
                                   const std::function<void(const std::string&)>& onStdoutLine) {
    ChildProcessResult result;
    if (argv.empty()) {
        result.error = "no program given";
        return result;
    }
    int outPipe[2], errPipe[2], execPipe[2];
    if (pipe2(outPipe, O_CLOEXEC) != 0 || pipe2(errPipe, O_CLOEXEC) != 0 ||
        pipe2(execPipe, O_CLOEXEC) != 0) {
        result.error = std::string("pipe: ") + std::strerror(errno);
        return result;
    }
    std::vector<char*> cargv;
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);

    InterruptGuard guard;
    const pid_t pid = fork();
    if (pid < 0) {
        result.error = std::string("fork: ") + std::strerror(errno);
        for (int fd : {outPipe[0], outPipe[1], errPipe[0], errPipe[1], execPipe[0], execPipe[1]})
            close(fd);
        return result;
    }
    if (pid == 0) {
        // The child: its own process group, so a time-out kills whatever it started too.
        setpgid(0, 0);
        signal(SIGPIPE, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        dup2(outPipe[1], STDOUT_FILENO);
        dup2(errPipe[1], STDERR_FILENO);
        const int devNull = open("/dev/null", O_RDONLY);
        if (devNull >= 0) dup2(devNull, STDIN_FILENO);
        execv(cargv[0], cargv.data());
        const int error = errno;  // tell the parent why exec failed through the CLOEXEC pipe
        (void)!write(execPipe[1], &error, sizeof error);
        _exit(127);
    }
    setpgid(pid, pid);  // also from the parent, so the group exists before any kill
    close(outPipe[1]);
    close(errPipe[1]);
    close(execPipe[1]);
    int execError = 0;
    if (read(execPipe[0], &execError, sizeof execError) == static_cast<ssize_t>(sizeof execError)) {
        close(execPipe[0]);
        close(outPipe[0]);
        close(errPipe[0]);
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        result.error = argv[0] + ": " + std::strerror(execError);
        return result;
    }
    close(execPipe[0]);
    result.started = true;

    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutSeconds);
    std::string pendingLine;
    pollfd fds[2] = {{outPipe[0], POLLIN, 0}, {errPipe[0], POLLIN, 0}};
    int openPipes = 2;
    bool stopped = false;
    int status = 0;
    char buffer[4096];
    while (openPipes > 0) {
        if (gInterrupted) {
            result.interrupted = true;
            status = stopAndReap(pid);
            stopped = true;
            break;
        }
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            result.timedOut = true;
            status = stopAndReap(pid);
            stopped = true;
            break;
        }
        // Wake up at least every 100 ms to notice an interrupt.
        const int ready = poll(fds, 2, static_cast<int>(std::min<long long>(left.count(), 100)));
        if (ready < 0 && errno != EINTR) break;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            const ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
            if (n <= 0) {
                if (n < 0 && errno == EINTR) continue;
                close(fds[i].fd);
                fds[i].fd = -1;
                --openPipes;
                continue;
            }
            if (i == 1) {
                result.stderrText.append(buffer, static_cast<std::size_t>(n));
                continue;
            }
            pendingLine.append(buffer, static_cast<std::size_t>(n));
            for (std::size_t at; (at = pendingLine.find('\n')) != std::string::npos;) {
                if (onStdoutLine) onStdoutLine(pendingLine.substr(0, at));
                pendingLine.erase(0, at + 1);
            }
        }
    }
    for (auto& fd : fds)
        if (fd.fd >= 0) close(fd.fd);
    if (!pendingLine.empty() && onStdoutLine) onStdoutLine(pendingLine);
    if (!stopped) {
        // Both pipes closed: the child is exiting (or handed its pipes to a grandchild that
        // lives on; the deadline still applies to the wait).
        while (true) {
            const pid_t done = waitpid(pid, &status, WNOHANG);
            if (done == pid) break;
            if (done < 0 && errno != EINTR) break;
            if (gInterrupted || std::chrono::steady_clock::now() >= deadline) {
                result.timedOut = !gInterrupted;
                result.interrupted = gInterrupted;
                status = stopAndReap(pid);
                break;
            }
            usleep(20 * 1000);
        }
    }
    // Whatever the child started in its group goes with it.
    kill(-pid, SIGKILL);
    if (WIFEXITED(status)) result.exitCode = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
    return result;
}

}  // namespace onnxlens::cli
