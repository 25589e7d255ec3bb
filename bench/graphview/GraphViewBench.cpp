// graph_view_bench MODEL.onnx... [--no-expand-all] [--expand-limit-ms N]
// graph_view_bench --screenshots DIR MODEL.onnx   (the README's pictures: DIR/screenshot-big-
//                                                 overview.png and screenshot-big-expanded.png)
//
// Times what a person waits for in the graph view, through the same GraphPage and layout worker
// process as the window (Qt's offscreen platform unless QT_QPA_PLATFORM is set):
//   load       file -> ModelDocument (parse, summary, view graph; the worker thread's part)
//   overview   document -> first layout drawn (GraphPage::drawn)
//   expand     one collapsed block (the first collapsed group under the root with the most
//              operators of its kind, e.g. layers.0) -> items rebuilt with it open
//   expandAll  View > Expand All Groups -> drawn, or the message it was refused or failed with
// and the overview's size in points. One JSON object per model on stdout.
#include <QApplication>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QSettings>
#include <QTest>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "MainWindow.h"
#include "widgets/graph/GraphGroupItem.h"
#include "widgets/graph/GraphPage.h"
#include "widgets/graph/GraphScene.h"
#include "widgets/graph/GraphView.h"
#include "widgets/workers/ModelDocument.h"

using namespace onnxlens;
using namespace onnxlens::widgets;

namespace {

// The first collapsed group of the root whose size is the most common among the root's groups:
// one of the repeated blocks (a transformer layer, a ResNet stage) rather than a stray scope.
int repeatedBlock(const GraphScene& scene) {
    const auto& view = scene.view();
    std::map<int, int> bySize;
    for (const auto& ref : view.groups[0].children)
        if (ref.kind == ViewUnitRef::Kind::Group) ++bySize[view.groups[ref.index].nodeCount];
    int best = -1, bestCount = 0;
    for (const auto& [size, count] : bySize)
        if (count > bestCount || (count == bestCount && size > best)) {
            best = size;
            bestCount = count;
        }
    for (const auto& ref : view.groups[0].children)
        if (ref.kind == ViewUnitRef::Kind::Group && view.groups[ref.index].nodeCount == best &&
            !scene.isExpanded(ref.index))
            return ref.index;
    return -1;
}

nlohmann::json benchModel(const QString& path, bool expandAll, int limitMs) {
    nlohmann::json row = {{"model", path.toStdString()}};
    QElapsedTimer clock;
    clock.start();
    auto loaded = loadModelDocument(path);
    if (!loaded) {
        row["error"] = loaded.error().message;
        return row;
    }
    row["loadMs"] = clock.elapsed();
    auto document = loaded.value();
    row["operators"] = document->view->operatorCount;
    row["groups"] = document->view->groups.size();

    GraphPage page(document);
    page.resize(1280, 800);
    page.show();
    clock.restart();
    page.start();
    if (!QTest::qWaitFor([&] { return page.isDrawn() || !page.lastError().isEmpty(); }, limitMs) ||
        !page.isDrawn()) {
        row["error"] = ("overview: " + page.lastError()).toStdString();
        return row;
    }
    row["overviewMs"] = clock.elapsed();
    const QRectF overview = page.scene()->contentRect();
    row["overviewWidth"] = overview.width();
    row["overviewHeight"] = overview.height();
    int visibleGroups = 0;
    for (std::size_t g = 1; g < document->view->groups.size(); ++g)
        if (page.scene()->groupItem(static_cast<int>(g))) ++visibleGroups;
    row["overviewGroups"] = visibleGroups;

    const int block = repeatedBlock(*page.scene());
    if (block >= 0) {
        row["block"] = document->view->groups[block].path;
        row["blockOperators"] = document->view->groups[block].nodeCount;
        bool rebuilt = false;
        auto connection = QObject::connect(page.scene(), &GraphScene::rebuilt, [&] {
            if (page.scene()->isExpanded(block) && !page.scene()->needsLayout()) rebuilt = true;
        });
        clock.restart();
        page.scene()->setExpanded(block, true);
        if (QTest::qWaitFor([&] { return rebuilt || !page.lastError().isEmpty(); }, limitMs) &&
            rebuilt)
            row["expandMs"] = clock.elapsed();
        else
            row["expandError"] = page.lastError().toStdString();
        QObject::disconnect(connection);
        const QRectF after = page.scene()->contentRect();
        row["expandedWidth"] = after.width();
        row["expandedHeight"] = after.height();
        // Collapsing again needs no layout: the cached placement shrinks back.
        clock.restart();
        page.scene()->setExpanded(block, false);
        row["collapseMs"] = clock.elapsed();
        clock.restart();
        page.scene()->setExpanded(block, true);
        const bool laidOut = QTest::qWaitFor(
            [&] { return !page.isLayoutRunning() && !page.scene()->needsLayout(); }, limitMs);
        row["reexpandMs"] = laidOut ? clock.elapsed() : -1;  // -1: not laid out within the limit
    }

    if (expandAll) {
        bool refused = false;
        QString message;
        clock.restart();
        const QString why = page.expandAllGroups();
        if (!why.isEmpty()) {
            refused = true;
            message = why;
        } else {
            const bool done = QTest::qWaitFor(
                [&] {
                    return (!page.isLayoutRunning() && !page.scene()->needsLayout()) ||
                           !page.lastError().isEmpty();
                },
                limitMs + 5000);
            if (!done || !page.lastError().isEmpty())
                message = done ? page.lastError() : QStringLiteral("not drawn in time");
        }
        if (refused)
            row["expandAllRefused"] = message.toStdString();
        else if (!message.isEmpty())
            row["expandAllError"] = message.toStdString();
        else {
            row["expandAllMs"] = clock.elapsed();
            row["expandAllWidth"] = page.scene()->contentRect().width();
            row["expandAllHeight"] = page.scene()->contentRect().height();
        }
    }
    return row;
}

// The window on first opening the model, then with one repeated block expanded and in view.
int takeScreenshots(const QString& dir, const QString& model) {
    QSettings().clear();
    gui::MainWindow window;
    window.resize(1500, 940);
    window.show();
    window.openFile(model);
    if (!QTest::qWaitFor([&] { return window.pageCount() == 1 && window.page(0)->isDrawn(); },
                         60000))
        return 1;
    GraphPage* page = window.page(0);
    QTest::qWait(300);
    if (!window.grab().save(dir + "/screenshot-big-overview.png")) return 1;
    const int block = repeatedBlock(*page->scene());
    if (block < 0) return 1;
    page->scene()->setExpanded(block, true);
    if (!QTest::qWaitFor([&] { return !page->isLayoutRunning() && !page->scene()->needsLayout(); },
                         60000))
        return 1;
    // The block's largest inner group (a layer's attention) at a zoom where rows read.
    const auto& view = page->scene()->view();
    int focus = block;
    for (const auto& ref : view.groups[block].children)
        if (ref.kind == ViewUnitRef::Kind::Group &&
            (focus == block || view.groups[ref.index].nodeCount > view.groups[focus].nodeCount))
            focus = ref.index;
    if (auto* item = page->scene()->groupItem(focus)) {
        page->view()->setZoom(0.7);
        page->view()->centerOn(item->sceneBoundingRect().center());
    }
    QTest::qWait(300);
    return window.grab().save(dir + "/screenshot-big-expanded.png") ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("onnxlens-bench"));
    if (argc == 4 && QString::fromLocal8Bit(argv[1]) == QStringLiteral("--screenshots"))
        return takeScreenshots(QString::fromLocal8Bit(argv[2]),
                               QFileInfo(QString::fromLocal8Bit(argv[3])).absoluteFilePath());
    bool expandAll = true;
    int limitMs = 60000;
    QStringList models;
    const QStringList args = app.arguments().mid(1);
    for (int i = 0; i < args.size(); ++i) {
        if (args[i] == QStringLiteral("--no-expand-all"))
            expandAll = false;
        else if (args[i] == QStringLiteral("--expand-limit-ms") && i + 1 < args.size())
            limitMs = args[++i].toInt();
        else
            models << args[i];
    }
    if (models.isEmpty()) {
        std::fprintf(stderr, "usage: graph_view_bench MODEL.onnx... [--no-expand-all]\n");
        return 2;
    }
    for (const QString& model : models)
        std::printf(
            "%s\n",
            benchModel(QFileInfo(model).absoluteFilePath(), expandAll, limitMs).dump().c_str());
    return 0;
}
