#include "widgets/panels/ModelDiffPanel.h"

#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QVBoxLayout>

#include "onnxlens/model/NodeNames.h"
#include "onnxlens/model/ViewGraph.h"

namespace onnxlens::widgets {

namespace {

QString nodeSummary(const onnx::NodeProto& node) {
    QString text = QString::fromStdString(profileNameOf(node)) + "  (" +
                   QString::fromStdString(node.op_type()) + ")\n";
    for (const auto& a : node.attribute())
        text += "    " + QString::fromStdString(a.name()) + " = " +
                QString::fromStdString(attributeValueText(a, 80)) + "\n";
    for (int i = 0; i < node.input_size(); ++i)
        text +=
            QStringLiteral("    input %1: %2\n").arg(i).arg(QString::fromStdString(node.input(i)));
    for (int i = 0; i < node.output_size(); ++i)
        text += QStringLiteral("    output %1: %2\n")
                    .arg(i)
                    .arg(QString::fromStdString(node.output(i)));
    return text;
}

QString figures(const engine::TensorDiff& t) {
    if (!t.compared) return QString::fromStdString(t.valueA + ": not compared (" + t.problem + ")");
    return QStringLiteral("%1: max abs %2, max rel %3, cosine %4, SQNR %5, error added %6")
        .arg(QString::fromStdString(t.valueA))
        .arg(t.figures.maxAbsError, 0, 'g', 3)
        .arg(t.maxRelError, 0, 'g', 3)
        .arg(t.figures.cosine, 0, 'f', 6)
        .arg(QString::fromStdString(engine::formatSqnr(t.figures.sqnrDb)))
        .arg(t.errorAdded, 0, 'g', 3);
}

}  // namespace

ModelDiffPanel::ModelDiffPanel(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("modelDiffPanel"));
    status_ =
        new QLabel(tr("Tools > Compare Models… compares the open model with another one."), this);
    status_->setWordWrap(true);
    progress_ = new QProgressBar(this);
    progress_->hide();
    cancel_ = new QPushButton(tr("Cancel"), this);
    cancel_->hide();
    firstDivergence_ = new QPushButton(tr("First Divergence"), this);
    firstDivergence_->setEnabled(false);
    firstDivergence_->setToolTip(
        tr("Select and centre the node whose output first differs "
           "beyond the tolerance"));
    const QFont fixed = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    report_ = new QPlainTextEdit(this);
    report_->setReadOnly(true);
    report_->setLineWrapMode(QPlainTextEdit::NoWrap);
    report_->setFont(fixed);
    node_ = new QPlainTextEdit(this);
    node_->setReadOnly(true);
    node_->setLineWrapMode(QPlainTextEdit::NoWrap);
    node_->setFont(fixed);
    node_->setPlaceholderText(tr("Select a node to see both versions"));

    auto* top = new QHBoxLayout;
    top->addWidget(status_, 1);
    top->addWidget(progress_);
    top->addWidget(cancel_);
    top->addWidget(firstDivergence_);
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(report_);
    split->addWidget(node_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addWidget(split, 1);

    connect(cancel_, &QPushButton::clicked, this, &ModelDiffPanel::cancelRequested);
    connect(firstDivergence_, &QPushButton::clicked, this, [this] {
        if (!comparison_ || !comparison_->numeric || comparison_->numeric->firstDivergence < 0)
            return;
        const auto& n = *comparison_->numeric;
        emit firstDivergenceRequested(
            QString::fromStdString(n.tensors[n.firstDivergence].nodeNameA));
    });
}

void ModelDiffPanel::setRunning(const QString& otherPath) {
    comparison_.reset();
    status_->setText(tr("Comparing with %1…").arg(QFileInfo(otherPath).fileName()));
    progress_->setRange(0, 0);
    progress_->show();
    cancel_->show();
    firstDivergence_->setEnabled(false);
    report_->clear();
    node_->clear();
}

void ModelDiffPanel::setProgress(const QString& step, int done, int total) {
    status_->setText(step);
    if (total > 0) {
        progress_->setRange(0, total);
        progress_->setValue(done);
    } else {
        progress_->setRange(0, 0);
    }
}

void ModelDiffPanel::setFailed(const QString& message) {
    progress_->hide();
    cancel_->hide();
    status_->setText(message);
}

void ModelDiffPanel::setComparison(std::shared_ptr<const ModelComparison> comparison,
                                   std::shared_ptr<const onnx::ModelProto> modelA) {
    comparison_ = std::move(comparison);
    modelA_ = std::move(modelA);
    progress_->hide();
    cancel_->hide();
    const auto& s = comparison_->structure;
    QString status = s.identical() ? tr("Same structure as %1").arg(QString::fromStdString(s.nameB))
                                   : tr("%1 changed, %2 removed, %3 added, %4 renamed nodes")
                                         .arg(s.changed)
                                         .arg(s.removed)
                                         .arg(s.added)
                                         .arg(s.renamed);
    QString text = QString::fromStdString(engine::modelDiffText(s, 200));
    if (comparison_->numeric) {
        const auto& n = *comparison_->numeric;
        text += "\n" + QString::fromStdString(engine::numericDiffText(n));
        if (n.firstDivergence >= 0)
            status += tr("; first divergence at %1")
                          .arg(QString::fromStdString(n.tensors[n.firstDivergence].nodeNameA));
        else
            status += tr("; every shared value within tolerance");
        firstDivergence_->setEnabled(n.firstDivergence >= 0);
    } else if (!comparison_->numericError.isEmpty()) {
        text += "\n" + tr("The runs could not be compared: %1").arg(comparison_->numericError);
    }
    status_->setText(status);
    report_->setPlainText(text);
}

void ModelDiffPanel::showNode(const onnx::NodeProto* node) {
    if (!comparison_ || !modelA_ || !node) {
        node_->clear();
        return;
    }
    // The view graph holds nodes of its own copy of the model: found again by name (or by
    // "OpType(first output)" for unnamed nodes).
    int indexA = -1;
    const auto& g = modelA_->graph();
    const std::string name = profileNameOf(*node);
    for (int i = 0; i < g.node_size() && indexA < 0; ++i)
        if (&g.node(i) == node || profileNameOf(g.node(i)) == name) indexA = i;
    if (indexA < 0) {
        node_->setPlainText(tr("This node is not a node of the file's main graph."));
        return;
    }
    const auto* d = comparison_->structure.matchOfA(indexA);
    QString text = tr("A (this model): ") + nodeSummary(*node);
    if (!d || d->b < 0) {
        text += "\n" + tr("B: no matching node (removed)") + "\n";
    } else {
        text += "\n" +
                tr("B (%1, matched by %2): ")
                    .arg(QString::fromStdString(comparison_->structure.nameB))
                    .arg(QString::fromStdString(d->matchedBy)) +
                nodeSummary(comparison_->skeletonB.graph().node(d->b));
        text += "\n" + tr("Verdict: %1").arg(engine::nodeDiffKindName(d->kind)) + "\n";
        for (const auto& c : d->changes) text += "    " + QString::fromStdString(c) + "\n";
    }
    if (comparison_->numeric)
        for (const auto& t : comparison_->numeric->tensors)
            if (t.nodeA == indexA) text += "\n" + figures(t);
    node_->setPlainText(text);
}

QString ModelDiffPanel::reportText() const { return report_->toPlainText(); }
QString ModelDiffPanel::nodeText() const { return node_->toPlainText(); }

}  // namespace onnxlens::widgets
