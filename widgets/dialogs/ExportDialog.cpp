// Before any Qt header: Session.h (through ExportReport.h) has a member named `slots`.
#include "onnxlens/workflows/ExportReport.h"
//
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QFileDialog>
#include <QFormLayout>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QSplitter>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <optional>

#include "onnxlens/workflows/SklearnExportReport.h"
#include "widgets/SettingsKeys.h"
#include "widgets/dialogs/ExportDialog.h"
#include "widgets/dialogs/ExportReportCard.h"

namespace onnxlens::widgets {

namespace {

const char* kSettingsGroup = settings::kExportGroup;

QString qs(const std::string& s) { return QString::fromStdString(s); }

// What the worker thread hands back: the report, or why there is none.
struct ValidationResult {
    std::optional<engine::ExportReport> report;
    QString error;
};

}  // namespace

ExportDialog::ExportDialog(QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Export from PyTorch & Benchmark"));
    deadline_ = new QTimer(this);
    deadline_->setSingleShot(true);
    connect(deadline_, &QTimer::timeout, this, [this] {
        if (!process_) return;
        timedOut_ = true;
        appendLog(tr("time limit reached: stopping the exporter"));
        process_->kill();
    });
    buildForm();
    loadSettings();
    updateSourceWidgets();
    resize(900, 720);
}

ExportDialog::~ExportDialog() {
    if (validationCancel_) validationCancel_->store(true);
    if (process_) {
        process_->disconnect(this);
        process_->kill();
        process_->waitForFinished(3000);  // reap it: no zombie outlives the dialog
    }
}

void ExportDialog::buildForm() {
    auto* form = new QFormLayout;
    // QFormLayout sets buddies only for widget fields; rows holding a layout get theirs here.
    auto labelFor = [this](const QString& text, QWidget* buddy) {
        auto* label = new QLabel(text, this);
        label->setBuddy(buddy);
        return label;
    };
    sourceKind_ = new QComboBox(this);
    sourceKind_->addItem(tr("torchvision model"),
                         static_cast<int>(engine::ExportSourceKind::Torchvision));
    sourceKind_->addItem(tr("Python script (model(), example_inputs())"),
                         static_cast<int>(engine::ExportSourceKind::Script));
    sourceKind_->addItem(tr("TorchScript file (.pt)"),
                         static_cast<int>(engine::ExportSourceKind::TorchScript));
    sourceKind_->addItem(tr("scikit-learn pipeline (.pkl; input shape N,F)"),
                         static_cast<int>(engine::ExportSourceKind::Sklearn));
    connect(sourceKind_, &QComboBox::currentIndexChanged, this, &ExportDialog::updateSourceWidgets);
    form->addRow(tr("&Source:"), sourceKind_);

    // A path field with its Browse… button; returns the button.
    auto addPathRow = [&](const QString& label, QLineEdit*& edit, void (ExportDialog::*browse)()) {
        edit = new QLineEdit(this);
        auto* button = new QPushButton(tr("Browse…"), this);
        connect(button, &QPushButton::clicked, this, browse);
        auto* row = new QHBoxLayout;
        row->addWidget(edit, 1);
        row->addWidget(button);
        form->addRow(labelFor(label, edit), row);
        return button;
    };
    browseSource_ = addPathRow(tr("&Model:"), source_, &ExportDialog::browseSource);

    inputShape_ = new QLineEdit(this);
    inputShape_->setPlaceholderText(tr("e.g. 1x3x224x224 (TorchScript; optional otherwise)"));
    form->addRow(tr("&Input shape:"), inputShape_);

    addPathRow(tr("&Output folder:"), outDir_, &ExportDialog::browseOutDir);

    opset_ = new QSpinBox(this);
    opset_->setRange(0, 30);
    opset_->setSpecialValueText(tr("newest supported (at most 17)"));
    form->addRow(tr("&Opset:"), opset_);
    dynamicBatch_ = new QCheckBox(tr("Dynamic batch axis (also checks batch 2)"), this);
    form->addRow(tr("&Dynamic axes:"), dynamicBatch_);
    quantize_ = new QCheckBox(tr("Quantize (int8, dynamic)"), this);
    quantize_->setToolTip(
        tr("Also writes model.int8.onnx (int8 weights of MatMul, Gemm and Conv) and "
           "validates it against PyTorch: SQNR >= 20 dB"));
    form->addRow(tr("&int8:"), quantize_);
    task_ = new QComboBox(this);
    task_->addItem(tr("none (vision or generic model)"), QString());
    for (const auto& t : engine::exportTasks()) task_->addItem(qs(t), qs(t));
    form->addRow(tr("&Task (text models):"), task_);

    auto spin = [this](int low, int high) {
        auto* s = new QSpinBox(this);
        s->setRange(low, high);
        return s;
    };
    runs_ = spin(1, 100000);
    warmup_ = spin(0, 10000);
    threads_ = spin(0, 1024);
    threads_->setSpecialValueText(tr("all cores"));
    auto* timing = new QHBoxLayout;
    timing->addWidget(new QLabel(tr("runs"), this));
    timing->addWidget(runs_);
    timing->addWidget(new QLabel(tr("warm-up"), this));
    timing->addWidget(warmup_);
    timing->addWidget(new QLabel(tr("threads"), this));
    timing->addWidget(threads_);
    timing->addStretch(1);
    form->addRow(labelFor(tr("&Benchmark:"), runs_), timing);

    addPathRow(tr("&Python:"), python_, &ExportDialog::browsePython);
    timeout_ = spin(1, 24 * 3600);
    timeout_->setSuffix(tr(" s"));
    form->addRow(tr("Time &limit:"), timeout_);

    exportButton_ = new QPushButton(tr("&Export && Benchmark"), this);
    exportButton_->setDefault(true);
    connect(exportButton_, &QPushButton::clicked, this, [this] { startExport(); });
    cancelButton_ = new QPushButton(tr("Cancel"), this);
    cancelButton_->setShortcut(QKeySequence(Qt::Key_Escape));
    connect(cancelButton_, &QPushButton::clicked, this, &ExportDialog::cancel);
    closeButton_ = new QPushButton(tr("Close"), this);
    connect(closeButton_, &QPushButton::clicked, this, &QDialog::close);
    progress_ = new QProgressBar(this);
    progress_->setRange(0, 1);
    progress_->setValue(0);
    progress_->setTextVisible(false);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(progress_, 1);
    buttons->addWidget(exportButton_);
    buttons->addWidget(cancelButton_);
    buttons->addWidget(closeButton_);

    status_ = new QLabel(this);
    status_->setWordWrap(true);
    status_->setTextFormat(Qt::PlainText);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    log_ = new QPlainTextEdit(this);
    log_->setReadOnly(true);
    log_->setMaximumBlockCount(5000);
    log_->setFont(QFont(QStringLiteral("monospace")));
    card_ = new ExportReportCard(this);
    card_->hide();
    auto* results = new QSplitter(Qt::Vertical, this);
    results->addWidget(card_);
    results->addWidget(log_);
    results->setStretchFactor(0, 0);
    results->setStretchFactor(1, 1);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addLayout(buttons);
    layout->addWidget(status_);
    layout->addWidget(results, 1);
    setBusy(false);
}

void ExportDialog::loadSettings() {
    QSettings settings;
    settings.beginGroup(QLatin1String(kSettingsGroup));
    engine::ExportRequest r;
    r.sourceKind = static_cast<engine::ExportSourceKind>(settings.value("sourceKind", 0).toInt());
    r.source = settings.value("source", QStringLiteral("resnet18")).toString().toStdString();
    r.inputShape = settings.value("inputShape").toString().toStdString();
    r.outDir = settings.value("outDir", QDir::home().filePath(QStringLiteral("onnxlens-export")))
                   .toString()
                   .toStdString();
    r.opset = settings.value("opset", 0).toInt();
    r.dynamicBatch = settings.value("dynamicBatch", true).toBool();
    r.task = settings.value("task").toString().toStdString();
    r.runs = settings.value(settings::kExportRuns, settings::kExportRunsDefault).toInt();
    r.warmup = settings.value(settings::kExportWarmup, settings::kExportWarmupDefault).toInt();
    r.threads = settings.value(settings::kExportThreads, 0).toInt();
    r.python =
        settings.value(settings::kExportPython, QString::fromLatin1(settings::kExportPythonDefault))
            .toString()
            .toStdString();
    r.timeoutSeconds =
        settings.value(settings::kExportTimeout, settings::kExportTimeoutDefault).toInt();
    setRequest(r);
}

void ExportDialog::saveSettings() const {
    const engine::ExportRequest r = request();
    QSettings settings;
    settings.beginGroup(QLatin1String(kSettingsGroup));
    settings.setValue("sourceKind", static_cast<int>(r.sourceKind));
    settings.setValue("source", qs(r.source));
    settings.setValue("inputShape", qs(r.inputShape));
    settings.setValue("outDir", qs(r.outDir.string()));
    settings.setValue("opset", r.opset);
    settings.setValue("dynamicBatch", r.dynamicBatch);
    settings.setValue("task", qs(r.task));
    settings.setValue(settings::kExportRuns, r.runs);
    settings.setValue(settings::kExportWarmup, r.warmup);
    settings.setValue(settings::kExportThreads, r.threads);
    settings.setValue(settings::kExportPython, qs(r.python));
    settings.setValue(settings::kExportTimeout, static_cast<int>(r.timeoutSeconds));
}

engine::ExportRequest ExportDialog::request() const {
    engine::ExportRequest r;
    r.sourceKind = static_cast<engine::ExportSourceKind>(sourceKind_->currentData().toInt());
    r.source = source_->text().trimmed().toStdString();
    r.inputShape = inputShape_->text().trimmed().toStdString();
    r.outDir = outDir_->text().trimmed().toStdString();
    r.opset = opset_->value();
    r.dynamicBatch = dynamicBatch_->isChecked();
    r.task = task_->currentData().toString().toStdString();
    r.runs = runs_->value();
    r.warmup = warmup_->value();
    r.threads = threads_->value();
    r.python = python_->text().trimmed().toStdString();
    r.timeoutSeconds = timeout_->value();
    return r;
}

void ExportDialog::setRequest(const engine::ExportRequest& r) {
    sourceKind_->setCurrentIndex(
        std::max(0, sourceKind_->findData(static_cast<int>(r.sourceKind))));
    source_->setText(qs(r.source));
    inputShape_->setText(qs(r.inputShape));
    outDir_->setText(qs(r.outDir.string()));
    opset_->setValue(r.opset);
    dynamicBatch_->setChecked(r.dynamicBatch);
    task_->setCurrentIndex(std::max(0, task_->findData(qs(r.task))));
    runs_->setValue(r.runs);
    warmup_->setValue(r.warmup);
    threads_->setValue(r.threads);
    python_->setText(qs(r.python));
    timeout_->setValue(static_cast<int>(r.timeoutSeconds));
    updateSourceWidgets();
}

void ExportDialog::updateSourceWidgets() {
    const auto kind = static_cast<engine::ExportSourceKind>(sourceKind_->currentData().toInt());
    browseSource_->setEnabled(kind != engine::ExportSourceKind::Torchvision);
    source_->setPlaceholderText(kind == engine::ExportSourceKind::Torchvision
                                    ? tr("e.g. resnet18, mobilenet_v2")
                                    : tr("a file"));
}

void ExportDialog::browseSource() {
    const bool script =
        sourceKind_->currentData().toInt() == static_cast<int>(engine::ExportSourceKind::Script);
    const QString file = QFileDialog::getOpenFileName(
        this, tr("Choose the model"), source_->text(),
        script ? tr("Python scripts (*.py)")
        : sourceKind_->currentData().toInt() == static_cast<int>(engine::ExportSourceKind::Sklearn)
            ? tr("Pickled scikit-learn models (*.pkl *.pickle *.joblib);;All files (*)")
            : tr("TorchScript files (*.pt *.pth *.ptl);;All files (*)"));
    if (!file.isEmpty()) source_->setText(file);
}

void ExportDialog::browseOutDir() {
    const QString dir =
        QFileDialog::getExistingDirectory(this, tr("Output folder"), outDir_->text());
    if (!dir.isEmpty()) outDir_->setText(dir);
}

void ExportDialog::browsePython() {
    const QString file =
        QFileDialog::getOpenFileName(this, tr("Python interpreter"), python_->text());
    if (!file.isEmpty()) python_->setText(file);
}

QString ExportDialog::logText() const { return log_->toPlainText(); }

void ExportDialog::appendLog(const QString& text) { log_->appendPlainText(text); }

void ExportDialog::setBusy(bool busy) {
    exportButton_->setEnabled(!busy);
    cancelButton_->setEnabled(busy);
    progress_->setRange(0, busy ? 0 : 1);  // an indeterminate bar while the exporter works
    progress_->setValue(busy ? 0 : 1);
    for (QWidget* w : std::initializer_list<QWidget*>{sourceKind_, source_, inputShape_, outDir_,
                                                      opset_, dynamicBatch_, quantize_, task_,
                                                      runs_, warmup_, threads_, python_, timeout_})
        w->setEnabled(!busy);
    if (!busy)
        updateSourceWidgets();
    else
        browseSource_->setEnabled(false);
}

bool ExportDialog::startExport() {
    if (state_ == State::Exporting || state_ == State::Validating) {
        errorText_ = tr("an export is already running");
        return false;
    }
    const engine::ExportRequest r = request();
    if (const std::string problem = engine::validateExportRequest(r); !problem.empty()) {
        fail(qs(problem), tr("correct the form and press Export again"), State::Failed);
        return false;
    }
    const auto script =
        engine::findExporterScript(QCoreApplication::applicationDirPath().toStdString());
    if (!script) {
        fail(tr("cannot find onnxlens_export.py"),
             tr("reinstall onnxlens or set ONNXLENS_EXPORTER"), State::Failed);
        return false;
    }
    if (!QDir().mkpath(qs(r.outDir.string()))) {
        fail(tr("%1: cannot create the folder").arg(qs(r.outDir.string())),
             tr("choose another output folder"), State::Failed);
        return false;
    }
    saveSettings();
    running_ = r;
    timedOut_ = cancelRequested_ = startFailed_ = false;
    pendingOut_.clear();
    stderr_.clear();
    errorText_.clear();
    log_->clear();
    card_->clear();
    card_->hide();
    status_->setStyleSheet({});
    status_->setText(tr("Exporting…"));

    const auto argv = engine::exporterCommandLine(r, *script);
    QStringList arguments;
    for (std::size_t i = 1; i < argv.size(); ++i) arguments << qs(argv[i]);
    appendLog(QStringLiteral("$ %1 %2").arg(qs(argv[0]), arguments.join(QLatin1Char(' '))));
    process_ = new QProcess(this);
    process_->setProgram(qs(argv[0]));
    process_->setArguments(arguments);
    process_->setStandardInputFile(QProcess::nullDevice());
    connect(process_, &QProcess::readyReadStandardOutput, this, &ExportDialog::onProcessOutput);
    connect(process_, &QProcess::readyReadStandardError, this,
            [this] { stderr_ += process_->readAllStandardError(); });
    connect(process_, &QProcess::finished, this, &ExportDialog::onProcessFinished);
    connect(process_, &QProcess::errorOccurred, this, &ExportDialog::onProcessError);
    state_ = State::Exporting;
    setBusy(true);
    deadline_->start(static_cast<int>(r.timeoutSeconds * 1000));
    process_->start();
    return true;
}

void ExportDialog::onProcessOutput() {
    pendingOut_ += process_->readAllStandardOutput();
    for (qsizetype at; (at = pendingOut_.indexOf('\n')) >= 0;) {
        appendLog(QString::fromUtf8(pendingOut_.left(at)));
        pendingOut_.remove(0, at + 1);
    }
}

void ExportDialog::onProcessError(QProcess::ProcessError error) {
    if (error != QProcess::FailedToStart) return;  // the others end in finished()
    startFailed_ = true;
    engine::ExporterOutcome outcome;
    outcome.failedToStart = true;
    finishExport(outcome);
}

void ExportDialog::onProcessFinished(int exitCode, QProcess::ExitStatus status) {
    onProcessOutput();
    if (!pendingOut_.isEmpty()) appendLog(QString::fromUtf8(pendingOut_));
    pendingOut_.clear();
    stderr_ += process_->readAllStandardError();
    engine::ExporterOutcome outcome;
    outcome.exitCode = exitCode;
    // Qt reports a signal death as CrashExit; on Unix its exit code is then the signal number.
    outcome.crashed = status == QProcess::CrashExit;
    outcome.signal = outcome.crashed && exitCode > 0 && exitCode < 65 ? exitCode : 0;
    outcome.timedOut = timedOut_;
    outcome.cancelled = cancelRequested_;
    outcome.stderrText = stderr_.toStdString();
    finishExport(outcome);
}

void ExportDialog::finishExport(const engine::ExporterOutcome& outcome) {
    deadline_->stop();
    if (process_) {
        process_->disconnect(this);
        process_->deleteLater();
        process_ = nullptr;
    }
    if (auto failure = engine::describeExporterOutcome(outcome, running_)) {
        fail(qs(failure->message), qs(failure->hint),
             outcome.cancelled ? State::Cancelled : State::Failed);
        return;
    }
    const QString modelPath =
        QDir(qs(running_.outDir.string())).filePath(QStringLiteral("model.onnx"));
    appendLog(tr("exported %1; validating with the onnxlens engine").arg(modelPath));
    emit modelExported(modelPath);
    startValidation();
}

void ExportDialog::startValidation() {
    state_ = State::Validating;
    status_->setText(tr("Validating against PyTorch and benchmarking…"));
    validationCancel_ = std::make_shared<std::atomic<bool>>(false);
    engine::ExportReportOptions options;
    options.benchmark = true;
    options.warmup = running_.warmup;
    options.runs = running_.runs;
    options.threads = running_.threads;
    options.quantize = quantize_->isChecked();
    // PyTorch timed in turn with the engine by the exporter script serving timing rounds.
    if (const auto script =
            engine::findExporterScript(QCoreApplication::applicationDirPath().toStdString())) {
        options.python = running_.python;
        options.exporterScript = *script;
    }
    const std::filesystem::path folder = running_.outDir;
    auto cancel = validationCancel_;
    QPointer<ExportDialog> self(this);
    auto* watcher = new QFutureWatcher<ValidationResult>(this);
    connect(watcher, &QFutureWatcher<ValidationResult>::finished, this, [this, watcher] {
        const ValidationResult result = watcher->result();
        watcher->deleteLater();
        if (!result.report) {
            fail(result.error,
                 cancelRequested_ ? tr("the exported files are kept") : tr("see the log"),
                 cancelRequested_ ? State::Cancelled : State::Failed);
            return;
        }
        card_->setReport(*result.report);
        card_->show();
        state_ = State::Done;
        setBusy(false);
        status_->setStyleSheet(QStringLiteral("QLabel { color: %1; }")
                                   .arg(ExportReportCard::statusColor(
                                            result.report->passed ? engine::ReportStatus::Passed
                                                                  : engine::ReportStatus::Failed)
                                            .name()));
        status_->setText(result.report->passed ? tr("Every check passed.")
                                               : tr("A check failed: see the red lines."));
        emit reportReady(result.report->passed);
    });
    watcher->setFuture(QtConcurrent::run([folder, options, cancel, self]() {
        ValidationResult result;
        auto progress = [self](const std::string& step) {
            QMetaObject::invokeMethod(
                qApp,
                [self, text = QString::fromStdString(step)] {
                    if (self) self->appendLog(text);
                },
                Qt::QueuedConnection);
        };
        if (engine::isSklearnExport(folder)) {
            engine::SklearnExportOptions sklearnOptions;
            sklearnOptions.threads = options.threads;
            auto sklearn =
                engine::validateSklearnExport(folder, sklearnOptions, progress, cancel.get());
            if (!sklearn) {
                result.error = qs(sklearn.error().message);
            } else if (auto written = engine::writeSklearnExportReport(*sklearn); !written) {
                result.error = qs(written.error().message);
            } else {
                result.report = std::move(sklearn->report);
            }
            return result;
        }
        auto report = engine::validateExport(folder, options, progress, cancel.get());
        if (!report) {
            result.error = qs(report.error().message);
            return result;
        }
        if (auto written = engine::writeExportReport(*report); !written) {
            result.error = qs(written.error().message);
            return result;
        }
        result.report = std::move(*report);
        return result;
    }));
}

void ExportDialog::cancel() {
    if (state_ == State::Exporting && process_) {
        cancelRequested_ = true;
        appendLog(tr("cancelling: stopping the exporter"));
        process_->terminate();
        QTimer::singleShot(2000, process_, [p = process_] { p->kill(); });
    } else if (state_ == State::Validating && validationCancel_) {
        cancelRequested_ = true;
        appendLog(tr("cancelling the validation"));
        validationCancel_->store(true);
    }
}

void ExportDialog::fail(const QString& message, const QString& hint, State state) {
    state_ = state;
    errorText_ = message + QStringLiteral("\n") + hint;
    setBusy(false);
    status_->setStyleSheet(
        QStringLiteral("QLabel { color: %1; }")
            .arg(ExportReportCard::statusColor(engine::ReportStatus::Failed).name()));
    status_->setText(message + QStringLiteral("\nHint: ") + hint);
    appendLog(tr("error: %1").arg(message));
    appendLog(tr("hint: %1").arg(hint));
    emit exportFailed(message);
}

void ExportDialog::closeEvent(QCloseEvent* event) {
    // Closing while busy cancels; the dialog is hidden, the process is stopped and reaped.
    if (state_ == State::Exporting || state_ == State::Validating) cancel();
    QDialog::closeEvent(event);
}

}  // namespace onnxlens::widgets
