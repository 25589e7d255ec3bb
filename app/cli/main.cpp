// onnxlens-cli: everything onnxlens does that needs no window, for scripts and CI.
#include <csignal>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "CliCommon.h"

namespace {

struct Command {
    const char* name;
    int (*run)(const std::vector<std::string>&);
    const char* summary;
};

const Command kCommands[] = {
    {"info", onnxlens::cli::runInfoCommand, "MODEL [--json]: the model summary"},
    {"check", onnxlens::cli::runCheckCommand,
     "MODEL [--json]: onnx checker and engine support of every node; with --dynamic-axes, "
     "whether the declared dynamic axes work (exit 0 yes, 1 no, 2 cannot tell)"},
    {"run", onnxlens::cli::runRunCommand,
     "MODEL [--input NAME=FILE]... [--dim SYMBOL=N]... [--seed N] [--out DIR] [--threads N]"},
    {"compare", onnxlens::cli::runCompareCommand,
     "MODEL [--data-set DIR]... [--rtol R] [--atol A]: compare with reference outputs"},
    {"bench", onnxlens::cli::runBenchCommand,
     "MODEL [--warmup N] [--runs N] [--threads N] [--dim S=N] [--profile FILE]: latency"},
    {"conformance", onnxlens::cli::runConformanceCommand,
     "DIR... [--json FILE]: run ONNX backend test cases"},
    {"cost", onnxlens::cli::runCostCommand,
     "MODEL [--dim SYMBOL=N]... [--json | --csv]: MACs, FLOPs, parameters and memory per node"},
    {"diff", onnxlens::cli::runDiffCommand,
     "A B [--json] [--numeric [--input NAME=FILE]... [--data-set DIR | --random] [--seed N] "
     "[--rtol R] [--atol A]]: what differs between two models (exit 0 identical, 1 different); "
     "--numeric runs both and finds where their values part ways"},
    {"render", onnxlens::cli::runRenderCommand, "MODEL --out FILE.svg|.png: draw the graph"},
    {"optimize", onnxlens::cli::runOptimizeCommand,
     "MODEL OUT [--passes A,B]: save the optimized graph (--list-passes: the passes)"},
    {"quantize", onnxlens::cli::runQuantizeCommand,
     "MODEL OUT.onnx [--per-channel] [--op-types MatMul,Gemm,Conv] [--exclude NODE]... [--format "
     "qoperator|qdq] "
     "[--json] [--report DIR]: dynamic int8 quantization of the weights"},
    {"export", onnxlens::cli::runExportCommand,
     "(--torchvision NAME | --script FILE | --torchscript FILE --input-shape S) --out DIR [--opset "
     "N] "
     "[--task T] [--bench] [--quantize] [--runs N] [--warmup N] [--threads N] [--python PATH] "
     "[--timeout S]: "
     "PyTorch to ONNX, validated against PyTorch"},
};

void printUsage(std::ostream& out) {
    out << "usage: onnxlens-cli COMMAND [ARGS] [--json]\n\ncommands:\n";
    for (const auto& c : kCommands) out << "  " << c.name << " " << c.summary << "\n";
}

}  // namespace

int main(int argc, char** argv) {
    // The CLI never dies on SIGPIPE (e.g. `onnxlens-cli info m.onnx | head`).
    std::signal(SIGPIPE, SIG_IGN);
    if (argc < 2) {
        printUsage(std::cerr);
        return onnxlens::cli::kExitUsage;
    }
    std::string name = argv[1];
    if (name == "--help" || name == "-h" || name == "help") {
        printUsage(std::cout);
        return onnxlens::cli::kExitOk;
    }
    std::vector<std::string> args(argv + 2, argv + argc);
    for (const auto& c : kCommands) {
        if (name != c.name) continue;
        try {
            return c.run(args);
        } catch (const onnxlens::cli::UsageError& e) {
            std::cerr << "onnxlens-cli " << name << ": " << e.what() << "\n";
            return onnxlens::cli::kExitUsage;
        } catch (const std::bad_alloc&) {
            std::cerr << "onnxlens-cli " << name << ": out of memory\n";
            return onnxlens::cli::kExitUsage;
        } catch (const std::exception& e) {
            std::cerr << "onnxlens-cli " << name << ": " << e.what() << "\n";
            return onnxlens::cli::kExitUsage;
        }
    }
    std::cerr << "onnxlens-cli: unknown command '" << name << "'\n";
    printUsage(std::cerr);
    return onnxlens::cli::kExitUsage;
}
