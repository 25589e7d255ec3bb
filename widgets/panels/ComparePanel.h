#pragma once
// The Compare dock: runs the model against a test_data_set_* found beside it (chosen from a
// list) or against any reference file per output (with the Run panel's inputs), and shows per
// output pass/fail, max absolute and relative error, mean absolute error, the share of elements
// outside tolerance, the worst element and a histogram of absolute errors. rtol/atol are
// editable (design defaults, remembered). The dynamic-axes check runs from here too. It shows the
// current tab's ModelController (its compiled model, the Run dock's input choices it holds, its
// last comparison).
#include <QPointer>
#include <QWidget>
#include <map>
#include <memory>

#include "widgets/workers/EngineWorker.h"
#include "widgets/workers/ModelController.h"

class QAction;
class QChartView;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableWidget;

namespace onnxlens::widgets {

class ComparePanel : public QWidget {
    Q_OBJECT
  public:
    enum ResultColumn {
        OutputColumn,
        ResultColumn,
        MaxAbsColumn,
        MaxRelColumn,
        MeanAbsColumn,
        OutsideColumn,
        WorstColumn
    };
    enum DynamicColumn {
        DynOutputColumn,
        DynDeclaredColumn,
        DynShapesColumn,
        DynFollowColumn,
        DynFirstItemColumn
    };

    explicit ComparePanel(QWidget* parent = nullptr);
    // The current model tab changed (nullptr: no model).
    void setController(ModelController* controller);

    void compare();
    void checkDynamicAxes();
    QAction* compareAction() const { return compareAction_; }
    QAction* dynamicAxesAction() const { return dynamicAxesAction_; }

    // The reference list: one entry per test data set beside the model, then "Reference files".
    QStringList referenceChoices() const;
    void chooseDataSet(int index);
    void chooseReferenceFiles();
    void setReferenceFile(const QString& output, const QString& file);
    QString referenceFile(const QString& output) const;  // "" when none is chosen
    int referenceChoice() const;                         // the index in referenceChoices()
    QTableWidget* referenceFilesTable() const { return referenceFiles_; }
    void setTolerance(double rtol, double atol);
    engine::Tolerance tolerance() const;

    std::shared_ptr<const CompareOutcome> lastComparison() const { return comparison_; }
    std::shared_ptr<const engine::DynamicAxesCheckResult> lastDynamicAxesCheck() const {
        return dynamic_;
    }
    QString summaryText() const;
    QString dynamicAxesSummaryText() const;
    QTableWidget* resultsTable() const { return results_; }
    QTableWidget* dynamicAxesTable() const { return dynamicTable_; }
    QChartView* errorHistogramView() const { return errorHistogram_; }
    void showErrorHistogram(int row);

    // rtol and atol as remembered in QSettings (the Settings dialog).
    void reloadSettings();

  signals:
    void compareFinished();
    void dynamicAxesFinished();
    void failed(const QString& message);

  private:
    enum class Awaiting { Nothing, Compare, DynamicAxes };
    QLayout* buildControls();
    QWidget* buildResults();
    QWidget* buildDynamicAxesBox();
    std::shared_ptr<const CompiledModel> compiledModel() const;
    InputChoices inputChoices() const;
    bool isBusy() const;
    void onCompiled();
    void onReferenceChoiceChanged();
    void showComparison(const std::shared_ptr<const CompareOutcome>& outcome);
    void showDynamicAxes(const std::shared_ptr<const engine::DynamicAxesCheckResult>& result);
    void setSummary(QLabel* label, const QString& text,
                    int verdict);  // verdict: 1 pass, 0 fail, -1 neutral
    void updateEnabled();
    bool readTolerance(engine::Tolerance& tolerance);

    // What the user chose for a model (the reference and the files per output), kept per tab so
    // that each tab shows its own choices when it comes back.
    struct ReferenceChoice {
        QString reference;                 // the list's text: indices move when a data set is added
        std::map<QString, QString> files;  // output -> reference file
    };
    void rememberReferenceChoice();
    void restoreReferenceChoice();

    QPointer<ModelController> controller_;
    std::map<const ModelController*, ReferenceChoice> referenceChoices_;
    bool restoringChoice_ = false;
    Awaiting awaiting_ = Awaiting::Nothing;
    std::shared_ptr<const CompareOutcome> comparison_;
    std::shared_ptr<const engine::DynamicAxesCheckResult> dynamic_;

    QAction* compareAction_;
    QAction* dynamicAxesAction_;
    QComboBox* reference_;
    QLineEdit* rtol_;
    QLineEdit* atol_;
    QPushButton* compareButton_;
    QPushButton* dynamicButton_;
    QPushButton* cancelButton_;
    QTableWidget* referenceFiles_;
    QLabel* summary_;
    QTableWidget* results_;
    QChartView* errorHistogram_;
    QLabel* dynamicSummary_;
    QTableWidget* dynamicTable_;
};

}  // namespace onnxlens::widgets
