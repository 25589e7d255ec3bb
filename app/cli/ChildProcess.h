#pragma once
// A small POSIX process runner for the CLI (which does not link Qt when the GUI is off): starts a
// program in its own process group, streams its stdout line by line, collects stderr, and kills
// the whole group on a time-out or when the CLI is interrupted (SIGINT/SIGTERM). Always reaps the
// child: no hang, no zombie.
#include <functional>
#include <string>
#include <vector>

namespace onnxlens::cli {

struct ChildProcessResult {
    bool started = false;  // false: fork or exec failed (then `error` says why)
    int exitCode = -1;     // when it exited normally
    int signal = 0;        // when a signal ended it (our kill after a time-out included)
    bool timedOut = false;
    bool interrupted = false;  // the CLI received SIGINT/SIGTERM and stopped the child
    std::string stderrText;
    std::string error;
};

// `argv[0]` is the program (a path; no PATH search). `onStdoutLine` gets each line without '\n'.
ChildProcessResult runChildProcess(const std::vector<std::string>& argv, double timeoutSeconds,
                                   const std::function<void(const std::string&)>& onStdoutLine);

}  // namespace onnxlens::cli
