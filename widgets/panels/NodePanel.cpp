#include "widgets/panels/NodePanel.h"

#include <onnx/defs/schema.h>

#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QSplitter>
#include <QTextBrowser>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <algorithm>

#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/model/NodeAttributes.h"
#include "onnxlens/model/NodeNames.h"
#include "onnxlens/model/OnnxDomains.h"
#include "onnxlens/model/TensorTypes.h"
#include "onnxlens/workflows/DequantizedWeight.h"
#include "widgets/graph/CostText.h"
#include "widgets/graph/GraphStyle.h"
#include "widgets/workers/CostAtDims.h"

namespace onnxlens::widgets {

namespace {
constexpr int kTensorRole = Qt::UserRole + 1;

QTreeWidgetItem* section(QTreeWidget* tree, const QString& title) {
    auto* item = new QTreeWidgetItem(tree, {title});
    QFont bold = item->font(0);
    bold.setBold(true);
    item->setFont(0, bold);
    item->setFirstColumnSpanned(true);
    item->setExpanded(true);
    return item;
}

void addTensorRow(QTreeWidgetItem* parent, const ViewGraph& view, int tensor,
                  const QString& label) {
    if (tensor < 0) {
        new QTreeWidgetItem(parent, {label, QStringLiteral("(omitted)")});
        return;
    }
    const auto& t = view.tensors[tensor];
    QString kind = t.initializer ? QStringLiteral(" (initializer)") : QString();
    auto* item =
        new QTreeWidgetItem(parent, {label, QString::fromStdString(t.name) + kind,
                                     QString::fromStdString(elementTypeName(t.type.elementType)),
                                     QString::fromStdString(t.type.shapeText())});
    item->setData(0, kTensorRole, tensor);
    item->setToolTip(1, QString::fromStdString(t.name));
    if (t.type.hasSymbolicDim()) {
        item->setForeground(3, GraphStyle::standard().symbolicDimColour);
        QStringList symbols;
        for (const auto& d : t.type.dims)
            if (d.isSymbolic()) symbols << QString::fromStdString(d.symbol);
        item->setToolTip(3,
                         QObject::tr("dynamic axes: %1").arg(symbols.join(QStringLiteral(", "))));
    }
    if (t.initializer) item->setToolTip(0, QObject::tr("double-click to open in the Tensor panel"));
}
}  // namespace

NodePanel::NodePanel(QWidget* parent) : QWidget(parent) {
    title_ = new QLabel(this);
    title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    title_->setWordWrap(true);
    tree_ = new QTreeWidget(this);
    tree_->setColumnCount(4);
    tree_->setHeaderLabels({tr("Name"), tr("Value / tensor"), tr("Type"), tr("Shape")});
    tree_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    tree_->setRootIsDecorated(false);
    doc_ = new QTextBrowser(this);
    doc_->setOpenExternalLinks(true);
    auto* splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(tree_);
    splitter->addWidget(doc_);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(title_);
    layout->addWidget(splitter, 1);
    connect(tree_, &QTreeWidget::itemDoubleClicked, this, [this](QTreeWidgetItem* item) {
        QVariant tensor = item->data(0, kTensorRole);
        if (tensor.isValid() && view_ && view_->tensors[tensor.toInt()].initializer)
            emit tensorActivated(tensor.toInt());
    });
    clear();
}

void NodePanel::clear() {
    view_.reset();
    tree_->clear();
    doc_->clear();
    title_->setText(tr("Select a node to see its details."));
}

void NodePanel::showNode(std::shared_ptr<const ViewGraph> view, int index, const CostAtDims* cost) {
    clear();
    view_ = std::move(view);
    if (!view_ || index < 0 || index >= static_cast<int>(view_->nodes.size())) return;
    const auto& node = view_->nodes[index];
    if (node.kind != ViewNode::Kind::Operator) {
        title_->setText(
            QStringLiteral("<b>%1</b> %2")
                .arg(node.kind == ViewNode::Kind::Input ? tr("Graph input") : tr("Graph output"),
                     QString::fromStdString(node.name).toHtmlEscaped()));
        auto* io = section(tree_, tr("Tensor"));
        int tensor = node.kind == ViewNode::Kind::Input ? node.outputs[0] : node.inputs[0];
        addTensorRow(io, *view_, tensor, QString::fromStdString(node.name));
        return;
    }
    const std::string domain = displayDomain(node.domain);
    const int modelOpset = view_->opsetOf(node.domain);
    const onnx::OpSchema* schema =
        onnx::OpSchemaRegistry::Schema(node.opType, modelOpset, node.domain);
    title_->setText(QStringLiteral("<b>%1</b> %2")
                        .arg(QString::fromStdString(node.opType).toHtmlEscaped(),
                             QString::fromStdString(node.name).toHtmlEscaped()));

    auto* general = section(tree_, tr("Node"));
    new QTreeWidgetItem(general, {tr("name"), QString::fromStdString(node.name)});
    new QTreeWidgetItem(general, {tr("op type"), QString::fromStdString(node.opType)});
    new QTreeWidgetItem(general, {tr("domain"), QString::fromStdString(domain)});
    new QTreeWidgetItem(general, {tr("model opset"), QString::number(modelOpset)});
    new QTreeWidgetItem(
        general, {tr("defined in opset"),
                  schema ? QString::number(schema->since_version()) : tr("unknown (no schema)")});
    new QTreeWidgetItem(general,
                        {tr("category"), QString::fromLatin1(categoryName(node.category))});
    if (node.proto) {
        if (const auto pass = engine::optimizerPassOf(*node.proto); !pass.empty())
            new QTreeWidgetItem(general, {tr("made by pass"), QString::fromStdString(pass)});
    }

    if (node.proto && node.proto->attribute_size() > 0) {
        auto* attributes = section(tree_, tr("Attributes"));
        for (const auto& a : node.proto->attribute()) {
            auto* item = new QTreeWidgetItem(attributes,
                                             {QString::fromStdString(a.name()),
                                              QString::fromStdString(attributeValueText(a, 200))});
            item->setToolTip(1, QString::fromStdString(attributeValueText(a, 4000)));
        }
    }
    auto formalName = [&](bool input, int i) {
        if (schema) {
            const auto& formal = input ? schema->inputs() : schema->outputs();
            if (!formal.empty()) {
                std::size_t k = std::min<std::size_t>(i, formal.size() - 1);
                if (static_cast<std::size_t>(i) < formal.size() ||
                    formal.back().GetOption() == onnx::OpSchema::Variadic)
                    return QString::fromStdString(formal[k].GetName());
            }
        }
        return QStringLiteral("%1 %2").arg(input ? tr("input") : tr("output")).arg(i);
    };
    if (cost) addCost(node, *cost);
    auto* inputs = section(tree_, tr("Inputs"));
    for (int i = 0; i < static_cast<int>(node.inputs.size()); ++i)
        addTensorRow(inputs, *view_, node.inputs[i], formalName(true, i));
    addQuantizedWeight(node);
    auto* outputs = section(tree_, tr("Outputs"));
    for (int i = 0; i < static_cast<int>(node.outputs.size()); ++i)
        addTensorRow(outputs, *view_, node.outputs[i], formalName(false, i));

    if (schema && schema->doc() && *schema->doc()) {
        doc_->setMarkdown(
            QStringLiteral("### %1 (%2, opset %3)\n\n%4")
                .arg(QString::fromStdString(node.opType), QString::fromStdString(domain))
                .arg(schema->since_version())
                .arg(QString::fromUtf8(schema->doc())));
    } else if (schema && node.domain == "com.microsoft") {
        // onnxlens's schemas of ONNX Runtime's operators carry no text: its reference does.
        doc_->setMarkdown(
            tr("### %1 (com.microsoft, opset %2)\n\nONNX Runtime's contrib operator: its inputs, "
               "outputs and attributes are checked against onnxlens's schema of it; the "
               "reference is ONNX Runtime's [ContribOperators.md](%3).")
                .arg(QString::fromStdString(node.opType))
                .arg(schema->since_version())
                .arg(QStringLiteral("https://github.com/microsoft/onnxruntime/blob/main/docs/"
                                    "ContribOperators.md#com.microsoft.") +
                     QString::fromStdString(node.opType)));
    } else {
        doc_->setPlainText(tr("No operator documentation: %1 is not in the onnx schema registry "
                              "for opset %2 of domain %3.")
                               .arg(QString::fromStdString(node.opType))
                               .arg(modelOpset)
                               .arg(QString::fromStdString(domain)));
    }
}

void NodePanel::addQuantizedWeight(const ViewNode& node) {
    // MatMulNBits' B and GatherBlockQuantized's data: the Tensor panel shows them dequantized.
    const int input = node.proto ? engine::quantizedWeightInput(*node.proto) : -1;
    if (input < 0 || input >= static_cast<int>(node.inputs.size()) || node.inputs[input] < 0)
        return;
    const int tensor = node.inputs[input];
    if (!view_->tensors[tensor].initializer) return;
    auto attribute = [&](const char* name, std::int64_t fallback) {
        return intAttribute(*node.proto, name, fallback);
    };
    const bool nbits = node.opType == "MatMulNBits";
    const QString shape =
        nbits ? QStringLiteral("%1x%2").arg(attribute("N", 0)).arg(attribute("K", 0)) : QString();
    auto* weights = section(tree_, tr("Quantized weight"));
    auto* item = new QTreeWidgetItem(
        weights, {tr("%1 dequantized").arg(nbits ? QStringLiteral("B") : QStringLiteral("data")),
                  tr("%1 bits, blocks of %2")
                      .arg(attribute("bits", 4))
                      .arg(attribute("block_size", nbits ? 0 : 128)),
                  QStringLiteral("float32"), shape});
    item->setData(0, kTensorRole, tensor);
    const QString tip = tr("double-click to see %1 dequantized in the Tensor panel")
                            .arg(QString::fromStdString(view_->tensors[tensor].name));
    for (int c = 0; c < 4; ++c) item->setToolTip(c, tip);
}

void NodePanel::addCost(const ViewNode& node, const CostAtDims& counted) {
    auto* cost = section(tree_, tr("Cost"));
    const NodeCost* c = node.proto ? counted.nodeCost(profileNameOf(*node.proto)) : nullptr;
    if (!c) {
        const auto chain = view_->groupChain(node.group);
        const bool inSubgraph = std::any_of(chain.begin(), chain.end(), [this](int g) {
            return view_->groups[g].kind == ViewGroup::Kind::Subgraph;
        });
        new QTreeWidgetItem(
            cost, {tr("not counted"),
                   !counted.cost ? counted.error
                   : inSubgraph  ? tr("inside a subgraph: counted in the node that owns it")
                                 : tr("not in the file's graph (made by the optimizer)")});
        return;
    }
    const QLocale locale = QLocale::c();
    const CostFigures& f = c->figures;
    auto row = [cost, &locale](const QString& key, const QString& value, double exact) {
        auto* item = new QTreeWidgetItem(cost, {key, value});
        item->setToolTip(1, locale.toString(exact, 'f', 0));
        return item;
    };
    // A node whose rule needed a shape that is unknown has partial figures: a count that
    // reached nothing is "unknown" (never 0), anything it did count is a lower bound.
    auto amount = [&](double value, const QString& text) {
        if (c->shapesKnown) return text;
        return value > 0 ? tr("at least %1").arg(text) : tr("unknown");
    };
    row(tr("MACs"), amount(f.macs, siAmount(f.macs)), f.macs);
    row(tr("FLOPs"), amount(f.flops, siAmount(f.flops)), f.flops);
    row(tr("parameters"),
        tr("%1 (%2)").arg(siAmount(static_cast<double>(f.parameters)),
                          byteSize(static_cast<double>(f.parameterBytes))),
        static_cast<double>(f.parameters));
    row(tr("bytes read"),
        amount(static_cast<double>(f.bytesRead), byteSize(static_cast<double>(f.bytesRead))),
        static_cast<double>(f.bytesRead));
    row(tr("bytes written"),
        amount(static_cast<double>(f.bytesWritten), byteSize(static_cast<double>(f.bytesWritten))),
        static_cast<double>(f.bytesWritten));
    new QTreeWidgetItem(
        cost, {tr("arithmetic intensity"),
               c->shapesKnown ? tr("%1 FLOPs/byte").arg(f.intensity(), 0, 'g', 3) : tr("unknown")});
    if (const QString dims = counted.assumptionText(); !dims.isEmpty()) {
        auto* item = new QTreeWidgetItem(cost, {tr("with dims"), dims});
        item->setToolTip(1, dims);
    }
    if (c->estimate || !c->shapesKnown) {
        auto* flag = new QTreeWidgetItem(
            cost, {c->estimate ? tr("estimate") : tr("partial"), QString::fromStdString(c->note)});
        flag->setForeground(1, QColor(0xb0, 0x40, 0x00));
        flag->setToolTip(1, QString::fromStdString(c->note));
    }
}

QStringList NodePanel::sectionRows(const QString& name) const {
    QStringList rows;
    for (int i = 0; i < tree_->topLevelItemCount(); ++i) {
        auto* s = tree_->topLevelItem(i);
        if (s->text(0) != name) continue;
        for (int k = 0; k < s->childCount(); ++k) {
            QStringList columns;
            for (int c = 0; c < tree_->columnCount(); ++c)
                if (!s->child(k)->text(c).isEmpty()) columns << s->child(k)->text(c);
            rows << columns.join(QStringLiteral(" | "));
        }
    }
    return rows;
}

QTreeWidgetItem* NodePanel::rowFor(const QString& name, const QString& first) const {
    for (int i = 0; i < tree_->topLevelItemCount(); ++i) {
        auto* s = tree_->topLevelItem(i);
        if (s->text(0) != name) continue;
        for (int k = 0; k < s->childCount(); ++k)
            if (s->child(k)->text(0) == first) return s->child(k);
    }
    return nullptr;
}

}  // namespace onnxlens::widgets
