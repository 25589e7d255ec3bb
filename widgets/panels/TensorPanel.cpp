// Engine headers first: Session.h before any Qt header.
#pragma push_macro("slots")
#undef slots
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/workflows/DequantizedWeight.h"
#pragma pop_macro("slots")

#include <Eigen/Core>
#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QFileDialog>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QValueAxis>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "onnxlens/model/ExternalData.h"
#include "onnxlens/model/NodeNames.h"
#include "onnxlens/model/TensorFile.h"
#include "onnxlens/model/TensorTypes.h"
#include "widgets/charts/AxisLabels.h"
#include "widgets/panels/TensorPanel.h"

namespace onnxlens::widgets {

namespace {
// Elements first, first + step, ... (count of them) of a little-endian array, as doubles; `Via`
// is the type converted through (float for the 16-bit floats).
template <class T, class Via = T>
void decode(const char* bytes, const ValueSelection& pick, std::vector<double>& out) {
    out.reserve(pick.count);
    for (std::size_t i = 0; i < pick.count; ++i) {
        T v;
        std::memcpy(&v, bytes + (pick.first + i * pick.step) * sizeof(T), sizeof(T));
        out.push_back(static_cast<double>(static_cast<Via>(v)));
    }
}

// A tensor whose data is inline (external data read in), for the converters and .npy export.
Result<onnx::TensorProto> inlineTensor(const onnx::TensorProto& tensor,
                                       const std::filesystem::path& directory) {
    if (!usesExternalData(tensor)) return tensor;
    auto bytes = readExternalData(tensor, directory);
    if (!bytes) return bytes.error();
    onnx::TensorProto copy;
    copy.set_name(tensor.name());
    copy.set_data_type(tensor.data_type());
    *copy.mutable_dims() = tensor.dims();
    copy.set_raw_data(std::move(bytes.value()));
    return copy;
}

// The MatMulNBits / GatherBlockQuantized node that reads `tensor` as its packed weight, or -1.
int quantizedWeightReader(const ViewGraph& view, int tensor) {
    // (Folded initializers are rows of their readers, not listed as their consumers.)
    for (int consumer = 0; consumer < static_cast<int>(view.nodes.size()); ++consumer) {
        const ViewNode& node = view.nodes[consumer];
        if (!node.proto) continue;
        const int input = engine::quantizedWeightInput(*node.proto);
        if (input >= 0 && input < static_cast<int>(node.inputs.size()) &&
            node.inputs[input] == tensor)
            return consumer;
    }
    return -1;
}

// A dequantized weight opened and its (sampled) statistics, computed off the GUI thread.
struct DequantizedOutcome {
    std::shared_ptr<const engine::DequantizedWeight> weight;
    TensorStatistics stats;
    std::size_t step = 1;
    QString error;
};

DequantizedOutcome openDequantized(const std::shared_ptr<const ViewGraph>& view, int nodeIndex,
                                   const std::filesystem::path& directory,
                                   std::uint64_t sampleSize) {
    DequantizedOutcome outcome;
    const ViewNode& node = view->nodes[nodeIndex];
    // The node's own inputs, by name (a name can repeat in subgraphs).
    std::map<std::string, const onnx::TensorProto*> constants;
    for (int t : node.inputs)
        if (t >= 0 && view->tensors[t].initializer)
            constants[view->tensors[t].name] = view->tensors[t].initializer;
    auto opened = engine::DequantizedWeight::open(
        *node.proto,
        [&constants](const std::string& name) -> const onnx::TensorProto* {
            auto it = constants.find(name);
            return it == constants.end() ? nullptr : it->second;
        },
        directory);
    if (!opened) {
        outcome.error = QString::fromStdString(opened.error().message);
        return outcome;
    }
    auto weight = std::make_shared<const engine::DequantizedWeight>(std::move(*opened));
    const auto count = static_cast<std::uint64_t>(weight->numel());
    outcome.step = static_cast<std::size_t>(std::max<std::uint64_t>(
        1, (count + sampleSize - 1) / std::max<std::uint64_t>(sampleSize, 1)));
    outcome.stats = computeStatistics(weight->values(0, static_cast<std::int64_t>(sampleSize),
                                                     static_cast<std::int64_t>(outcome.step)));
    outcome.weight = std::move(weight);
    return outcome;
}

QString exportDequantized(const engine::DequantizedWeight& weight, const QString& path) {
    auto all = weight.dequantizeAll();
    if (!all) return QString::fromStdString(all.error().message);
    auto status = writeNpyFile(std::filesystem::path(path.toStdString()),
                               engine::tensorToProto(*all, weight.weightName()));
    if (!status) return QString::fromStdString(status.error().message);
    return {};
}
}  // namespace

Result<std::vector<double>> tensorValues(const onnx::TensorProto& source,
                                         const std::filesystem::path& modelDirectory,
                                         ValueSelection pick) {
    // External data is read through its file's mapping: only the pages of the picked values.
    std::string inlineBytes;
    MappedExternalData mapped;
    const char* bytes = nullptr;
    std::uint64_t size = 0;
    if (usesExternalData(source)) {
        auto found = mapExternalData(source, modelDirectory);
        if (!found) return found.error();
        mapped = std::move(*found);
        bytes = mapped.length ? mapped.data() : nullptr;
        size = mapped.length;
    } else {
        auto raw = tensorRawBytes(source, source.name());
        if (!raw) return raw.error();
        inlineBytes = std::move(*raw);
        bytes = inlineBytes.data();
        size = inlineBytes.size();
    }
    const std::size_t elementSize = elementTypeSize(source.data_type());
    const std::uint64_t total = elementSize ? size / elementSize : 0;
    pick.step = std::max<std::size_t>(pick.step, 1);
    pick.count = pick.first >= total ? 0
                                     : std::min<std::uint64_t>(
                                           pick.count, (total - pick.first - 1) / pick.step + 1);
    std::vector<double> values;
    using T = onnx::TensorProto;
    switch (source.data_type()) {
        case T::FLOAT:
            decode<float>(bytes, pick, values);
            break;
        case T::DOUBLE:
            decode<double>(bytes, pick, values);
            break;
        case T::FLOAT16:
            decode<Eigen::half, float>(bytes, pick, values);
            break;
        case T::BFLOAT16:
            decode<Eigen::bfloat16, float>(bytes, pick, values);
            break;
        case T::INT8:
            decode<std::int8_t>(bytes, pick, values);
            break;
        case T::UINT8:
        case T::BOOL:
            decode<std::uint8_t>(bytes, pick, values);
            break;
        case T::INT16:
            decode<std::int16_t>(bytes, pick, values);
            break;
        case T::UINT16:
            decode<std::uint16_t>(bytes, pick, values);
            break;
        case T::INT32:
            decode<std::int32_t>(bytes, pick, values);
            break;
        case T::UINT32:
            decode<std::uint32_t>(bytes, pick, values);
            break;
        case T::INT64:
            decode<std::int64_t>(bytes, pick, values);
            break;
        case T::UINT64:
            decode<std::uint64_t>(bytes, pick, values);
            break;
        default:
            return makeError(
                source.name(),
                "values of type " + elementTypeName(source.data_type()) + " are not shown");
    }
    if (mapped.mapping)
        if (auto st = mapped.mapping->checkUnchanged(); !st) return st.error();
    return values;
}

TensorStatistics computeStatistics(const std::vector<double>& values, int bins) {
    TensorStatistics s;
    s.count = values.size();
    double sum = 0, sumSquares = 0;
    std::size_t finite = 0;
    bool first = true;
    for (double v : values) {
        if (v == 0) ++s.zeros;
        if (!std::isfinite(v)) {
            ++s.nonFinite;
            continue;
        }
        ++finite;
        if (first || v < s.min) s.min = v;
        if (first || v > s.max) s.max = v;
        first = false;
        sum += v;
    }
    if (finite == 0) return s;
    s.mean = sum / static_cast<double>(finite);
    for (double v : values)
        if (std::isfinite(v)) sumSquares += (v - s.mean) * (v - s.mean);
    s.std = std::sqrt(sumSquares / static_cast<double>(finite));
    s.histogram.assign(bins, 0);
    const double width = (s.max - s.min) / bins;
    for (double v : values) {
        if (!std::isfinite(v)) continue;
        int bin = width > 0 ? static_cast<int>((v - s.min) / width) : 0;
        ++s.histogram[std::clamp(bin, 0, bins - 1)];
    }
    return s;
}

TensorPanel::TensorPanel(QWidget* parent) : QWidget(parent) {
    title_ = new QLabel(this);
    title_->setWordWrap(true);
    title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    statsLabel_ = new QLabel(this);
    statsLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    statsLabel_->setWordWrap(true);
    table_ = new QTableWidget(this);
    table_->setColumnCount(2);
    table_->setHorizontalHeaderLabels({tr("Index"), tr("Value")});
    table_->verticalHeader()->hide();
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    page_ = new QSpinBox(this);
    page_->setMinimum(1);
    pageCount_ = new QLabel(this);
    export_ = new QPushButton(tr("Export .npy…"), this);
    dequantize_ = new QCheckBox(tr("Dequantized"), this);
    dequantize_->setChecked(true);
    dequantize_->setToolTip(
        tr("Show the block-quantized weight as the float values it stands for (checked) or as "
           "its stored bytes"));
    chart_ = new QChartView(this);
    chart_->setMinimumHeight(160);
    chart_->setRenderHint(QPainter::Antialiasing);

    auto* pager = new QHBoxLayout;
    pager->addWidget(new QLabel(tr("Page"), this));
    pager->addWidget(page_);
    pager->addWidget(pageCount_, 1);
    pager->addWidget(export_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(title_);
    layout->addWidget(dequantize_);
    layout->addWidget(statsLabel_);
    layout->addWidget(chart_, 2);
    layout->addLayout(pager);
    layout->addWidget(table_, 3);
    connect(page_, &QSpinBox::valueChanged, this, [this] { fillPage(); });
    connect(dequantize_, &QCheckBox::toggled, this, [this] {
        if (!view_ || tensor_ < 0) return;
        if (showsDequantized())
            showDequantized();
        else
            showStored();
    });
    connect(export_, &QPushButton::clicked, this, [this] {
        if (!view_ || tensor_ < 0) return;
        const bool dequantized = showsDequantized() && dequantized_;
        QString suggested =
            QString::fromStdString(view_->tensors[tensor_].name).replace('/', '_') +
            (dequantized ? QStringLiteral("_dequantized.npy") : QStringLiteral(".npy"));
        QString path = QFileDialog::getSaveFileName(this, tr("Export tensor"), suggested,
                                                    tr("NumPy array (*.npy)"));
        if (path.isEmpty()) return;
        if (!dequantized) {
            QString error = exportNpy(path);
            if (!error.isEmpty()) QMessageBox::warning(this, tr("Export failed"), error);
            return;
        }
        // Every value dequantized (a 32k x 2048 table is 256 MB of float32): on a worker.
        export_->setEnabled(false);
        auto* watcher = new QFutureWatcher<QString>(this);
        connect(watcher, &QFutureWatcher<QString>::finished, this, [this, watcher] {
            const QString error = watcher->result();
            watcher->deleteLater();
            export_->setEnabled(view_ && tensor_ >= 0 && !busy_);
            if (!error.isEmpty()) QMessageBox::warning(this, tr("Export failed"), error);
        });
        watcher->setFuture(QtConcurrent::run(
            [weight = dequantized_, path] { return exportDequantized(*weight, path); }));
    });
    clear();
}

void TensorPanel::clear() {
    view_.reset();
    tensor_ = -1;
    valueCount_ = 0;
    stats_ = {};
    quantizedNode_ = -1;
    dequantized_.reset();
    ++generation_;
    busy_ = false;
    dequantize_->hide();
    title_->setText(tr("Double-click an initializer in the Node panel to see its values."));
    statsLabel_->clear();
    table_->setRowCount(0);
    export_->setEnabled(false);
    pageCount_->clear();
    chart_->setChart(new QChart);
}

int TensorPanel::page() const { return page_->value() - 1; }

void TensorPanel::setPage(int page) { page_->setValue(page + 1); }

bool TensorPanel::showsDequantized() const {
    return quantizedNode_ >= 0 && dequantize_->isChecked();
}

QString TensorPanel::titleText() const { return title_->text(); }

QString TensorPanel::statisticsText() const { return statsLabel_->text(); }

void TensorPanel::showTensor(std::shared_ptr<const ViewGraph> view, int tensor,
                             const std::filesystem::path& modelDirectory) {
    clear();
    if (!view || tensor < 0 || tensor >= static_cast<int>(view->tensors.size()) ||
        !view->tensors[tensor].initializer)
        return;
    view_ = std::move(view);
    tensor_ = tensor;
    directory_ = modelDirectory;
    quantizedNode_ = quantizedWeightReader(*view_, tensor);
    dequantize_->setVisible(quantizedNode_ >= 0);
    if (showsDequantized())
        showDequantized();
    else
        showStored();
}

void TensorPanel::showStored() {
    ++generation_;
    busy_ = false;
    dequantized_.reset();
    const auto& t = view_->tensors[tensor_];
    title_->setText(QStringLiteral("<b>%1</b> %2")
                        .arg(QString::fromStdString(t.name).toHtmlEscaped(),
                             QString::fromStdString(t.type.text())));
    // Values are read when shown (a page at a time); statistics of a tensor over
    // kStatisticsValues elements are of an evenly strided sample, so a multi-gigabyte weight is
    // never read whole.
    valueCount_ = elementCount(*t.initializer).value_or(0);
    ValueSelection sample;
    sample.step = std::max<std::uint64_t>(
        1, (valueCount_ + kStatisticsValues - 1) / std::max<std::uint64_t>(kStatisticsValues, 1));
    auto values = tensorValues(*t.initializer, directory_, sample);
    if (!values) {
        stats_ = {};
        statsLabel_->setText(QString::fromStdString(values.error().message));
        table_->setRowCount(0);
        export_->setEnabled(false);
        chart_->setChart(new QChart);
        return;
    }
    stats_ = computeStatistics(*values);
    export_->setEnabled(true);
    showStatistics(valueCount_, sample.step, QString());
}

void TensorPanel::showDequantized() {
    const std::uint64_t generation = ++generation_;
    const auto& t = view_->tensors[tensor_];
    const ViewNode& node = view_->nodes[quantizedNode_];
    const QString reader = QStringLiteral("%1 %2").arg(
        QString::fromStdString(node.opType),
        QString::fromStdString(profileNameOf(*node.proto)).toHtmlEscaped());
    title_->setText(tr("<b>%1</b> %2<br>dequantized by %3")
                        .arg(QString::fromStdString(t.name).toHtmlEscaped(),
                             QString::fromStdString(t.type.text()), reader));
    stats_ = {};
    dequantized_.reset();
    valueCount_ = 0;
    busy_ = true;
    export_->setEnabled(false);
    table_->setRowCount(0);
    chart_->setChart(new QChart);
    statsLabel_->setText(tr("Dequantizing…"));
    auto* watcher = new QFutureWatcher<DequantizedOutcome>(this);
    connect(
        watcher, &QFutureWatcher<DequantizedOutcome>::finished, this,
        [this, watcher, generation, reader] {
            const DequantizedOutcome outcome = watcher->result();
            watcher->deleteLater();
            if (generation != generation_) return;  // another tensor or view since
            busy_ = false;
            if (!outcome.weight) {
                statsLabel_->setText(outcome.error);
                emit dequantizedShown();
                return;
            }
            dequantized_ = outcome.weight;
            stats_ = outcome.stats;
            valueCount_ = static_cast<std::uint64_t>(dequantized_->numel());
            const auto& t = view_->tensors[tensor_];
            QStringList dims;
            for (auto d : dequantized_->shape()) dims << QString::number(d);
            title_->setText(
                tr("<b>%1</b> %2<br>dequantized by %3: <b>float32[%4]</b><br>%5")
                    .arg(QString::fromStdString(t.name).toHtmlEscaped(),
                         QString::fromStdString(t.type.text()), reader, dims.join(QLatin1Char('x')),
                         QString::fromStdString(dequantized_->layoutText()).toHtmlEscaped()));
            export_->setEnabled(true);
            showStatistics(valueCount_, outcome.step, tr("dequantized: "));
            emit dequantizedShown();
        });
    watcher->setFuture(
        QtConcurrent::run([view = view_, node = quantizedNode_, directory = directory_] {
            return openDequantized(view, node, directory, kStatisticsValues);
        }));
}

void TensorPanel::showStatistics(std::uint64_t count, std::size_t step, const QString& prefix) {
    const QString sampled =
        step > 1 ? tr(" (statistics of every %1th value)").arg(step) : QString();
    statsLabel_->setText(
        prefix +
        tr("%1 values%8   min %2   max %3   mean %4   std %5   zeros %6%7")
            .arg(count)
            .arg(stats_.min, 0, 'g', 6)
            .arg(stats_.max, 0, 'g', 6)
            .arg(stats_.mean, 0, 'g', 6)
            .arg(stats_.std, 0, 'g', 6)
            .arg(stats_.zeros)
            .arg(stats_.nonFinite ? tr("   non-finite %1").arg(stats_.nonFinite) : QString())
            .arg(sampled));
    const int pages = static_cast<int>(std::clamp<std::uint64_t>(
        (count + kPageSize - 1) / kPageSize, 1, std::numeric_limits<int>::max()));
    page_->setMaximum(pages);
    pageCount_->setText(tr("of %1 (%2 values per page)").arg(pages).arg(kPageSize));
    fillPage();

    auto* chart = new QChart;
    chart->setTitle(tr("Histogram"));
    chart->legend()->hide();
    auto* set = new QBarSet(tr("count"));
    QStringList categories;
    const double width =
        stats_.histogram.empty() ? 0 : (stats_.max - stats_.min) / stats_.histogram.size();
    double tallest = 1;
    // Bin centres with the digits their spacing needs (not 3: "1e+03" for every bin of 1000.x).
    const QByteArray centreFormat =
        tickLabelFormat(stats_.min, stats_.max,
                        static_cast<int>(std::max<std::size_t>(2, stats_.histogram.size())))
            .toLatin1();
    for (std::size_t b = 0; b < stats_.histogram.size(); ++b) {
        *set << static_cast<double>(stats_.histogram[b]);
        tallest = std::max(tallest, static_cast<double>(stats_.histogram[b]));
        categories << QString::asprintf(centreFormat.constData(), stats_.min + width * (b + 0.5));
    }
    auto* series = new QBarSeries;
    series->setBarWidth(1.0);
    series->append(set);
    chart->addSeries(series);
    auto* x = new QBarCategoryAxis;
    x->append(categories);
    x->setLabelsAngle(-90);
    QFont small = x->labelsFont();
    small.setPointSize(6);
    x->setLabelsFont(small);
    auto* y = new QValueAxis;
    setCountAxisRange(y, tallest);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    series->attachAxis(x);
    series->attachAxis(y);
    chart_->setChart(chart);
}

void TensorPanel::fillPage() {
    if (!view_ || tensor_ < 0) return;
    ValueSelection pick;
    pick.first = static_cast<std::size_t>(page()) * kPageSize;
    pick.count = kPageSize;
    if (showsDequantized()) {
        if (!dequantized_) return;  // still opening
        const auto values = dequantized_->values(static_cast<std::int64_t>(pick.first), kPageSize);
        table_->setRowCount(static_cast<int>(values.size()));
        for (std::size_t i = 0; i < values.size(); ++i) {
            const int row = static_cast<int>(i);
            table_->setItem(row, 0, new QTableWidgetItem(QString::number(pick.first + i)));
            table_->setItem(row, 1, new QTableWidgetItem(QString::number(values[i], 'g', 8)));
        }
        return;
    }
    auto values = tensorValues(*view_->tensors[tensor_].initializer, directory_, pick);
    if (!values) {
        table_->setRowCount(0);
        statsLabel_->setText(QString::fromStdString(values.error().message));
        return;
    }
    table_->setRowCount(static_cast<int>(values->size()));
    for (std::size_t i = 0; i < values->size(); ++i) {
        const int row = static_cast<int>(i);
        table_->setItem(row, 0, new QTableWidgetItem(QString::number(pick.first + i)));
        table_->setItem(row, 1, new QTableWidgetItem(QString::number((*values)[i], 'g', 8)));
    }
}

QString TensorPanel::exportNpy(const QString& path) const {
    if (!view_ || tensor_ < 0) return tr("No tensor is shown.");
    if (showsDequantized()) {
        if (!dequantized_)
            return busy_ ? tr("The weight is still being dequantized.") : statsLabel_->text();
        return exportDequantized(*dequantized_, path);
    }
    auto tensor = inlineTensor(*view_->tensors[tensor_].initializer, directory_);
    if (!tensor) return QString::fromStdString(tensor.error().message);
    auto status = writeNpyFile(std::filesystem::path(path.toStdString()), *tensor);
    if (!status) return QString::fromStdString(status.error().message);
    return {};
}

}  // namespace onnxlens::widgets
