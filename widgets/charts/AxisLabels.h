#pragma once
// Tick labels that tell the ticks apart. A fixed "%.3g" wrote a histogram of 1000.0 .. 1000.4 as
// "1e+03" five times, and "%d" on a count axis of 0 .. 1 with five ticks wrote "0, 0, 0, 0, 1".
#include <QString>

class QValueAxis;

namespace onnxlens::widgets {

// A printf format ("%.Ng") with as many significant digits as ticks `tickCount` evenly spaced
// over [low, high] need to differ (3 at least, 15 at most).
QString tickLabelFormat(double low, double high, int tickCount);

// A value axis over `low` .. `high` with `tickCount` ticks labelled by tickLabelFormat.
void setValueAxisRange(QValueAxis* axis, double low, double high, int tickCount = 5);

// A count axis from 0 to at least `maxCount` whose ticks fall on whole numbers (a step of 1, 2
// or 5 times a power of ten; at most 6 ticks, or maxIntervals + 1 when given: a multiple of that
// step), labelled as integers.
void setCountAxisRange(QValueAxis* axis, double maxCount, int maxIntervals = 0);

// The tick step setCountAxisRange uses for `maxCount`.
double countAxisStep(double maxCount);

}  // namespace onnxlens::widgets
