#include "widgets/graph/DiffLegend.h"

#include <QPainter>

namespace onnxlens::widgets {

QColor changedNodeColour() { return QColor(0xf5, 0xa6, 0x23); }
QColor removedNodeColour() { return QColor(0xe0, 0x4f, 0x4f); }
QColor renamedNodeColour() { return QColor(0x6f, 0xa8, 0xdc); }

DiffLegend::DiffLegend(QWidget* parent) : QWidget(parent) {
    setAttribute(Qt::WA_TransparentForMouseEvents);
    setObjectName(QStringLiteral("diffLegend"));
    setFixedSize(sizeHint());
}

void DiffLegend::setCounts(int changed, int removed, int renamed, int added,
                           const QString& otherModel) {
    changed_ = changed;
    removed_ = removed;
    renamed_ = renamed;
    added_ = added;
    otherModel_ = otherModel;
    setToolTip(caption());
    update();
}

QString DiffLegend::caption() const {
    return tr("%1 changed, %2 not in %3, %4 renamed; %5 only in %3")
        .arg(changed_)
        .arg(removed_)
        .arg(otherModel_)
        .arg(renamed_)
        .arg(added_);
}

QSize DiffLegend::sizeHint() const {
    const QFontMetrics fm(font());
    return QSize(
        std::max(260, fm.horizontalAdvance(tr("888 only in a-rather-long-model-name.onnx")) + 16),
        fm.height() * 6 + 16);
}

void DiffLegend::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(QColor(0, 0, 0, 60));
    p.setBrush(QColor(255, 255, 255, 235));
    p.drawRoundedRect(rect().adjusted(0, 0, -1, -1), 4, 4);
    const QFontMetrics fm(font());
    const int line = fm.height() + 2;
    int y = 6;
    p.setPen(palette().color(QPalette::WindowText));
    QFont bold = font();
    bold.setBold(true);
    p.setFont(bold);
    p.drawText(QRect(8, y, width() - 16, line), Qt::AlignLeft | Qt::AlignVCenter,
               tr("Against %1").arg(otherModel_));
    p.setFont(font());
    y += line;
    const struct {
        QColor colour;
        QString text;
    } rows[] = {{changedNodeColour(), tr("changed (%1)").arg(changed_)},
                {removedNodeColour(), tr("not in the other model (%1)").arg(removed_)},
                {renamedNodeColour(), tr("renamed only (%1)").arg(renamed_)},
                {palette().color(QPalette::Base), tr("same")}};
    for (const auto& row : rows) {
        p.setPen(QColor(0, 0, 0, 90));
        p.setBrush(row.colour);
        p.drawRect(QRect(8, y + 3, 14, line - 6));
        p.setPen(palette().color(QPalette::WindowText));
        p.drawText(QRect(28, y, width() - 36, line), Qt::AlignLeft | Qt::AlignVCenter, row.text);
        y += line;
    }
    p.drawText(QRect(8, y, width() - 16, line), Qt::AlignLeft | Qt::AlignVCenter,
               tr("+%1 nodes only in the other model").arg(added_));
}

}  // namespace onnxlens::widgets
