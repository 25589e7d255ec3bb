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
#include <algorithm>

#include "widgets/SettingsKeys.h"
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
    setWindowTitle(tr("Quantize Model (int8 dynamic, or int4 weights)"));
    setObjectName(QStringLiteral("quantizeDialog"));
    auto* layout = new QVBoxLayout(this);
    auto* form = new QFormLayout;
    output_ = new QLineEdit(this);
    output_->setToolTip(tr("Where the quantized model goes (its report folder goes beside it)"));
    browse_ = new QPushButton(tr("&Browse…"), this);
    browse_->setToolTip(tr("Choose where the quantized model goes (remembered for this model)"));
    connect(browse_, &QPushButton::clicked, this, &QuantizeDialog::chooseOutput);
    auto* outputRow = new QHBoxLayout;
    outputRow->addWidget(output_, 1);
    outputRow->addWidget(browse_);
    // A row of a layout gets a label without a buddy, which would show the '&' itself.
    auto* outputLabel = new QLabel(tr("&Output model:"), this);
    outputLabel->setBuddy(output_);
    form->addRow(outputLabel, outputRow);
    auto* ops = new QHBoxLayout;
    matMul_ = new QCheckBox(QStringLiteral("MatMul"), this);
    gemm_ = new QCheckBox(QStringLiteral("Gemm"), this);
    conv_ = new QCheckBox(QStringLiteral("Conv"), this);
    gather_ = new QCheckBox(QStringLiteral("Gather"), this);
    gather_->setToolTip(
        tr("Embedding tables (a Gather of a constant float table) to uint8, as ONNX Runtime's "
           "quantize_dynamic writes them"));
    matMul_->setChecked(true);
    gemm_->setChecked(true);
    gather_->setChecked(true);
    for (auto* box : {matMul_, gemm_, conv_, gather_}) ops->addWidget(box);
    form->addRow(tr("Op types:"), ops);
    perChannel_ = new QCheckBox(tr("Per output channel"), this);
    form->addRow(tr("Weights:"), perChannel_);
    format_ = new QComboBox(this);
    format_->addItem(tr("QOperator (MatMulInteger / ConvInteger)"), QStringLiteral("qoperator"));
    format_->addItem(tr("QDQ (QuantizeLinear / DequantizeLinear)"), QStringLiteral("qdq"));
    format_->addItem(tr("int4 weights (com.microsoft MatMulNBits; MatMul only)"),
                     QStringLiteral("int4"));
    form->addRow(tr("&Format:"), format_);
    auto* int4 = new QHBoxLayout;
    blockSize_ = new QComboBox(this);
    for (int size : {16, 32, 64, 128, 256}) blockSize_->addItem(QString::number(size), size);
    blockSize_->setCurrentIndex(blockSize_->findData(32));
    blockSize_->setToolTip(tr("Weights per block along K, each with its own scale"));
    symmetric_ = new QCheckBox(tr("Symmetric (no zero points)"), this);
    symmetric_->setChecked(true);
    symmetric_->setToolTip(tr("Unchecked: a uint8 zero point per block (asymmetric range)"));
    accuracyLevel_ = new QSpinBox(this);
    accuracyLevel_->setRange(0, 4);
    accuracyLevel_->setToolTip(
        tr("MatMulNBits' accuracy_level: 0 computes in float (MatMulNBitsQuantizer's default), 4 "
           "quantizes the activations to int8 per block"));
    int4->addWidget(new QLabel(tr("block"), this));
    int4->addWidget(blockSize_);
    int4->addWidget(symmetric_);
    int4->addWidget(new QLabel(tr("accuracy level"), this));
    int4->addWidget(accuracyLevel_);
    int4->addStretch(1);
    form->addRow(tr("int4:"), int4);
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
    open_ = new QPushButton(tr("&Open quantized model"), this);
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
    connect(format_, &QComboBox::currentIndexChanged, this, [this] {
        // The suggested output follows the format (a name of another kind stays).
        const QString text = output_->text();
        const QString from =
            int4Chosen() ? QStringLiteral(".int8.onnx") : QStringLiteral(".int4.onnx");
        if (text.endsWith(from))
            output_->setText(
                text.left(text.size() - from.size()) +
                (int4Chosen() ? QStringLiteral(".int4.onnx") : QStringLiteral(".int8.onnx")));
        updateFormatControls();
    });
    loadSettings();
    setBusy(false);
    open_->setEnabled(false);
    resize(760, 720);
}

bool QuantizeDialog::int4Chosen() const {
    return format_->currentData().toString() == QStringLiteral("int4");
}

void QuantizeDialog::updateFormatControls() {
    // int4 quantizes MatMul weights only, in blocks along K: the int8 choices do not apply.
    const bool int4 = int4Chosen();
    for (QWidget* w : std::initializer_list<QWidget*>{matMul_, gemm_, conv_, gather_, perChannel_})
        w->setEnabled(!busy_ && !int4);
    for (QWidget* w : std::initializer_list<QWidget*>{blockSize_, symmetric_, accuracyLevel_})
        w->setEnabled(!busy_ && int4);
}

void QuantizeDialog::loadSettings() {
    namespace keys = settings;
    const QSettings stored;
    const engine::QuantizeOptions defaults;
    const int format = format_->findData(
        stored.value(keys::kQuantizeFormat, QStringLiteral("qoperator")).toString());
    format_->setCurrentIndex(std::max(format, 0));
    QStringList defaultOps;
    for (const auto& op : defaults.opTypes) defaultOps << QString::fromStdString(op);
    const QStringList ops = stored.value(keys::kQuantizeOpTypes, defaultOps.join(QLatin1Char(',')))
                                .toString()
                                .split(QLatin1Char(','), Qt::SkipEmptyParts);
    for (auto* box : {matMul_, gemm_, conv_, gather_}) box->setChecked(ops.contains(box->text()));
    perChannel_->setChecked(stored.value(keys::kQuantizePerChannel, defaults.perChannel).toBool());
    const int block = blockSize_->findData(
        stored.value(keys::kQuantizeBlockSize, static_cast<int>(defaults.blockSize)).toInt());
    blockSize_->setCurrentIndex(block >= 0 ? block : blockSize_->findData(32));
    symmetric_->setChecked(stored.value(keys::kQuantizeSymmetric, defaults.symmetric).toBool());
    accuracyLevel_->setValue(
        stored.value(keys::kQuantizeAccuracyLevel, static_cast<int>(defaults.accuracyLevel))
            .toInt());
    tolerance_->setValue(
        stored.value(keys::kQuantizeMinSqnr, keys::kQuantizeMinSqnrDefault).toDouble());
    updateFormatControls();
}

void QuantizeDialog::saveSettings() const {
    namespace keys = settings;
    QSettings stored;
    stored.setValue(keys::kQuantizeFormat, format_->currentData().toString());
    QStringList ops;
    for (auto* box : {matMul_, gemm_, conv_, gather_})
        if (box->isChecked()) ops << box->text();
    stored.setValue(keys::kQuantizeOpTypes, ops.join(QLatin1Char(',')));
    stored.setValue(keys::kQuantizePerChannel, perChannel_->isChecked());
    stored.setValue(keys::kQuantizeBlockSize, blockSize_->currentData().toInt());
    stored.setValue(keys::kQuantizeSymmetric, symmetric_->isChecked());
    stored.setValue(keys::kQuantizeAccuracyLevel, accuracyLevel_->value());
    stored.setValue(keys::kQuantizeMinSqnr, tolerance_->value());
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
    output_->setText(!remembered.isEmpty()
                         ? remembered
                         : info.dir().filePath(info.completeBaseName() +
                                               (int4Chosen() ? QStringLiteral(".int4.onnx")
                                                             : QStringLiteral(".int8.onnx"))));
    status_->setText(tr("Model: %1").arg(path));
}

void QuantizeDialog::chooseOutput() {
    const QString chosen = QFileDialog::getSaveFileName(
        this, tr("Write the quantized model to"), output_->text(), tr("ONNX models (*.onnx)"));
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
    if (op == QStringLiteral("Gather")) return gather_;
    return nullptr;
}

void QuantizeDialog::setBusy(bool busy) {
    busy_ = busy;
    start_->setEnabled(!busy);
    cancel_->setEnabled(busy);
    for (QWidget* w : std::initializer_list<QWidget*>{output_, browse_, format_, exclude_,
                                                      tolerance_, threads_, runs_, benchmark_})
        w->setEnabled(!busy);
    updateFormatControls();
    if (busy) open_->setEnabled(false);
}

bool QuantizeDialog::start() {
    if (state_ == State::Running) {
        error_ = tr("A quantization is already running.");
        return false;
    }
    engine::QuantizeOptions options;
    options.opTypes.clear();
    if (int4Chosen()) {
        // As `onnxlens-cli quantize --format int4`: MatMul weights to MatMulNBits.
        options.format = engine::QuantizationFormat::Int4;
        options.opTypes = {"MatMul"};
        options.blockSize = blockSize_->currentData().toInt();
        options.symmetric = symmetric_->isChecked();
        options.accuracyLevel = accuracyLevel_->value();
    } else {
        for (auto* box : {matMul_, gemm_, conv_, gather_})
            if (box->isChecked()) options.opTypes.push_back(box->text().toStdString());
        options.perChannel = perChannel_->isChecked();
        options.format = format_->currentData().toString() == QStringLiteral("qdq")
                             ? engine::QuantizationFormat::QDQ
                             : engine::QuantizationFormat::QOperator;
    }
    if (options.opTypes.empty() || model_.isEmpty()) {
        error_ = model_.isEmpty() ? tr("No model is open.") : tr("Choose at least one op type.");
        status_->setText(error_);
        return false;
    }
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
    saveSettings();
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
