#include "widgets/panels/SweepTab.h"

#include <QBarCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLegendMarker>
#include <QLineEdit>
#include <QLineSeries>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QScatterSeries>
#include <QSettings>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <set>

#include "widgets/workers/SweepWorker.h"

namespace onnxlens::widgets {

namespace {
const char* kAxesKey = "benchmark/sweepAxes";

QTableWidgetItem* numberItem(const QString& text) {
    auto* item = new QTableWidgetItem(text);
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

// The model's named symbolic input dims, in first-seen order.
QStringList symbolsOf(const ModelDocument& document) {
    QStringList symbols;
    for (const auto& axis : document.summary.dynamicAxes)
        if (!axis.symbol.empty() && !symbols.contains(QString::fromStdString(axis.symbol)))
            symbols << QString::fromStdString(axis.symbol);
    return symbols;
}
}  // namespace

SweepTab::SweepTab(QWidget* parent) : QWidget(parent) {
    worker_ = new SweepWorker(this);
    axes_ = new QLineEdit(QSettings().value(kAxesKey).toString(), this);
    axes_->setObjectName(QStringLiteral("sweepAxes"));
    axes_->setPlaceholderText(tr("batch=1,2,4,8 sequence=64,128"));
    axes_->setToolTip(
        tr("Symbolic dims and the values to benchmark, SYMBOL=V1,V2,... separated "
           "by spaces; every combination runs"));
    symbols_ = new QLabel(this);
    startButton_ = new QPushButton(tr("Sweep"), this);
    startButton_->setObjectName(QStringLiteral("sweepStart"));
    cancelButton_ = new QPushButton(tr("Cancel"), this);
    progress_ = new QProgressBar(this);
    progress_->setRange(0, 1);
    progress_->setValue(0);
    status_ = new QLabel(this);
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* label = new QLabel(tr("S&weep:"), this);
    label->setBuddy(axes_);
    auto* controls = new QHBoxLayout;
    controls->addWidget(label);
    controls->addWidget(axes_, 1);
    controls->addWidget(symbols_);
    controls->addWidget(startButton_);
    controls->addWidget(cancelButton_);
    controls->addWidget(progress_);

    table_ = new QTableWidget(0, 6, this);
    table_->setObjectName(QStringLiteral("sweepTable"));
    table_->setHorizontalHeaderLabels(
        {tr("Dims"), tr("Median ms"), tr("P90 ms"), tr("Min ms"), tr("Items/s"), tr("Note")});
    table_->verticalHeader()->hide();
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 4);

    auto* chart = new QChart;
    chart->setMargins(QMargins(4, 4, 4, 4));
    chart->setAnimationOptions(QChart::NoAnimation);
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart_ = new QChartView(chart, this);
    chart_->setObjectName(QStringLiteral("sweepChart"));
    chart_->setRenderHint(QPainter::Antialiasing);
    chart_->setMinimumSize(300, 180);
    auto* results = new QSplitter(Qt::Horizontal, this);
    results->addWidget(table_);
    results->addWidget(chart_);
    results->setStretchFactor(0, 2);
    results->setStretchFactor(1, 3);
    results->setSizes({500, 750});

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(status_);
    layout->addWidget(results, 1);

    connect(startButton_, &QPushButton::clicked, this, &SweepTab::start);
    connect(axes_, &QLineEdit::returnPressed, this, &SweepTab::start);
    connect(cancelButton_, &QPushButton::clicked, this, &SweepTab::cancel);
    connect(worker_, &SweepWorker::phaseChanged, status_, &QLabel::setText);
    connect(worker_, &SweepWorker::progress, this,
            [this](int point, int points, bool warmingUp, int done, int total) {
                // Whole shapes done, plus the part of the current one.
                progress_->setRange(0, points * 1000);
                const int parts = std::max(1, total);
                progress_->setValue(point * 1000 + (warmingUp ? 0 : 1000 * done / parts));
                status_->setText((warmingUp ? tr("Shape %1 of %2: warming up, run %3 of %4")
                                            : tr("Shape %1 of %2: run %3 of %4"))
                                     .arg(point + 1)
                                     .arg(points)
                                     .arg(done)
                                     .arg(total));
            });
    connect(worker_, &SweepWorker::pointDone, this, &SweepTab::addPoint);
    connect(worker_, &SweepWorker::finished, this, [this] {
        progress_->setRange(0, 1);
        progress_->setValue(1);
        const auto ok =
            std::count_if(points_.begin(), points_.end(), [](const auto& p) { return p.ok(); });
        status_->setText(
            tr("%1 of %n shape(s) ran in one session.", nullptr, static_cast<int>(points_.size()))
                .arg(ok));
        updateActions();
        emit finished();
    });
    connect(worker_, &SweepWorker::failed, this, [this](const QString& message) {
        progress_->setRange(0, 1);
        progress_->setValue(0);
        status_->setText(tr("Sweep failed: %1").arg(message));
        updateActions();
        emit failed(message);
    });
    connect(worker_, &SweepWorker::cancelled, this, [this] {
        progress_->setRange(0, 1);
        progress_->setValue(0);
        status_->setText(tr("Sweep cancelled."));
        updateActions();
        emit cancelled();
    });
    setDocument(nullptr);
}

SweepTab::~SweepTab() = default;

bool SweepTab::isRunning() const { return worker_->isRunning(); }

QString SweepTab::statusText() const { return status_->text(); }

QString SweepTab::parseAxes(const QString& text, std::vector<engine::SweepAxis>& axes) {
    axes.clear();
    const QStringList parts =
        text.split(QRegularExpression(QStringLiteral("[\\s;]+")), Qt::SkipEmptyParts);
    if (parts.isEmpty()) return tr("Enter what to sweep, e.g. batch=1,2,4,8.");
    std::set<std::string> seen;
    for (const QString& part : parts) {
        auto axis = engine::parseSweepAxis(part.toStdString());
        if (!axis) return QString::fromStdString(axis.error().message);
        if (!seen.insert(axis->symbol).second)
            return tr("'%1' is swept twice.").arg(QString::fromStdString(axis->symbol));
        axes.push_back(std::move(*axis));
    }
    return {};
}

void SweepTab::setDocument(std::shared_ptr<const ModelDocument> document) {
    document_ = std::move(document);
    if (!document_) {
        symbols_->setText(QString());
        if (!isRunning()) status_->setText(tr("Open a model to sweep its dims."));
        updateActions();
        return;
    }
    const QStringList symbols = symbolsOf(*document_);
    symbols_->setText(symbols.isEmpty()
                          ? tr("(the model has no named symbolic dims)")
                          : tr("symbols: %1").arg(symbols.join(QStringLiteral(", "))));
    if (axes_->text().trimmed().isEmpty() && !symbols.isEmpty())
        axes_->setText(symbols.first() + QStringLiteral("=1,2,4,8"));
    if (!isRunning())
        status_->setText(symbols.isEmpty()
                             ? tr("This model's inputs have no named symbolic dims to sweep.")
                             : QString());
    updateActions();
}

void SweepTab::start() {
    if (isRunning() || !document_) return;
    SweepWorker::Settings settings;
    if (const QString error = parseAxes(axes_->text(), settings.axes); !error.isEmpty()) {
        status_->setText(error);
        return;
    }
    QSettings().setValue(kAxesKey, axes_->text().trimmed());
    if (settingsSource_) {
        const RunSettings run = settingsSource_();
        settings.warmupRuns = run.warmupRuns;
        settings.runs = run.runs;
        settings.threads = run.threads;
    }
    if (!worker_->start(document_, settings)) return;
    points_.clear();
    table_->setRowCount(0);
    rebuildChart();
    progress_->setRange(0, 0);
    status_->setText(tr("Starting…"));
    updateActions();
}

void SweepTab::cancel() {
    if (!isRunning()) return;
    status_->setText(tr("Cancelling…"));
    worker_->cancel();
}

void SweepTab::addPoint(const engine::SweepPoint& point) {
    points_.push_back(point);
    const int row = table_->rowCount();
    table_->insertRow(row);
    table_->setItem(row, 0,
                    new QTableWidgetItem(QString::fromStdString(engine::sweepLabel(point.dims))));
    if (point.ok()) {
        const auto& st = point.statistics;
        table_->setItem(row, 1, numberItem(QString::number(st.medianMs, 'f', 3)));
        table_->setItem(row, 2, numberItem(QString::number(st.p90Ms, 'f', 3)));
        table_->setItem(row, 3, numberItem(QString::number(st.minMs, 'f', 3)));
        table_->setItem(row, 4, numberItem(QString::number(point.itemsPerSecond, 'f', 1)));
        if (engine::itemsPerRun(point.dims) == 1 && points_.size() == 1)
            table_->setItem(row, 5, new QTableWidgetItem(tr("items/s counts runs: no batch dim")));
    } else {
        auto* note =
            new QTableWidgetItem(tr("rejected: %1").arg(QString::fromStdString(point.error)));
        note->setToolTip(QString::fromStdString(point.error));
        note->setForeground(QColor(0xb0, 0x20, 0x20));
        table_->setItem(row, 5, note);
    }
    rebuildChart();
}

void SweepTab::rebuildChart() {
    QChart* chart = chart_->chart();
    chart->removeAllSeries();
    for (auto* axis : chart->axes()) {
        chart->removeAxis(axis);
        delete axis;
    }
    // One swept symbol: its values along the axis, titled with its name ("sequence"); several:
    // "1×128" under "batch × sequence".
    auto shortLabel = [](const engine::SymbolBindings& dims) {
        QStringList values;
        for (const auto& [symbol, value] : dims) values << QString::number(value);
        return values.join(QStringLiteral("×"));
    };
    std::vector<const engine::SweepPoint*> ok;
    for (const auto& p : points_)
        if (p.ok()) ok.push_back(&p);
    if (ok.empty()) {
        chart->setTitle(QString());
        return;
    }
    chart->setTitle(tr("Latency and throughput per shape"));
    auto* categories = new QBarCategoryAxis;
    auto* latency = new QLineSeries;
    latency->setName(tr("latency"));
    auto* throughput = new QLineSeries;
    throughput->setName(tr("throughput"));
    auto* latencyDots = new QScatterSeries;
    auto* throughputDots = new QScatterSeries;
    double maxMs = 0, maxItems = 0;
    for (std::size_t i = 0; i < ok.size(); ++i) {
        categories->append(shortLabel(ok[i]->dims));
        latency->append(static_cast<double>(i), ok[i]->statistics.medianMs);
        latencyDots->append(static_cast<double>(i), ok[i]->statistics.medianMs);
        throughput->append(static_cast<double>(i), ok[i]->itemsPerSecond);
        throughputDots->append(static_cast<double>(i), ok[i]->itemsPerSecond);
        maxMs = std::max(maxMs, ok[i]->statistics.medianMs);
        maxItems = std::max(maxItems, ok[i]->itemsPerSecond);
    }
    const QColor latencyColour(0x1f, 0x77, 0xb4), throughputColour(0xd6, 0x27, 0x28);
    latency->setPen(QPen(latencyColour, 2));
    throughput->setPen(QPen(throughputColour, 2));
    for (const auto& [dots, colour] :
         {std::pair{latencyDots, latencyColour}, std::pair{throughputDots, throughputColour}}) {
        dots->setColor(colour);
        dots->setBorderColor(colour);
        dots->setMarkerSize(7);
    }
    QStringList symbols;
    for (const auto& [symbol, value] : ok.front()->dims) symbols << QString::fromStdString(symbol);
    categories->setTitleText(symbols.join(QStringLiteral(" × ")));
    auto* msAxis = new QValueAxis;
    msAxis->setRange(0, maxMs * 1.15);
    msAxis->applyNiceNumbers();
    msAxis->setTitleText(tr("median ms"));
    msAxis->setLabelsColor(latencyColour);
    auto* itemsAxis = new QValueAxis;
    itemsAxis->setRange(0, maxItems * 1.15);
    itemsAxis->applyNiceNumbers();
    itemsAxis->setTitleText(tr("items/s"));
    itemsAxis->setLabelsColor(throughputColour);
    chart->addAxis(categories, Qt::AlignBottom);
    chart->addAxis(msAxis, Qt::AlignLeft);
    chart->addAxis(itemsAxis, Qt::AlignRight);
    for (QXYSeries* s : {static_cast<QXYSeries*>(latency), static_cast<QXYSeries*>(latencyDots)}) {
        chart->addSeries(s);
        s->attachAxis(categories);
        s->attachAxis(msAxis);
    }
    for (QXYSeries* s :
         {static_cast<QXYSeries*>(throughput), static_cast<QXYSeries*>(throughputDots)}) {
        chart->addSeries(s);
        s->attachAxis(categories);
        s->attachAxis(itemsAxis);
    }
    // The dots are markers of the lines, not entries of their own.
    const auto markers = chart->legend()->markers();
    for (auto* marker : markers)
        if (marker->series() == latencyDots || marker->series() == throughputDots)
            marker->setVisible(false);
}

void SweepTab::updateActions() {
    const bool running = isRunning();
    startButton_->setEnabled(!running && document_ != nullptr);
    cancelButton_->setEnabled(running);
    axes_->setEnabled(!running);
}

}  // namespace onnxlens::widgets
