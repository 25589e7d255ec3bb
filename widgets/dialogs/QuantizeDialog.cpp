// Engine headers first: Session.h before any Qt header.
#pragma push_macro("slots")
#undef slots
#include "onnxlens/workflows/QuantizationReport.h"
#include "onnxlens/workflows/Quantizer.h"
#pragma pop_macro("slots")

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "widgets/dialogs/QuantizationReportCard.h"
#include "widgets/dialogs/QuantizeDialog.h"

namespace onnxlens::widgets {

namespace {
QString qs(const std::string& s) { return QString::fromStdString(s); }
}  // namespace

struct QuantizeDialog::Outcome {
    std::shared_ptr<const engine::QuantizationReport> report;
    QString error;
    QString output;
    QString reportFolder;
    bool cancelled = false;
};

QuantizeDialog::QuantizeDialog(QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Quantize Model (int8, dynamic)"));
    setObjectName(QStringLiteral("quantizeDialog"));
    auto* layout = new QVBoxLayout(this);
    auto* form = new QFormLayout;
    output_ = new QLineEdit(this);
    output_->setToolTip(tr("Where the int8 model goes (its report folder goes beside it)"));
    browse_ = new QPushButton(tr("&Browse…"), this);
    browse_->setToolTip(tr("Choose where the int8 model goes (remembered for this model)"));
    connect(browse_, &QPushButton::clicked, this, &QuantizeDialog::chooseOutput);
    auto* outputRow = new QHBoxLayout;
    outputRow->addWidget(output_, 1);
    outputRow->addWidget(browse_);
    form->addRow(tr("&Output model:"), outputRow);
    auto* ops = new QHBoxLayout;
    matMul_ = new QCheckBox(QStringLiteral("MatMul"), this);
    gemm_ = new QCheckBox(QStringLiteral("Gemm"), this);
    conv_ = new QCheckBox(QStringLiteral("Conv"), this);
    matMul_->setChecked(true);
    gemm_->setChecked(true);
    for (auto* box : {matMul_, gemm_, conv_}) ops->addWidget(box);
    form->addRow(tr("Op types:"), ops);
    perChannel_ = new QCheckBox(tr("Per output channel"), this);
    form->addRow(tr("Weights:"), perChannel_);
    format_ = new QComboBox(this);
    format_->addItem(tr("QOperator (MatMulInteger / ConvInteger)"), QStringLiteral("qoperator"));
    format_->addItem(tr("QDQ (QuantizeLinear / DequantizeLinear)"), QStringLiteral("qdq"));
    form->addRow(tr("&Format:"), format_);
    exclude_ = new QLineEdit(this);
    exclude_->setPlaceholderText(tr("node names to keep in float, comma-separated"));
    form->addRow(tr("&Exclude:"), exclude_);
    tolerance_ = new QDoubleSpinBox(this);
    tolerance_->setRange(0, 200);
    tolerance_->setDecimals(1);
    tolerance_->setSuffix(tr(" dB"));
    tolerance_->setValue(20.0);
    tolerance_->setToolTip(tr("Every output's SQNR against the float model must reach this"));
    form->addRow(tr("&Tolerance (min SQNR):"), tolerance_);
    threads_ = new QSpinBox(this);
    threads_->setRange(0, 1024);
    threads_->setSpecialValueText(tr("all cores"));
    form->addRow(tr("T&hreads:"), threads_);
    auto* timing = new QHBoxLayout;
    benchmark_ = new QCheckBox(tr("Time both models"), this);
    benchmark_->setChecked(true);
    runs_ = new QSpinBox(this);
    runs_->setRange(1, 100000);
    runs_->setValue(20);
    timing->addWidget(benchmark_);
    timing->addWidget(new QLabel(tr("runs"), this));
    timing->addWidget(runs_);
    form->addRow(tr("Latency:"), timing);
    layout->addLayout(form);

    auto* buttons = new QHBoxLayout;
    start_ = new QPushButton(tr("&Quantize"), this);
    cancel_ = new QPushButton(tr("&Cancel"), this);
    open_ = new QPushButton(tr("&Open int8 model"), this);
    auto* close = new QPushButton(tr("Close"), this);
    for (auto* b : {start_, cancel_, open_, close}) buttons->addWidget(b);
    layout->addLayout(buttons);
    progress_ = new QProgressBar(this);
    progress_->setRange(0, 1);
    layout->addWidget(progress_);
    status_ = new QLabel(this);
    status_->setWordWrap(true);
    layout->addWidget(status_);
    card_ = new QuantizationReportCard(this);
    layout->addWidget(card_, 1);

    connect(start_, &QPushButton::clicked, this, [this] { start(); });
    connect(cancel_, &QPushButton::clicked, this, &QuantizeDialog::cancel);
    connect(open_, &QPushButton::clicked, this, [this] {
        if (!written_.isEmpty()) emit openInt8Requested(written_);
    });
    connect(close, &QPushButton::clicked, this, &QDialog::close);
    connect(tolerance_, &QDoubleSpinBox::valueChanged, card_,
            &QuantizationReportCard::setMinSqnrDb);
    setBusy(false);
    open_->setEnabled(false);
    resize(760, 720);
}

QuantizeDialog::~QuantizeDialog() {
    if (cancelFlag_) cancelFlag_->store(true);
}

namespace {
// The output chosen for a model, per model file.
QString outputKey(const QString& model) {
    return QStringLiteral("quantize/outputs/") +
           QString::fromLatin1(
               QCryptographicHash::hash(QFileInfo(model).absoluteFilePath().toUtf8(),
                                        QCryptographicHash::Sha1)
                   .toHex()
                   .left(16));
}
}  // namespace

void QuantizeDialog::setModel(const QString& path) {
    if (state_ == State::Running) return;
    model_ = path;
    // The place chosen for this model last time, else "<name>.int8.onnx" beside it.
    const QString remembered = QSettings().value(outputKey(path)).toString();
    const QFileInfo info(path);
    output_->setText(!remembered.isEmpty() ? remembered
                                           : info.dir().filePath(info.completeBaseName() +
                                                                 QStringLiteral(".int8.onnx")));
    status_->setText(tr("Model: %1").arg(path));
}

void QuantizeDialog::chooseOutput() {
    const QString chosen = QFileDialog::getSaveFileName(
        this, tr("Write the int8 model to"), output_->text(), tr("ONNX models (*.onnx)"));
    if (chosen.isEmpty()) return;
    setOutputPath(QFileInfo(chosen).suffix().isEmpty() ? chosen + QStringLiteral(".onnx") : chosen);
}

void QuantizeDialog::setOutputPath(const QString& path) {
    output_->setText(path);
    if (!model_.isEmpty()) QSettings().setValue(outputKey(model_), path);
}

QString QuantizeDialog::outputPath() const { return output_->text(); }
QString QuantizeDialog::statusText() const { return status_->text(); }

QCheckBox* QuantizeDialog::opTypeBox(const QString& op) const {
    if (op == QStringLiteral("MatMul")) return matMul_;
    if (op == QStringLiteral("Gemm")) return gemm_;
    if (op == QStringLiteral("Conv")) return conv_;
    return nullptr;
}

void QuantizeDialog::setBusy(bool busy) {
    start_->setEnabled(!busy);
    cancel_->setEnabled(busy);
    for (QWidget* w :
         std::initializer_list<QWidget*>{output_, browse_, matMul_, gemm_, conv_, perChannel_,
                                         format_, exclude_, threads_, runs_, benchmark_})
        w->setEnabled(!busy);
    if (busy) open_->setEnabled(false);
}

bool QuantizeDialog::start() {
    if (state_ == State::Running) {
        error_ = tr("A quantization is already running.");
        return false;
    }
    engine::QuantizeOptions options;
    options.opTypes.clear();
    for (auto* box : {matMul_, gemm_, conv_})
        if (box->isChecked()) options.opTypes.push_back(box->text().toStdString());
    if (options.opTypes.empty() || model_.isEmpty()) {
        error_ = model_.isEmpty() ? tr("No model is open.") : tr("Choose at least one op type.");
        status_->setText(error_);
        return false;
    }
    options.perChannel = perChannel_->isChecked();
    options.format = format_->currentData().toString() == QStringLiteral("qdq")
                         ? engine::QuantizationFormat::QDQ
                         : engine::QuantizationFormat::QOperator;
    for (const QString& name : exclude_->text().split(QLatin1Char(','), Qt::SkipEmptyParts))
        options.excludedNodes.push_back(name.trimmed().toStdString());
    engine::QuantizationReportOptions reportOptions;
    reportOptions.tolerance.minSqnrDb = tolerance_->value();
    reportOptions.threads = threads_->value();
    reportOptions.benchmark = benchmark_->isChecked();
    reportOptions.runs = runs_->value();

    const std::filesystem::path input = model_.toStdString();
    const std::filesystem::path output = output_->text().toStdString();
    if (auto st = engine::checkQuantizeOutput(input, output); !st) {
        error_ = qs(st.error().message);
        status_->setText(error_);
        state_ = State::Failed;
        return false;
    }
    if (!model_.isEmpty()) QSettings().setValue(outputKey(model_), output_->text());
    state_ = State::Running;
    error_.clear();
    written_.clear();
    card_->clear();
    setBusy(true);
    progress_->setRange(0, 0);
    status_->setText(tr("Quantizing %1…").arg(QFileInfo(model_).fileName()));
    cancelFlag_ = std::make_shared<std::atomic<bool>>(false);
    auto cancel = cancelFlag_;
    QPointer<QuantizeDialog> self(this);
    auto* watcher = new QFutureWatcher<Outcome>(this);
    connect(watcher, &QFutureWatcher<Outcome>::finished, this, [this, watcher] {
        const Outcome outcome = watcher->result();
        watcher->deleteLater();
        onFinished(outcome);
    });
    watcher->setFuture(QtConcurrent::run([input, output, options, reportOptions, cancel,
                                          self]() -> Outcome {
        Outcome outcome;
        auto say = [self](const QString& text, int done, int total) {
            QMetaObject::invokeMethod(
                qApp,
                [self, text, done, total] {
                    if (!self) return;
                    self->progress_->setRange(0, total);
                    self->progress_->setValue(done);
                    self->status_->setText(text);
                },
                Qt::QueuedConnection);
        };
        auto quantized = engine::quantizeModelFile(input, options);
        if (!quantized) {
            outcome.error = qs(quantized.error().message);
            return outcome;
        }
        if (cancel->load()) return Outcome{{}, {}, {}, {}, true};
        auto report = engine::buildQuantizationReport(
            *quantized, quantized->result.model.ByteSizeLong(), output.string(), reportOptions,
            [&](const engine::QuantizationReportProgress& p) { say(qs(p.step), p.done, p.total); },
            cancel.get());
        if (cancel->load()) return Outcome{{}, {}, {}, {}, true};
        if (!report) {
            outcome.error = qs(report.error().message);
            return outcome;
        }
        auto written = engine::writeQuantizedModel(*quantized, output);
        if (!written) {
            outcome.error = qs(written.error().message);
            return outcome;
        }
        engine::setQuantizedModelBytes(*report, written->totalBytes());
        std::filesystem::path folder = output;
        folder.replace_extension();
        folder += "_report";
        if (auto st = engine::writeQuantizationReport(*report, folder); !st) {
            outcome.error = qs(st.error().message);
            return outcome;
        }
        outcome.output = qs(output.string());
        outcome.reportFolder = qs(folder.string());
        outcome.report = std::make_shared<const engine::QuantizationReport>(std::move(*report));
        return outcome;
    }));
    return true;
}

void QuantizeDialog::cancel() {
    if (state_ != State::Running || !cancelFlag_) return;
    cancelFlag_->store(true);
    status_->setText(tr("Cancelling…"));
}

void QuantizeDialog::onFinished(const Outcome& outcome) {
    setBusy(false);
    progress_->setRange(0, 1);
    progress_->setValue(outcome.report ? 1 : 0);
    if (outcome.cancelled) {
        state_ = State::Cancelled;
        error_ = tr("Cancelled; nothing was written.");
        status_->setText(error_);
        emit failed(error_);
        return;
    }
    if (!outcome.report) {
        state_ = State::Failed;
        error_ = outcome.error;
        status_->setText(tr("Failed: %1").arg(error_));
        emit failed(error_);
        return;
    }
    report_ = outcome.report;
    written_ = outcome.output;
    reportFolder_ = outcome.reportFolder;
    card_->setMinSqnrDb(tolerance_->value());
    card_->setReport(report_);
    open_->setEnabled(true);
    state_ = State::Done;
    status_->setText(tr("Wrote %1; report.md and report.json in %2").arg(written_, reportFolder_));
    emit finished(card_->passed());
}

std::map<std::string, double> QuantizeDialog::sqnrByNode() const {
    std::map<std::string, double> sqnr;
    if (!report_) return sqnr;
    for (const auto& n : report_->nodes) {
        sqnr[n.name] = n.figures.sqnrDb;
        for (const auto& int8 : n.int8Nodes) {
            // A shared activation quantizer belongs to several nodes: it shows the weakest.
            auto [it, inserted] = sqnr.emplace(int8, n.figures.sqnrDb);
            if (!inserted) it->second = std::min(it->second, n.figures.sqnrDb);
        }
    }
    return sqnr;
}

}  // namespace onnxlens::widgets
