#pragma once
// An initializer's (or Constant's) values: a paged table, statistics (min, max, mean, std,
// zeros), a histogram, and export as .npy. The packed weight of a com.microsoft MatMulNBits (B)
// or GatherBlockQuantized (data) is shown dequantized (engine::DequantizedWeight: float32 [N, K]
// or the table's shape), labelled so, the stored bytes one click away ("Dequantized"); opening
// it and its statistics run on a worker thread, so a 32k x 2048 table never stalls the window.
#include <QWidget>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "onnxlens/model/Result.h"
#include "onnxlens/model/ViewGraph.h"

class QCheckBox;
class QLabel;
class QTableWidget;
class QSpinBox;
class QPushButton;
class QChartView;

namespace onnxlens::engine {
class DequantizedWeight;
}  // namespace onnxlens::engine

namespace onnxlens::widgets {

struct TensorStatistics {
    std::size_t count = 0;
    double min = 0, max = 0, mean = 0, std = 0;
    std::size_t zeros = 0;
    std::size_t nonFinite = 0;
    std::vector<std::size_t> histogram;  // equal-width bins over [min, max]
};

// Which elements to read: first, first + step, ..., at most `count` of them.
struct ValueSelection {
    std::size_t first = 0;
    std::size_t count = SIZE_MAX;
    std::size_t step = 1;
};

// The selected elements as doubles (numeric and bool types); external data is read through the
// mapping of its file in `modelDirectory`, touching only the pages of the selected elements.
Result<std::vector<double>> tensorValues(const onnx::TensorProto& tensor,
                                         const std::filesystem::path& modelDirectory,
                                         ValueSelection pick = {});
TensorStatistics computeStatistics(const std::vector<double>& values, int bins = 40);

class TensorPanel : public QWidget {
    Q_OBJECT
  public:
    static constexpr int kPageSize = 1000;
    // Statistics and histogram of larger tensors are of an evenly strided sample of this many.
    static constexpr std::uint64_t kStatisticsValues = 4'000'000;

    explicit TensorPanel(QWidget* parent = nullptr);
    void showTensor(std::shared_ptr<const ViewGraph> view, int tensor,
                    const std::filesystem::path& modelDirectory);
    void clear();
    // Returns an empty string on success. A dequantized weight is written as float32 (the
    // button does that on a worker thread; this call does it on the caller's).
    QString exportNpy(const QString& path) const;

    const TensorStatistics& statistics() const { return stats_; }
    QTableWidget* table() const { return table_; }
    int page() const;
    void setPage(int page);
    // The shown tensor is a block-quantized weight: the box is shown, checked shows it
    // dequantized (the default), unchecked its stored bytes.
    QCheckBox* dequantizeBox() const { return dequantize_; }
    bool showsDequantized() const;
    // True while a dequantized weight is being opened and its statistics computed.
    bool isBusy() const { return busy_; }
    QString titleText() const;
    QString statisticsText() const;

  signals:
    // A dequantized weight's statistics are shown (or its error).
    void dequantizedShown();

  private:
    void fillPage();
    void showStored();
    void showDequantized();
    // The statistics line and the histogram of stats_ over `count` values (sampled every `step`).
    void showStatistics(std::uint64_t count, std::size_t step, const QString& prefix);

    std::shared_ptr<const ViewGraph> view_;
    int tensor_ = -1;
    std::filesystem::path directory_;
    std::uint64_t valueCount_ = 0;
    TensorStatistics stats_;
    int quantizedNode_ = -1;  // the MatMulNBits / GatherBlockQuantized node reading the tensor
    std::shared_ptr<const engine::DequantizedWeight> dequantized_;
    std::uint64_t generation_ = 0;  // results of an older showDequantized are dropped
    bool busy_ = false;
    QCheckBox* dequantize_;
    QLabel* title_;
    QLabel* statsLabel_;
    QTableWidget* table_;
    QSpinBox* page_;
    QLabel* pageCount_;
    QPushButton* export_;
    QChartView* chart_;
};

}  // namespace onnxlens::widgets
