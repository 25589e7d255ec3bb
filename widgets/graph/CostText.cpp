#include "widgets/graph/CostText.h"

#include <QLocale>
#include <QStringList>
#include <cmath>

namespace onnxlens::widgets {

QString siAmount(double value, const QString& unit) {
    static const char* const prefixes[] = {"", "K", "M", "G", "T", "P"};
    int p = 0;
    double v = value;
    while (std::fabs(v) >= 999.5 && p < 5) {
        v /= 1000;
        ++p;
    }
    const QString number =
        p == 0 && v == std::round(v) ? QString::number(v, 'f', 0) : QString::number(v, 'g', 3);
    const QString suffix = QLatin1String(prefixes[p]) + unit;
    return suffix.isEmpty() ? number : number + QLatin1Char(' ') + suffix;
}

QString byteSize(double bytes) {
    return QLocale::c().formattedDataSize(static_cast<qint64>(std::llround(bytes)), 2,
                                          QLocale::DataSizeTraditionalFormat);
}

QString costSummary(const CostFigures& f) {
    QStringList parts;
    if (f.macs > 0)
        parts << siAmount(f.macs, QStringLiteral("MACs")) + QStringLiteral(", ") +
                     siAmount(f.flops, QStringLiteral("FLOPs"));
    else if (f.flops > 0)
        parts << siAmount(f.flops, QStringLiteral("FLOPs"));
    if (f.parameters > 0)
        parts << QObject::tr("%1 params (%2)")
                     .arg(siAmount(static_cast<double>(f.parameters)),
                          byteSize(static_cast<double>(f.parameterBytes)));
    if (f.bytesRead + f.bytesWritten > 0)
        parts << QObject::tr("%1 read, %2 written")
                     .arg(byteSize(static_cast<double>(f.bytesRead)),
                          byteSize(static_cast<double>(f.bytesWritten)));
    if (f.flops > 0) parts << QObject::tr("%1 FLOPs/byte").arg(f.intensity(), 0, 'g', 3);
    return parts.join(QStringLiteral(" · "));
}

}  // namespace onnxlens::widgets
