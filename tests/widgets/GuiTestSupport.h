#pragma once
// Shared by the GUI tests: synthetic models written to a temporary folder, waiting on the event
// loop, and a heartbeat that measures the longest stall of the GUI thread.
#include <QDir>
#include <QElapsedTimer>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <fstream>
#include <memory>

#include "SyntheticModels.h"

namespace onnxlens::testing {

inline QString writeModel(const QTemporaryDir& dir, const QString& name,
                          const onnx::ModelProto& model) {
    const QString path = dir.filePath(name);
    std::ofstream out(path.toStdString(), std::ios::binary);
    model.SerializeToOstream(&out);
    return path;
}

// Waits (running the event loop) until `condition` holds or `ms` pass.
template <class Condition>
bool waitFor(Condition condition, int ms = 30000) {
    return QTest::qWaitFor(condition, ms);
}

inline void clearSettings() { QSettings().clear(); }

// GUI-thread stall bounds are set for the release build. Under ASan + UBSan every memory access
// and arithmetic step is checked and the GUI thread's own work (drawing, log and progress
// updates) runs about 3x slower (ExportDialog's 500 ms bound was missed by 30 ms on a loaded
// machine), so the bounds that measure that work scale by this factor there.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr double kStallBoundScale = 3.0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr double kStallBoundScale = 3.0;
#else
inline constexpr double kStallBoundScale = 1.0;
#endif
#else
inline constexpr double kStallBoundScale = 1.0;
#endif

// Opens `path` in `window` (a gui::MainWindow) as a new tab and waits until its graph is drawn;
// nullptr when that does not happen in time.
template <class Window>
auto openAndDraw(Window& window, const QString& path) -> decltype(window.page(0)) {
    const int before = window.pageCount();
    window.openFile(path);
    if (!waitFor([&] { return window.pageCount() > before; })) return nullptr;
    auto* page = window.page(window.pageCount() - 1);
    if (!waitFor([&] { return page->isDrawn(); })) return nullptr;
    return page;
}

// Ticks every `periodMs` on the GUI thread; the largest gap between ticks, minus the period, is
// the longest time the GUI thread could not react.
class StallMeter : public QObject {
  public:
    explicit StallMeter(int periodMs = 5) : period_(periodMs) {
        timer_.setTimerType(Qt::PreciseTimer);
        QObject::connect(&timer_, &QTimer::timeout, this, [this] {
            const qint64 now = clock_.nsecsElapsed();
            if (last_ >= 0) worst_ = std::max(worst_, (now - last_) / 1e6 - period_);
            last_ = now;
        });
        clock_.start();
        timer_.start(period_);
    }
    double worstStallMs() const { return std::max(0.0, worst_); }

  private:
    int period_;
    QTimer timer_;
    QElapsedTimer clock_;
    qint64 last_ = -1;
    double worst_ = 0;
};

}  // namespace onnxlens::testing
