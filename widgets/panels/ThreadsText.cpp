#include "widgets/panels/ThreadsText.h"

#include <QCoreApplication>

#include "onnxlens/engine/ThreadUse.h"

namespace onnxlens::widgets {

namespace {

QString count(int threads) {
    return threads == 1 ? QCoreApplication::translate("ThreadsText", "1 thread")
                        : QCoreApplication::translate("ThreadsText", "%1 threads").arg(threads);
}

}  // namespace

QString threadsText(int threads, std::int64_t reducedRuns, std::int64_t runs, int fewest,
                    ThreadsTextForm form) {
    const bool reduced = reducedRuns > 0;
    switch (form) {
        case ThreadsTextForm::Cell:
            if (!reduced) return QString::number(threads);
            return QCoreApplication::translate("ThreadsText", "%1 (%2 in %3 of %4 runs)")
                .arg(threads)
                .arg(fewest)
                .arg(reducedRuns)
                .arg(runs);
        case ThreadsTextForm::Status:
            if (!reduced) return count(threads);
            return QCoreApplication::translate("ThreadsText", "%1, %2 of %3 runs on %4: cores busy")
                .arg(count(threads))
                .arg(reducedRuns)
                .arg(runs)
                .arg(fewest);
        case ThreadsTextForm::Full:
            break;
    }
    if (!reduced) return count(threads);
    return QStringLiteral("%1 (%2)").arg(
        count(threads),
        QString::fromStdString(engine::reducedThreadsNote(reducedRuns, runs, fewest)));
}

}  // namespace onnxlens::widgets
