#include "widgets/charts/AxisLabels.h"

#include <QValueAxis>
#include <algorithm>
#include <cmath>

namespace onnxlens::widgets {

QString tickLabelFormat(double low, double high, int tickCount) {
    const double spacing = (high - low) / std::max(1, tickCount - 1);
    const double magnitude = std::max(std::abs(low), std::abs(high));
    int digits = 3;
    if (std::isfinite(spacing) && spacing > 0 && std::isfinite(magnitude) && magnitude > 0) {
        // The digits down to the spacing's first significant one, and one more for steps such
        // as 0.25.
        // (The spacing of 1000 .. 1000.4 in 4 steps is 0.0999999...: rounding must not count it
        // as a decade lower.)
        const double span =
            std::floor(std::log10(magnitude) + 1e-9) - std::floor(std::log10(spacing) + 1e-9);
        digits = std::clamp(static_cast<int>(span) + 2, 3, 15);
    }
    return QStringLiteral("%.%1g").arg(digits);
}

void setValueAxisRange(QValueAxis* axis, double low, double high, int tickCount) {
    axis->setRange(low, high);
    axis->setTickCount(tickCount);
    axis->setLabelFormat(tickLabelFormat(low, high, tickCount));
}

double countAxisStep(double maxCount) {
    const double rough = std::max(1.0, maxCount / 5);
    const double power = std::pow(10.0, std::floor(std::log10(rough)));
    for (double nice : {1.0, 2.0, 5.0, 10.0})
        if (nice * power >= rough) return nice * power;
    return 10 * power;
}

void setCountAxisRange(QValueAxis* axis, double maxCount, int maxIntervals) {
    double step = countAxisStep(maxCount);
    // Fewer, wider steps when the chart has room for only a few labels (whole counts still).
    const double intervals = std::ceil(std::max(0.0, maxCount) / step);
    if (maxIntervals > 0 && intervals > maxIntervals)
        step *= std::ceil(intervals / static_cast<double>(maxIntervals));
    const double top = std::max(step, std::ceil(std::max(0.0, maxCount) / step) * step);
    axis->setRange(0, top);
    axis->setTickCount(static_cast<int>(std::lround(top / step)) + 1);
    axis->setLabelFormat(QStringLiteral("%d"));
}

}  // namespace onnxlens::widgets
