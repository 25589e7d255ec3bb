#include "widgets/panels/ComparePanel.h"

#include <QAction>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QDoubleValidator>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSplitter>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include "widgets/SettingsKeys.h"
#include "widgets/charts/HistogramChart.h"
#include "widgets/panels/ActionAvailability.h"
#include "widgets/panels/RunPanel.h"
#include "widgets/panels/TensorText.h"

namespace onnxlens::widgets {

namespace {

QTableWidgetItem* cell(const QString& text) {
    auto* item = new QTableWidgetItem(text);
    item->setFlags(item->flags() & ~Qt::ItemIsEditable);
    return item;
}

QString figure(double v) { return QString::number(v, 'g', 4); }

const QColor kPassColour(30, 130, 50);
const QColor kFailColour(190, 30, 30);

QString shapesText(const std::vector<engine::Shape>& shapes) {
    QStringList parts;
    for (const auto& s : shapes) parts << QString::fromStdString(engine::shapeToString(s));
    return parts.join(QStringLiteral(", "));
}

}  // namespace

ComparePanel::ComparePanel(QWidget* parent) : QWidget(parent) {
    compareAction_ = new QAction(tr("&Compare with Reference"), this);
    compareAction_->setShortcut(QKeySequence(tr("Ctrl+Shift+R")));
    dynamicAxesAction_ = new QAction(tr("Check &Dynamic Axes"), this);
    dynamicAxesAction_->setShortcut(QKeySequence(tr("Ctrl+Shift+D")));
    connect(compareAction_, &QAction::triggered, this, &ComparePanel::compare);
    connect(dynamicAxesAction_, &QAction::triggered, this, &ComparePanel::checkDynamicAxes);

    QLayout* controls = buildControls();
    referenceFiles_ = new QTableWidget(0, 2, this);
    referenceFiles_->setHorizontalHeaderLabels({tr("Output"), tr("Reference file (.pb / .npy)")});
    referenceFiles_->horizontalHeader()->setStretchLastSection(true);
    referenceFiles_->verticalHeader()->hide();
    referenceFiles_->setMaximumHeight(130);
    referenceFiles_->hide();

    auto* splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(buildResults());
    splitter->addWidget(buildDynamicAxesBox());
    splitter->setChildrenCollapsible(false);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(referenceFiles_);
    layout->addWidget(splitter, 1);
    updateEnabled();
}

QLayout* ComparePanel::buildControls() {
    reference_ = new QComboBox(this);
    reference_->setObjectName(QStringLiteral("compareReference"));
    connect(reference_, &QComboBox::currentIndexChanged, this,
            &ComparePanel::onReferenceChoiceChanged);
    rtol_ = new QLineEdit(this);
    atol_ = new QLineEdit(this);
    reloadSettings();
    for (QLineEdit* edit : {rtol_, atol_}) {
        auto* validator = new QDoubleValidator(0, 1e300, 20, edit);
        validator->setNotation(QDoubleValidator::ScientificNotation);
        edit->setValidator(validator);
        edit->setMaximumWidth(110);
    }
    rtol_->setToolTip(tr("Relative tolerance: |actual − expected| ≤ atol + rtol·|expected|"));
    atol_->setToolTip(rtol_->toolTip());
    compareButton_ = new QPushButton(tr("Compare"), this);
    dynamicButton_ = new QPushButton(tr("Check dynamic axes"), this);
    cancelButton_ = new QPushButton(tr("Cancel"), this);
    connect(compareButton_, &QPushButton::clicked, this, &ComparePanel::compare);
    connect(dynamicButton_, &QPushButton::clicked, this, &ComparePanel::checkDynamicAxes);
    connect(cancelButton_, &QPushButton::clicked, this, [this] {
        if (controller_) controller_->cancel();
    });

    auto* toleranceRow = new QHBoxLayout;
    toleranceRow->addWidget(new QLabel(tr("rtol"), this));
    toleranceRow->addWidget(rtol_);
    toleranceRow->addWidget(new QLabel(tr("atol"), this));
    toleranceRow->addWidget(atol_);
    toleranceRow->addStretch(1);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(compareButton_);
    buttons->addWidget(dynamicButton_);
    buttons->addWidget(cancelButton_);
    buttons->addStretch(1);
    auto* form = new QFormLayout;
    form->addRow(tr("Reference"), reference_);
    form->addRow(tr("Tolerance"), toleranceRow);

    auto* controls = new QVBoxLayout;
    controls->addLayout(form);
    controls->addLayout(buttons);
    return controls;
}

QWidget* ComparePanel::buildResults() {
    summary_ = new QLabel(this);
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    results_ = new QTableWidget(0, 7, this);
    results_->setObjectName(QStringLiteral("compareResults"));
    results_->setHorizontalHeaderLabels({tr("Output"), tr("Result"), tr("Max abs error"),
                                         tr("Max rel error"), tr("Mean abs error"),
                                         tr("Outside tolerance"), tr("Worst element")});
    results_->horizontalHeader()->setStretchLastSection(true);
    results_->verticalHeader()->hide();
    results_->setSelectionBehavior(QAbstractItemView::SelectRows);
    results_->setSelectionMode(QAbstractItemView::SingleSelection);
    results_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    connect(results_, &QTableWidget::currentCellChanged, this,
            [this](int row) { showErrorHistogram(row); });
    errorHistogram_ = new QChartView(this);
    errorHistogram_->setRenderHint(QPainter::Antialiasing);
    errorHistogram_->setMinimumHeight(150);

    auto* resultsBox = new QWidget(this);
    auto* resultsLayout = new QVBoxLayout(resultsBox);
    resultsLayout->setContentsMargins(0, 0, 0, 0);
    resultsLayout->addWidget(summary_);
    resultsLayout->addWidget(results_, 1);
    resultsLayout->addWidget(errorHistogram_, 1);
    return resultsBox;
}

QWidget* ComparePanel::buildDynamicAxesBox() {
    auto* dynamicBox = new QGroupBox(tr("Dynamic axes"), this);
    dynamicSummary_ = new QLabel(tr("Not checked yet."), dynamicBox);
    dynamicSummary_->setWordWrap(true);
    dynamicSummary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    dynamicTable_ = new QTableWidget(0, 5, dynamicBox);
    dynamicTable_->setHorizontalHeaderLabels({tr("Output"), tr("Declared"), tr("Shapes per run"),
                                              tr("Follows the symbols"),
                                              tr("Batch-2 item 0 vs batch 1")});
    dynamicTable_->horizontalHeader()->setStretchLastSection(true);
    dynamicTable_->verticalHeader()->hide();
    dynamicTable_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    auto* dynamicLayout = new QVBoxLayout(dynamicBox);
    dynamicLayout->addWidget(dynamicSummary_);
    dynamicLayout->addWidget(dynamicTable_);

    return dynamicBox;
}

void ComparePanel::setController(ModelController* controller) {
    if (controller == controller_) return;
    if (controller_) controller_->disconnect(this);
    controller_ = controller;
    awaiting_ = Awaiting::Nothing;
    // A model's reference choice is forgotten with it (a plain functor, which disconnect(this)
    // on a tab switch keeps).
    if (controller_ && !referenceChoices_.count(controller_)) {
        referenceChoices_[controller_];
        QPointer<ComparePanel> self(this);
        connect(controller_, &QObject::destroyed, [self, key = controller_.data()] {
            if (self) self->referenceChoices_.erase(key);
        });
    }
    onCompiled();
    if (!controller_) return;
    if (controller_->isRunning(EngineJob::Compare))
        awaiting_ = Awaiting::Compare;
    else if (controller_->isRunning(EngineJob::DynamicAxes))
        awaiting_ = Awaiting::DynamicAxes;
    if (controller_->lastComparison()) showComparison(controller_->lastComparison());
    if (controller_->lastDynamicAxesCheck()) showDynamicAxes(controller_->lastDynamicAxesCheck());
    connect(controller_, &ModelController::compiled, this, &ComparePanel::onCompiled);
    connect(controller_, &ModelController::compileFailed, this, &ComparePanel::updateEnabled);
    connect(controller_, &ModelController::dataSetsChanged, this, &ComparePanel::onCompiled);
    connect(controller_, &ModelController::busyChanged, this, &ComparePanel::updateEnabled);
    connect(controller_, &ModelController::compareFinished, this, [this] {
        if (std::exchange(awaiting_, Awaiting::Nothing) == Awaiting::Compare)
            showComparison(controller_->lastComparison());
    });
    connect(controller_, &ModelController::dynamicAxesFinished, this, [this] {
        if (std::exchange(awaiting_, Awaiting::Nothing) == Awaiting::DynamicAxes)
            showDynamicAxes(controller_->lastDynamicAxesCheck());
    });
    auto onProblem = [this](EngineJob job, const QString& message) {
        if (job != EngineJob::Compare && job != EngineJob::DynamicAxes) return;
        const Awaiting was = std::exchange(awaiting_, Awaiting::Nothing);
        if (was == Awaiting::Nothing) return;
        setSummary(was == Awaiting::Compare ? summary_ : dynamicSummary_, message, 0);
        emit failed(message);
    };
    connect(controller_, &ModelController::failed, this, onProblem);
    connect(controller_, &ModelController::cancelled, this,
            [onProblem](EngineJob job) { onProblem(job, tr("Cancelled.")); });
    connect(controller_, &ModelController::inputsRejected, this,
            [onProblem](EngineJob job,
                        std::shared_ptr<const std::map<std::string, std::string>> problems) {
                QStringList lines;
                for (const auto& [name, problem] : *problems)
                    lines << tr("input '%1': %2")
                                 .arg(QString::fromStdString(name),
                                      QString::fromStdString(problem));
                onProblem(job, tr("The Run panel's inputs could not be made: %1")
                                   .arg(lines.join(QStringLiteral("; "))));
            });
    updateEnabled();
}

std::shared_ptr<const CompiledModel> ComparePanel::compiledModel() const {
    return controller_ ? controller_->compiledModel() : nullptr;
}

InputChoices ComparePanel::inputChoices() const {
    return controller_ && controller_->inputChoices() ? *controller_->inputChoices()
                                                      : InputChoices{};
}

bool ComparePanel::isBusy() const { return controller_ && controller_->isBusy(); }

void ComparePanel::onCompiled() {
    const auto model = compiledModel();
    comparison_.reset();
    dynamic_.reset();
    results_->setRowCount(0);
    dynamicTable_->setRowCount(0);
    errorHistogram_->setChart(new QChart);
    setSummary(summary_, QString(), -1);
    setSummary(dynamicSummary_, tr("Not checked yet."), -1);
    const QSignalBlocker blocker(reference_);
    reference_->clear();
    // Another tab's outputs never stay: a model not compiled yet has no rows.
    referenceFiles_->setRowCount(0);
    if (model) {
        for (const auto& set : model->dataSets)
            reference_->addItem(QString::fromStdString(set.directory.filename().string()));
        referenceFiles_->setRowCount(static_cast<int>(model->outputs.size()));
        for (int row = 0; row < referenceFiles_->rowCount(); ++row) {
            referenceFiles_->setItem(
                row, 0,
                cell(QString::fromStdString(model->outputs[static_cast<std::size_t>(row)].name)));
            auto* box = new QWidget(referenceFiles_);
            auto* edit = new QLineEdit(box);
            auto* browse = new QToolButton(box);
            browse->setText(QStringLiteral("…"));
            auto* boxLayout = new QHBoxLayout(box);
            boxLayout->setContentsMargins(0, 0, 0, 0);
            boxLayout->addWidget(edit, 1);
            boxLayout->addWidget(browse);
            referenceFiles_->setCellWidget(row, 1, box);
            connect(browse, &QToolButton::clicked, this, [this, edit, row] {
                const auto m = compiledModel();
                const QString file = QFileDialog::getOpenFileName(
                    this, tr("Reference for %1").arg(referenceFiles_->item(row, 0)->text()),
                    m ? QFileInfo(m->path).absolutePath() : QString(),
                    tr("Tensors (*.pb *.npy);;All files (*)"));
                if (!file.isEmpty()) edit->setText(file);
            });
            connect(edit, &QLineEdit::textChanged, this, &ComparePanel::rememberReferenceChoice);
        }
    }
    reference_->addItem(tr("Reference files (per output, Run panel inputs)"));
    reference_->setCurrentIndex(0);
    restoreReferenceChoice();
    onReferenceChoiceChanged();
    updateEnabled();
}

void ComparePanel::rememberReferenceChoice() {
    if (restoringChoice_ || !controller_ || !compiledModel()) return;
    ReferenceChoice& choice = referenceChoices_[controller_];
    choice.reference = reference_->currentText();
    choice.files.clear();
    for (int row = 0; row < referenceFiles_->rowCount(); ++row) {
        const QString file = referenceFiles_->cellWidget(row, 1)->findChild<QLineEdit*>()->text();
        if (!file.isEmpty()) choice.files[referenceFiles_->item(row, 0)->text()] = file;
    }
}

void ComparePanel::restoreReferenceChoice() {
    auto it = controller_ ? referenceChoices_.find(controller_) : referenceChoices_.end();
    if (it == referenceChoices_.end() || !compiledModel()) return;
    restoringChoice_ = true;
    const ReferenceChoice choice = it->second;
    if (const int index = reference_->findText(choice.reference); index >= 0)
        reference_->setCurrentIndex(index);
    for (const auto& [output, file] : choice.files) setReferenceFile(output, file);
    restoringChoice_ = false;
}

QStringList ComparePanel::referenceChoices() const {
    QStringList list;
    for (int i = 0; i < reference_->count(); ++i) list << reference_->itemText(i);
    return list;
}

void ComparePanel::chooseDataSet(int index) { reference_->setCurrentIndex(index); }
void ComparePanel::chooseReferenceFiles() { reference_->setCurrentIndex(reference_->count() - 1); }

void ComparePanel::onReferenceChoiceChanged() {
    referenceFiles_->setVisible(reference_->count() > 0 &&
                                reference_->currentIndex() == reference_->count() - 1);
    rememberReferenceChoice();
}

void ComparePanel::setReferenceFile(const QString& output, const QString& file) {
    for (int row = 0; row < referenceFiles_->rowCount(); ++row)
        if (referenceFiles_->item(row, 0)->text() == output)
            referenceFiles_->cellWidget(row, 1)->findChild<QLineEdit*>()->setText(file);
}

QString ComparePanel::referenceFile(const QString& output) const {
    for (int row = 0; row < referenceFiles_->rowCount(); ++row)
        if (referenceFiles_->item(row, 0)->text() == output)
            return referenceFiles_->cellWidget(row, 1)->findChild<QLineEdit*>()->text();
    return {};
}

int ComparePanel::referenceChoice() const { return reference_->currentIndex(); }

void ComparePanel::setTolerance(double rtol, double atol) {
    rtol_->setText(QString::number(rtol, 'g', 10));
    atol_->setText(QString::number(atol, 'g', 10));
}

engine::Tolerance ComparePanel::tolerance() const {
    engine::Tolerance t;
    t.rtol = rtol_->text().toDouble();
    t.atol = atol_->text().toDouble();
    return t;
}

bool ComparePanel::readTolerance(engine::Tolerance& tolerance) {
    bool okR = false, okA = false;
    tolerance.rtol = rtol_->text().toDouble(&okR);
    tolerance.atol = atol_->text().toDouble(&okA);
    if (!okR || !okA || tolerance.rtol < 0 || tolerance.atol < 0) {
        setSummary(summary_, tr("rtol and atol must be numbers ≥ 0 (e.g. 1e-3 and 1e-5)."), 0);
        return false;
    }
    QSettings settings;
    settings.setValue(settings::kCompareRtol, tolerance.rtol);
    settings.setValue(settings::kCompareAtol, tolerance.atol);
    return true;
}

void ComparePanel::reloadSettings() {
    QSettings settings;
    const engine::Tolerance defaults;
    rtol_->setText(settings.value(settings::kCompareRtol, defaults.rtol).toString());
    atol_->setText(settings.value(settings::kCompareAtol, defaults.atol).toString());
}

void ComparePanel::compare() {
    const auto model = compiledModel();
    if (!model || isBusy()) return;
    CompareRequest request;
    if (!readTolerance(request.tolerance)) return;
    const int choice = reference_->currentIndex();
    if (choice >= 0 && choice < static_cast<int>(model->dataSets.size())) {
        request.dataSet = model->dataSets[static_cast<std::size_t>(choice)];
        request.source = reference_->currentText();
    } else {
        for (int row = 0; row < referenceFiles_->rowCount(); ++row) {
            const QString file =
                referenceFiles_->cellWidget(row, 1)->findChild<QLineEdit*>()->text().trimmed();
            if (!file.isEmpty())
                request.references.emplace_back(referenceFiles_->item(row, 0)->text().toStdString(),
                                                file.toStdString());
        }
        if (request.references.empty()) {
            setSummary(summary_, tr("Choose a reference file for at least one output."), 0);
            return;
        }
        request.source = tr("reference files");
        request.feeds = [choices = inputChoices()] { return prepareInputFeeds(choices); };
    }
    awaiting_ = Awaiting::Compare;
    setSummary(summary_, tr("Comparing with %1…").arg(request.source), -1);
    controller_->compare(std::move(request));
}

void ComparePanel::checkDynamicAxes() {
    if (!compiledModel() || isBusy()) return;
    engine::DynamicAxesCheckOptions options;
    if (!readTolerance(options.tolerance)) return;
    const InputChoices choices = inputChoices();
    options.base = choices.symbols;
    options.seed = choices.seed;
    options.makeFeeds = feedMakerForOtherShapes(choices);
    awaiting_ = Awaiting::DynamicAxes;
    setSummary(dynamicSummary_, tr("Checking…"), -1);
    controller_->checkDynamicAxes(std::move(options));
}

void ComparePanel::setSummary(QLabel* label, const QString& text, int verdict) {
    label->setText(text);
    label->setStyleSheet(verdict < 0 ? QString()
                                     : QStringLiteral("color: %1; font-weight: bold;")
                                           .arg((verdict ? kPassColour : kFailColour).name()));
}

QString ComparePanel::summaryText() const { return summary_->text(); }
QString ComparePanel::dynamicAxesSummaryText() const { return dynamicSummary_->text(); }

void ComparePanel::updateEnabled() {
    QString whyNot;
    if (!controller_)
        whyNot = tr("Open a model to compare its outputs");
    else if (!compiledModel())
        whyNot = controller_->unavailableReason();
    else if (isBusy())
        whyNot = tr("%1 is busy: %2")
                     .arg(QFileInfo(controller_->document()->path).fileName(),
                          controller_->busyText().isEmpty() ? tr("another job")
                                                            : controller_->busyText());
    setAvailability(compareAction_, compareButton_,
                    tr("Run and compare every output with its reference (Ctrl+Shift+R)"), whyNot);
    setAvailability(dynamicAxesAction_, dynamicButton_,
                    tr("Run with batch 1 and 2 (and a second value for each other symbolic dim) "
                       "and check that the outputs follow (Ctrl+Shift+D)"),
                    whyNot);
    cancelButton_->setEnabled(isBusy());
}

void ComparePanel::showComparison(const std::shared_ptr<const CompareOutcome>& outcome) {
    comparison_ = outcome;
    results_->setRowCount(static_cast<int>(outcome->outputs.size()));
    int failures = 0;
    QStringList warnings;  // outputs whose pass proves little (near-zero or constant references)
    for (int row = 0; row < results_->rowCount(); ++row) {
        const auto& o = outcome->outputs[static_cast<std::size_t>(row)];
        const auto& r = o.result;
        failures += r.passed ? 0 : 1;
        if (!o.warning.empty())
            warnings << QStringLiteral("%1: %2").arg(QString::fromStdString(o.name),
                                                     QString::fromStdString(o.warning));
        results_->setItem(row, OutputColumn, cell(QString::fromStdString(o.name)));
        auto* verdict = cell(!r.passed ? tr("FAIL") : o.warning.empty() ? tr("pass") : tr("pass?"));
        verdict->setForeground(QBrush(r.passed && o.warning.empty() ? kPassColour : kFailColour));
        verdict->setToolTip(
            QString::fromStdString(r.problem.empty() ? o.warning : r.problem) +
            QStringLiteral("\n") +
            QString::fromStdString(engine::describeAgreement(r, outcome->tolerance)));
        results_->setItem(row, ResultColumn, verdict);
        results_->setItem(row, MaxAbsColumn, cell(figure(r.maxAbsError)));
        results_->setItem(row, MaxRelColumn, cell(figure(r.maxRelError)));
        results_->setItem(row, MeanAbsColumn, cell(figure(r.meanAbsError)));
        results_->setItem(row, OutsideColumn,
                          cell(tr("%1% (%2 of %3)")
                                   .arg(100.0 * r.fractionOutside, 0, 'g', 4)
                                   .arg(r.outsideCount)
                                   .arg(r.elementCount)));
        QString worst;
        if (!r.worstIndex.empty() || (r.elementCount == 1 && r.maxAbsError > 0))
            worst =
                tr("%1: %2 vs %3")
                    .arg(indexText(r.worstIndex), figure(r.worstActual), figure(r.worstExpected));
        else if (r.elementCount == 0)
            worst = QString::fromStdString(r.problem);
        results_->setItem(row, WorstColumn, cell(worst));
    }
    results_->resizeColumnsToContents();
    const auto& t = outcome->tolerance;
    if (failures == 0 && !warnings.isEmpty())
        setSummary(summary_,
                   tr("No output differs from %1 beyond |a − e| ≤ atol %2 + rtol %3 · |e|, but "
                      "the check proves little: %4")
                       .arg(outcome->source)
                       .arg(t.atol)
                       .arg(t.rtol)
                       .arg(warnings.join(QStringLiteral("; "))),
                   0);
    else if (failures == 0)
        setSummary(summary_,
                   tr("PASS: %n output(s) match %1 within |a − e| ≤ atol %2 + rtol %3 · |e| (run "
                      "%4 ms).",
                      nullptr, static_cast<int>(outcome->outputs.size()))
                       .arg(outcome->source)
                       .arg(t.atol)
                       .arg(t.rtol)
                       .arg(outcome->runMs, 0, 'f', 1),
                   1);
    else
        setSummary(summary_,
                   tr("FAIL: %1 of %2 output(s) differ from %3 beyond rtol %4, atol %5.")
                       .arg(failures)
                       .arg(outcome->outputs.size())
                       .arg(outcome->source)
                       .arg(t.rtol)
                       .arg(t.atol),
                   0);
    if (results_->rowCount() > 0) {
        results_->setCurrentCell(0, 0);
        showErrorHistogram(0);
    }
    emit compareFinished();
}

void ComparePanel::showErrorHistogram(int row) {
    if (!comparison_ || row < 0 || row >= static_cast<int>(comparison_->outputs.size())) return;
    const auto& o = comparison_->outputs[static_cast<std::size_t>(row)];
    errorHistogram_->setChart(makeHistogramChart(
        o.absoluteErrors, tr("Absolute errors of %1").arg(QString::fromStdString(o.name)),
        tr("|actual − expected|"), tr("not comparable element by element")));
}

void ComparePanel::showDynamicAxes(
    const std::shared_ptr<const engine::DynamicAxesCheckResult>& result) {
    dynamic_ = result;
    using Verdict = engine::DynamicAxesCheckResult::Verdict;
    QString text = QString::fromStdString(result->summary);
    QStringList runs;
    for (const auto& run : result->runs) {
        QStringList bindings;
        for (const auto& [symbol, value] : run.bindings)
            bindings << QStringLiteral("%1=%2").arg(QString::fromStdString(symbol)).arg(value);
        runs << QStringLiteral("%1 (%2)%3")
                    .arg(QString::fromStdString(run.label), bindings.join(QStringLiteral(", ")),
                         run.ok ? QString() : tr(": failed"));
    }
    if (!runs.isEmpty())
        text += QStringLiteral("\n") + tr("Runs: %1.").arg(runs.join(QStringLiteral("; ")));
    // Not proven either way (cannot tell, not exercised) is neither green nor red.
    const bool unproven =
        result->verdict == Verdict::CannotTell || result->verdict == Verdict::NotExercised;
    setSummary(dynamicSummary_, text, result->verdict == Verdict::Passed ? 1 : unproven ? -1 : 0);
    dynamicTable_->setRowCount(static_cast<int>(result->outputs.size()));
    for (int row = 0; row < dynamicTable_->rowCount(); ++row) {
        const auto& o = result->outputs[static_cast<std::size_t>(row)];
        dynamicTable_->setItem(row, DynOutputColumn, cell(QString::fromStdString(o.name)));
        dynamicTable_->setItem(row, DynDeclaredColumn, cell(QString::fromStdString(o.declared)));
        dynamicTable_->setItem(row, DynShapesColumn, cell(shapesText(o.shapes)));
        auto* follows =
            cell(o.shapesFollow ? tr("yes") : tr("no: %1").arg(QString::fromStdString(o.problem)));
        follows->setForeground(QBrush(o.shapesFollow ? kPassColour : kFailColour));
        QStringList moved;
        for (const auto& symbol : o.movedWith) moved << QString::fromStdString(symbol);
        follows->setToolTip(moved.isEmpty()
                                ? follows->text() + tr("; its shape never changed")
                                : follows->text() +
                                      tr("; its shape moved with %1").arg(moved.join(", ")));
        dynamicTable_->setItem(row, DynFollowColumn, follows);
        QString first = tr("not compared");
        if (o.firstItemCompared)
            first = (o.firstItem.passed ? tr("equal, max abs error %1")
                                        : tr("DIFFERENT, max abs error %1"))
                        .arg(figure(o.firstItem.maxAbsError));
        auto* firstItem = cell(first);
        if (o.firstItemCompared)
            firstItem->setForeground(QBrush(o.firstItem.passed ? kPassColour : kFailColour));
        dynamicTable_->setItem(row, DynFirstItemColumn, firstItem);
    }
    dynamicTable_->resizeColumnsToContents();
    emit dynamicAxesFinished();
}

}  // namespace onnxlens::widgets
