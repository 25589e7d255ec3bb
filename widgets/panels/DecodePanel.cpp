#include "widgets/panels/DecodePanel.h"

#include <QAction>
#include <QChart>
#include <QChartView>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScatterSeries>
#include <QSettings>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QThread>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>

#include "onnxlens/model/ModelWriter.h"
#include "onnxlens/workflows/DecodeLoop.h"
#include "widgets/charts/AxisLabels.h"
#include "widgets/graph/CostText.h"
#include "widgets/panels/ActionAvailability.h"
#include "widgets/panels/ThreadsText.h"

namespace onnxlens::widgets {

namespace {
const char* kPromptKey = "decode/promptTokens";
const char* kNewTokensKey = "decode/newTokens";
const char* kThreadsKey = "decode/threads";
const char* kExportDirKey = "benchmark/exportDir";  // shared with the dock's other exports

QSpinBox* makeSpin(int minimum, int maximum, int value, QWidget* parent) {
    auto* spin = new QSpinBox(parent);
    spin->setRange(minimum, maximum);
    spin->setValue(value);
    spin->setAccelerated(true);
    return spin;
}

QString decodeThreadsText(const DecodeOutcome& outcome, ThreadsTextForm form) {
    const auto& r = outcome.result;
    return threadsText(outcome.threads, r.reducedRuns, r.runs, r.fewestThreads, form);
}

QString idsText(const std::vector<std::int64_t>& ids) {
    QStringList parts;
    for (auto id : ids) parts << QString::number(id);
    return parts.join(QLatin1Char(' '));
}

// Through a temporary file beside `path`, renamed over it when complete (ModelWriter.h): a
// failed export leaves no half-written report. The error names the file.
QString writeText(const QString& path, const QByteArray& bytes) {
    auto written = writeFileAtomically(path.toStdString(), bytes.toStdString());
    return written ? QString() : QString::fromStdString(written.error().message);
}
}  // namespace

DecodePanel::DecodePanel(QWidget* parent) : QWidget(parent) {
    QSettings settings;
    promptTokens_ = makeSpin(1, 65536, settings.value(kPromptKey, 8).toInt(), this);
    promptTokens_->setObjectName(QStringLiteral("decodePromptTokens"));
    promptTokens_->setToolTip(
        tr("Tokens of the prompt: seeded random ids from the vocabulary (seed 0, as "
           "onnxlens-cli generate)"));
    newTokens_ =
        makeSpin(1, engine::kMaxNewTokens, settings.value(kNewTokensKey, 32).toInt(), this);
    newTokens_->setObjectName(QStringLiteral("decodeNewTokens"));
    newTokens_->setToolTip(
        tr("Tokens to generate: the prefill chooses the first, one step each the rest"));
    threads_ = makeSpin(0, 256, settings.value(kThreadsKey, 0).toInt(), this);
    threads_->setSpecialValueText(tr("all cores (%1)").arg(QThread::idealThreadCount()));
    threads_->setToolTip(tr("Intra-op threads of the engine"));

    auto* controls = new QHBoxLayout;
    auto labelled = [this, controls](const QString& text, QWidget* field) {
        auto* label = new QLabel(text, this);
        label->setBuddy(field);
        controls->addWidget(label);
        controls->addWidget(field);
        controls->addSpacing(8);
    };
    labelled(tr("&Prompt tokens:"), promptTokens_);
    labelled(tr("&New tokens:"), newTokens_);
    labelled(tr("T&hreads:"), threads_);
    controls->addStretch(1);
    startButton_ = new QPushButton(tr("Decode"), this);
    startButton_->setObjectName(QStringLiteral("decodeStart"));
    cancelButton_ = new QPushButton(tr("Cancel"), this);
    controls->addWidget(startButton_);
    controls->addWidget(cancelButton_);

    progress_ = new QProgressBar(this);
    progress_->setRange(0, 1);
    progress_->setValue(0);
    progress_->setTextVisible(true);
    exportJson_ = new QPushButton(tr("JSON…"), this);
    exportJson_->setToolTip(tr("Export the decode as JSON (as onnxlens-cli generate --json)"));
    exportMarkdown_ = new QPushButton(tr("Markdown…"), this);
    exportMarkdown_->setToolTip(tr("Export the decode as a Markdown report"));
    auto* statusRow = new QHBoxLayout;
    statusRow->addWidget(progress_, 1);
    statusRow->addSpacing(8);
    statusRow->addWidget(new QLabel(tr("Export:"), this));
    statusRow->addWidget(exportJson_);
    statusRow->addWidget(exportMarkdown_);

    status_ = new QLabel(this);
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    statistics_ = new QTableWidget(0, 2, this);
    statistics_->setObjectName(QStringLiteral("decodeStatistics"));
    statistics_->setHorizontalHeaderLabels({tr("Figure"), tr("Value")});
    statistics_->verticalHeader()->hide();
    statistics_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    statistics_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
    statistics_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    statistics_->setSelectionBehavior(QAbstractItemView::SelectRows);
    statistics_->verticalHeader()->setDefaultSectionSize(statistics_->fontMetrics().height() + 4);
    statistics_->setMinimumHeight(statistics_->fontMetrics().height() * 6);
    // The ids can be thousands: a box of a few lines that scrolls, not a label that grows.
    ids_ = new QPlainTextEdit(this);
    ids_->setObjectName(QStringLiteral("decodeIds"));
    ids_->setReadOnly(true);
    ids_->setPlaceholderText(tr("The prompt's and the generated token ids"));
    ids_->setFixedHeight(ids_->fontMetrics().lineSpacing() * 4 + 2 * ids_->frameWidth() + 8);
    auto* left = new QWidget(this);
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(statistics_, 1);
    leftLayout->addWidget(ids_);

    auto* chart = new QChart;
    chart->setMargins(QMargins(4, 4, 4, 4));
    chart->setAnimationOptions(QChart::NoAnimation);
    chart->legend()->setAlignment(Qt::AlignTop);
    chart_ = new QChartView(chart, this);
    chart_->setObjectName(QStringLiteral("decodeChart"));
    chart_->setRenderHint(QPainter::Antialiasing);
    chart_->setMinimumSize(300, 180);
    auto* results = new QSplitter(Qt::Horizontal, this);
    results->addWidget(left);
    results->addWidget(chart_);
    results->setStretchFactor(0, 0);
    results->setStretchFactor(1, 1);
    results->setSizes({300, 900});

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addLayout(statusRow);
    layout->addWidget(status_);
    layout->addWidget(results, 1);

    startAction_ = new QAction(tr("&Decode"), this);
    connect(startButton_, &QPushButton::clicked, this, &DecodePanel::start);
    connect(startAction_, &QAction::triggered, this, &DecodePanel::start);
    connect(cancelButton_, &QPushButton::clicked, this, &DecodePanel::cancel);
    for (QSpinBox* spin : {promptTokens_, newTokens_, threads_})
        connect(spin, &QSpinBox::valueChanged, this, &DecodePanel::saveSettings);
    connect(exportJson_, &QPushButton::clicked, this, [this] { chooseAndExport(true); });
    connect(exportMarkdown_, &QPushButton::clicked, this, [this] { chooseAndExport(false); });

    setController(nullptr);
}

DecodePanel::~DecodePanel() = default;

void DecodePanel::saveSettings() const {
    QSettings settings;
    settings.setValue(kPromptKey, promptTokens_->value());
    settings.setValue(kNewTokensKey, newTokens_->value());
    settings.setValue(kThreadsKey, threads_->value());
}

QString DecodePanel::statusText() const { return status_->text(); }

void DecodePanel::recognize() {
    decoder_.reset();
    notDecoder_.clear();
    indexRanges_.clear();
    if (!controller_ || !controller_->document() || !controller_->document()->loaded.proto) return;
    const auto& graph = controller_->document()->loaded.proto->graph();
    auto decoder = engine::recognizeDecoder(graph);
    if (!decoder) {
        notDecoder_ = QString::fromStdString(decoder.error().message);
        return;
    }
    if (!decoder->otherInputs.empty()) {
        QStringList names;
        for (const auto& name : decoder->otherInputs) names << QString::fromStdString(name);
        notDecoder_ =
            tr("the decoder's input(s) %1 are not token ids, mask, positions or cache: the "
               "decoding loop cannot fill them")
                .arg(names.join(QStringLiteral(", ")));
        return;
    }
    decoder_ = std::move(*decoder);
    indexRanges_ = engine::inferIndexRanges(graph);
    if (engine::decoderVocabulary(*decoder_, indexRanges_) <= 0) {
        decoder_.reset();
        notDecoder_ =
            tr("the vocabulary size is unknown (input_ids indexes no table and the logits' "
               "last dim is symbolic): the prompt cannot be drawn from it");
    }
}

void DecodePanel::setController(ModelController* controller) {
    for (const auto& connection : controllerConnections_) disconnect(connection);
    controllerConnections_.clear();
    controller_ = controller;
    recognize();
    if (controller) {
        controllerConnections_.push_back(
            connect(controller, &ModelController::compiled, this, &DecodePanel::updateActions));
        controllerConnections_.push_back(connect(controller, &ModelController::compileFailed, this,
                                                 &DecodePanel::updateActions));
    }
    if (!isRunning()) {
        if (!controller)
            status_->setText(tr("Open a decoder model to decode with it."));
        else if (!decoder_)
            status_->setText(tr("Not a decoder with a KV cache: %1").arg(notDecoder_));
        else
            status_->setText(
                tr("%1 layers, %2 KV heads × %3, %4 per token of context.")
                    .arg(decoder_->layers)
                    .arg(decoder_->heads ? QString::number(decoder_->heads) : QStringLiteral("?"))
                    .arg(decoder_->headSize ? QString::number(decoder_->headSize)
                                            : QStringLiteral("?"))
                    .arg(decoder_->bytesPerToken
                             ? byteSize(static_cast<double>(decoder_->bytesPerToken))
                             : QStringLiteral("?")));
    }
    showResult(result());
    updateActions();
}

std::shared_ptr<const DecodeOutcome> DecodePanel::result() const {
    return controller_ ? controller_->lastDecode() : nullptr;
}

QString DecodePanel::unavailableReason() const {
    if (!controller_) return tr("Open a decoder model to decode with it");
    if (!decoder_)
        return tr("%1 is not a decoder with a KV cache: %2")
            .arg(QFileInfo(controller_->document()->path).fileName(), notDecoder_);
    if (!controller_->isReady() && !controller_->compileError().isEmpty())
        return controller_->unavailableReason();
    return {};
}

void DecodePanel::start() {
    if (isRunning() || !controller_ || !decoder_ || !unavailableReason().isEmpty()) return;
    const std::int64_t vocabulary = engine::decoderVocabulary(*decoder_, indexRanges_);
    DecodeSettings settings;
    // The prompt as `onnxlens-cli generate --prompt-tokens N` draws it (seed 0).
    const auto ids = engine::randomTensorInRange(
        decoder_->idsType == engine::DataType::Int32 ? engine::DataType::Int32
                                                     : engine::DataType::Int64,
        {promptTokens_->value()}, 0, 0, static_cast<double>(vocabulary - 1));
    settings.promptIds = ids.toInt64Vector();
    settings.newTokens = newTokens_->value();
    settings.threads = threads_->value();
    settings.indexRanges = indexRanges_;

    ModelController* controller = controller_;
    runningController_ = controller;
    stepsDone_ = 0;
    const int total = settings.newTokens;
    auto& c = runConnections_;
    c.push_back(connect(controller, &ModelController::started, this, [this](const QString& what) {
        if (stepsDone_ == 0) status_->setText(what + QStringLiteral("…"));
    }));
    live_ = {};
    liveChartClock_.invalidate();
    c.push_back(connect(
        controller, &ModelController::decodeStep, this,
        [this, total, controller](int index, qint64 context, qint64 token, double ms) {
            stepsDone_ = index + 1;
            if (index > 0 && controller == controller_) {
                // The chart grows as the steps come, not only at the end.
                live_.stepMs.push_back(ms);
                live_.stepContext.push_back(context);
                if (!liveChartClock_.isValid() || liveChartClock_.elapsed() >= kLiveChartMs) {
                    engine::computeDecodeStatistics(live_);
                    rebuildChart(&live_);
                    liveChartClock_.start();
                }
            }
            progress_->setFormat(QStringLiteral("%v / %m"));
            progress_->setRange(0, total);
            progress_->setValue(index + 1);
            if (index == 0)
                status_->setText(tr("Prefill: %1 ms, first token %2 (context %3)")
                                     .arg(ms, 0, 'f', 3)
                                     .arg(token)
                                     .arg(context));
            else
                status_->setText(tr("Step %1 of %2: %3 ms, token %4 (context %5)")
                                     .arg(index)
                                     .arg(total - 1)
                                     .arg(ms, 0, 'f', 3)
                                     .arg(token)
                                     .arg(context));
        }));
    c.push_back(connect(controller, &QObject::destroyed, this, [this] {
        onEnded(tr("Decode stopped: its model was closed."));
        emit cancelled();
    }));
    c.push_back(connect(controller, &ModelController::decodeFinished, this, [this, controller] {
        const auto outcome = controller->lastDecode();
        disconnectRun();
        const int done = static_cast<int>(outcome->result.generatedIds.size());
        progress_->setRange(0, std::max(1, done));
        progress_->setValue(std::max(1, done));
        const auto& r = outcome->result;
        status_->setText(
            r.stepMs.empty()
                ? tr("Prefill of %1 tokens: %2 ms (%3); one token, no steps.")
                      .arg(r.promptIds.size())
                      .arg(r.prefillMs, 0, 'f', 3)
                      .arg(decodeThreadsText(*outcome, ThreadsTextForm::Status))
                : tr("%1 tokens after a prefill of %2 ms: %3 tokens/s, step median %4 ms, "
                     "P90 %5 ms (%6)")
                      .arg(r.generatedIds.size())
                      .arg(r.prefillMs, 0, 'f', 3)
                      .arg(r.tokensPerSecond, 0, 'f', 1)
                      .arg(r.stepStatistics.medianMs, 0, 'f', 3)
                      .arg(r.stepStatistics.p90Ms, 0, 'f', 3)
                      .arg(decodeThreadsText(*outcome, ThreadsTextForm::Status)));
        if (controller == controller_) showResult(outcome);
        updateActions();
        emit finished();
    }));
    c.push_back(connect(controller, &ModelController::failed, this,
                        [this](EngineJob job, const QString& message) {
                            if (job != EngineJob::Decode) return;
                            onEnded(tr("Decode failed: %1").arg(message));
                            emit failed(message);
                        }));
    c.push_back(connect(controller, &ModelController::cancelled, this, [this](EngineJob job) {
        if (job != EngineJob::Decode) return;
        onEnded(stepsDone_ > 0 ? tr("Decode cancelled after %n token(s).", nullptr, stepsDone_)
                               : tr("Decode cancelled."));
        emit cancelled();
    }));
    progress_->setFormat(QString());
    progress_->setRange(0, 0);  // busy until the prefill reports
    status_->setText(tr("Starting…"));
    updateActions();
    emit started();
    controller->decode(std::move(settings));  // may fail at once (a model that cannot compile)
}

void DecodePanel::cancel() {
    if (!isRunning()) return;
    status_->setText(tr("Cancelling…"));
    runningController_->cancel();
}

void DecodePanel::disconnectRun() {
    for (const auto& connection : runConnections_) disconnect(connection);
    runConnections_.clear();
    runningController_.clear();
}

void DecodePanel::onEnded(const QString& status) {
    disconnectRun();
    progress_->setFormat(QString());
    progress_->setRange(0, 1);
    progress_->setValue(0);
    status_->setText(status);
    updateActions();
}

void DecodePanel::showResult(const std::shared_ptr<const DecodeOutcome>& outcome) {
    statistics_->setRowCount(0);
    if (!outcome) {
        ids_->clear();
        rebuildChart(nullptr);
        return;
    }
    const auto& r = outcome->result;
    const auto& s = r.stepStatistics;
    const bool steps = !r.stepMs.empty();
    const QString none = tr("(no steps)");
    const std::pair<QString, QString> rows[] = {
        {tr("prompt tokens"), QString::number(r.promptIds.size())},
        {tr("new tokens"), QString::number(r.generatedIds.size())},
        {tr("prefill"), QString::number(r.prefillMs, 'f', 3) + " ms"},
        {tr("step median"), steps ? QString::number(s.medianMs, 'f', 3) + " ms" : none},
        {tr("step P90"), steps ? QString::number(s.p90Ms, 'f', 3) + " ms" : none},
        {tr("step min / max"),
         steps ? QStringLiteral("%1 / %2 ms").arg(s.minMs, 0, 'f', 3).arg(s.maxMs, 0, 'f', 3)
               : none},
        {tr("tokens per second"), steps ? QString::number(r.tokensPerSecond, 'f', 1) : none},
        {tr("KV cache at the end"), tr("%1 (%2 tokens)")
                                        .arg(byteSize(static_cast<double>(r.kvCacheBytes)))
                                        .arg(r.finalContext)},
        {tr("intra-op threads"), decodeThreadsText(*outcome, ThreadsTextForm::Cell)},
    };
    statistics_->setRowCount(static_cast<int>(std::size(rows)));
    for (int row = 0; row < static_cast<int>(std::size(rows)); ++row) {
        statistics_->setItem(row, 0, new QTableWidgetItem(rows[row].first));
        auto* value = new QTableWidgetItem(rows[row].second);
        value->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        statistics_->setItem(row, 1, value);
    }
    // The threads' cell is short (the column is sized to its values); its tooltip says why.
    statistics_->item(static_cast<int>(std::size(rows)) - 1, 1)
        ->setToolTip(decodeThreadsText(*outcome, ThreadsTextForm::Full));
    ids_->setPlainText(
        tr("Prompt ids: %1\nGenerated ids: %2").arg(idsText(r.promptIds), idsText(r.generatedIds)));
    rebuildChart(&r);
}

void DecodePanel::rebuildChart(const engine::DecodeResult* result) {
    QChart* chart = chart_->chart();
    chart->removeAllSeries();
    for (auto* axis : chart->axes()) {
        chart->removeAxis(axis);
        delete axis;
    }
    chartPoints_ = 0;
    if (!result || result->stepMs.empty()) {
        chart->setTitle(result ? tr("One token: no steps after the prefill to draw") : QString());
        chart->legend()->hide();
        return;
    }
    auto* line = new QLineSeries;
    line->setName(tr("step latency"));
    auto* dots = new QScatterSeries;
    const QColor colour(0x1f, 0x77, 0xb4);
    line->setPen(QPen(colour, 2));
    dots->setColor(colour);
    dots->setBorderColor(colour);
    dots->setMarkerSize(result->stepMs.size() > 64 ? 4 : 6);
    double high = result->stepMs.front();
    for (std::size_t i = 0; i < result->stepMs.size(); ++i) {
        const double context = static_cast<double>(result->stepContext[i]);
        line->append(context, result->stepMs[i]);
        dots->append(context, result->stepMs[i]);
        high = std::max(high, result->stepMs[i]);
    }
    chartPoints_ = static_cast<int>(line->count());
    auto* median = new QLineSeries;
    median->setName(tr("median"));
    const double first = static_cast<double>(result->stepContext.front());
    const double last = static_cast<double>(result->stepContext.back());
    median->append(first, result->stepStatistics.medianMs);
    median->append(last, result->stepStatistics.medianMs);
    QPen medianPen(QColor(0xe3, 0x1a, 0x1c));
    medianPen.setStyle(Qt::DashLine);
    median->setPen(medianPen);

    auto* contextAxis = new QValueAxis;
    // Whole context lengths: a step of 1, 2 or 5 times a power of ten from the first context.
    const double span = std::max(1.0, last - first);
    const double step = countAxisStep(span);
    const double axisLow = std::floor(first / step) * step;
    const double axisHigh = std::max(axisLow + step, std::ceil(last / step) * step);
    contextAxis->setRange(axisLow, axisHigh);
    contextAxis->setTickType(QValueAxis::TicksDynamic);
    contextAxis->setTickAnchor(axisLow);
    contextAxis->setTickInterval(step);
    contextAxis->setLabelFormat(QStringLiteral("%d"));
    contextAxis->setTitleText(tr("context length (tokens)"));
    auto* msAxis = new QValueAxis;
    // From 0: how far the steps stay from free matters more than their spread.
    msAxis->setRange(0, std::max(1e-3, high * 1.08));
    msAxis->applyNiceNumbers();
    msAxis->setTitleText(tr("step ms"));
    chart->addAxis(contextAxis, Qt::AlignBottom);
    chart->addAxis(msAxis, Qt::AlignLeft);
    for (QXYSeries* s : {static_cast<QXYSeries*>(line), static_cast<QXYSeries*>(dots),
                         static_cast<QXYSeries*>(median)}) {
        chart->addSeries(s);
        s->attachAxis(contextAxis);
        s->attachAxis(msAxis);
    }
    const auto markers = chart->legend()->markers(dots);
    for (auto* marker : markers) marker->setVisible(false);
    chart->legend()->show();
    chart->setTitle(tr("Step latency against context length: %1 tokens/s")
                        .arg(result->tokensPerSecond, 0, 'f', 1));
}

void DecodePanel::updateActions() {
    const bool running = isRunning();
    QString whyNot = running ? tr("A decode is running") : unavailableReason();
    setAvailability(startAction_, startButton_,
                    tr("Generate tokens greedily with the Decode tab's settings"), whyNot);
    cancelButton_->setEnabled(running);
    for (QSpinBox* spin : {promptTokens_, newTokens_, threads_})
        spin->setEnabled(!running && decoder_.has_value());
    const bool hasResult = result() != nullptr;
    exportJson_->setEnabled(hasResult);
    exportMarkdown_->setEnabled(hasResult);
    // The tab itself: greyed for a model that is not a decoder (never while it runs).
    const QString tabWhyNot = running || decoder_ || !controller_ ? QString() : unavailableReason();
    emit availabilityChanged(tabWhyNot.isEmpty(), tabWhyNot);
}

nlohmann::json DecodePanel::resultJson(const DecodeOutcome& outcome) const {
    nlohmann::json doc = engine::decodeResultJson(outcome.result);
    if (controller_) doc["model"] = controller_->document()->path.toStdString();
    doc["threads"] = outcome.threads;
    if (decoder_) doc["kv_cache"] = engine::decoderModelJson(*decoder_);
    return doc;
}

QString DecodePanel::exportJson(const QString& path) const {
    const auto current = result();
    if (!current) return tr("No decode result to export.");
    const std::string text =
        resultJson(*current).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    return writeText(path, QByteArray::fromStdString(text));
}

QString DecodePanel::exportMarkdown(const QString& path) const {
    const auto current = result();
    if (!current) return tr("No decode result to export.");
    const std::string model =
        controller_ ? QFileInfo(controller_->document()->path).fileName().toStdString() : "";
    const std::string text = engine::decodeResultMarkdown(current->result, model, current->threads,
                                                          decoder_ ? &*decoder_ : nullptr);
    return writeText(path, QByteArray::fromStdString(text));
}

void DecodePanel::chooseAndExport(bool json) {
    if (!controller_ || !result()) return;
    QSettings settings;
    const QFileInfo model(controller_->document()->path);
    const QString dir = settings.value(kExportDirKey, model.absolutePath()).toString();
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export decode"),
        dir + QLatin1Char('/') + model.completeBaseName() +
            (json ? QStringLiteral("-decode.json") : QStringLiteral("-decode.md")),
        json ? tr("JSON (*.json)") : tr("Markdown (*.md)"));
    if (path.isEmpty()) return;
    settings.setValue(kExportDirKey, QFileInfo(path).absolutePath());
    const QString error = json ? exportJson(path) : exportMarkdown(path);
    if (error.isEmpty())
        status_->setText(tr("Exported %1").arg(path));
    else
        QMessageBox::warning(this, tr("Export failed"), error);
}

}  // namespace onnxlens::widgets
