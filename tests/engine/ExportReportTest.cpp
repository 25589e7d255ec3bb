// engine::validateExport on export folders built from a committed sample (PyTorch's references)
// and a hand-written export.json: no torch needed. The end-to-end exports through the real
// exporter are in tests/app/CliExportCommandTest.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "onnxlens/engine/Session.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/TensorFile.h"
#include "onnxlens/model/TestDataSet.h"
#include "onnxlens/workflows/ExportReport.h"
#include "onnxlens/workflows/ExporterCommand.h"
#include "onnxlens/workflows/ReferenceRun.h"

namespace fs = std::filesystem;
using namespace onnxlens::engine;

namespace {

class ExportFolder : public ::testing::Test {
  protected:
    void SetUp() override {
        static int counter = 0;
        dir_ = fs::temp_directory_path() / ("onnxlens-export-report-" + std::to_string(::getpid()) +
                                            "-" + std::to_string(counter++));
        fs::create_directories(dir_);
        fs::copy(fs::path(ONNXLENS_SOURCE_DIR) / "resources" / "samples" / "mnist_cnn", dir_,
                 fs::copy_options::recursive);
        writeExportJson(true);
    }
    void TearDown() override { fs::remove_all(dir_); }

    void writeExportJson(bool dynamicBatch, double torchMedianMs = 2.0) {
        nlohmann::json doc = {
            {"source", {{"kind", "script"}, {"name", "mnist.py"}}},
            {"torch_version", "1.13.0"},
            {"onnx_version", "1.12.0"},
            {"opset", 17},
            {"export_seconds", 0.5},
            {"dynamic_batch", dynamicBatch},
            {"pytorch_latency",
             {{"runs", 3}, {"warmup", 1}, {"median_ms", torchMedianMs}, {"min_ms", 1.0}}}};
        std::ofstream(dir_ / "export.json") << doc.dump();
    }

    const ExportReportLine& line(const ExportReport& report, const std::string& key) {
        for (const auto& l : report.lines)
            if (l.key == key) return l;
        throw std::runtime_error("no line " + key);
    }

    fs::path dir_;
};

}  // namespace

TEST_F(ExportFolder, EveryLinePassesOnPyTorchsOwnReferences) {
    ExportReportOptions options;
    options.runs = 3;
    options.warmup = 1;
    options.threads = 1;
    std::vector<std::string> steps;
    auto report = validateExport(dir_, options, [&](const std::string& s) { steps.push_back(s); });
    ASSERT_TRUE(report) << report.error().message;
    EXPECT_TRUE(report->passed);
    ASSERT_EQ(report->lines.size(), 5u);
    for (const auto& l : report->lines)
        if (l.key == "latency")  // a loaded test machine is flagged (WARN), never failed
            EXPECT_NE(l.status, ReportStatus::Failed) << l.key << ": " << l.figure;
        else
            EXPECT_EQ(l.status, ReportStatus::Passed) << l.key << ": " << l.figure;
    // Without an exporter script, PyTorch's figures are export.json's, and the line says so.
    EXPECT_FALSE(report->latency.interleaved);
    EXPECT_NE(line(*report, "latency").figure.find("PyTorch timed at export"), std::string::npos)
        << line(*report, "latency").figure;
    EXPECT_NE(line(*report, "numbers").figure.find("cosine similarity"), std::string::npos)
        << line(*report, "numbers").figure;
    EXPECT_NE(line(*report, "numbers").figure.find("|a - e| <= 1e-04 + 1e-03 * |e|"),
              std::string::npos)
        << line(*report, "numbers").figure;
    EXPECT_EQ(report->opset, 17);
    EXPECT_EQ(report->modelBytes, fs::file_size(dir_ / "model.onnx"));
    ASSERT_EQ(report->dataSets.size(), 2u);
    EXPECT_LE(report->dataSets[0].maxAbsError, 1e-4);
    EXPECT_EQ(report->engineLatency.runs, 3);
    EXPECT_DOUBLE_EQ(report->latencyRatio, report->engineLatency.medianMs / 2.0);
    EXPECT_FALSE(steps.empty());

    ASSERT_TRUE(writeExportReport(*report));
    auto json = nlohmann::json::parse(std::ifstream(dir_ / "report.json"));
    EXPECT_TRUE(json["passed"].get<bool>());
    EXPECT_EQ(json["lines"].size(), 5u);
    EXPECT_DOUBLE_EQ(json["latency_ratio"].get<double>(), report->latencyRatio);
    EXPECT_TRUE(json.contains("latency_within_noise"));
    EXPECT_TRUE(json["engine_latency"].contains("p10_ms"));
    std::ifstream md(dir_ / "report.md");
    const std::string text((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("| PASS | Numbers match PyTorch |"), std::string::npos) << text;
    EXPECT_NE(text.find("Every check passed."), std::string::npos);
    EXPECT_NE(text.find("| P10 | median | P90 |"), std::string::npos) << text;
}

TEST(ExportReportWarnings, NearZeroOutputsWarnInsteadOfPassing) {
    // Outputs of ~1e-9: even zeros would be within 1e-4 of them.
    const fs::path folder =
        fs::path(ONNXLENS_SOURCE_DIR) / "tests" / "engine" / "data" / "near_zero_export";
    ExportReportOptions options;
    options.benchmark = false;
    auto report = validateExport(folder, options);
    ASSERT_TRUE(report) << report.error().message;
    const auto& numbers = report->lines[2];
    ASSERT_EQ(numbers.key, "numbers");
    EXPECT_EQ(numbers.status, ReportStatus::Warning) << numbers.figure;
    EXPECT_NE(numbers.figure.find("the check cannot tell right from wrong; use real weights or "
                                  "inputs"),
              std::string::npos)
        << numbers.figure;
    EXPECT_NE(numbers.figure.find("outputs are ~"), std::string::npos) << numbers.figure;
    EXPECT_EQ(report->lines[3].status, ReportStatus::Warning);  // batch 2: the same
    EXPECT_TRUE(report->passed);  // nothing failed, but the card does not say PASS
    EXPECT_FALSE(report->dataSets[0].warning.empty());
    EXPECT_NE(exportReportMarkdown(*report).find("| WARN | Numbers match PyTorch |"),
              std::string::npos);
    EXPECT_NE(exportReportJson(*report).find("\"status\": \"warn\""), std::string::npos);
}

TEST_F(ExportFolder, PerturbedReferenceFailsTheNumbersLineWithTheError) {
    const fs::path file = dir_ / "test_data_set_0" / "output_0.pb";
    auto proto = onnxlens::readTensorPbFile(file);
    ASSERT_TRUE(proto) << proto.error().message;
    Tensor t = tensorFromProto(*proto);
    t.data<float>()[2] += 0.25f;
    std::ofstream(file, std::ios::binary) << tensorToProto(t, proto->name()).SerializeAsString();

    ExportReportOptions options;
    options.benchmark = false;
    auto report = validateExport(dir_, options);
    ASSERT_TRUE(report) << report.error().message;
    EXPECT_FALSE(report->passed);
    EXPECT_EQ(line(*report, "numbers").status, ReportStatus::Failed);
    EXPECT_NEAR(report->dataSets[0].maxAbsError, 0.25, 1e-3);
    EXPECT_NE(line(*report, "numbers").figure.find("max abs error 0.25"), std::string::npos)
        << line(*report, "numbers").figure;
    EXPECT_EQ(line(*report, "dynamic_batch").status,
              ReportStatus::Passed);  // the other set is intact
    EXPECT_EQ(line(*report, "latency").status, ReportStatus::Skipped);
}

TEST_F(ExportFolder, StaticExportSkipsTheDynamicBatchLine) {
    fs::remove_all(dir_ / "test_data_set_1");
    writeExportJson(false);
    ExportReportOptions options;
    options.benchmark = false;
    auto report = validateExport(dir_, options);
    ASSERT_TRUE(report) << report.error().message;
    EXPECT_TRUE(report->passed);
    EXPECT_EQ(line(*report, "dynamic_batch").status, ReportStatus::Skipped);

    writeExportJson(true);  // promised but missing: a failure
    report = validateExport(dir_, options);
    ASSERT_TRUE(report);
    EXPECT_EQ(line(*report, "dynamic_batch").status, ReportStatus::Failed);
}

TEST_F(ExportFolder, LatencyRatioLimitAndBrokenModel) {
    ExportReportOptions options;
    options.runs = 2;
    options.warmup = 0;
    options.maxLatencyRatio = 1e-9;
    auto report = validateExport(dir_, options);
    ASSERT_TRUE(report);
    EXPECT_EQ(line(*report, "latency").status, ReportStatus::Failed);
    EXPECT_FALSE(report->passed);

    std::ofstream(dir_ / "model.onnx", std::ios::binary | std::ios::trunc) << "not a model";
    report = validateExport(dir_, options);
    ASSERT_TRUE(report);
    EXPECT_EQ(line(*report, "exported").status, ReportStatus::Failed);
    EXPECT_NE(line(*report, "exported").figure.find("model.onnx"), std::string::npos);
    EXPECT_FALSE(report->passed);
}

TEST_F(ExportFolder, NotAnExportFolderAndCancel) {
    fs::remove(dir_ / "export.json");
    auto report = validateExport(dir_);
    ASSERT_FALSE(report);
    EXPECT_NE(report.error().message.find("export.json"), std::string::npos);

    writeExportJson(true);
    std::atomic<bool> cancel{true};
    report = validateExport(dir_, {}, {}, &cancel);
    ASSERT_FALSE(report);
    EXPECT_NE(report.error().message.find("cancelled"), std::string::npos);
}

TEST(ExporterCommand, CommandLineAndOutcomes) {
    ExportRequest r;
    r.source = "resnet18";
    r.outDir = "/tmp/out";
    r.opset = 13;
    r.task = "";
    r.runs = 3;
    r.warmup = 1;
    EXPECT_EQ(validateExportRequest(r), "");
    const auto argv = exporterCommandLine(r, "/x/onnxlens_export.py");
    const std::vector<std::string> expected = {"/usr/bin/python3",
                                               "-u",
                                               "/x/onnxlens_export.py",
                                               "--torchvision",
                                               "resnet18",
                                               "--out",
                                               "/tmp/out",
                                               "--opset",
                                               "13",
                                               "--runs",
                                               "3",
                                               "--warmup",
                                               "1"};
    EXPECT_EQ(argv, expected);

    r.sourceKind = ExportSourceKind::TorchScript;
    r.source = "/nonexistent.pt";
    EXPECT_NE(validateExportRequest(r).find("no such file"), std::string::npos);
    r.sourceKind = ExportSourceKind::Torchvision;
    r.inputShape = "1x3xx4";
    EXPECT_NE(validateExportRequest(r).find("--input-shape"), std::string::npos);
    r.inputShape = "1x3x224x224,1x10";
    EXPECT_EQ(validateExportRequest(r), "");
    r.task = "translation";
    EXPECT_NE(validateExportRequest(r).find("unknown --task"), std::string::npos);

    ExporterOutcome ok;
    EXPECT_FALSE(describeExporterOutcome(ok, r));
    ExporterOutcome own;
    own.exitCode = 5;
    own.stderrText = "warning: x\nerror: operator aten::foo is not supported\nhint: try opset 18\n";
    auto f = describeExporterOutcome(own, r);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->message, "operator aten::foo is not supported");
    EXPECT_EQ(f->hint, "try opset 18");
    ExporterOutcome crash;
    crash.signal = 11;
    f = describeExporterOutcome(crash, r);
    ASSERT_TRUE(f);
    EXPECT_NE(f->message.find("signal 11"), std::string::npos);
    ExporterOutcome late;
    late.timedOut = true;
    late.signal = 9;
    r.timeoutSeconds = 5;
    f = describeExporterOutcome(late, r);
    ASSERT_TRUE(f);
    EXPECT_NE(f->message.find("within 5 s"), std::string::npos);
}

// Module records as the exporter writes them (modules/index.json and .npy), made here from the
// engine's own values of the sample (no torch): conv1, fc1 and fc2 recorded as they are, conv2
// with 0.5 added to one element. conv2 is the first divergent module, fc1 and fc2 are downstream;
// a record whose file is missing and one naming no value of the graph are problems, not crashes;
// a broken index.json is a warning naming the file.
TEST_F(ExportFolder, ModuleRecordsNameTheFirstDivergentModule) {
    auto model = onnxlens::loadModel(dir_ / "model.onnx");
    ASSERT_TRUE(model) << model.error().message;
    SessionOptions sessionOptions;
    sessionOptions.optimize = false;
    sessionOptions.threads = 1;
    auto session = Session::create(*model, sessionOptions);
    ASSERT_TRUE(session) << session.error().message;
    auto set = onnxlens::readTestDataSetFolder(dir_ / "test_data_set_0", *model->proto);
    ASSERT_TRUE(set) << set.error().message;
    auto feeds = feedsFromTestDataSet(**session, *set);
    ASSERT_TRUE(feeds) << feeds.error().message;
    std::map<std::string, Value> values;
    RunControl control;
    control.onValue = [&](const std::string& name, const Value& v) { values[name] = v; };
    ASSERT_TRUE((*session)->run(*feeds, &control));

    const fs::path records = dir_ / "modules";
    fs::create_directories(records);
    nlohmann::json modules = nlohmann::json::array();
    auto record = [&](const std::string& module, const std::string& value, float delta) {
        Tensor t = values.at(value).tensor().clone();
        t.data<float>()[0] += delta;
        const std::string file = module + ".npy";
        ASSERT_TRUE(onnxlens::writeNpyFile(records / file, tensorToProto(t, value)));
        modules.push_back({{"module", module},
                           {"type", "Layer"},
                           {"outputs", {{{"element", 0}, {"file", file}, {"onnx_value", value}}}}});
    };
    record("conv1", "/conv1/Conv_output_0", 0);
    record("conv2", "/conv2/Conv_output_0", 0.5f);
    record("fc1", "/fc1/Gemm_output_0", 0);
    record("fc2", "/fc2/Gemm_output_0", 0);
    modules.push_back({{"module", "gone"},
                       {"outputs", {{{"file", "gone.npy"}, {"onnx_value", "/Relu_output_0"}}}}});
    modules.push_back({{"module", "elsewhere"},
                       {"outputs", {{{"file", "conv1.npy"}, {"onnx_value", "no_such_value"}}}}});
    modules.push_back({{"module", "drop"}, {"problem", "no ONNX node in its scope"}});
    modules.push_back({{"module", 7}, {"outputs", {{{"element", "x"}, {"file", 3}}}}});  // hostile
    std::ofstream(records / "index.json") << nlohmann::json{{"modules", modules}}.dump();

    ExportReportOptions options;
    options.benchmark = false;
    options.threads = 1;
    auto report = validateExport(dir_, options);
    ASSERT_TRUE(report) << report.error().message;
    EXPECT_EQ(line(*report, "numbers").status, ReportStatus::Passed);
    // The outputs agree, a module does not: a warning, not a failure.
    EXPECT_EQ(line(*report, "modules").status, ReportStatus::Warning);
    EXPECT_NE(line(*report, "modules")
                  .figure.find("first divergent module conv2 (Layer) at ONNX "
                               "node /conv2/Conv (Conv)"),
              std::string::npos)
        << line(*report, "modules").figure;
    ASSERT_TRUE(report->modulesCompared);
    const auto& c = report->modules;
    EXPECT_EQ(c.modules, 8);
    EXPECT_EQ(c.compared, 4);
    ASSERT_GE(c.firstDivergence, 0);
    const auto& first = c.outputs[c.firstDivergence];
    EXPECT_EQ(first.module, "conv2");
    EXPECT_NEAR(first.diff.figures.maxAbsError, 0.5, 1e-5);
    EXPECT_EQ(first.diff.outside, 1);
    std::vector<std::string> growth;
    for (int i : c.growth) growth.push_back(c.outputs[i].module);
    EXPECT_EQ(growth, (std::vector<std::string>{"fc1", "fc2"}));
    for (const auto& o : c.outputs) {
        if (o.module == "conv1") {
            EXPECT_EQ(o.diff.figures.maxAbsError, 0);
        } else if (o.module == "gone") {
            EXPECT_NE(o.diff.problem.find("gone.npy"), std::string::npos) << o.diff.problem;
        } else if (o.module == "elsewhere") {
            EXPECT_NE(o.problem.find("no node of model.onnx makes"), std::string::npos);
        } else if (o.module == "drop") {
            EXPECT_EQ(o.problem, "no ONNX node in its scope");
        }
    }
    const std::string md = exportReportMarkdown(*report);
    EXPECT_NE(md.find("First module that diverges: `conv2` (Layer), ONNX node `/conv2/Conv`"),
              std::string::npos)
        << md;
    const auto json = nlohmann::json::parse(exportReportJson(*report));
    EXPECT_EQ(json["modules"]["first_divergence"]["module"], "conv2");

    std::ofstream(records / "index.json") << "{\"modules\": 3";
    report = validateExport(dir_, options);
    ASSERT_TRUE(report) << report.error().message;
    EXPECT_EQ(line(*report, "modules").status, ReportStatus::Warning);
    EXPECT_NE(line(*report, "modules").figure.find("index.json"), std::string::npos);
    EXPECT_TRUE(report->passed);  // the rest of the export is sound
}
