#include "widgets/panels/ModelPanel.h"

#include <QHeaderView>
#include <QLocale>
#include <QStyle>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <algorithm>

#include "widgets/graph/CostText.h"
#include "widgets/graph/GraphStyle.h"
#include "widgets/workers/CostAtDims.h"
#include "widgets/workers/ModelDocument.h"

namespace onnxlens::widgets {

namespace {
QTreeWidgetItem* section(QTreeWidget* tree, const QString& title) {
    auto* item = new QTreeWidgetItem(tree, {title});
    QFont bold = item->font(0);
    bold.setBold(true);
    item->setFont(0, bold);
    item->setExpanded(true);
    return item;
}

QString shapeText(const ValueSummary& value) {
    if (!value.hasShape) return QStringLiteral("?");
    QStringList dims;
    for (const auto& d : value.shape) {
        if (d.kind == DimSummary::Kind::Value)
            dims << QString::number(d.value);
        else if (d.kind == DimSummary::Kind::Symbol)
            dims << QString::fromStdString(d.symbol);
        else
            dims << QStringLiteral("?");
    }
    return QStringLiteral("[%1]").arg(dims.join(QStringLiteral(", ")));
}

void addValues(QTreeWidgetItem* parent, const std::vector<ValueSummary>& values) {
    for (const auto& v : values) {
        auto* item = new QTreeWidgetItem(
            parent, {QString::fromStdString(v.name),
                     QString::fromStdString(v.dtype) + QLatin1Char(' ') + shapeText(v)});
        bool symbolic = std::any_of(v.shape.begin(), v.shape.end(), [](const DimSummary& d) {
            return d.kind != DimSummary::Kind::Value;
        });
        if (symbolic) item->setForeground(1, GraphStyle::standard().symbolicDimColour);
    }
}
}  // namespace

ModelPanel::ModelPanel(QWidget* parent) : QWidget(parent) {
    tree_ = new QTreeWidget(this);
    tree_->setColumnCount(2);
    tree_->setHeaderLabels({tr("Property"), tr("Value")});
    tree_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(tree_);
}

void ModelPanel::clear() { tree_->clear(); }

int ModelPanel::contentWidth() const {
    // QTreeView keeps its override protected; QAbstractItemView's is public and virtual.
    const QAbstractItemView* view = tree_;
    const int names = std::max(tree_->header()->sectionSizeHint(0), view->sizeHintForColumn(0));
    const int values = std::max(tree_->header()->sectionSizeHint(1), view->sizeHintForColumn(1));
    const QMargins margins = layout()->contentsMargins();
    return names + values + 2 * tree_->frameWidth() +
           tree_->style()->pixelMetric(QStyle::PM_ScrollBarExtent) + margins.left() +
           margins.right();
}

void ModelPanel::showModel(const ModelDocument& document, const CostAtDims* cost) {
    clear();
    const ModelSummary& s = document.summary;
    const QLocale locale = QLocale::c();
    auto* general = section(tree_, tr("Model"));
    auto row = [](QTreeWidgetItem* parent, const QString& key, const QString& value) {
        auto* item = new QTreeWidgetItem(parent, {key, value});
        item->setToolTip(1, value);
        return item;
    };
    if (document.editedFrom.isEmpty())
        row(general, tr("file"), document.path);
    else
        row(general, tr("file"), tr("%1 (edited)").arg(document.editedFrom))
            ->setToolTip(1, tr("Edited from %1; the edited model is in %2 until saved")
                                .arg(document.editedFrom, document.path));
    row(general, tr("size"),
        locale.formattedDataSize(static_cast<qint64>(document.loaded.fileBytes)));
    row(general, tr("IR version"), QString::number(s.irVersion));
    row(general, tr("producer"),
        QString::fromStdString(s.producerName + " " + s.producerVersion).trimmed());
    if (!s.domain.empty()) row(general, tr("domain"), QString::fromStdString(s.domain));
    row(general, tr("model version"), QString::number(s.modelVersion));
    if (!s.docString.empty()) row(general, tr("description"), QString::fromStdString(s.docString));
    row(general, tr("nodes"),
        tr("%1 (%2 with subgraphs)").arg(s.nodeCount).arg(s.nodeCountWithSubgraphs));
    row(general, tr("parameters"),
        tr("%1 in %2 initializers, %3")
            .arg(locale.toString(static_cast<qlonglong>(s.initializers.parameters)))
            .arg(s.initializers.count)
            .arg(locale.formattedDataSize(s.initializers.bytes)));
    if (s.initializers.externalCount)
        row(general, tr("external tensors"), QString::number(s.initializers.externalCount));
    if (s.initializers.constantCount)
        row(general, tr("constants"),
            tr("%1 in %2 Constant nodes and subgraph initializers, %3")
                .arg(locale.toString(static_cast<qlonglong>(s.initializers.constantParameters)))
                .arg(s.initializers.constantCount)
                .arg(locale.formattedDataSize(s.initializers.constantBytes)));

    addCost(cost ? *cost : *costOfDocument(document));

    auto* opsets = section(tree_, tr("Opsets"));
    for (const auto& o : s.opsets)
        row(opsets, QString::fromStdString(displayDomain(o.domain)), QString::number(o.version));
    if (!s.metadata.empty()) {
        auto* metadata = section(tree_, tr("Metadata"));
        for (const auto& [key, value] : s.metadata)
            row(metadata, QString::fromStdString(key), QString::fromStdString(value));
    }
    addValues(section(tree_, tr("Inputs")), s.inputs);
    addValues(section(tree_, tr("Outputs")), s.outputs);
    if (!s.dynamicAxes.empty()) {
        auto* axes = section(tree_, tr("Dynamic axes"));
        for (const auto& a : s.dynamicAxes) {
            auto* item = row(axes, QString::fromStdString(a.tensor),
                             tr("axis %1: %2")
                                 .arg(a.axis)
                                 .arg(a.symbol.empty() ? QStringLiteral("?")
                                                       : QString::fromStdString(a.symbol)));
            item->setForeground(1, GraphStyle::standard().symbolicDimColour);
        }
    }
    auto* ops = section(tree_, tr("Operators"));
    std::vector<std::pair<std::string, std::int64_t>> histogram(s.opHistogram.begin(),
                                                                s.opHistogram.end());
    std::stable_sort(histogram.begin(), histogram.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    for (const auto& [op, count] : histogram)
        row(ops, QString::fromStdString(op), QString::number(count));
    ops->setExpanded(histogram.size() <= 30);
    if (!s.functions.empty()) {
        auto* functions = section(tree_, tr("Functions"));
        for (const auto& f : s.functions)
            row(functions, QString::fromStdString(displayDomain(f.domain) + "::" + f.name),
                tr("%1 nodes").arg(f.nodeCount));
    }
    auto* checks = section(tree_, tr("Checks"));
    row(checks, tr("onnx checker"),
        s.checker.ok ? tr("passed") : QString::fromStdString(s.checker.message));
    // A model of a newer opset than the linked onnx library: which nodes onnxlens checked.
    if (!s.checker.note.empty())
        row(checks, tr("newer opset"), QString::fromStdString(s.checker.note));
    if (!s.checker.newerOpsetWarning.empty())
        row(checks, tr("unknown opset"), QString::fromStdString(s.checker.newerOpsetWarning));
    row(checks, tr("shape inference"),
        (s.shapeInference.ok ? tr("passed") : QString::fromStdString(s.shapeInference.message)) +
            tr(" (%1 of %2 node outputs have a shape)")
                .arg(s.shapeInference.knownEdges)
                .arg(s.shapeInference.totalEdges) +
            (s.shapeInference.shapedByOnnxlens > 0
                 ? tr("; %1 of newer opsets shaped by onnxlens's rules")
                       .arg(s.shapeInference.shapedByOnnxlens)
                 : QString()));
    row(checks, tr("load time"), tr("%1 ms").arg(document.loadMs, 0, 'f', 0));
}

void ModelPanel::showCost(const CostAtDims& cost) {
    for (int i = 0; i < tree_->topLevelItemCount(); ++i)
        if (tree_->topLevelItem(i)->text(0) == tr("Cost")) {
            delete tree_->takeTopLevelItem(i);
            addCost(cost, i);
            return;
        }
    addCost(cost);
}

void ModelPanel::addCost(const CostAtDims& counted, int at) {
    auto* cost = section(tree_, tr("Cost"));
    if (at >= 0) {  // in place of the section it replaces
        tree_->takeTopLevelItem(tree_->indexOfTopLevelItem(cost));
        tree_->insertTopLevelItem(at, cost);
        cost->setExpanded(true);
    }
    cost->setToolTip(0,
                     tr("Counted from the inferred shapes; the rules are in docs/cost-model.md"));
    auto row = [cost](const QString& key, const QString& value, const QString& tip = {}) {
        auto* item = new QTreeWidgetItem(cost, {key, value});
        item->setToolTip(1, tip.isEmpty() ? value : tip);
        return item;
    };
    if (!counted.cost) {
        row(tr("not counted"), counted.error);
        return;
    }
    const ModelCost& c = *counted.cost;
    const QLocale locale = QLocale::c();
    auto exact = [&locale](double v) { return locale.toString(v, 'f', 0); };
    const QString dims = counted.dimsText();
    auto* dimsRow =
        row(tr("symbolic dims"), dims.isEmpty() ? tr("none") : dims,
            tr("The counts take these values for the inputs' symbolic dims: %1")
                .arg(counted.source.isEmpty() ? tr("every one 1 until the model runs (Run, "
                                                   "Benchmark), then the dims it ran with")
                                              : tr("those of %1").arg(counted.source)));
    if (!dims.isEmpty()) {
        dimsRow->setForeground(1, GraphStyle::standard().symbolicDimColour);
        row(tr("dims from"), counted.source.isEmpty()
                                 ? tr("every symbolic dim taken as 1 until a run")
                                 : counted.source);
    }
    // A total over nodes some of which could not be counted is a lower bound, and says so.
    const QString total = c.totalIsLowerBound() ? tr("at least %1 (%n node(s) unknown)", nullptr,
                                                     c.nodesWithUnknownShapes)
                                                : QStringLiteral("%1");
    row(tr("MACs"), total.arg(siAmount(c.total.macs)), exact(c.total.macs));
    row(tr("FLOPs"), total.arg(siAmount(c.total.flops)), exact(c.total.flops));
    auto* params = row(tr("parameters"),
                       tr("%1 (%2)").arg(siAmount(static_cast<double>(c.total.parameters)),
                                         byteSize(static_cast<double>(c.total.parameterBytes))),
                       exact(static_cast<double>(c.total.parameters)));
    for (const auto& [type, f] : c.parametersByType) {
        auto* item = new QTreeWidgetItem(
            params, {QString::fromStdString(type),
                     tr("%1 (%2)").arg(siAmount(static_cast<double>(f.parameters)),
                                       byteSize(static_cast<double>(f.parameterBytes)))});
        item->setToolTip(1, exact(static_cast<double>(f.parameters)));
    }
    params->setExpanded(true);
    row(tr("activations written"), byteSize(static_cast<double>(c.total.bytesWritten)),
        tr("Bytes of every node output over one run"));
    row(tr("activations read"), byteSize(static_cast<double>(c.total.bytesRead)),
        tr("Bytes of non-weight inputs read over one run"));
    row(tr("peak activation memory"),
        c.peakAfterNode.empty() ? byteSize(static_cast<double>(c.peakActivationBytes))
                                : tr("%1 after %2")
                                      .arg(byteSize(static_cast<double>(c.peakActivationBytes)),
                                           QString::fromStdString(c.peakAfterNode)),
        tr("Live activations at the worst point of the engine's execution order (weights not "
           "counted)"));
    row(tr("arithmetic intensity"), tr("%1 FLOPs/byte").arg(c.total.intensity(), 0, 'g', 3));
    if (c.nodesWithUnknownShapes > 0)
        row(tr("partial"), tr("%n node(s) with unknown shapes (counted in part)", nullptr,
                              c.nodesWithUnknownShapes));
    for (const auto& assumption : c.assumptions)
        row(tr("assumption"), QString::fromStdString(assumption));
}

}  // namespace onnxlens::widgets
