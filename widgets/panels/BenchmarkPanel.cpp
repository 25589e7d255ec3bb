#include "widgets/panels/BenchmarkPanel.h"

#include <QAction>
#include <QCheckBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QThread>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "onnxlens/model/NodeNames.h"
#include "widgets/SettingsKeys.h"
#include "widgets/charts/LatencyCharts.h"
#include "widgets/charts/RooflineChart.h"
#include "widgets/panels/ActionAvailability.h"
#include "widgets/panels/DecodePanel.h"
#include "widgets/panels/ProfileView.h"
#include "widgets/panels/SweepTab.h"
#include "widgets/panels/ThreadsText.h"
#include "widgets/workers/ModelController.h"
#include "widgets/workers/RooflineAnalysis.h"

namespace onnxlens::widgets {

namespace {
const char* kWarmupKey = settings::kBenchmarkWarmup;
const char* kRunsKey = settings::kBenchmarkRuns;
const char* kThreadsKey = settings::kBenchmarkThreads;
const char* kProfileKey = settings::kBenchmarkProfile;
const char* kHeatKey = "benchmark/heat";
const char* kExportDirKey = "benchmark/exportDir";

QSpinBox* makeSpin(int minimum, int maximum, int value, QWidget* parent) {
    auto* spin = new QSpinBox(parent);
    spin->setRange(minimum, maximum);
    spin->setValue(value);
    spin->setAccelerated(true);
    return spin;
}

// "batch = 1, sequence = 128": the symbolic dims the benchmark timed; "" when the inputs have
// none.
QString dimsText(const std::map<std::string, std::int64_t>& dims) {
    QStringList parts;
    for (const auto& [symbol, value] : dims)
        parts << QStringLiteral("%1 = %2").arg(QString::fromStdString(symbol)).arg(value);
    return parts.join(QStringLiteral(", "));
}

QString benchmarkThreadsText(const engine::BenchmarkResult& result, ThreadsTextForm form) {
    return threadsText(result.threads, result.reducedRuns, result.statistics.runs,
                       result.fewestThreads, form);
}

QString statusError(const Status& status) {
    return status ? QString() : QString::fromStdString(status.error().message);
}
}  // namespace

BenchmarkPanel::BenchmarkPanel(QWidget* parent) : QWidget(parent) {
    QSettings settings;
    warmup_ = makeSpin(0, 100000, settings::kBenchmarkWarmupDefault, this);
    runs_ = makeSpin(1, 1000000, settings::kBenchmarkRunsDefault, this);
    threads_ = makeSpin(0, 256, settings::kBenchmarkThreadsDefault, this);
    threads_->setSpecialValueText(tr("all cores (%1)").arg(QThread::idealThreadCount()));
    warmup_->setToolTip(
        tr("Runs before the counted ones, not in the statistics (caches, allocations)"));
    threads_->setToolTip(tr("Intra-op threads of the engine"));
    profile_ = new QCheckBox(tr("Profile operators"), this);
    reloadSettings();
    profile_->setToolTip(
        tr("Time every node of every counted run (adds two clock reads per node)"));
    heatCheck_ = new QCheckBox(tr("Colour graph by time"), this);

    // One row of settings and buttons: the dock is wide and short, under the graph.
    auto* controls = new QHBoxLayout;
    auto labelled = [this, controls](const QString& text, QWidget* field) {
        auto* label = new QLabel(text, this);
        label->setBuddy(field);
        controls->addWidget(label);
        controls->addWidget(field);
        controls->addSpacing(8);
    };
    labelled(tr("&Warm-up runs:"), warmup_);
    labelled(tr("Counted &runs:"), runs_);
    labelled(tr("&Threads:"), threads_);
    controls->addWidget(profile_);
    controls->addWidget(heatCheck_);
    controls->addStretch(1);
    startButton_ = new QPushButton(tr("Start"), this);
    startButton_->setObjectName(QStringLiteral("benchmarkStart"));
    cancelButton_ = new QPushButton(tr("Cancel"), this);
    progress_ = new QProgressBar(this);
    progress_->setRange(0, 1);
    progress_->setValue(0);
    progress_->setTextVisible(true);
    controls->addWidget(startButton_);
    controls->addWidget(cancelButton_);
    status_ = new QLabel(this);
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    statistics_ = new QTableWidget(0, 2, this);
    statistics_->setObjectName(QStringLiteral("benchmarkStatistics"));
    statistics_->setHorizontalHeaderLabels({tr("Statistic"), tr("Value")});
    statistics_->verticalHeader()->hide();
    statistics_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    statistics_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    statistics_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    statistics_->setSelectionBehavior(QAbstractItemView::SelectRows);
    statistics_->setMinimumHeight(statistics_->fontMetrics().height() * 6);
    charts_ = new LatencyCharts(this);
    statistics_->verticalHeader()->setDefaultSectionSize(statistics_->fontMetrics().height() + 4);
    auto* latency = new QSplitter(Qt::Horizontal, this);
    latency->addWidget(statistics_);
    latency->addWidget(charts_);
    latency->setStretchFactor(0, 0);
    latency->setStretchFactor(1, 1);
    latency->setSizes({260, 1000});
    profileView_ = new ProfileView(this);
    tabs_ = new QTabWidget(this);
    tabs_->addTab(latency, tr("Latency"));
    tabs_->addTab(profileView_, tr("Profile"));
    roofline_ = new RooflineChart(this);
    tabs_->addTab(roofline_, tr("Roofline"));
    sweepTab_ = new SweepTab(this);
    sweepTab_->setRunSettingsSource([this] {
        return SweepTab::RunSettings{warmup_->value(), runs_->value(), threads_->value()};
    });
    tabs_->addTab(sweepTab_, tr("Sweep"));
    decodePanel_ = new DecodePanel(this);
    const int decodeTab = tabs_->addTab(decodePanel_, tr("Decode"));
    // Greyed out, with why as its tooltip, for a model that is not a decoder with a KV cache.
    connect(decodePanel_, &DecodePanel::availabilityChanged, this,
            [this, decodeTab](bool available, const QString& reason) {
                tabs_->setTabEnabled(decodeTab, available);
                tabs_->setTabToolTip(decodeTab, available ? tr("Greedy decoding of a decoder "
                                                               "with a KV cache: tokens per "
                                                               "second as the context grows")
                                                          : reason);
            });

    exportTrace_ = new QPushButton(tr("Trace…"), this);
    exportTrace_->setToolTip(
        tr("Export the per-node profile as Chrome trace JSON (Perfetto, chrome://tracing)"));
    exportJson_ = new QPushButton(tr("JSON…"), this);
    exportJson_->setToolTip(tr("Export the whole result as JSON"));
    exportMarkdown_ = new QPushButton(tr("Markdown…"), this);
    exportMarkdown_->setToolTip(tr("Export the whole result as a Markdown report"));
    auto* statusRow = new QHBoxLayout;
    statusRow->addWidget(progress_, 1);
    statusRow->addSpacing(8);
    statusRow->addWidget(new QLabel(tr("Export:"), this));
    statusRow->addWidget(exportTrace_);
    statusRow->addWidget(exportJson_);
    statusRow->addWidget(exportMarkdown_);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addLayout(statusRow);
    layout->addWidget(status_);
    layout->addWidget(tabs_, 1);

    startAction_ = new QAction(tr("&Run Benchmark"), this);
    startAction_->setShortcut(QKeySequence(tr("Ctrl+B")));
    cancelAction_ = new QAction(tr("&Cancel Benchmark"), this);
    cancelAction_->setShortcut(QKeySequence(tr("Ctrl+Shift+B")));
    heatAction_ = new QAction(tr("Colour Graph by &Time"), this);
    heatAction_->setCheckable(true);
    heatAction_->setShortcut(QKeySequence(tr("Ctrl+Shift+H")));
    heatAction_->setChecked(settings.value(kHeatKey, true).toBool());
    heatCheck_->setChecked(heatAction_->isChecked());

    connect(startButton_, &QPushButton::clicked, this, &BenchmarkPanel::start);
    connect(cancelButton_, &QPushButton::clicked, this, &BenchmarkPanel::cancel);
    connect(startAction_, &QAction::triggered, this, &BenchmarkPanel::start);
    connect(cancelAction_, &QAction::triggered, this, &BenchmarkPanel::cancel);
    connect(heatCheck_, &QCheckBox::toggled, heatAction_, &QAction::setChecked);
    connect(heatAction_, &QAction::toggled, this, [this](bool on) {
        heatCheck_->setChecked(on);
        QSettings().setValue(kHeatKey, on);
    });
    for (QSpinBox* spin : {warmup_, runs_, threads_})
        connect(spin, &QSpinBox::valueChanged, this, &BenchmarkPanel::saveSettings);
    connect(profile_, &QCheckBox::toggled, this, &BenchmarkPanel::saveSettings);
    connect(exportTrace_, &QPushButton::clicked, this,
            [this] { chooseAndExport(QStringLiteral("trace")); });
    connect(exportJson_, &QPushButton::clicked, this,
            [this] { chooseAndExport(QStringLiteral("json")); });
    connect(exportMarkdown_, &QPushButton::clicked, this,
            [this] { chooseAndExport(QStringLiteral("md")); });
    connect(profileView_, &ProfileView::nodeActivated, this, &BenchmarkPanel::nodeActivated);
    connect(roofline_, &RooflineChart::nodeActivated, this, &BenchmarkPanel::nodeActivated);

    showResult(nullptr);
    updateActions();
}

BenchmarkPanel::~BenchmarkPanel() = default;

void BenchmarkPanel::reloadSettings() {
    // Every value read before any is set: each change saves all four (saveSettings).
    QSettings settings;
    const int warmup = settings.value(kWarmupKey, settings::kBenchmarkWarmupDefault).toInt();
    const int runs = settings.value(kRunsKey, settings::kBenchmarkRunsDefault).toInt();
    const int threads = settings.value(kThreadsKey, settings::kBenchmarkThreadsDefault).toInt();
    const bool profile = settings.value(kProfileKey, settings::kBenchmarkProfileDefault).toBool();
    warmup_->setValue(warmup);
    runs_->setValue(runs);
    threads_->setValue(threads);
    profile_->setChecked(profile);
}

void BenchmarkPanel::saveSettings() const {
    QSettings settings;
    settings.setValue(kWarmupKey, warmup_->value());
    settings.setValue(kRunsKey, runs_->value());
    settings.setValue(kThreadsKey, threads_->value());
    settings.setValue(kProfileKey, profile_->isChecked());
}

void BenchmarkPanel::setController(ModelController* controller) {
    for (const auto& connection : controllerConnections_) disconnect(connection);
    controllerConnections_.clear();
    controller_ = controller;
    // Start follows whether the engine can run the model at all.
    if (controller) {
        controllerConnections_.push_back(
            connect(controller, &ModelController::compiled, this, &BenchmarkPanel::updateActions));
        controllerConnections_.push_back(connect(controller, &ModelController::compileFailed, this,
                                                 &BenchmarkPanel::updateActions));
    }
    sweepTab_->setDocument(controller ? controller->document() : nullptr);
    decodePanel_->setController(controller);
    if (!isRunning())
        status_->setText(controller ? QString() : tr("Open a model to benchmark it."));
    showResult(result());
    updateActions();
}

std::shared_ptr<const engine::BenchmarkResult> BenchmarkPanel::result() const {
    return controller_ ? controller_->lastBenchmark() : nullptr;
}

void BenchmarkPanel::start() {
    if (isRunning() || !controller_) return;
    BenchmarkSettings settings;
    settings.warmupRuns = warmup_->value();
    settings.runs = runs_->value();
    settings.threads = threads_->value();
    settings.profile = profile_->isChecked();
    ModelController* controller = controller_;
    runningController_ = controller;
    connect(controller, &ModelController::started, this, [this](const QString& what) {
        status_->setText(what + QStringLiteral("…"));
        progress_->setRange(0, 0);
    });
    connect(controller, &ModelController::benchmarkProgress, this,
            [this](bool warmingUp, int done, int total, double lastMs) {
                progress_->setFormat(QStringLiteral("%v / %m"));
                progress_->setRange(0, total);
                progress_->setValue(done);
                status_->setText(
                    (warmingUp ? tr("Warming up: run %1 of %2, %3 ms") : tr("Run %1 of %2: %3 ms"))
                        .arg(done)
                        .arg(total)
                        .arg(lastMs, 0, 'f', 3));
            });
    connect(controller, &QObject::destroyed, this, [this] {
        onEnded(tr("Benchmark stopped: its model was closed."));
        emit cancelled();
    });
    connect(controller, &ModelController::benchmarkFinished, this,
            [this, controller] { onFinished(controller->lastBenchmark()); });
    connect(controller, &ModelController::failed, this,
            [this](EngineJob job, const QString& message) {
                if (job != EngineJob::Benchmark) return;
                onEnded(tr("Benchmark failed: %1").arg(message));
                emit failed(message);
            });
    connect(controller, &ModelController::cancelled, this, [this](EngineJob job) {
        if (job != EngineJob::Benchmark) return;
        onEnded(tr("Benchmark cancelled."));
        emit cancelled();
    });
    progress_->setFormat(QString());
    progress_->setRange(0, 0);  // busy until the first run reports
    status_->setText(tr("Starting…"));
    updateActions();
    emit started();
    controller->benchmark(settings, feeds_);  // may fail at once (a model that cannot compile)
}

void BenchmarkPanel::cancel() {
    if (!isRunning()) return;
    status_->setText(tr("Cancelling…"));
    runningController_->cancel();
}

void BenchmarkPanel::onEnded(const QString& status) {
    if (runningController_) runningController_->disconnect(this);
    runningController_.clear();
    progress_->setRange(0, 1);
    progress_->setValue(0);
    status_->setText(status);
    updateActions();
}

void BenchmarkPanel::onFinished(std::shared_ptr<const engine::BenchmarkResult> result) {
    ModelController* controller = runningController_.data();
    if (controller) {
        controller->disconnect(this);
        if (!rooflines_.contains(controller))  // forget its analysis when the model closes
            connect(controller, &QObject::destroyed, this,
                    [this, controller] { rooflines_.remove(controller); });
        rooflines_.remove(controller);
        if (result->profiled) startRoofline(controller, result);
    }
    runningController_.clear();
    progress_->setRange(0, 1);
    progress_->setValue(1);
    const auto& s = result->statistics;
    const QString dims = dimsText(result->dims);
    status_->setText(
        tr("%1 runs after %2 warm-up%7: median %3 ms, P90 %4 ms (%5, compiled in %6 ms)")
            .arg(s.runs)
            .arg(result->warmupRuns)
            .arg(s.medianMs, 0, 'f', 3)
            .arg(s.p90Ms, 0, 'f', 3)
            .arg(benchmarkThreadsText(*result, ThreadsTextForm::Status))
            .arg(result->loadMs, 0, 'f', 0)
            .arg(dims.isEmpty() ? QString() : tr(" at %1").arg(dims)));
    if (controller && controller == controller_) showResult(result);
    updateActions();
    emit finished();
}

void BenchmarkPanel::showResult(std::shared_ptr<const engine::BenchmarkResult> result) {
    statistics_->setRowCount(0);
    if (!result) {
        charts_->clear();
        profileView_->clear();
        return;
    }
    const auto& s = result->statistics;
    const std::pair<QString, QString> rows[] = {
        {tr("min"), QString::number(s.minMs, 'f', 3) + " ms"},
        {tr("mean"), QString::number(s.meanMs, 'f', 3) + " ms"},
        {tr("median (P50)"), QString::number(s.medianMs, 'f', 3) + " ms"},
        {tr("P90"), QString::number(s.p90Ms, 'f', 3) + " ms"},
        {tr("P99"), QString::number(s.p99Ms, 'f', 3) + " ms"},
        {tr("max"), QString::number(s.maxMs, 'f', 3) + " ms"},
        {tr("std. deviation"), QString::number(s.stddevMs, 'f', 3) + " ms"},
        {tr("counted runs"), QString::number(s.runs)},
        {tr("warm-up runs"), QString::number(result->warmupRuns)},
        {tr("intra-op threads"), benchmarkThreadsText(*result, ThreadsTextForm::Cell)},
        {tr("compile time"), QString::number(result->loadMs, 'f', 1) + " ms"},
        {tr("input dims"), result->dims.empty() ? tr("none symbolic") : dimsText(result->dims)},
    };
    statistics_->setRowCount(static_cast<int>(std::size(rows)));
    for (int r = 0; r < static_cast<int>(std::size(rows)); ++r) {
        statistics_->setItem(r, 0, new QTableWidgetItem(rows[r].first));
        auto* value = new QTableWidgetItem(rows[r].second);
        value->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        value->setToolTip(rows[r].second);  // the whole text where the column cuts it
        statistics_->setItem(r, 1, value);
    }
    // The threads' cell is short (the column is sized to its values); its tooltip says why.
    for (int r = 0; r < statistics_->rowCount(); ++r)
        if (statistics_->item(r, 0)->text() == tr("intra-op threads"))
            statistics_->item(r, 1)->setToolTip(
                benchmarkThreadsText(*result, ThreadsTextForm::Full));
    charts_->setSamples(result->samplesMs, s);
    profileView_->setResult(result);
    showRoofline();
}

std::shared_ptr<const RooflineAnalysis> BenchmarkPanel::roofline() const {
    return controller_ ? rooflines_.value(controller_.data()) : nullptr;
}

void BenchmarkPanel::startRoofline(ModelController* controller,
                                   std::shared_ptr<const engine::BenchmarkResult> result) {
    auto document = controller->document();
    auto* watcher = new QFutureWatcher<std::shared_ptr<const RooflineAnalysis>>(this);
    QPointer<ModelController> target(controller);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, target, result] {
        watcher->deleteLater();
        // Dropped when the model closed or a newer benchmark replaced the result.
        if (!target || target->lastBenchmark() != result) return;
        rooflines_.insert(target.data(), watcher->result());
        if (target == controller_) showRoofline();
        emit rooflineReady();
    });
    watcher->setFuture(QtConcurrent::run([document, result] {
        return std::shared_ptr<const RooflineAnalysis>(
            std::make_shared<RooflineAnalysis>(analyseRoofline(*document, *result)));
    }));
    if (controller == controller_) showRoofline();
}

void BenchmarkPanel::showRoofline() {
    const auto current = result();
    const auto analysis = roofline();
    if (!current || !current->profiled) {
        roofline_->clear();
        return;
    }
    if (!analysis) {
        roofline_->clear(tr("Measuring the processor's roofs and counting FLOPs…"));
        return;
    }
    profileView_->setRates(analysis->rates, analysis->peak);
    roofline_->setAnalysis(*analysis);
}

void BenchmarkPanel::updateActions() {
    const bool running = isRunning();
    const auto current = result();
    QString whyNot;
    if (running)
        whyNot = tr("A benchmark is running");
    else if (!controller_)
        whyNot = tr("Open a model to benchmark it");
    else if (!controller_->isReady() && !controller_->compileError().isEmpty())
        whyNot = controller_->unavailableReason();
    setAvailability(startAction_, startButton_,
                    tr("Benchmark the current model with the Benchmark dock's settings (Ctrl+B)"),
                    whyNot);
    cancelButton_->setEnabled(running);
    cancelAction_->setEnabled(running);
    for (QSpinBox* spin : {warmup_, runs_, threads_}) spin->setEnabled(!running);
    profile_->setEnabled(!running);
    exportTrace_->setEnabled(current && current->profiled);
    exportJson_->setEnabled(current != nullptr);
    exportMarkdown_->setEnabled(current != nullptr);
}

QString BenchmarkPanel::statusText() const { return status_->text(); }

void BenchmarkPanel::showStatus(const QString& text) { status_->setText(text); }

QString BenchmarkPanel::exportTrace(const QString& path) const {
    auto current = result();
    if (!current) return tr("No benchmark result to export.");
    if (!current->profiled)
        return tr("The benchmark ran without “Profile operators”: there is no trace.");
    return statusError(engine::writeChromeTrace(path.toStdString(), current->runProfiles));
}

QString BenchmarkPanel::exportJson(const QString& path) const {
    auto current = result();
    if (!current) return tr("No benchmark result to export.");
    return statusError(engine::writeBenchmarkJson(path.toStdString(), *current));
}

QString BenchmarkPanel::exportMarkdown(const QString& path) const {
    auto current = result();
    if (!current) return tr("No benchmark result to export.");
    return statusError(engine::writeBenchmarkMarkdown(path.toStdString(), *current));
}

void BenchmarkPanel::chooseAndExport(const QString& kind) {
    if (!controller_ || !result()) return;
    QSettings settings;
    const QFileInfo model(controller_->document()->path);
    const QString dir = settings.value(kExportDirKey, model.absolutePath()).toString();
    QString suffix, filter;
    if (kind == QStringLiteral("trace")) {
        suffix = QStringLiteral("-profile.json");
        filter = tr("Chrome trace JSON (*.json)");
    } else if (kind == QStringLiteral("json")) {
        suffix = QStringLiteral("-benchmark.json");
        filter = tr("JSON (*.json)");
    } else {
        suffix = QStringLiteral("-benchmark.md");
        filter = tr("Markdown (*.md)");
    }
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export benchmark"), dir + QLatin1Char('/') + model.completeBaseName() + suffix,
        filter);
    if (path.isEmpty()) return;
    settings.setValue(kExportDirKey, QFileInfo(path).absolutePath());
    const QString error = kind == QStringLiteral("trace")  ? exportTrace(path)
                          : kind == QStringLiteral("json") ? exportJson(path)
                                                           : exportMarkdown(path);
    if (error.isEmpty())
        status_->setText(tr("Exported %1").arg(path));
    else
        QMessageBox::warning(this, tr("Export failed"), error);
}

}  // namespace onnxlens::widgets
