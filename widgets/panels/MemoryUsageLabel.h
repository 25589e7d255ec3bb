#pragma once
// The status bar's "memory in use": the process's resident memory (VmRSS: heap and the pages of
// mapped weight files read so far) and the bytes of external weight files mapped (MappedFile.h),
// refreshed every two seconds.
#include <QLabel>
#include <QTimer>

namespace onnxlens::widgets {

class MemoryUsageLabel : public QLabel {
    Q_OBJECT
  public:
    explicit MemoryUsageLabel(QWidget* parent = nullptr);
    // The text for the given figures (bytes), for tests.
    static QString describe(quint64 residentBytes, quint64 mappedBytes);
    // VmRSS of this process in bytes, 0 when /proc is not readable.
    static quint64 residentBytes();

  private:
    void refresh();
    QTimer timer_;
};

}  // namespace onnxlens::widgets
