#include "widgets/panels/ProfileView.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QEvent>
#include <QHeaderView>
#include <QHorizontalBarSeries>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>
#include <QValueAxis>

#include "widgets/panels/ProfileTableModel.h"

namespace onnxlens::widgets {

ProfileView::ProfileView(QWidget* parent) : QWidget(parent) {
    nodeModel_ = new ProfileTableModel(ProfileTableModel::Rows::Nodes, this);
    opTypeModel_ = new ProfileTableModel(ProfileTableModel::Rows::OpTypes, this);
    nodeProxy_ = new QSortFilterProxyModel(this);
    opTypeProxy_ = new QSortFilterProxyModel(this);
    nodeProxy_->setSourceModel(nodeModel_);
    opTypeProxy_->setSourceModel(opTypeModel_);
    // The filter matches node names and op types.
    nodeProxy_->setFilterKeyColumn(-1);
    nodeProxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
    nodeTable_ = makeTable(nodeProxy_);
    opTypeTable_ = makeTable(opTypeProxy_);
    nodeTable_->setObjectName(QStringLiteral("profileNodeTable"));
    opTypeTable_->setObjectName(QStringLiteral("profileOpTypeTable"));

    auto* chart = new QChart;
    chart->legend()->hide();
    chart->setMargins(QMargins(2, 2, 2, 2));
    chart->setAnimationOptions(QChart::NoAnimation);
    barChart_ = new QChartView(chart, this);
    barChart_->setRenderHint(QPainter::Antialiasing);
    barChart_->setMinimumSize(300, 180);
    barChart_->installEventFilter(this);

    auto* byType = new QSplitter(Qt::Horizontal, this);  // the dock is wide and short
    byType->addWidget(opTypeTable_);
    byType->addWidget(barChart_);
    byType->setStretchFactor(0, 1);
    byType->setStretchFactor(1, 1);

    auto* byNode = new QWidget(this);
    filter_ = new QLineEdit(byNode);
    filter_->setPlaceholderText(tr("Filter nodes by name or op type"));
    filter_->setClearButtonEnabled(true);
    auto* nodeLayout = new QVBoxLayout(byNode);
    nodeLayout->setContentsMargins(0, 0, 0, 0);
    nodeLayout->addWidget(filter_);
    nodeLayout->addWidget(nodeTable_, 1);

    tabs_ = new QTabWidget(this);
    tabs_->addTab(byType, tr("By op type"));
    tabs_->addTab(byNode, tr("By node"));
    summary_ = new QLabel(this);
    summary_->setWordWrap(true);
    peak_ = new QLabel(this);
    peak_->setWordWrap(true);
    peak_->setObjectName(QStringLiteral("profilePeak"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(summary_);
    layout->addWidget(peak_);
    layout->addWidget(tabs_, 1);

    connect(filter_, &QLineEdit::textChanged, this, &ProfileView::setNodeFilter);
    connect(nodeTable_, &QTableView::activated, this, [this](const QModelIndex& index) {
        const QModelIndex source = nodeProxy_->mapToSource(index);
        if (source.isValid()) emit nodeActivated(nodeModel_->keyOf(source.row()));
    });
    clear();
}

QTableView* ProfileView::makeTable(QSortFilterProxyModel* proxy) {
    proxy->setSortRole(ProfileTableModel::SortRole);
    auto* table = new QTableView(this);
    table->setModel(proxy);
    table->setSortingEnabled(true);
    table->sortByColumn(ProfileTableModel::MsColumn, Qt::DescendingOrder);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setSelectionMode(QAbstractItemView::SingleSelection);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setAlternatingRowColors(true);
    table->verticalHeader()->hide();
    table->verticalHeader()->setDefaultSectionSize(table->fontMetrics().height() + 6);
    table->horizontalHeader()->setSectionResizeMode(ProfileTableModel::NameColumn,
                                                    QHeaderView::Stretch);
    for (int c = ProfileTableModel::SecondColumn; c < ProfileTableModel::ColumnCount; ++c)
        table->horizontalHeader()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    return table;
}

void ProfileView::clear() {
    result_.reset();
    nodeModel_->setResult(nullptr);
    opTypeModel_->setResult(nullptr);
    summary_->setText(
        tr("Run a benchmark with “Profile operators” on to see where the time goes."));
    peak_->clear();
    peak_->hide();
    rebuildBarChart();
}

void ProfileView::setResult(std::shared_ptr<const engine::BenchmarkResult> result) {
    if (!result || !result->profiled) {
        clear();
        return;
    }
    result_ = std::move(result);
    nodeModel_->setResult(result_);
    opTypeModel_->setResult(result_);
    summary_->setText(tr("%n node(s), %1 ms of node time per run (mean run %2 ms); "
                         "double-click a node to show it in the graph.",
                         nullptr, static_cast<int>(result_->nodes.size()))
                          .arg(result_->nodeTimePerRunMs(), 0, 'f', 3)
                          .arg(result_->statistics.meanMs, 0, 'f', 3));
    rebuildBarChart();
}

void ProfileView::setRates(const std::vector<engine::NodeRate>& rates,
                           const engine::PeakThroughput& peak) {
    nodeModel_->setRates(rates, peak.gflops);
    opTypeModel_->setRates(rates, peak.gflops);
    if (peak.gflops > 0)
        peak_->setText(tr("Peak %1 GFLOP/s: %2. GFLOP/s per node = the cost model's FLOPs over "
                          "the node's mean time.")
                           .arg(peak.gflops, 0, 'f', 1)
                           .arg(QString::fromStdString(peak.method)));
    else
        peak_->setText(tr("The peak could not be measured: no share of it is shown."));
    peak_->show();
}

void ProfileView::setNodeFilter(const QString& text) {
    if (filter_->text() != text)
        filter_->setText(text);  // comes back here through textChanged
    else
        nodeProxy_->setFilterFixedString(text);
}

int ProfileView::barsThatFit() const {
    const int line = barChart_->fontMetrics().height() + 4;
    const int room = barChart_->height() - 90;  // the title, the share axis, the margins
    return std::clamp(room / line, 3, kMaxBars + 1);
}

// An op type as a bar's label: whole up to 24 characters (every ONNX and contrib op type), else
// its start and end around an ellipsis, with the domain dropped first.
QString ProfileView::elidedOpType(const std::string& opType) {
    QString name = QString::fromStdString(opType);
    if (name.size() > kLabelChars && name.contains(QStringLiteral("::")))
        name = name.mid(name.lastIndexOf(QStringLiteral("::")) + 2);
    if (name.size() <= kLabelChars) return name;
    const int half = (kLabelChars - 1) / 2;
    return name.left(half) + QChar(0x2026) + name.right(kLabelChars - 1 - half);
}

bool ProfileView::eventFilter(QObject* watched, QEvent* event) {
    // A taller or shorter chart has room for more or fewer bars.
    if (watched == barChart_ && event->type() == QEvent::Resize && result_ &&
        barsThatFit() != barRoom_)
        QMetaObject::invokeMethod(this, &ProfileView::rebuildBarChart, Qt::QueuedConnection);
    return QWidget::eventFilter(watched, event);
}

void ProfileView::rebuildBarChart() {
    QChart* chart = barChart_->chart();
    chart->removeAllSeries();
    for (auto* axis : chart->axes()) {
        chart->removeAxis(axis);
        delete axis;
    }
    barCount_ = 0;
    if (!result_ || result_->opTypes.empty()) {
        chart->setTitle(QString());
        return;
    }
    // Largest at the top: a horizontal bar series draws its first category at the bottom. As
    // many bars as have a text line of room each (labels squeezed closer were drawn as "..."),
    // the rest as one "other" bar.
    const auto& ops = result_->opTypes;
    barRoom_ = barsThatFit();
    const int count = static_cast<int>(ops.size());
    const int shown = count <= barRoom_ ? count : barRoom_ - 1;
    double otherShare = 0;
    for (std::size_t i = static_cast<std::size_t>(shown); i < ops.size(); ++i)
        otherShare += ops[i].share;
    auto* set = new QBarSet(tr("share"));
    set->setColor(QColor(0xfd, 0x8d, 0x3c));
    QStringList categories;
    double maxPercent = 0;
    if (otherShare > 0) {
        *set << 100.0 * otherShare;
        categories << tr("%n other(s)", nullptr, static_cast<int>(ops.size()) - shown);
        maxPercent = 100.0 * otherShare;
    }
    for (int i = shown - 1; i >= 0; --i) {
        *set << 100.0 * ops[static_cast<std::size_t>(i)].share;
        categories << elidedOpType(ops[static_cast<std::size_t>(i)].opType);
        maxPercent = std::max(maxPercent, 100.0 * ops[static_cast<std::size_t>(i)].share);
    }
    barCount_ = static_cast<int>(categories.size());
    auto* series = new QHorizontalBarSeries;
    series->append(set);
    series->setBarWidth(0.8);
    series->setLabelsVisible(true);
    series->setLabelsFormat(QStringLiteral("@value %"));
    series->setLabelsPrecision(3);
    chart->addSeries(series);
    auto* typeAxis = new QBarCategoryAxis;
    typeAxis->append(categories);
    // The names are short (elidedOpType) and each has a line: drawn whole, never as "...".
    typeAxis->setTruncateLabels(false);
    auto* shareAxis = new QValueAxis;
    shareAxis->setRange(0, std::min(100.0, maxPercent * 1.15 + 1));
    shareAxis->setLabelFormat(QStringLiteral("%.0f %%"));
    chart->addAxis(typeAxis, Qt::AlignLeft);
    chart->addAxis(shareAxis, Qt::AlignBottom);
    series->attachAxis(typeAxis);
    series->attachAxis(shareAxis);
    chart->setTitle(tr("Share of the profiled time per op type"));
}

}  // namespace onnxlens::widgets
