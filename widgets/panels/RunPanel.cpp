#include "widgets/panels/RunPanel.h"

#include <QAction>
#include <QComboBox>
#include <QCryptographicHash>
#include <QDateTime>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableWidget>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <cmath>
#include <set>

#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/TensorFile.h"
#include "widgets/panels/ActionAvailability.h"

namespace onnxlens::widgets {

namespace {

enum DimColumn { DimSymbolColumn, DimValueColumn, DimUsedByColumn };

QTableWidgetItem* readOnlyItem(const QString& text) {
    auto* item = new QTableWidgetItem(text);
    item->setFlags(item->flags() & ~Qt::ItemIsEditable);
    return item;
}

bool acceptsImage(const onnx::TypeProto& type) {
    if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return false;
    const auto& dims = type.tensor_type().shape().dim();
    return dims.size() == 4 && engine::isFloatingPoint(engine::dataTypeOfTypeProto(type)) &&
           (!dims[1].has_dim_value() || dims[1].dim_value() == 1 || dims[1].dim_value() == 3);
}

// "-1, 1" -> {-1, 1}; false when it is not two numbers in order.
bool parseRange(const QString& text, double& low, double& high) {
    const QStringList parts = text.split(QLatin1Char(','));
    if (parts.size() != 2) return false;
    bool okLow = false, okHigh = false;
    low = parts[0].trimmed().toDouble(&okLow);
    high = parts[1].trimmed().toDouble(&okHigh);
    return okLow && okHigh && std::isfinite(low) && std::isfinite(high) && low <= high;
}

bool parseTriple(const QString& text, std::array<double, 3>& out) {
    const QStringList parts = text.split(QLatin1Char(','));
    if (parts.size() != 3) return false;
    for (int i = 0; i < 3; ++i) {
        bool ok = false;
        out[static_cast<std::size_t>(i)] = parts[i].trimmed().toDouble(&ok);
        if (!ok) return false;
    }
    return true;
}

QLineEdit* settingEdit(QTableWidget* table, int row) {
    QWidget* cell = table->cellWidget(row, RunPanel::SettingColumn);
    return cell ? cell->findChild<QLineEdit*>() : nullptr;
}

QToolButton* browseButton(QTableWidget* table, int row) {
    QWidget* cell = table->cellWidget(row, RunPanel::SettingColumn);
    return cell ? cell->findChild<QToolButton*>() : nullptr;
}

QComboBox* sourceCombo(QTableWidget* table, int row) {
    return qobject_cast<QComboBox*>(table->cellWidget(row, RunPanel::SourceColumn));
}

// The graph's inputs (initializers are not inputs), for a model the engine did not compile: the
// rows still say what the model takes.
std::vector<engine::Session::IoInfo> declaredInputs(const onnx::ModelProto& model) {
    std::set<std::string> initializers;
    for (const auto& t : model.graph().initializer()) initializers.insert(t.name());
    std::vector<engine::Session::IoInfo> inputs;
    for (const auto& v : model.graph().input())
        if (!initializers.count(v.name())) inputs.push_back({v.name(), v.type()});
    return inputs;
}

}  // namespace

RunPanel::RunPanel(QWidget* parent) : QWidget(parent) {
    buildActions();
    modelLabel_ = new QLabel(tr("No model"), this);
    modelLabel_->setWordWrap(true);
    auto* splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(buildInputsBox());
    outputsView_ = new RunOutputsView(this);
    splitter->addWidget(outputsView_);
    splitter->setChildrenCollapsible(false);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(modelLabel_);
    layout->addLayout(buildRunRow());
    layout->addWidget(splitter, 1);
    updateRunAvailability();
}

void RunPanel::buildActions() {
    runAction_ = new QAction(tr("&Run"), this);
    runAction_->setShortcut(QKeySequence(tr("Ctrl+R")));
    cancelAction_ = new QAction(tr("&Cancel Run"), this);
    cancelAction_->setShortcut(QKeySequence(Qt::Key_Escape));
    cancelAction_->setEnabled(false);
    connect(runAction_, &QAction::triggered, this, &RunPanel::run);
    connect(cancelAction_, &QAction::triggered, this, &RunPanel::cancel);
}

QWidget* RunPanel::buildInputsBox() {
    inputs_ = new QTableWidget(0, 5, this);
    inputs_->setObjectName(QStringLiteral("runInputs"));
    inputs_->setHorizontalHeaderLabels(
        {tr("Input"), tr("Type"), tr("Source"), tr("Range / file"), tr("Status")});
    inputs_->horizontalHeader()->setSectionResizeMode(SettingColumn, QHeaderView::Stretch);
    inputs_->horizontalHeader()->setSectionResizeMode(StatusColumn, QHeaderView::Stretch);
    inputs_->verticalHeader()->hide();
    inputs_->setSelectionMode(QAbstractItemView::NoSelection);

    dims_ = new QTableWidget(0, 3, this);
    dims_->setObjectName(QStringLiteral("runDims"));
    dims_->setHorizontalHeaderLabels({tr("Symbol"), tr("Value"), tr("Used by")});
    dims_->horizontalHeader()->setStretchLastSection(true);
    dims_->verticalHeader()->hide();

    seed_ = new QSpinBox(this);
    seed_->setRange(0, std::numeric_limits<int>::max());
    seed_->setToolTip(tr("Random inputs are seeded: input k uses seed + k"));
    dataSets_ = new QComboBox(this);
    dataSets_->setToolTip(tr("test_data_set_* folders beside the model"));
    auto* fillButton = new QPushButton(tr("Use"), this);
    fillButton->setToolTip(tr("Set every input to the files of the chosen test data set"));
    connect(fillButton, &QPushButton::clicked, this, [this] {
        if (QString error = fillFromDataSet(dataSets_->currentIndex()); !error.isEmpty())
            setStatus(error, true);
    });
    auto* folderButton = new QPushButton(tr("Folder…"), this);
    connect(folderButton, &QPushButton::clicked, this, [this] {
        const QString start = document_ ? QFileInfo(document_->path).absolutePath() : QString();
        const QString folder =
            QFileDialog::getExistingDirectory(this, tr("Test data set folder"), start);
        if (folder.isEmpty()) return;
        if (QString error = fillFromFolder(folder); !error.isEmpty()) setStatus(error, true);
    });
    auto* dataSetRow = new QHBoxLayout;
    dataSetRow->addWidget(dataSets_, 1);
    dataSetRow->addWidget(fillButton);
    dataSetRow->addWidget(folderButton);

    imageScaling_ = new QComboBox(this);
    imageScaling_->addItems({tr("ImageNet mean/std"), tr("0..1"), tr("Custom mean/std")});
    imageMean_ = new QLineEdit(QStringLiteral("0.485, 0.456, 0.406"), this);
    imageStd_ = new QLineEdit(QStringLiteral("0.229, 0.224, 0.225"), this);
    auto syncImageEdits = [this] {
        const bool custom = imageScaling_->currentIndex() == 2;
        imageMean_->setEnabled(custom);
        imageStd_->setEnabled(custom);
        QSettings().setValue(QStringLiteral("run/imageScaling"), imageScaling_->currentIndex());
    };
    connect(imageScaling_, &QComboBox::currentIndexChanged, this, syncImageEdits);
    imageScaling_->setCurrentIndex(
        QSettings().value(QStringLiteral("run/imageScaling"), 0).toInt());
    syncImageEdits();

    auto* options = new QFormLayout;
    options->addRow(tr("Seed"), seed_);
    options->addRow(tr("Data set"), dataSetRow);
    options->addRow(tr("Image scaling"), imageScaling_);
    options->addRow(tr("Image mean"), imageMean_);
    options->addRow(tr("Image std"), imageStd_);
    auto* dimsAndOptions = new QHBoxLayout;
    dimsAndOptions->addWidget(dims_, 1);
    dimsAndOptions->addLayout(options, 1);
    auto* inputsBox = new QGroupBox(tr("Inputs"), this);
    auto* inputsLayout = new QVBoxLayout(inputsBox);
    inputsLayout->addWidget(inputs_, 2);
    inputsLayout->addLayout(dimsAndOptions, 1);
    // Compare and Benchmark use what is chosen here: every change goes to the controller.
    connect(imageMean_, &QLineEdit::textChanged, this, [this] { publishChoices(); });
    connect(imageStd_, &QLineEdit::textChanged, this, [this] { publishChoices(); });
    connect(imageScaling_, &QComboBox::currentIndexChanged, this, [this] { publishChoices(); });
    connect(seed_, &QSpinBox::valueChanged, this, [this] { publishChoices(); });
    return inputsBox;
}

QLayout* RunPanel::buildRunRow() {
    runButton_ = new QPushButton(tr("Run"), this);
    runButton_->setEnabled(false);
    cancelButton_ = new QPushButton(tr("Cancel"), this);
    cancelButton_->setToolTip(tr("Stop the run between two nodes (Esc)"));
    cancelButton_->setEnabled(false);
    connect(runButton_, &QPushButton::clicked, this, &RunPanel::run);
    connect(cancelButton_, &QPushButton::clicked, this, &RunPanel::cancel);
    runAnywayButton_ = new QPushButton(tr("Run anyway"), this);
    runAnywayButton_->setObjectName(QStringLiteral("runAnyway"));
    runAnywayButton_->setToolTip(
        tr("Compile the model although it imports an opset newer than the engine knows"));
    runAnywayButton_->hide();
    connect(runAnywayButton_, &QPushButton::clicked, this, &RunPanel::runAnyway);
    progress_ = new QProgressBar(this);
    progress_->setRange(0, 1);
    progress_->setValue(0);
    progress_->setTextVisible(false);
    progress_->setMaximumWidth(160);
    status_ = new QLabel(this);
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* runRow = new QHBoxLayout;
    runRow->addWidget(runButton_);
    runRow->addWidget(cancelButton_);
    runRow->addWidget(runAnywayButton_);
    runRow->addWidget(progress_);
    runRow->addWidget(status_, 1);
    elapsedTimer_ = new QTimer(this);
    elapsedTimer_->setInterval(100);
    connect(elapsedTimer_, &QTimer::timeout, this, [this] {
        const double seconds =
            static_cast<double>(QDateTime::currentMSecsSinceEpoch() - startedMs_) / 1000.0;
        setStatus(tr("%1… %2 s").arg(busyWhat_).arg(seconds, 0, 'f', 1));
    });

    return runRow;
}

RunPanel::~RunPanel() = default;

void RunPanel::clearModel() {
    compiled_.reset();
    outcome_.reset();
    listed_.clear();
    inputs_->setRowCount(0);
    dims_->setRowCount(0);
    outputsView_->clear();
    dataSets_->clear();
    runAnywayButton_->hide();
    updateRunAvailability();
}

void RunPanel::updateRunAvailability() {
    QString whyNot;
    if (!controller_)
        whyNot = tr("Open a model to run it");
    else if (!compiled_)
        whyNot = controller_->unavailableReason();
    else if (busy_)
        whyNot = tr("%1 is busy: %2")
                     .arg(QFileInfo(document_->path).fileName(),
                          busyWhat_.isEmpty() ? tr("another job") : busyWhat_);
    setAvailability(runAction_, runButton_, tr("Run the model on the chosen inputs (Ctrl+R)"),
                    whyNot);
}

void RunPanel::setController(ModelController* controller) {
    if (controller == controller_) return;
    if (controller_) controller_->disconnect(this);
    controller_ = controller;
    document_ = controller_ ? controller_->document() : nullptr;
    awaitingRun_ = false;
    clearModel();
    if (!controller_) {
        modelLabel_->setText(tr("No model"));
        setStatus(QString());
        setBusy(false);
        return;
    }
    modelLabel_->setText(
        QStringLiteral("<b>%1</b>").arg(QFileInfo(document_->path).fileName().toHtmlEscaped()));
    connectController();
    setStatus(QString());
    if (controller_->isReady()) {
        onCompiled();
    } else if (!controller_->compileError().isEmpty()) {
        showCompileError(controller_->compileError());
    } else {
        setStatus(tr("Compiling…"));
        controller_->compile();
    }
    if (controller_->lastRun()) showOutcome(controller_->lastRun());
    awaitingRun_ = controller_->isRunning(EngineJob::Run);
    setBusy(controller_->isBusy(), controller_->busyText());
}

void RunPanel::showCompileError(const QString& message) {
    // The rows still say what the model takes, though it cannot run.
    if (document_ && document_->loaded.proto) {
        listed_ = declaredInputs(*document_->loaded.proto);
        applyingChoices_ = true;
        buildInputs();
        buildDims();
        applyingChoices_ = false;
    }
    updateRunAvailability();
    const bool newerOpset = message == controller_->newerOpsetProblem();
    runAnywayButton_->setVisible(newerOpset);
    setStatus(newerOpset ? message + tr(" Run anyway runs it as the newest operator versions the "
                                        "engine knows; the results may be wrong.")
                         : tr("The engine cannot run this model: %1").arg(message),
              true);
}

void RunPanel::runAnyway() {
    if (!controller_) return;
    runAnywayButton_->hide();
    setStatus(tr("Compiling…"));
    controller_->allowNewerOpset();
}

void RunPanel::connectController() {
    connect(controller_, &ModelController::started, this,
            [this](const QString& what) { setBusy(true, what); });
    connect(controller_, &ModelController::busyChanged, this, [this](bool busy) {
        if (!busy) setBusy(false);
    });
    connect(controller_, &ModelController::progress, this,
            [this](const QString& what, int step, int steps) {
                progress_->setRange(0, steps);
                progress_->setValue(step - 1);
                busyWhat_ = tr("%1 (%2 of %3)").arg(what).arg(step).arg(steps);
            });
    connect(controller_, &ModelController::compiled, this, &RunPanel::onCompiled);
    connect(controller_, &ModelController::compileFailed, this, [this](const QString& message) {
        clearModel();
        showCompileError(message);
        emit compileFailed(message);
    });
    connect(controller_, &ModelController::dataSetsChanged, this, [this] {
        compiled_ = controller_->compiledModel();
        const QSignalBlocker quiet(dataSets_);
        dataSets_->clear();
        for (const auto& set : compiled_->dataSets)
            dataSets_->addItem(QString::fromStdString(set.directory.filename().string()));
        dataSets_->setEnabled(!compiled_->dataSets.empty());
        dataSets_->setCurrentIndex(dataSets_->count() - 1);
    });
    connect(controller_, &ModelController::runFinished, this, [this] {
        awaitingRun_ = false;
        onRunFinished(controller_->lastRun());
    });
    connect(
        controller_, &ModelController::inputsRejected, this,
        [this](EngineJob job, std::shared_ptr<const std::map<std::string, std::string>> problems) {
            if (job != EngineJob::Run) return;
            awaitingRun_ = false;
            onInputsRejected(*problems);
        });
    connect(controller_, &ModelController::failed, this,
            [this](EngineJob job, const QString& message) {
                if (job != EngineJob::Run) return;
                awaitingRun_ = false;
                setStatus(tr("Run failed: %1").arg(message), true);
                emit runFailed(message);
            });
    connect(controller_, &ModelController::cancelled, this, [this](EngineJob job) {
        if (job != EngineJob::Run) return;
        awaitingRun_ = false;
        setStatus(tr("Run cancelled."));
        emit runCancelled();
    });
}

void RunPanel::onCompiled() {
    compiled_ = controller_->compiledModel();
    listed_ = compiled_->inputs;
    applyingChoices_ = true;  // the rows' defaults must not replace the controller's choices
    buildInputs();
    buildDims();
    applyingChoices_ = false;
    if (controller_->inputChoices()) applyChoices(*controller_->inputChoices());
    publishChoices();
    runAnywayButton_->hide();
    const QString ready = tr("Ready: compiled in %1 ms, %2 threads")
                              .arg(compiled_->compileMs, 0, 'f', 0)
                              .arg(compiled_->threads);
    if (controller_->isNewerOpsetAllowed())
        setStatus(ready + tr(". Warning: %1 It runs as the newest operator versions the engine "
                             "knows.")
                              .arg(controller_->newerOpsetProblem()),
                  true);
    else
        setStatus(ready);
    setBusy(busy_, busyWhat_);  // the Run button follows the compiled model
    emit compiled();
}

void RunPanel::applyChoices(const InputChoices& choices) {
    applyingChoices_ = true;
    for (const auto& [name, source] : choices.sources)
        setInputSource(QString::fromStdString(name), source);
    for (const auto& [symbol, value] : choices.symbols)
        setSymbolValue(QString::fromStdString(symbol), value);
    seed_->setValue(static_cast<int>(choices.seed));
    setImagePreprocessing(choices.image);
    applyingChoices_ = false;
}

void RunPanel::publishChoices() {
    if (applyingChoices_ || !controller_ || !compiled_) return;
    controller_->setInputChoices(currentChoices());
}

QString RunPanel::settingsGroup() const {
    const QByteArray key =
        QCryptographicHash::hash(document_ ? document_->path.toUtf8() : QByteArray(),
                                 QCryptographicHash::Sha1)
            .toHex()
            .left(16);
    return QStringLiteral("run/models/") + QString::fromLatin1(key);
}

std::pair<double, double> RunPanel::randomRangeFor(int row) const {
    const auto& input = listed_[static_cast<std::size_t>(row)];
    const engine::DataType dtype = engine::dataTypeOfTypeProto(input.type);
    if (auto it = indexRanges_.find(input.name);
        it != indexRanges_.end() && engine::isInteger(dtype))
        return {it->second.low, it->second.high};
    return defaultRandomRange(dtype);
}

void RunPanel::buildInputs() {
    inputs_->setRowCount(0);
    // Integer inputs that index a table (an embedding, a one-hot depth) start inside it.
    indexRanges_ = document_ && document_->loaded.proto
                       ? engine::inferIndexRanges(document_->loaded.proto->graph())
                       : engine::ValueRanges{};
    decoder_ = document_ && document_->loaded.proto
                   ? decoderRunInputs(document_->loaded.proto->graph())
                   : std::nullopt;
    const auto& inputs = listed_;
    inputs_->setRowCount(static_cast<int>(inputs.size()));
    for (int row = 0; row < inputs_->rowCount(); ++row) {
        const auto& input = inputs[static_cast<std::size_t>(row)];
        inputs_->setItem(row, NameColumn, readOnlyItem(QString::fromStdString(input.name)));
        const engine::DataType dtype = engine::dataTypeOfTypeProto(input.type);
        inputs_->setItem(row, TypeColumn,
                         readOnlyItem(QStringLiteral("%1 %2").arg(
                             QString::fromLatin1(engine::dataTypeName(dtype)),
                             QString::fromStdString(engine::describeDeclaredShape(input.type)))));
        auto* combo = new QComboBox(inputs_);
        combo->addItems({tr("Random"), tr("Zeros"), tr("Ones"), tr("File (.pb/.npy)"), tr("Image"),
                         tr("Positions (0, 1, …)")});
        if (!acceptsImage(input.type))  // only a 4-D float input [N, 1|3, H, W] takes an image
            qobject_cast<QStandardItemModel*>(combo->model())->item(4)->setEnabled(false);
        inputs_->setCellWidget(row, SourceColumn, combo);
        auto* cell = new QWidget(inputs_);
        auto* edit = new QLineEdit(cell);
        auto* browse = new QToolButton(cell);
        browse->setText(QStringLiteral("…"));
        browse->setToolTip(tr("Choose a file"));
        auto* cellLayout = new QHBoxLayout(cell);
        cellLayout->setContentsMargins(0, 0, 0, 0);
        cellLayout->setSpacing(2);
        cellLayout->addWidget(edit, 1);
        cellLayout->addWidget(browse);
        inputs_->setCellWidget(row, SettingColumn, cell);
        const auto [low, high] = randomRangeFor(row);
        edit->setText(QStringLiteral("%1, %2").arg(low).arg(high));
        if (auto it = indexRanges_.find(input.name); it != indexRanges_.end())
            edit->setToolTip(tr("Random values %1..%2: the input %3")
                                 .arg(low)
                                 .arg(high)
                                 .arg(QString::fromStdString(it->second.reason)));
        inputs_->setItem(row, StatusColumn, readOnlyItem(QString()));
        connect(combo, &QComboBox::currentIndexChanged, this,
                [this, row] { onSourceChanged(row); });
        connect(browse, &QToolButton::clicked, this, [this, row] { chooseFileFor(row); });
        connect(edit, &QLineEdit::textEdited, this,
                [this, row] { setRowStatus(row, QString(), false); });
        connect(edit, &QLineEdit::textChanged, this, [this] { publishChoices(); });
        onSourceChanged(row);
    }
    inputs_->resizeColumnsToContents();
    dataSets_->clear();
    const std::vector<TestDataSet> none;
    const auto& sets = compiled_ ? compiled_->dataSets : none;
    for (const auto& set : sets)
        dataSets_->addItem(QString::fromStdString(set.directory.filename().string()));
    if (sets.empty()) dataSets_->addItem(tr("(none beside the model)"));
    dataSets_->setEnabled(!sets.empty());
    updateRunAvailability();
}

void RunPanel::buildDims() {
    dims_->setRowCount(0);
    const std::vector<std::string> symbols = engine::inputSymbols(listed_);
    QSettings settings;
    settings.beginGroup(settingsGroup());
    seed_->setValue(settings.value(QStringLiteral("seed"), 0).toInt());
    for (const auto& symbol : symbols) {
        const int row = dims_->rowCount();
        dims_->insertRow(row);
        const QString name = QString::fromStdString(symbol);
        dims_->setItem(row, DimSymbolColumn, readOnlyItem(name));
        auto* spin = new QSpinBox(dims_);
        spin->setRange(1, 1'000'000);
        spin->setValue(settings.value(QStringLiteral("dims/") + name, 1).toInt());
        dims_->setCellWidget(row, DimValueColumn, spin);
        QStringList usedBy;
        for (const auto& input : listed_) {
            if (!input.type.has_tensor_type()) continue;
            const auto& dims = input.type.tensor_type().shape().dim();
            for (int d = 0; d < dims.size(); ++d)
                if (dims[d].has_dim_param() && dims[d].dim_param() == symbol)
                    usedBy
                        << QStringLiteral("%1[%2]").arg(QString::fromStdString(input.name)).arg(d);
        }
        dims_->setItem(row, DimUsedByColumn, readOnlyItem(usedBy.join(QStringLiteral(", "))));
        connect(spin, &QSpinBox::valueChanged, this, [this] { saveDims(); });
    }
    // Unnamed (`?`) dims, one row per input and axis, named by their binding key "input:axis".
    for (const auto& key : engine::unknownInputDims(listed_)) {
        const int row = dims_->rowCount();
        dims_->insertRow(row);
        const QString name = QString::fromStdString(key);
        auto* item = readOnlyItem(name);
        item->setToolTip(tr("An unnamed (?) dim: the model does not say what it is"));
        dims_->setItem(row, DimSymbolColumn, item);
        auto* spin = new QSpinBox(dims_);
        spin->setRange(1, 1'000'000);
        spin->setValue(settings.value(QStringLiteral("dims/") + name, 1).toInt());
        dims_->setCellWidget(row, DimValueColumn, spin);
        const int colon = name.lastIndexOf(QLatin1Char(':'));
        dims_->setItem(
            row, DimUsedByColumn,
            readOnlyItem(tr("%1[%2] (unnamed ?)").arg(name.left(colon), name.mid(colon + 1))));
        connect(spin, &QSpinBox::valueChanged, this, [this] { saveDims(); });
    }
    settings.endGroup();
    // A member function, not a lambda: Qt makes unique connections only of those (a lambda with
    // Qt::UniqueConnection is refused at run time, and the seed was never remembered).
    connect(seed_, &QSpinBox::valueChanged, this, &RunPanel::saveDims, Qt::UniqueConnection);
    applyDecoderDefaults();
    dims_->resizeColumnsToContents();
}

void RunPanel::saveDims() {
    publishChoices();
    if (!document_) return;
    QSettings settings;
    settings.beginGroup(settingsGroup());
    settings.setValue(QStringLiteral("seed"), seed_->value());
    for (int row = 0; row < dims_->rowCount(); ++row)
        if (auto* spin = qobject_cast<QSpinBox*>(dims_->cellWidget(row, DimValueColumn)))
            settings.setValue(QStringLiteral("dims/") + dims_->item(row, DimSymbolColumn)->text(),
                              spin->value());
}

QStringList RunPanel::symbols() const {
    QStringList list;
    for (int row = 0; row < dims_->rowCount(); ++row)
        list << dims_->item(row, DimSymbolColumn)->text();
    return list;
}

qint64 RunPanel::symbolValue(const QString& symbol) const {
    for (int row = 0; row < dims_->rowCount(); ++row)
        if (dims_->item(row, DimSymbolColumn)->text() == symbol)
            return qobject_cast<QSpinBox*>(dims_->cellWidget(row, DimValueColumn))->value();
    return -1;
}

void RunPanel::setSymbolValue(const QString& symbol, qint64 value) {
    for (int row = 0; row < dims_->rowCount(); ++row)
        if (dims_->item(row, DimSymbolColumn)->text() == symbol)
            qobject_cast<QSpinBox*>(dims_->cellWidget(row, DimValueColumn))
                ->setValue(static_cast<int>(value));
}

engine::SymbolBindings RunPanel::symbolBindings() const {
    engine::SymbolBindings bindings;
    for (int row = 0; row < dims_->rowCount(); ++row)
        bindings[dims_->item(row, DimSymbolColumn)->text().toStdString()] =
            qobject_cast<QSpinBox*>(dims_->cellWidget(row, DimValueColumn))->value();
    return bindings;
}

int RunPanel::rowOf(const QString& input) const {
    for (int row = 0; row < inputs_->rowCount(); ++row)
        if (inputs_->item(row, NameColumn)->text() == input) return row;
    return -1;
}

void RunPanel::onSourceChanged(int row) {
    const auto kind = static_cast<InputSource::Kind>(sourceCombo(inputs_, row)->currentIndex());
    QLineEdit* edit = settingEdit(inputs_, row);
    const bool usesFile = kind == InputSource::Kind::File || kind == InputSource::Kind::Image;
    edit->setEnabled(kind == InputSource::Kind::Random || usesFile);
    browseButton(inputs_, row)->setEnabled(usesFile);
    if (kind == InputSource::Kind::Random) {
        double low, high;
        if (!parseRange(edit->text(), low, high)) {
            const auto range = randomRangeFor(row);
            edit->setText(QStringLiteral("%1, %2").arg(range.first).arg(range.second));
        }
        edit->setPlaceholderText(tr("min, max"));
    } else if (usesFile) {
        double low, high;
        if (parseRange(edit->text(), low, high)) edit->clear();
        edit->setPlaceholderText(kind == InputSource::Kind::File ? tr(".pb or .npy file")
                                                                 : tr("image file"));
    }
    setRowStatus(row, QString(), false);
    publishChoices();
}

void RunPanel::chooseFileFor(int row) {
    const auto kind = static_cast<InputSource::Kind>(sourceCombo(inputs_, row)->currentIndex());
    const QString start = document_ ? QFileInfo(document_->path).absolutePath() : QString();
    const QString filter =
        kind == InputSource::Kind::Image
            ? tr("Images (*.png *.jpg *.jpeg *.bmp *.gif *.ppm *.pgm);;All files (*)")
            : tr("Tensors (*.pb *.npy);;All files (*)");
    const QString file = QFileDialog::getOpenFileName(
        this, tr("Input %1").arg(inputs_->item(row, NameColumn)->text()), start, filter);
    if (!file.isEmpty()) settingEdit(inputs_, row)->setText(file);
}

void RunPanel::setInputSource(const QString& input, const InputSource& source) {
    const int row = rowOf(input);
    if (row < 0) return;
    sourceCombo(inputs_, row)->setCurrentIndex(static_cast<int>(source.kind));
    onSourceChanged(row);
    QLineEdit* edit = settingEdit(inputs_, row);
    if (source.kind == InputSource::Kind::Random)
        edit->setText(QStringLiteral("%1, %2").arg(source.low).arg(source.high));
    else if (source.kind == InputSource::Kind::File || source.kind == InputSource::Kind::Image)
        edit->setText(QString::fromStdString(source.file.string()));
}

InputSource RunPanel::inputSource(const QString& input) const {
    InputSource source;
    const int row = rowOf(input);
    if (row < 0) return source;
    source.kind = static_cast<InputSource::Kind>(sourceCombo(inputs_, row)->currentIndex());
    const QString text = settingEdit(inputs_, row)->text().trimmed();
    if (source.kind == InputSource::Kind::Random) {
        if (!parseRange(text, source.low, source.high))
            std::tie(source.low, source.high) = randomRangeFor(row);
    } else if (source.kind == InputSource::Kind::File || source.kind == InputSource::Kind::Image) {
        source.file = text.toStdString();
    }
    return source;
}

QString RunPanel::inputStatus(const QString& input) const {
    const int row = rowOf(input);
    return row < 0 ? QString() : inputs_->item(row, StatusColumn)->text();
}

bool RunPanel::inputHasError(const QString& input) const {
    const int row = rowOf(input);
    return row >= 0 && inputs_->item(row, StatusColumn)->data(Qt::UserRole).toBool();
}

void RunPanel::setRowStatus(int row, const QString& text, bool error) {
    QTableWidgetItem* item = inputs_->item(row, StatusColumn);
    if (!item) return;
    item->setText(text);
    item->setToolTip(text);
    item->setData(Qt::UserRole, error);
    item->setForeground(error ? QBrush(QColor(190, 30, 30)) : palette().brush(QPalette::Text));
}

void RunPanel::setSeed(quint64 seed) { seed_->setValue(static_cast<int>(seed)); }
quint64 RunPanel::seed() const { return static_cast<quint64>(seed_->value()); }

void RunPanel::setImagePreprocessing(const ImagePreprocessing& preprocessing) {
    imageScaling_->setCurrentIndex(static_cast<int>(preprocessing.scaling));
    auto triple = [](const std::array<double, 3>& v) {
        return QStringLiteral("%1, %2, %3").arg(v[0]).arg(v[1]).arg(v[2]);
    };
    imageMean_->setText(triple(preprocessing.mean));
    imageStd_->setText(triple(preprocessing.std));
}

QString RunPanel::fillFromDataSet(int index) {
    if (!compiled_ || index < 0 || index >= static_cast<int>(compiled_->dataSets.size()))
        return tr("No test data set beside the model.");
    const TestDataSet& set = compiled_->dataSets[static_cast<std::size_t>(index)];
    std::map<std::string, engine::Value> feeds;  // to read the shapes: test data is small
    for (std::size_t i = 0; i < set.inputFiles.size() && i < set.inputNames.size(); ++i) {
        InputSource source;
        source.kind = InputSource::Kind::File;
        source.file = set.inputFiles[i];
        setInputSource(QString::fromStdString(set.inputNames[i]), source);
        auto proto = readTensorFile(set.inputFiles[i]);
        if (!proto) continue;  // a broken file is the run's to report, on its row
        try {
            feeds.emplace(set.inputNames[i], engine::tensorFromProto(*proto));
        } catch (const std::exception&) {
        }
    }
    // The symbol table follows the data set's shapes (sequence = 128, not the 1 it had), so
    // that what the table says is what runs, and Compare and Benchmark use the same.
    for (const auto& [symbol, value] : engine::bindingsOfFeeds(listed_, feeds))
        setSymbolValue(QString::fromStdString(symbol), value);
    setStatus(tr("Inputs from %1").arg(QString::fromStdString(set.directory.filename().string())));
    return {};
}

QString RunPanel::fillFromFolder(const QString& folder) {
    if (!document_ || !compiled_) return tr("No model is compiled yet.");
    // Lists the folder (names only, no tensor data is read here).
    auto set = readTestDataSetFolder(folder.toStdString(), *document_->loaded.proto);
    if (!set) return QString::fromStdString(set.error().message);
    if (set->inputFiles.empty()) return tr("%1 holds no input_N.pb / .npy files").arg(folder);
    controller_->addDataSet(std::move(*set));  // dataSetsChanged() lists it here
    return fillFromDataSet(static_cast<int>(compiled_->dataSets.size()) - 1);
}

InputChoices RunPanel::currentChoices() const {
    InputChoices choices;
    if (!compiled_) return choices;
    choices.inputs = compiled_->inputs;
    for (const auto& input : compiled_->inputs) {
        const QString name = QString::fromStdString(input.name);
        choices.sources[input.name] = inputSource(name);
    }
    choices.symbols = symbolBindings();
    choices.integerRanges = indexRanges_;
    if (decoder_) applyDecoderRunInputs(*decoder_, choices);
    choices.seed = static_cast<std::uint64_t>(seed_->value());
    choices.image.scaling = static_cast<ImagePreprocessing::Scaling>(imageScaling_->currentIndex());
    if (choices.image.scaling == ImagePreprocessing::Scaling::Custom) {
        parseTriple(imageMean_->text(), choices.image.mean);
        parseTriple(imageStd_->text(), choices.image.std);
    }
    return choices;
}

void RunPanel::run() {
    if (!compiled_ || busy_) return;
    bool valid = true;
    for (int row = 0; row < inputs_->rowCount(); ++row) {
        setRowStatus(row, QString(), false);
        const auto kind = static_cast<InputSource::Kind>(sourceCombo(inputs_, row)->currentIndex());
        const QString text = settingEdit(inputs_, row)->text().trimmed();
        double low, high;
        if (kind == InputSource::Kind::Random && !parseRange(text, low, high)) {
            setRowStatus(row, tr("the range must be two numbers, min ≤ max: \"-1, 1\""), true);
            valid = false;
        } else if ((kind == InputSource::Kind::File || kind == InputSource::Kind::Image) &&
                   text.isEmpty()) {
            setRowStatus(row, tr("choose a file"), true);
            valid = false;
        }
    }
    std::array<double, 3> triple;
    if (imageScaling_->currentIndex() == 2 &&
        (!parseTriple(imageMean_->text(), triple) || !parseTriple(imageStd_->text(), triple))) {
        setStatus(tr("The image mean and std must be three numbers each: \"0.5, 0.5, 0.5\"."),
                  true);
        return;
    }
    if (!valid) {
        setStatus(tr("Fix the inputs marked in red."), true);
        return;
    }
    awaitingRun_ = true;
    publishChoices();
    controller_->run();
}

void RunPanel::cancel() {
    if (!busy_ || !controller_) return;
    controller_->cancel();
    busyWhat_ = tr("Cancelling");
}

void RunPanel::setBusy(bool busy, const QString& what) {
    if (busy) {
        busyWhat_ = what;
        if (!busy_) startedMs_ = QDateTime::currentMSecsSinceEpoch();
        progress_->setRange(0, 0);  // indeterminate until a job reports steps
        elapsedTimer_->start();
    } else {
        progress_->setRange(0, 1);
        progress_->setValue(0);
        elapsedTimer_->stop();
    }
    const bool changed = busy_ != busy;
    busy_ = busy;
    updateRunAvailability();
    cancelButton_->setEnabled(busy);
    cancelAction_->setEnabled(busy);
    if (changed) emit busyChanged(busy);
}

void RunPanel::setStatus(const QString& text, bool error) {
    status_->setText(text);
    status_->setStyleSheet(error ? QStringLiteral("color: #b01e1e;") : QString());
}

QString RunPanel::statusText() const { return status_->text(); }

void RunPanel::onInputsRejected(const std::map<std::string, std::string>& problems) {
    for (const auto& [name, problem] : problems) {
        const int row = rowOf(QString::fromStdString(name));
        if (row >= 0) setRowStatus(row, QString::fromStdString(problem), true);
    }
    setStatus(tr("%n input(s) could not be made; see the rows marked in red.", nullptr,
                 static_cast<int>(problems.size())),
              true);
    emit runFailed(statusText());
}

void RunPanel::onRunFinished(const std::shared_ptr<const RunOutcome>& outcome) {
    showOutcome(outcome);
    emit runFinished();
}

void RunPanel::showOutcome(const std::shared_ptr<const RunOutcome>& outcome) {
    outcome_ = outcome;
    for (int row = 0; row < inputs_->rowCount(); ++row) {
        auto it = outcome->feedShapes.find(inputs_->item(row, NameColumn)->text().toStdString());
        setRowStatus(
            row,
            it == outcome->feedShapes.end()
                ? tr("ok")
                : tr("ok, %1").arg(QString::fromStdString(engine::shapeToString(it->second))),
            false);
    }
    outputsView_->show(outcome);
    setStatus(tr("Ran in %1 ms (inputs made in %2 ms)")
                  .arg(outcome->runMs, 0, 'f', 1)
                  .arg(outcome->prepareMs, 0, 'f', 1));
}

void RunPanel::showOutput(int index) { outputsView_->showOutput(index); }

}  // namespace onnxlens::widgets
