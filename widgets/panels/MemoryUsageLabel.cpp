#include "widgets/panels/MemoryUsageLabel.h"

#include <QFile>
#include <QLocale>

#include "onnxlens/model/MappedFile.h"

namespace onnxlens::widgets {

namespace {
QString megabytes(quint64 bytes) {
    return QLocale().toString(static_cast<double>(bytes) / (1024.0 * 1024.0), 'f', 0) +
           QStringLiteral(" MB");
}
}  // namespace

MemoryUsageLabel::MemoryUsageLabel(QWidget* parent) : QLabel(parent) {
    setToolTip(
        tr("Resident memory of onnxlens (heap, and the pages of memory-mapped weight files "
           "read so far), and the size of the external weight files mapped: their pages are "
           "read from disk only when a run or a view touches them."));
    connect(&timer_, &QTimer::timeout, this, &MemoryUsageLabel::refresh);
    timer_.start(2000);
    refresh();
}

QString MemoryUsageLabel::describe(quint64 residentBytes, quint64 mappedBytes) {
    QString text = tr("Memory %1").arg(megabytes(residentBytes));
    if (mappedBytes > 0) text += tr(" · weights mapped %1").arg(megabytes(mappedBytes));
    return text;
}

quint64 MemoryUsageLabel::residentBytes() {
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly)) return 0;
    for (const QByteArray& line : status.readAll().split('\n')) {
        if (!line.startsWith("VmRSS:")) continue;
        const QList<QByteArray> parts = line.simplified().split(' ');
        return parts.size() >= 2 ? parts[1].toULongLong() * 1024 : 0;
    }
    return 0;
}

void MemoryUsageLabel::refresh() {
    setText(describe(residentBytes(), MappedFile::mappedBytesInProcess()));
}

}  // namespace onnxlens::widgets
