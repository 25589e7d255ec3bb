#include "widgets/panels/TensorPanel.h"

#include <Eigen/Core>
#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QValueAxis>
#include <cmath>
#include <cstring>

#include "onnxlens/model/ExternalData.h"
#include "onnxlens/model/TensorFile.h"
#include "onnxlens/model/TensorTypes.h"

namespace onnxlens::widgets {

namespace {
template <class T>
void appendAs(const std::string& bytes, std::vector<double>& out) {
    const std::size_t n = bytes.size() / sizeof(T);
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        T v;
        std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
        out.push_back(static_cast<double>(static_cast<float>(v)));
    }
}
template <class T>
void appendExact(const std::string& bytes, std::vector<double>& out) {
    const std::size_t n = bytes.size() / sizeof(T);
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        T v;
        std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
        out.push_back(static_cast<double>(v));
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
}  // namespace

Result<std::vector<double>> tensorValues(const onnx::TensorProto& source,
                                         const std::filesystem::path& modelDirectory) {
    auto tensor = inlineTensor(source, modelDirectory);
    if (!tensor) return tensor.error();
    auto bytes = tensorRawBytes(*tensor, source.name());
    if (!bytes) return bytes.error();
    std::vector<double> values;
    using T = onnx::TensorProto;
    switch (tensor->data_type()) {
        case T::FLOAT:
            appendExact<float>(*bytes, values);
            break;
        case T::DOUBLE:
            appendExact<double>(*bytes, values);
            break;
        case T::FLOAT16:
            appendAs<Eigen::half>(*bytes, values);
            break;
        case T::BFLOAT16:
            appendAs<Eigen::bfloat16>(*bytes, values);
            break;
        case T::INT8:
            appendExact<std::int8_t>(*bytes, values);
            break;
        case T::UINT8:
            appendExact<std::uint8_t>(*bytes, values);
            break;
        case T::INT16:
            appendExact<std::int16_t>(*bytes, values);
            break;
        case T::UINT16:
            appendExact<std::uint16_t>(*bytes, values);
            break;
        case T::INT32:
            appendExact<std::int32_t>(*bytes, values);
            break;
        case T::UINT32:
            appendExact<std::uint32_t>(*bytes, values);
            break;
        case T::INT64:
            appendExact<std::int64_t>(*bytes, values);
            break;
        case T::UINT64:
            appendExact<std::uint64_t>(*bytes, values);
            break;
        case T::BOOL:
            appendExact<std::uint8_t>(*bytes, values);
            break;
        default:
            return makeError(
                source.name(),
                "values of type " + elementTypeName(tensor->data_type()) + " are not shown");
    }
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
    layout->addWidget(statsLabel_);
    layout->addWidget(chart_, 2);
    layout->addLayout(pager);
    layout->addWidget(table_, 3);
    connect(page_, &QSpinBox::valueChanged, this, [this] { fillPage(); });
    connect(export_, &QPushButton::clicked, this, [this] {
        if (!view_ || tensor_ < 0) return;
        QString suggested = QString::fromStdString(view_->tensors[tensor_].name).replace('/', '_') +
                            QStringLiteral(".npy");
        QString path = QFileDialog::getSaveFileName(this, tr("Export tensor"), suggested,
                                                    tr("NumPy array (*.npy)"));
        if (path.isEmpty()) return;
        QString error = exportNpy(path);
        if (!error.isEmpty()) QMessageBox::warning(this, tr("Export failed"), error);
    });
    clear();
}

void TensorPanel::clear() {
    view_.reset();
    tensor_ = -1;
    values_.clear();
    stats_ = {};
    title_->setText(tr("Double-click an initializer in the Node panel to see its values."));
    statsLabel_->clear();
    table_->setRowCount(0);
    export_->setEnabled(false);
    pageCount_->clear();
    chart_->setChart(new QChart);
}

int TensorPanel::page() const { return page_->value() - 1; }

void TensorPanel::setPage(int page) { page_->setValue(page + 1); }

void TensorPanel::showTensor(std::shared_ptr<const ViewGraph> view, int tensor,
                             const std::filesystem::path& modelDirectory) {
    clear();
    if (!view || tensor < 0 || tensor >= static_cast<int>(view->tensors.size()) ||
        !view->tensors[tensor].initializer)
        return;
    view_ = std::move(view);
    tensor_ = tensor;
    directory_ = modelDirectory;
    const auto& t = view_->tensors[tensor];
    title_->setText(QStringLiteral("<b>%1</b> %2")
                        .arg(QString::fromStdString(t.name).toHtmlEscaped(),
                             QString::fromStdString(t.type.text())));
    auto values = tensorValues(*t.initializer, modelDirectory);
    if (!values) {
        statsLabel_->setText(QString::fromStdString(values.error().message));
        return;
    }
    values_ = std::move(values.value());
    stats_ = computeStatistics(values_);
    export_->setEnabled(true);
    statsLabel_->setText(
        tr("%1 values   min %2   max %3   mean %4   std %5   zeros %6%7")
            .arg(stats_.count)
            .arg(stats_.min, 0, 'g', 6)
            .arg(stats_.max, 0, 'g', 6)
            .arg(stats_.mean, 0, 'g', 6)
            .arg(stats_.std, 0, 'g', 6)
            .arg(stats_.zeros)
            .arg(stats_.nonFinite ? tr("   non-finite %1").arg(stats_.nonFinite) : QString()));
    const int pages =
        std::max<int>(1, static_cast<int>((values_.size() + kPageSize - 1) / kPageSize));
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
    for (std::size_t b = 0; b < stats_.histogram.size(); ++b) {
        *set << static_cast<double>(stats_.histogram[b]);
        categories << QString::number(stats_.min + width * (b + 0.5), 'g', 3);
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
    y->setLabelFormat(QStringLiteral("%d"));
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    series->attachAxis(x);
    series->attachAxis(y);
    chart_->setChart(chart);
}

void TensorPanel::fillPage() {
    const std::size_t begin = static_cast<std::size_t>(page()) * kPageSize;
    const std::size_t end = std::min(values_.size(), begin + kPageSize);
    table_->setRowCount(static_cast<int>(end > begin ? end - begin : 0));
    for (std::size_t i = begin; i < end; ++i) {
        const int row = static_cast<int>(i - begin);
        table_->setItem(row, 0, new QTableWidgetItem(QString::number(i)));
        table_->setItem(row, 1, new QTableWidgetItem(QString::number(values_[i], 'g', 8)));
    }
}

QString TensorPanel::exportNpy(const QString& path) const {
    if (!view_ || tensor_ < 0) return tr("No tensor is shown.");
    auto tensor = inlineTensor(*view_->tensors[tensor_].initializer, directory_);
    if (!tensor) return QString::fromStdString(tensor.error().message);
    auto status = writeNpyFile(std::filesystem::path(path.toStdString()), *tensor);
    if (!status) return QString::fromStdString(status.error().message);
    return {};
}

}  // namespace onnxlens::widgets
