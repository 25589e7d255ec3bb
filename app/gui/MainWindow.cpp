#include "MainWindow.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QShortcut>
#include <QShowEvent>
#include <QSignalBlocker>
#include <QStatusBar>
#include <QTabWidget>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

#include "buildinfo/BuildInfo.h"
#include "onnxlens/model/NodeNames.h"
#include "widgets/dialogs/AboutDialog.h"
#include "widgets/dialogs/ExportDialog.h"
#include "widgets/dialogs/QuantizeDialog.h"
#include "widgets/dialogs/SettingsDialog.h"
#include "widgets/dialogs/ShortcutsDialog.h"
#include "widgets/edit/EditActions.h"
#include "widgets/edit/EditController.h"
#include "widgets/graph/DiffLegend.h"
#include "widgets/graph/GraphExport.h"
#include "widgets/graph/GraphPage.h"
#include "widgets/graph/GraphScene.h"
#include "widgets/graph/GraphView.h"
#include "widgets/panels/BenchmarkPanel.h"
#include "widgets/panels/ComparePanel.h"
#include "widgets/panels/MemoryUsageLabel.h"
#include "widgets/panels/ModelDiffPanel.h"
#include "widgets/panels/ModelPanel.h"
#include "widgets/panels/NodePanel.h"
#include "widgets/panels/RunPanel.h"
#include "widgets/panels/TensorPanel.h"
#include "widgets/workers/ModelController.h"
#include "widgets/workers/ModelDiffWorker.h"

namespace onnxlens::gui {

using widgets::GraphPage;
using DocumentResult = Result<std::shared_ptr<const widgets::ModelDocument>>;

namespace {
constexpr int kMaxRecentFiles = 10;
const char* kRecentKey = "recentFiles";

// A dock's panel inside a scroll area: the dock may be shorter (or narrower) than the panel's own
// minimum, which then scrolls. Without it the docks' minimums add up (the Run dock's inputs,
// options and outputs stacked over the graph, the Tensor panel beside it) to more than a 1000 px
// screen, and the tabs and the status bar end up off screen.
QScrollArea* scrollable(QWidget* panel, QWidget* parent) {
    auto* area = new QScrollArea(parent);
    area->setObjectName(panel->objectName().isEmpty() ? QStringLiteral("dockScrollArea")
                                                      : panel->objectName() + "Scroll");
    area->setWidgetResizable(true);
    area->setFrameShape(QFrame::NoFrame);
    area->setWidget(panel);
    return area;
}
}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    setWindowTitle(QStringLiteral("onnxlens"));
    setAcceptDrops(true);
    tabs_ = new QTabWidget(this);
    tabs_->setTabsClosable(true);
    tabs_->setDocumentMode(true);
    tabs_->setMovable(true);
    setCentralWidget(tabs_);
    tabs_->setAcceptDrops(false);
    connect(tabs_, &QTabWidget::tabCloseRequested, this, &MainWindow::closeTab);
    connect(tabs_, &QTabWidget::currentChanged, this, &MainWindow::onCurrentTabChanged);
    createDocks();
    createActions();
    statusBar()->showMessage(tr("Ready"));
    statusBar()->addPermanentWidget(new widgets::MemoryUsageLabel(statusBar()));
    QSettings settings;
    if (!restoreGeometry(settings.value("window/geometry").toByteArray())) resize(1400, 900);
    restoredState_ = restoreState(settings.value("window/state").toByteArray());
}

void MainWindow::showEvent(QShowEvent* event) {
    QMainWindow::showEvent(event);
    // Once shown the layout knows which docks are closed (before, their minimum sizes count)
    // and the frame's size is known.
    if (!fittedToScreen_) {
        fittedToScreen_ = true;
        fitToScreen();
        // First launch: the panels take a quarter of the width at most, the graph the rest,
        // until a model's values say how wide the Model dock should be (fitModelDock).
        if (!restoredState_)
            resizeDocks({modelDock_}, {std::clamp(width() / 4, kModelDockMinWidth, 340)},
                        Qt::Horizontal);
        if (currentPage()) fitModelDock();
    }
}

void MainWindow::fitToScreen() {
    // A remembered or default size larger than the screen it opens on would put the status bar
    // off screen: shrink to the available area (frame included) and move inside it.
    QScreen* on = screen() ? screen() : QGuiApplication::primaryScreen();
    if (!on) return;
    const QRect available = on->availableGeometry();
    const int frameWidth = std::max(0, frameGeometry().width() - geometry().width());
    const int frameHeight = std::max(0, frameGeometry().height() - geometry().height());
    const QSize room(available.width() - std::max(frameWidth, 8),
                     available.height() - std::max(frameHeight, 40));
    QSize size = this->size().boundedTo(room);
    if (size != this->size()) resize(size);
    QPoint topLeft = pos();
    topLeft.setX(std::clamp(topLeft.x(), available.left(), available.right() - size.width()));
    topLeft.setY(std::clamp(topLeft.y(), available.top(), available.bottom() - size.height()));
    if (topLeft != pos()) move(topLeft);
}

QString MainWindow::tabTitleFor(const QString& path) {
    // PyTorch exports and model zoos name every file model.onnx: the folder tells them apart.
    const QFileInfo file(path);
    if (file.fileName().compare(QStringLiteral("model.onnx"), Qt::CaseInsensitive) == 0 &&
        !file.dir().dirName().isEmpty() && file.dir().dirName() != QStringLiteral("."))
        return file.dir().dirName();
    return file.fileName();
}

MainWindow::~MainWindow() = default;

void MainWindow::createDocks() {
    modelPanel_ = new widgets::ModelPanel(this);
    nodePanel_ = new widgets::NodePanel(this);
    tensorPanel_ = new widgets::TensorPanel(this);
    auto dock = [this](const QString& title, const char* name, QWidget* widget) {
        auto* d = new QDockWidget(title, this);
        d->setObjectName(QLatin1String(name));
        d->setWidget(scrollable(widget, d));
        addDockWidget(Qt::RightDockWidgetArea, d);
        return d;
    };
    modelDock_ = dock(tr("Model"), "modelDock", modelPanel_);
    nodeDock_ = dock(tr("Node"), "nodeDock", nodePanel_);
    tensorDock_ = dock(tr("Tensor"), "tensorDock", tensorPanel_);
    tabifyDockWidget(modelDock_, nodeDock_);
    tabifyDockWidget(nodeDock_, tensorDock_);
    modelDock_->raise();
    benchmarkPanel_ = new widgets::BenchmarkPanel(this);
    benchmarkDock_ = new QDockWidget(tr("Benchmark"), this);
    benchmarkDock_->setObjectName(QStringLiteral("benchmarkDock"));
    benchmarkDock_->setWidget(scrollable(benchmarkPanel_, benchmarkDock_));
    addDockWidget(Qt::BottomDockWidgetArea, benchmarkDock_);
    benchmarkDock_->hide();  // until Benchmark > Run Benchmark (restoreState may show it)
    runPanel_ = new widgets::RunPanel(this);
    comparePanel_ = new widgets::ComparePanel(this);
    runDock_ = new QDockWidget(tr("Run"), this);
    runDock_->setObjectName(QStringLiteral("runDock"));
    runDock_->setWidget(scrollable(runPanel_, runDock_));
    addDockWidget(Qt::BottomDockWidgetArea, runDock_);
    compareDock_ = new QDockWidget(tr("Compare"), this);
    compareDock_->setObjectName(QStringLiteral("compareDock"));
    compareDock_->setWidget(scrollable(comparePanel_, compareDock_));
    tabifyDockWidget(runDock_, compareDock_);
    runDock_->raise();
    tabifyDockWidget(runDock_, benchmarkDock_);
    modelDiffPanel_ = new widgets::ModelDiffPanel(this);
    modelDiffDock_ = new QDockWidget(tr("Model Diff"), this);
    modelDiffDock_->setObjectName(QStringLiteral("modelDiffDock"));
    modelDiffDock_->setWidget(scrollable(modelDiffPanel_, modelDiffDock_));
    tabifyDockWidget(runDock_, modelDiffDock_);
    modelDiffDock_->hide();
    modelDiffWorker_ = new widgets::ModelDiffWorker(this);
    connect(modelDiffPanel_, &widgets::ModelDiffPanel::cancelRequested, modelDiffWorker_,
            &widgets::ModelDiffWorker::cancel);
    connect(modelDiffPanel_, &widgets::ModelDiffPanel::firstDivergenceRequested, this,
            &MainWindow::revealNodeNamed);
    connect(modelDiffWorker_, &widgets::ModelDiffWorker::progress, modelDiffPanel_,
            &widgets::ModelDiffPanel::setProgress);
    connect(modelDiffWorker_, &widgets::ModelDiffWorker::failed, modelDiffPanel_,
            &widgets::ModelDiffPanel::setFailed);
    connect(modelDiffWorker_, &widgets::ModelDiffWorker::cancelled, modelDiffPanel_,
            [this] { modelDiffPanel_->setFailed(tr("Comparison cancelled")); });
    connect(modelDiffWorker_, &widgets::ModelDiffWorker::finished, this,
            [this](std::shared_ptr<const widgets::ModelComparison> comparison) {
                comparisons_[comparison->pathA] = comparison;
                GraphPage* p = currentPage();
                if (p && p->document().path == comparison->pathA) showComparison(p);
            });
    // The graph gets the window: the bottom docks stay closed until their action is used, and
    // open small however they are opened (their action or the View menu).
    runDock_->hide();
    compareDock_->hide();
    for (QDockWidget* bottom : {runDock_, compareDock_, benchmarkDock_, modelDiffDock_})
        connect(bottom->toggleViewAction(), &QAction::triggered, this, [this, bottom](bool on) {
            if (on) fitBottomDock(bottom);
        });
    connect(nodePanel_, &widgets::NodePanel::tensorActivated, this, [this](int tensor) {
        if (auto* page = currentPage()) {
            tensorPanel_->showTensor(page->shownViewGraph(), tensor,
                                     page->document().loaded.directory);
            tensorDock_->raise();
        }
    });
}

void MainWindow::createActions() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(tr("&Open…"), this, &MainWindow::chooseAndOpen);
    open->setShortcut(QKeySequence::Open);
    recentMenu_ = file->addMenu(tr("Open &Recent"));
    rebuildRecentMenu();
    createEditMenu(file);  // File > Save, Save As; the Edit menu
    QMenu* exportMenu = file->addMenu(tr("&Export"));
    exportMenu->addAction(tr("As &PNG…"), this, [this] { chooseAndExport(QStringLiteral("png")); })
        ->setShortcut(QKeySequence(tr("Ctrl+E")));
    exportMenu->addAction(tr("As &SVG…"), this, [this] { chooseAndExport(QStringLiteral("svg")); })
        ->setShortcut(QKeySequence(tr("Ctrl+Shift+E")));
    file->addSeparator();
    QAction* close = file->addAction(tr("&Close Tab"), this, [this] {
        if (tabs_->currentIndex() >= 0) emit tabs_->tabCloseRequested(tabs_->currentIndex());
    });
    close->setShortcut(QKeySequence::Close);
    file->addAction(tr("&Quit"), this, &QWidget::close)->setShortcut(QKeySequence::Quit);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    auto onPage = [this](auto function) {
        return [this, function] {
            if (auto* page = currentPage()) function(page);
        };
    };
    view->addAction(tr("&Find…"), this, onPage([](GraphPage* p) { p->showFind(); }))
        ->setShortcut(QKeySequence::Find);
    view->addSeparator();
    QAction* zoomIn = view->addAction(tr("Zoom &In"), this,
                                      onPage([](GraphPage* p) { p->view()->zoomBy(1.25); }));
    zoomIn->setShortcuts({QKeySequence::ZoomIn, QKeySequence(tr("Ctrl+="))});
    view->addAction(tr("Zoom &Out"), this, onPage([](GraphPage* p) { p->view()->zoomBy(0.8); }))
        ->setShortcut(QKeySequence::ZoomOut);
    view->addAction(tr("&Fit to Window"), this,
                    onPage([](GraphPage* p) { p->view()->fitToWindow(); }))
        ->setShortcut(QKeySequence(tr("Ctrl+0")));
    view->addAction(tr("&Actual Size"), this, onPage([](GraphPage* p) { p->view()->setZoom(1.0); }))
        ->setShortcut(QKeySequence(tr("Ctrl+1")));
    view->addSeparator();
    view->addAction(tr("&Expand All Groups"), this, onPage([this](GraphPage* p) {
                        if (const QString refused = p->expandAllGroups(); !refused.isEmpty())
                            statusBar()->showMessage(refused, 10000);
                    }));
    view->addAction(tr("&Collapse to Overview"), this, onPage([](GraphPage* p) {
                        p->scene()->expandForOverview(0);
                        emit p->scene()->layoutNeeded();
                    }));
    view->addAction(tr("Cancel &Layout"), this, onPage([](GraphPage* p) { p->cancelLayout(); }))
        ->setShortcut(QKeySequence(tr("Ctrl+.")));
    showOptimizedAction_ = view->addAction(tr("Show &Optimized Graph"));
    showOptimizedAction_->setCheckable(true);
    showOptimizedAction_->setShortcut(QKeySequence(tr("Ctrl+Shift+O")));
    showOptimizedAction_->setStatusTip(
        tr("Show the graph the engine runs, after folding and fusion"));
    connect(showOptimizedAction_, &QAction::toggled, this, [this](bool on) {
        if (auto* page = currentPage()) page->setShowOptimized(on);
    });
    // The file's graph drawn differently: constant chains as nodes, layer stacks as one box.
    auto viewOption = [this, view](const QString& text, const QString& tip,
                                   void (*apply)(ViewGraphOptions&, bool)) {
        QAction* action = view->addAction(text);
        action->setCheckable(true);
        action->setStatusTip(tip);
        connect(action, &QAction::toggled, this, [this, apply](bool on) {
            if (auto* page = currentPage()) {
                ViewGraphOptions options = page->viewGraphOptions();
                apply(options, on);
                page->setViewGraphOptions(options);
            }
        });
        return action;
    };
    showConstantsAction_ = viewOption(
        tr("Show &Constants"),
        tr("Draw Constant nodes and constant Identity/Cast/Unsqueeze chains as nodes instead of "
           "rows of their readers"),
        [](ViewGraphOptions& options, bool on) { options.foldConstants = !on; });
    foldRepeatsAction_ =
        viewOption(tr("Fold &Repeated Blocks"),
                   tr("Show a run of alike blocks (layers.0 \u2026 layers.95) as one \u00d796 box "
                      "that expands"),
                   [](ViewGraphOptions& options, bool on) { options.foldRepeats = on; });
    quantizationErrorAction_ = view->addAction(tr("Colour by &Quantization Error"));
    quantizationErrorAction_->setCheckable(true);
    quantizationErrorAction_->setStatusTip(
        tr("Paint each quantized node by the SQNR of its output against the float model"));
    connect(quantizationErrorAction_, &QAction::toggled, this, [this](bool on) {
        GraphPage* p = currentPage();
        if (!p) return;
        if (!on) {
            p->clearQuantizationError();
            return;
        }
        auto it = quantizationErrors_.find(p->document().path);
        if (it == quantizationErrors_.end()) {
            QSignalBlocker quiet(quantizationErrorAction_);
            quantizationErrorAction_->setChecked(false);
            statusBar()->showMessage(
                tr("No quantization report for this model: run Tools > Quantize Model first"),
                8000);
            return;
        }
        p->setQuantizationError(it->second);
    });
    createCostColourActions(view);
    colourByErrorAction_ = view->addAction(tr("Colour by &Error"));
    colourByErrorAction_->setCheckable(true);
    colourByErrorAction_->setStatusTip(
        tr("After Tools > Compare Models: paint each node by the "
           "SQNR of its output against the other model's"));
    connect(colourByErrorAction_, &QAction::toggled, this, [this](bool) {
        if (GraphPage* p = currentPage()) showComparison(p);
    });
    firstDivergenceAction_ = view->addAction(tr("&First Divergence"));
    firstDivergenceAction_->setStatusTip(
        tr("Select and centre the node whose output first differs from the other model's"));
    connect(firstDivergenceAction_, &QAction::triggered, modelDiffPanel_->firstDivergenceButton(),
            &QPushButton::click);
    view->addSeparator();
    view->addAction(modelDock_->toggleViewAction());
    view->addAction(nodeDock_->toggleViewAction());
    view->addAction(tensorDock_->toggleViewAction());
    view->addAction(benchmarkDock_->toggleViewAction());

    QMenu* benchmark = menuBar()->addMenu(tr("&Benchmark"));
    benchmark->addAction(benchmarkPanel_->startAction());
    connect(benchmarkPanel_->startAction(), &QAction::triggered, this,
            [this] { showBottomDock(benchmarkDock_); });
    benchmark->addAction(benchmarkPanel_->cancelAction());
    benchmark->addSeparator();
    benchmark->addAction(benchmarkPanel_->heatAction());
    connect(benchmarkPanel_->heatAction(), &QAction::toggled, this, [this](bool on) {
        for (int p = 0; p < pageCount(); ++p) page(p)->setRunTimeHeatShown(on);
    });
    connect(benchmarkPanel_, &widgets::BenchmarkPanel::nodeActivated, this,
            [this](const QString& profileName) {
                GraphPage* current = currentPage();
                if (current && !current->revealProfiledNode(profileName))
                    benchmarkPanel_->showStatus(
                        tr("%1 is not in the graph shown (the optimizer made it; View > Show "
                           "Optimized Graph shows it).")
                            .arg(profileName));
            });
    view->addAction(runDock_->toggleViewAction());
    view->addAction(compareDock_->toggleViewAction());

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    run->addAction(runPanel_->runAction());
    run->addAction(runPanel_->cancelAction());
    run->addSeparator();
    run->addAction(comparePanel_->compareAction());
    run->addAction(comparePanel_->dynamicAxesAction());
    connect(runPanel_->runAction(), &QAction::triggered, this,
            [this] { showBottomDock(runDock_); });
    connect(comparePanel_->compareAction(), &QAction::triggered, this,
            [this] { showBottomDock(compareDock_); });
    connect(comparePanel_->dynamicAxesAction(), &QAction::triggered, this,
            [this] { showBottomDock(compareDock_); });
    explainWhenDisabled(runPanel_->runAction(), runDock_);
    explainWhenDisabled(comparePanel_->compareAction(), compareDock_);
    explainWhenDisabled(comparePanel_->dynamicAxesAction(), compareDock_);
    explainWhenDisabled(benchmarkPanel_->startAction(), benchmarkDock_);

    QMenu* tools = menuBar()->addMenu(tr("&Tools"));
    // Ctrl+Shift+E is File > Export > As SVG.
    tools->addAction(tr("&Export from PyTorch && Benchmark…"), this, &MainWindow::showExportDialog)
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P));
    tools->addAction(tr("&Quantize Model…"), this, &MainWindow::showQuantizeDialog);
    tools->addAction(tr("&Compare Models…"), this, [this] {
        GraphPage* p = currentPage();
        if (!p) {
            statusBar()->showMessage(tr("Open a model first, then compare it with another"), 8000);
            return;
        }
        const QString other = QFileDialog::getOpenFileName(
            this, tr("Compare %1 with").arg(tabTitleFor(p->document().path)),
            QFileInfo(p->document().path).absolutePath(),
            tr("ONNX models (*.onnx);;All files (*)"));
        if (!other.isEmpty()) compareCurrentWith(other);
    });
    tools->addSeparator();
    tools->addAction(tr("&Settings…"), this, &MainWindow::showSettingsDialog)
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Comma));

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Keyboard Shortcuts"), this,
                    [this] { openDialog(new widgets::ShortcutsDialog(this, this)); })
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Slash));
    help->addAction(tr("&About onnxlens"), this, [this] {
        openDialog(new widgets::AboutDialog(
            QString::fromStdString(buildinfo::versionReport("onnxlens")), this));
    });
}

// A greyed action's shortcut (Ctrl+R on a model the engine cannot run) is not silent: the same
// keys, live only while the action is disabled, put its reason (the action's status tip, set by
// its dock) in the status bar and open the dock that shows it.
void MainWindow::explainWhenDisabled(QAction* action, QDockWidget* dock) {
    auto* shortcut = new QShortcut(action->shortcut(), this);
    shortcut->setContext(Qt::WindowShortcut);
    shortcut->setEnabled(!action->isEnabled());
    connect(action, &QAction::changed, shortcut,
            [action, shortcut] { shortcut->setEnabled(!action->isEnabled()); });
    connect(shortcut, &QShortcut::activated, this, [this, action, dock] {
        if (action->isEnabled()) return;
        statusBar()->showMessage(action->statusTip(), 15000);
        if (currentPage()) showBottomDock(dock);
    });
}

// Window-modal and deleted on close: the window stays responsive to its own timers meanwhile.
void MainWindow::openDialog(QDialog* dialog) {
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->open();
}

void MainWindow::showSettingsDialog() {
    auto* dialog = new widgets::SettingsDialog(this);
    connect(dialog, &QDialog::accepted, this, [this] {
        benchmarkPanel_->reloadSettings();
        comparePanel_->reloadSettings();
        if (exportDialog_) exportDialog_->loadSettings();
    });
    openDialog(dialog);
}

namespace {
constexpr widgets::HeatMeasure kCostMeasures[3] = {
    widgets::HeatMeasure::Flops, widgets::HeatMeasure::Parameters, widgets::HeatMeasure::Memory};
const char* kCostColourKey = "view/colourBy";
const char* const kCostColourNames[3] = {"flops", "parameters", "memory"};
}  // namespace

void MainWindow::createCostColourActions(QMenu* view) {
    const QString texts[3] = {tr("Colour by &FLOPs"), tr("Colour by &Parameters"),
                              tr("Colour by &Memory")};
    const QString tips[3] = {
        tr("Paint each node by its floating-point operations (cost model)"),
        tr("Paint each node by the parameters (weights) it reads"),
        tr("Paint each node by the bytes it moves: activations read and written, weights")};
    for (int i = 0; i < 3; ++i) {
        QAction* action = view->addAction(texts[i]);
        action->setCheckable(true);
        action->setStatusTip(tips[i]);
        costColourActions_[i] = action;
    }
    // One colouring at a time: a cost measure, the profile's time or the quantization error.
    for (int i = 0; i < 3; ++i) {
        connect(costColourActions_[i], &QAction::toggled, this, [this, i](bool on) {
            const widgets::HeatMeasure measure = kCostMeasures[i];
            if (on) {
                for (int k = 0; k < 3; ++k)
                    if (k != i) costColourActions_[k]->setChecked(false);
                benchmarkPanel_->heatAction()->setChecked(false);
                quantizationErrorAction_->setChecked(false);
                for (int p = 0; p < pageCount(); ++p) page(p)->setCostColouring(measure);
                if (GraphPage* current = currentPage();
                    current && !current->controller()->cost()->cost)
                    statusBar()->showMessage(tr("The cost model could not count this model: %1")
                                                 .arg(current->controller()->cost()->error),
                                             8000);
                QSettings().setValue(kCostColourKey, QLatin1String(kCostColourNames[i]));
                return;
            }
            for (int p = 0; p < pageCount(); ++p)
                if (page(p)->hasHeat() && page(p)->heatMeasure() == measure) page(p)->clearHeat();
            if (QSettings().value(kCostColourKey).toString() == QLatin1String(kCostColourNames[i]))
                QSettings().remove(kCostColourKey);
        });
    }
    auto uncheckCost = [this](bool on) {
        if (!on) return;
        for (QAction* action : costColourActions_) action->setChecked(false);
    };
    connect(benchmarkPanel_->heatAction(), &QAction::toggled, this, uncheckCost);
    connect(quantizationErrorAction_, &QAction::toggled, this, uncheckCost);
    const QString remembered = QSettings().value(kCostColourKey).toString();
    for (int i = 0; i < 3; ++i)
        if (remembered == QLatin1String(kCostColourNames[i]))
            costColourActions_[i]->setChecked(true);
}

void MainWindow::applyCostColouring(GraphPage* page) {
    for (int i = 0; i < 3; ++i)
        if (costColourActions_[i]->isChecked()) page->setCostColouring(kCostMeasures[i]);
}

void MainWindow::showBottomDock(QDockWidget* dock) {
    const bool opening = !dock->isVisible();
    dock->show();
    dock->raise();
    if (opening) fitBottomDock(dock);
}

// Opened small: a third of the window at most, so that the graph stays the main thing.
void MainWindow::fitBottomDock(QDockWidget* dock) {
    if (!dock->isFloating()) resizeDocks({dock}, {std::min(320, height() / 3)}, Qt::Vertical);
}

// The first model shown sizes the Model dock to its values (both columns at their contents'
// width), up to 40% of the window: at the fixed quarter of the window it opened with, every
// value was cut. A layout restored from the last session keeps its width.
void MainWindow::fitModelDock() {
    if (modelDockFitted_ || restoredState_ || !isVisible() || !modelDock_->isVisible() ||
        modelDock_->isFloating())
        return;
    modelDockFitted_ = true;
    const int most = std::max(kModelDockMinWidth, width() * 2 / 5);
    resizeDocks({modelDock_},
                {std::clamp(modelPanel_->contentWidth() + 8, kModelDockMinWidth, most)},
                Qt::Horizontal);
}

widgets::ExportDialog* MainWindow::exportDialog() {
    if (!exportDialog_) {
        exportDialog_ = new widgets::ExportDialog(this);
        // The exported model opens in its own tab; a failed or cancelled export opens nothing.
        connect(exportDialog_, &widgets::ExportDialog::modelExported, this, &MainWindow::openFile);
    }
    return exportDialog_;
}

void MainWindow::showExportDialog() {
    exportDialog()->show();
    exportDialog_->raise();
    exportDialog_->activateWindow();
}

widgets::QuantizeDialog* MainWindow::quantizeDialog() {
    if (!quantizeDialog_) {
        quantizeDialog_ = new widgets::QuantizeDialog(this);
        connect(quantizeDialog_, &widgets::QuantizeDialog::finished, this, [this] {
            const auto sqnr = quantizeDialog_->sqnrByNode();
            quantizationErrors_[QFileInfo(quantizeDialog_->modelPath()).absoluteFilePath()] = sqnr;
            quantizationErrors_[QFileInfo(quantizeDialog_->outputPath()).absoluteFilePath()] = sqnr;
        });
        connect(quantizeDialog_, &widgets::QuantizeDialog::openInt8Requested, this,
                [this](const QString& path) {
                    // Reopened files replace a tab showing an older version of them.
                    const QString absolute = QFileInfo(path).absoluteFilePath();
                    for (int i = 0; i < tabs_->count(); ++i)
                        if (page(i)->document().path == absolute) {
                            emit tabs_->tabCloseRequested(i);
                            break;
                        }
                    openFile(absolute);
                });
    }
    return quantizeDialog_;
}

void MainWindow::showQuantizeDialog() {
    GraphPage* p = currentPage();
    if (!p) {
        statusBar()->showMessage(tr("Open a model to quantize first"), 8000);
        return;
    }
    quantizeDialog()->setModel(p->document().path);
    quantizeDialog_->show();
    quantizeDialog_->raise();
    quantizeDialog_->activateWindow();
}

QStringList MainWindow::recentFiles() const { return QSettings().value(kRecentKey).toStringList(); }

void MainWindow::addRecentFile(const QString& path) {
    QSettings settings;
    QStringList files = settings.value(kRecentKey).toStringList();
    files.removeAll(path);
    files.prepend(path);
    while (files.size() > kMaxRecentFiles) files.removeLast();
    settings.setValue(kRecentKey, files);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
    recentMenu_->clear();
    const QStringList files = recentFiles();
    for (int i = 0; i < files.size(); ++i) {
        QAction* action = recentMenu_->addAction(
            QStringLiteral("&%1 %2").arg((i + 1) % 10).arg(QFileInfo(files[i]).fileName()), this,
            [this, i] { openRecent(i); });
        action->setToolTip(files[i]);
        action->setStatusTip(files[i]);
    }
    if (files.isEmpty())
        recentMenu_->addAction(tr("(none)"))->setEnabled(false);
    else {
        recentMenu_->addSeparator();
        recentMenu_->addAction(tr("Clear List"), this, [this] {
            QSettings().remove(kRecentKey);
            rebuildRecentMenu();
        });
    }
}

void MainWindow::openRecent(int index) {
    const QStringList files = recentFiles();
    if (index >= 0 && index < files.size()) openFile(files[index]);
}

void MainWindow::openFiles(const QStringList& paths) {
    for (const auto& p : paths) openFile(p);
}

void MainWindow::openFile(const QString& path) {
    const QString absolute = QFileInfo(path).absoluteFilePath();
    for (int i = 0; i < tabs_->count(); ++i)
        if (filePathOf(page(i)) == absolute) {  // already open: show it
            tabs_->setCurrentIndex(i);
            return;
        }
    ++pendingLoads_;
    statusBar()->showMessage(tr("Loading %1…").arg(QFileInfo(path).fileName()));
    auto* watcher = new QFutureWatcher<DocumentResult>(this);
    connect(watcher, &QFutureWatcher<DocumentResult>::finished, this, [this, watcher, absolute] {
        watcher->deleteLater();
        --pendingLoads_;
        const DocumentResult& result = watcher->result();
        if (!result) {
            showOpenError(absolute, QString::fromStdString(result.error().message));
            return;
        }
        auto* page = new GraphPage(result.value(), tabs_);
        connectEdits(new widgets::EditController(result.value(), page));
        wirePage(page);
        int index = tabs_->addTab(page, tabTitleFor(absolute));
        tabs_->setTabToolTip(index, absolute);
        tabs_->setCurrentIndex(index);
        addRecentFile(absolute);
        page->start();
        emit documentOpened(page);
    });
    watcher->setFuture(
        QtConcurrent::run([absolute] { return widgets::loadModelDocument(absolute); }));
}

void MainWindow::showOpenError(const QString& path, const QString& message) {
    lastError_ = message;
    statusBar()->showMessage(tr("Could not open %1").arg(QFileInfo(path).fileName()), 8000);
    // Non-modal: the window (and any other load) carries on behind it.
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Could not open model"),
                                tr("Could not open %1").arg(path), QMessageBox::Ok, this);
    box->setInformativeText(message);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setObjectName(QStringLiteral("openErrorBox"));
    box->open();
    emit openFailed(path, message);
}

GraphPage* MainWindow::currentPage() const {
    return qobject_cast<GraphPage*>(tabs_->currentWidget());
}
GraphPage* MainWindow::page(int index) const {
    return qobject_cast<GraphPage*>(tabs_->widget(index));
}
int MainWindow::pageCount() const { return tabs_->count(); }

void MainWindow::onCurrentTabChanged() {
    nodePanel_->clear();
    tensorPanel_->clear();
    GraphPage* p = currentPage();
    editActions_->setPage(p);
    benchmarkPanel_->setController(p ? p->controller() : nullptr);
    {
        QSignalBlocker quiet(showOptimizedAction_);
        showOptimizedAction_->setChecked(p && p->isShowingOptimized());
        QSignalBlocker quietConstants(showConstantsAction_);
        showConstantsAction_->setChecked(p && !p->viewGraphOptions().foldConstants);
        QSignalBlocker quietRepeats(foldRepeatsAction_);
        foldRepeatsAction_->setChecked(p && p->viewGraphOptions().foldRepeats);
    }
    // The tab's controller compiles its session the first time the Run dock shows it.
    runPanel_->setController(p ? p->controller() : nullptr);
    comparePanel_->setController(p ? p->controller() : nullptr);
    if (quantizationErrorAction_) {
        QSignalBlocker quiet(quantizationErrorAction_);
        quantizationErrorAction_->setChecked(p && p->hasQuantizationError());
    }
    if (p && comparisons_.count(p->document().path)) showComparison(p);
    if (!p) {
        modelPanel_->clear();
        setWindowTitle(QStringLiteral("onnxlens"));
        return;
    }
    modelPanel_->showModel(p->document(), p->controller()->cost().get());
    fitModelDock();
    setWindowTitle(
        QStringLiteral("%1%2 — onnxlens")
            .arg(tabTitleFor(filePathOf(p)), isModified(p) ? QStringLiteral("*") : QString()));
    if (int node = p->scene()->selectedNode(); node >= 0)
        nodePanel_->showNode(p->shownViewGraph(), node, p->controller()->cost().get());
}

void MainWindow::compareCurrentWith(const QString& otherPath, bool numeric) {
    GraphPage* p = currentPage();
    if (!p || modelDiffWorker_->isRunning()) return;
    showBottomDock(modelDiffDock_);
    modelDiffPanel_->setRunning(otherPath);
    modelDiffWorker_->start(p->sharedDocument(), otherPath, numeric);
}

// The latest comparison of the page's model on its graph: the structure's differences, or with
// View > Colour by Error each node's SQNR against the other model.
void MainWindow::showComparison(GraphPage* page) {
    auto it = comparisons_.find(page->document().path);
    if (it == comparisons_.end()) return;
    const auto& comparison = it->second;
    if (modelDiffPanel_->comparison() != comparison)
        modelDiffPanel_->setComparison(comparison, page->document().loaded.proto);
    const auto& s = comparison->structure;
    const auto& graph = page->document().loaded.proto->graph();
    if (colourByErrorAction_->isChecked() && comparison->numeric) {
        std::map<std::string, QString> tips;
        for (const auto& t : comparison->numeric->tensors) {
            if (!t.compared || t.nodeNameA.empty()) continue;
            QString& tip = tips[t.nodeNameA];
            if (!tip.isEmpty()) tip += "\n";
            tip += tr("%1: SQNR %2, max abs error %3, cosine %4")
                       .arg(QString::fromStdString(t.valueA))
                       .arg(QString::fromStdString(engine::formatSqnr(t.figures.sqnrDb)))
                       .arg(t.figures.maxAbsError, 0, 'g', 3)
                       .arg(t.figures.cosine, 0, 'f', 6);
        }
        page->setComparisonError(engine::sqnrByNode(*comparison->numeric), tips);
        return;
    }
    if (colourByErrorAction_->isChecked()) {
        QSignalBlocker quiet(colourByErrorAction_);
        colourByErrorAction_->setChecked(false);
        statusBar()->showMessage(tr("No numeric comparison for this model"), 8000);
    }
    if (page->hasQuantizationError()) page->clearQuantizationError();
    std::map<std::string, widgets::GraphScene::NodeMark> marks;
    for (const auto& n : s.nodes) {
        if (n.a < 0 || n.a >= graph.node_size()) continue;
        const std::string name = profileNameOf(graph.node(n.a));
        switch (n.kind) {
            case engine::NodeDiff::Kind::Changed: {
                QString tip = tr("changed in %1:").arg(QString::fromStdString(s.nameB));
                for (const auto& c : n.changes) tip += "\n" + QString::fromStdString(c);
                marks[name] = {widgets::changedNodeColour(), tip};
                break;
            }
            case engine::NodeDiff::Kind::Removed:
                marks[name] = {widgets::removedNodeColour(),
                               tr("not in %1").arg(QString::fromStdString(s.nameB))};
                break;
            case engine::NodeDiff::Kind::Renamed:
                marks[name] = {widgets::renamedNodeColour(),
                               tr("named %1 in %2")
                                   .arg(QString::fromStdString(n.nameB))
                                   .arg(QString::fromStdString(s.nameB))};
                break;
            default:
                break;
        }
    }
    page->setStructureDiff(marks, s.changed, s.removed, s.renamed, s.added,
                           QString::fromStdString(s.nameB));
}

void MainWindow::revealNodeNamed(const QString& profileName) {
    GraphPage* p = currentPage();
    if (!p) return;
    const auto& nodes = p->shownViewGraph()->nodes;
    for (std::size_t n = 0; n < nodes.size(); ++n)
        if (nodes[n].proto &&
            QString::fromStdString(profileNameOf(*nodes[n].proto)) == profileName) {
            p->revealNode(static_cast<int>(n));
            return;
        }
    statusBar()->showMessage(tr("%1 is not drawn in this graph").arg(profileName), 8000);
}

void MainWindow::chooseAndOpen() {
    const QStringList recent = recentFiles();
    QString dir = recent.isEmpty() ? QString() : QFileInfo(recent.first()).absolutePath();
    QStringList files = QFileDialog::getOpenFileNames(this, tr("Open ONNX model"), dir,
                                                      tr("ONNX models (*.onnx);;All files (*)"));
    openFiles(files);
}

QString MainWindow::exportCurrent(const QString& path) {
    GraphPage* p = currentPage();
    if (!p || !p->isDrawn()) return tr("Nothing to export: no graph is drawn.");
    if (path.endsWith(QStringLiteral(".svg"), Qt::CaseInsensitive))
        return widgets::exportSceneSvg(*p->scene(), path, QFileInfo(p->document().path).fileName());
    return widgets::exportScenePng(*p->scene(), path);
}

void MainWindow::chooseAndExport(const QString& format) {
    GraphPage* p = currentPage();
    if (!p) return;
    QString suggested =
        QFileInfo(p->document().path).completeBaseName() + QLatin1Char('.') + format;
    QString filter =
        format == QStringLiteral("svg") ? tr("SVG image (*.svg)") : tr("PNG image (*.png)");
    QString path = QFileDialog::getSaveFileName(this, tr("Export graph"), suggested, filter);
    if (path.isEmpty()) return;
    if (!path.endsWith(QLatin1Char('.') + format, Qt::CaseInsensitive))
        path += QLatin1Char('.') + format;
    QString error = exportCurrent(path);
    if (error.isEmpty())
        statusBar()->showMessage(tr("Exported %1").arg(path), 5000);
    else
        QMessageBox::warning(this, tr("Export failed"), error);
}

namespace {
QStringList droppedFiles(const QMimeData* mime) {
    QStringList files;
    if (!mime || !mime->hasUrls()) return files;
    for (const QUrl& url : mime->urls())
        if (url.isLocalFile()) files << url.toLocalFile();
    return files;
}
}  // namespace

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (!droppedFiles(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void MainWindow::dragMoveEvent(QDragMoveEvent* event) {
    if (!droppedFiles(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    QStringList files = droppedFiles(event->mimeData());
    if (files.isEmpty()) return;
    event->acceptProposedAction();
    openFiles(files);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    for (int i = 0; i < tabs_->count(); ++i)
        if (!confirmUnsaved(page(i), true)) {
            event->ignore();
            return;
        }
    QSettings settings;
    settings.setValue("window/geometry", saveGeometry());
    settings.setValue("window/state", saveState());
    QMainWindow::closeEvent(event);
}

}  // namespace onnxlens::gui
