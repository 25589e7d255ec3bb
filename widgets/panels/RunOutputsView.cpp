#include "widgets/panels/RunOutputsView.h"

#include <QChart>
#include <QChartView>
#include <QGroupBox>
#include <QHeaderView>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include "widgets/charts/HistogramChart.h"
#include "widgets/panels/TensorText.h"

namespace onnxlens::widgets {

namespace {

enum OutputColumn {
    OutName,
    OutType,
    OutShape,
    OutMin,
    OutMax,
    OutMean,
    OutStd,
    OutNaN,
    OutInf,
    OutColumns
};

QTableWidgetItem* readOnlyItem(const QString& text) {
    auto* item = new QTableWidgetItem(text);
    item->setFlags(item->flags() & ~Qt::ItemIsEditable);
    return item;
}

QString number(double v) { return QString::number(v, 'g', 6); }

}  // namespace

RunOutputsView::RunOutputsView(QWidget* parent) : QWidget(parent) {
    outputs_ = new QTableWidget(0, OutColumns, this);
    outputs_->setObjectName(QStringLiteral("runOutputs"));
    outputs_->setHorizontalHeaderLabels({tr("Output"), tr("dtype"), tr("Shape"), tr("Min"),
                                         tr("Max"), tr("Mean"), tr("Std"), tr("NaN"), tr("Inf")});
    outputs_->verticalHeader()->hide();
    outputs_->setSelectionBehavior(QAbstractItemView::SelectRows);
    outputs_->setSelectionMode(QAbstractItemView::SingleSelection);
    outputs_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    connect(outputs_, &QTableWidget::currentCellChanged, this,
            [this](int row) { showOutput(row); });

    values_ = new QTableWidget(0, 2, this);
    values_->setHorizontalHeaderLabels({tr("Index"), tr("Value")});
    values_->horizontalHeader()->setStretchLastSection(true);
    values_->verticalHeader()->hide();
    values_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    histogram_ = new QChartView(this);
    histogram_->setRenderHint(QPainter::Antialiasing);
    histogram_->setMinimumHeight(160);
    top_ = new QTableWidget(0, 4, this);
    top_->setHorizontalHeaderLabels({tr("Rank"), tr("Class"), tr("Score"), tr("Softmax")});
    top_->horizontalHeader()->setStretchLastSection(true);
    top_->verticalHeader()->hide();
    top_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    outputTabs_ = new QTabWidget(this);
    outputTabs_->addTab(histogram_, tr("Histogram"));
    outputTabs_->addTab(values_, tr("Values"));
    outputTabs_->addTab(top_, tr("Top 5"));

    auto* outputsBox = new QGroupBox(tr("Outputs"), this);
    auto* outputsLayout = new QVBoxLayout(outputsBox);
    outputsLayout->addWidget(outputs_, 1);
    outputsLayout->addWidget(outputTabs_, 2);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(outputsBox);
}

void RunOutputsView::clear() {
    outcome_.reset();
    outputs_->setRowCount(0);
    values_->setRowCount(0);
    top_->setRowCount(0);
    histogram_->setChart(new QChart);
}

void RunOutputsView::show(const std::shared_ptr<const RunOutcome>& outcome) {
    outcome_ = outcome;
    outputs_->setRowCount(static_cast<int>(outcome->outputs.size()));
    for (int row = 0; row < outputs_->rowCount(); ++row) {
        const OutputView& out = outcome->outputs[static_cast<std::size_t>(row)];
        outputs_->setItem(row, OutName, readOnlyItem(QString::fromStdString(out.name)));
        if (!out.value.isTensor()) {
            const QString kind = out.value.isSequence()      ? tr("sequence")
                                 : out.value.isMapSequence() ? tr("sequence of maps")
                                 : out.value.isMap()         ? tr("map")
                                                             : tr("none");
            outputs_->setItem(row, OutType, readOnlyItem(kind));
            for (int c = OutShape; c < OutColumns; ++c)
                outputs_->setItem(row, c, readOnlyItem(QString()));
            continue;
        }
        const engine::Tensor& t = out.value.tensor();
        const auto& s = out.statistics;
        outputs_->setItem(row, OutType,
                          readOnlyItem(QString::fromLatin1(engine::dataTypeName(t.dtype()))));
        outputs_->setItem(row, OutShape,
                          readOnlyItem(QString::fromStdString(engine::shapeToString(t.shape()))));
        const bool figures = s.numeric && s.finiteCount > 0;
        outputs_->setItem(row, OutMin, readOnlyItem(figures ? number(s.min) : QString()));
        outputs_->setItem(row, OutMax, readOnlyItem(figures ? number(s.max) : QString()));
        outputs_->setItem(row, OutMean, readOnlyItem(figures ? number(s.mean) : QString()));
        outputs_->setItem(row, OutStd, readOnlyItem(figures ? number(s.std) : QString()));
        outputs_->setItem(row, OutNaN, readOnlyItem(QString::number(s.nanCount)));
        outputs_->setItem(row, OutInf, readOnlyItem(QString::number(s.infCount)));
        if (s.nanCount + s.infCount > 0)
            for (int c : {OutNaN, OutInf})
                outputs_->item(row, c)->setForeground(QBrush(QColor(190, 30, 30)));
    }
    outputs_->resizeColumnsToContents();
    if (outputs_->rowCount() > 0) {
        outputs_->setCurrentCell(0, 0);
        showOutput(0);
    }
}

// ZipMap's output (one map per row, class label -> probability) as a table of row, label and
// value; a single map as row 0. Tensors get the two-column index/value table back.
void RunOutputsView::showMapEntries(const engine::Value& value) {
    const bool maps = value.isMap() || value.isMapSequence();
    values_->setColumnCount(maps ? 3 : 2);
    values_->setHorizontalHeaderLabels(maps ? QStringList{tr("Row"), tr("Label"), tr("Probability")}
                                            : QStringList{tr("Index"), tr("Value")});
    if (!maps) return;
    std::vector<const engine::Value*> rows;
    if (value.isMap())
        rows.push_back(&value);
    else
        for (const auto& m : value.maps()) rows.push_back(&m);
    std::int64_t total = 0;
    for (std::size_t r = 0; r < rows.size() && total < kValueRows; ++r) {
        const engine::Tensor& keys = rows[r]->mapKeys();
        const engine::Tensor& values = rows[r]->mapValues();
        for (std::int64_t i = 0; i < keys.numel() && total < kValueRows; ++i, ++total) {
            const int row = values_->rowCount();
            values_->insertRow(row);
            values_->setItem(row, 0, readOnlyItem(QString::number(r)));
            values_->setItem(row, 1, readOnlyItem(elementText(keys, i)));
            values_->setItem(row, 2, readOnlyItem(elementText(values, i)));
        }
    }
    outputTabs_->setCurrentWidget(values_);
}

void RunOutputsView::showOutput(int index) {
    values_->setRowCount(0);
    top_->setRowCount(0);
    if (!outcome_ || index < 0 || index >= static_cast<int>(outcome_->outputs.size())) return;
    const OutputView& out = outcome_->outputs[static_cast<std::size_t>(index)];
    const QString name = QString::fromStdString(out.name);
    showMapEntries(out.value);
    if (!out.value.isTensor()) {
        histogram_->setChart(
            makeHistogramChart({}, tr("Values of %1").arg(name), tr("value"), tr("not a tensor")));
        return;
    }
    const engine::Tensor& t = out.value.tensor();
    const std::int64_t shown = std::min<std::int64_t>(t.numel(), kValueRows);
    values_->setRowCount(static_cast<int>(shown));
    for (std::int64_t i = 0; i < shown; ++i) {
        values_->setItem(static_cast<int>(i), 0, readOnlyItem(indexText(i, t.shape())));
        values_->setItem(static_cast<int>(i), 1, readOnlyItem(elementText(t, i)));
    }
    values_->setToolTip(
        t.numel() > shown ? tr("The first %1 of %2 values").arg(shown).arg(t.numel()) : QString());
    histogram_->setChart(makeHistogramChart(out.histogram, tr("Values of %1").arg(name),
                                            tr("value"), tr("no finite values")));
    top_->setRowCount(static_cast<int>(out.top5.size()));
    for (int r = 0; r < top_->rowCount(); ++r) {
        const auto& entry = out.top5[static_cast<std::size_t>(r)];
        top_->setItem(r, 0, readOnlyItem(QString::number(r + 1)));
        top_->setItem(r, 1, readOnlyItem(QString::number(entry.index)));
        top_->setItem(r, 2, readOnlyItem(number(entry.score)));
        top_->setItem(r, 3, readOnlyItem(QString::number(entry.probability, 'f', 4)));
    }
    outputTabs_->setTabEnabled(2, !out.top5.empty());
    outputTabs_->setTabToolTip(2, out.top5.empty()
                                      ? tr("Only for a 2-D [batch, classes] floating-point output")
                                      : tr("Row 0's five highest scores"));
}

}  // namespace onnxlens::widgets
