#include "widgets/panels/TensorText.h"

#include <QStringList>
#include <complex>

namespace onnxlens::widgets {

QString elementText(const engine::Tensor& tensor, std::int64_t flat) {
    if (!tensor.defined() || flat < 0 || flat >= tensor.numel()) return {};
    if (engine::isLowPrecision(tensor.dtype()))  // float8, 4-bit, e8m0: the decoded value
        return QString::number(tensor.valueAsDouble(flat), 'g', 7);
    return engine::dispatchAny(tensor.dtype(), [&]<class T>() -> QString {
        const T& v = tensor.data<T>()[flat];
        if constexpr (std::is_same_v<T, std::string>) {
            return QLatin1Char('"') + QString::fromStdString(v) + QLatin1Char('"');
        } else if constexpr (std::is_same_v<T, bool>) {
            return v ? QStringLiteral("true") : QStringLiteral("false");
        } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                             std::is_same_v<T, std::complex<double>>) {
            return QStringLiteral("%1%2%3i")
                .arg(static_cast<double>(v.real()), 0, 'g', 7)
                .arg(v.imag() < 0 ? QString() : QStringLiteral("+"))
                .arg(static_cast<double>(v.imag()), 0, 'g', 7);
        } else if constexpr (std::is_integral_v<T>) {
            return QString::number(v);
        } else {
            return QString::number(engine::toDouble(v), 'g', 7);
        }
    });
}

QString indexText(const std::vector<std::int64_t>& index) {
    QStringList parts;
    for (auto i : index) parts << QString::number(i);
    return QLatin1Char('[') + parts.join(QStringLiteral(", ")) + QLatin1Char(']');
}

QString indexText(std::int64_t flat, const engine::Shape& shape) {
    std::vector<std::int64_t> index(shape.size());
    for (std::size_t d = shape.size(); d-- > 0;) {
        if (shape[d] <= 0) continue;
        index[d] = flat % shape[d];
        flat /= shape[d];
    }
    return indexText(index);
}

}  // namespace onnxlens::widgets
