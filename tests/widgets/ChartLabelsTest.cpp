// The charts' labels as drawn (issue 33): the profile's op names whole (they were all "..."),
// histogram axes whose ticks read differently ("1, 0, 0, 0" and "1e+03" five times before), and
// a roofline peak that no node exceeds (a packed MatMul showed "122 % of peak").
#include <gtest/gtest.h>

#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QGraphicsScene>
#include <QGraphicsTextItem>
#include <QLabel>
#include <QValueAxis>
#include <set>

#include "GuiTestSupport.h"
#include "widgets/charts/AxisLabels.h"
#include "widgets/charts/HistogramChart.h"
#include "widgets/charts/LatencyCharts.h"
#include "widgets/panels/ProfileView.h"
#include "widgets/workers/ModelDocument.h"
#include "widgets/workers/RooflineAnalysis.h"

namespace onnxlens {
namespace {

// Every text the chart view draws (title, axis labels, bar labels), as plain text.
QStringList drawnTexts(QChartView* view) {
    QStringList texts;
    for (QGraphicsItem* item : view->scene()->items())
        if (auto* text = qgraphicsitem_cast<QGraphicsTextItem*>(item))
            if (text->isVisible()) texts << text->toPlainText();
    return texts;
}

// Shows `chart` in a view of `size` and returns what it draws.
QStringList drawnTexts(QChart* chart, QSize size, std::unique_ptr<QChartView>& view) {
    view = std::make_unique<QChartView>(chart);
    view->resize(size);
    view->show();
    EXPECT_TRUE(QTest::qWaitForWindowExposed(view.get()));
    QApplication::processEvents();
    return drawnTexts(view.get());
}

TEST(AxisLabels, TheFormatHasTheDigitsTheTickSpacingNeeds) {
    EXPECT_EQ(widgets::tickLabelFormat(0, 1, 5), QStringLiteral("%.3g"));          // 0.25 steps
    EXPECT_EQ(widgets::tickLabelFormat(1000, 1000.4, 5), QStringLiteral("%.6g"));  // 0.1 steps
    EXPECT_EQ(widgets::tickLabelFormat(12.31, 12.52, 6), QStringLiteral("%.5g"));
    EXPECT_EQ(widgets::tickLabelFormat(5, 5, 5), QStringLiteral("%.3g"));  // no spacing
    // Ticks written with it differ: 1000, 1000.1, ..., 1000.4.
    const QByteArray format = widgets::tickLabelFormat(1000, 1000.4, 5).toLatin1();
    std::set<QString> ticks;
    for (int k = 0; k < 5; ++k) ticks.insert(QString::asprintf(format.constData(), 1000 + 0.1 * k));
    EXPECT_EQ(ticks.size(), 5u);
    // Count axes step by 1, 2 or 5 times a power of ten: whole numbers at most 6 ticks apart.
    EXPECT_EQ(widgets::countAxisStep(1), 1);
    EXPECT_EQ(widgets::countAxisStep(4), 1);
    EXPECT_EQ(widgets::countAxisStep(9), 2);
    EXPECT_EQ(widgets::countAxisStep(37), 10);
    EXPECT_EQ(widgets::countAxisStep(1200), 500);
}

TEST(ChartLabels, AHistogramOfCloseValuesAndOneCountLabelsEveryTickDifferently) {
    engine::Histogram histogram;
    histogram.low = 1000.0;
    histogram.high = 1000.4;
    histogram.counts = {1, 0, 0, 1};
    std::unique_ptr<QChartView> view;
    const QStringList texts =
        drawnTexts(widgets::makeHistogramChart(histogram, "Values of y", "value", "none"),
                   QSize(500, 300), view);
    // The value axis: 1000 .. 1000.4 in 0.1 steps (before: "1e+03" five times).
    for (const char* tick : {"1000", "1000.1", "1000.2", "1000.3", "1000.4"})
        EXPECT_TRUE(texts.contains(QLatin1String(tick)))
            << tick << " in " << texts.join(" | ").toStdString();
    EXPECT_FALSE(texts.contains(QStringLiteral("1e+03")));
    // The count axis: 0 and 1, once each (before: 0, 0, 0, 0, 1).
    EXPECT_EQ(texts.count(QStringLiteral("0")), 1) << texts.join(" | ").toStdString();
    EXPECT_EQ(texts.count(QStringLiteral("1")), 1) << texts.join(" | ").toStdString();
}

TEST(ChartLabels, AShortHistogramKeepsItsCountLabelsWhole) {
    // The Compare dock with every dock open leaves its error histogram its minimum, 150 px high:
    // five or six count ticks did not fit and Qt Charts drew each as "...".
    engine::Histogram histogram;
    histogram.low = 0;
    histogram.high = 1.5e-7;
    histogram.counts = {640, 60, 55, 40, 45, 5, 20, 0, 25, 0, 0, 10, 0, 0, 0, 5, 0, 0, 0, 0};
    std::unique_ptr<QChartView> view;
    const QStringList texts =
        drawnTexts(widgets::makeHistogramChart(histogram, "Absolute errors of logits",
                                               "|actual - expected|", "none"),
                   QSize(1300, 150), view);
    for (const QString& text : texts)
        EXPECT_FALSE(text.contains(QStringLiteral("...")) || text.contains(QChar(0x2026)))
            << texts.join(" | ").toStdString();
    EXPECT_TRUE(texts.contains(QStringLiteral("0"))) << texts.join(" | ").toStdString();
}

TEST(ChartLabels, TheLatencyHistogramsTicksDiffer) {
    widgets::LatencyCharts charts;
    charts.resize(900, 260);
    charts.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&charts));
    // 20 runs between 12.31 and 12.52 ms: "%.3g" wrote 12.3, 12.4, 12.4, 12.5 ...
    std::vector<double> samples;
    for (int i = 0; i < 20; ++i) samples.push_back(12.31 + 0.21 * i / 19.0);
    engine::LatencyStatistics statistics;
    statistics.minMs = 12.31;
    statistics.maxMs = 12.52;
    statistics.medianMs = 12.415;
    statistics.p90Ms = 12.5;
    charts.setSamples(samples, statistics);
    QApplication::processEvents();
    auto* histogram = charts.findChild<QChartView*>(QStringLiteral("latencyHistogram"));
    ASSERT_NE(histogram, nullptr);
    auto axes = histogram->chart()->axes(Qt::Horizontal);
    ASSERT_EQ(axes.size(), 1);
    auto* ms = qobject_cast<QValueAxis*>(axes[0]);
    ASSERT_NE(ms, nullptr);
    const QByteArray format = ms->labelFormat().toLatin1();
    QStringList ticks;
    for (int k = 0; k < ms->tickCount(); ++k)
        ticks << QString::asprintf(format.constData(),
                                   ms->min() + (ms->max() - ms->min()) * k / (ms->tickCount() - 1));
    EXPECT_EQ(ticks.removeDuplicates(), 0) << ticks.join(", ").toStdString();
    const QStringList texts = drawnTexts(histogram);
    for (const QString& tick : ticks)
        EXPECT_TRUE(texts.contains(tick))
            << tick.toStdString() << " in " << texts.join(" | ").toStdString();
}

TEST(ChartLabels, TheProfileBarChartShowsItsOpNamesWhole) {
    // 14 op types, one with a domain and one longer than a label.
    const std::vector<std::string> names = {"MatMul",
                                            "com.microsoft::GroupQueryAttention",
                                            "SkipSimplifiedLayerNormalizationWithGamma",
                                            "Softmax",
                                            "Add",
                                            "Mul",
                                            "Gather",
                                            "Reshape",
                                            "Transpose",
                                            "Concat",
                                            "Cast",
                                            "Sigmoid",
                                            "Slice",
                                            "Unsqueeze"};
    auto result = std::make_shared<engine::BenchmarkResult>();
    result->profiled = true;
    result->statistics.runs = 1;
    result->statistics.meanMs = 10;
    double left = 1.0;
    for (const auto& name : names) {
        engine::OpTypeProfile op;
        op.opType = name;
        op.share = left / 2;
        op.totalMs = 10 * op.share;
        op.calls = 1;
        left -= op.share;
        result->opTypes.push_back(op);
        engine::NodeTimeSummary node;
        node.nodeName = name + "_0";
        node.opType = name;
        node.totalMs = node.perRunMs = op.totalMs;
        node.calls = 1;
        node.share = op.share;
        result->nodes.push_back(node);
    }
    widgets::ProfileView profile;
    profile.resize(1000, 300);  // the Benchmark dock's share of a 1000 px window
    profile.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&profile));
    profile.setResult(result);
    QApplication::processEvents();
    QApplication::processEvents();
    const int bars = profile.barCount();
    ASSERT_GE(bars, 3);
    const QStringList texts = drawnTexts(profile.barChart());
    for (const QString& text : texts)
        EXPECT_FALSE(text.contains(QStringLiteral("..."))) << text.toStdString();
    // The op types drawn (all but the "other" bar) by name; the long ones shortened readably.
    const int named = bars == static_cast<int>(names.size()) ? bars : bars - 1;
    for (int i = 0; i < named; ++i) {
        const QString label =
            widgets::ProfileView::elidedOpType(names[static_cast<std::size_t>(i)]);
        EXPECT_LE(label.size(), widgets::ProfileView::kLabelChars);
        EXPECT_TRUE(texts.contains(label))
            << label.toStdString() << " in " << texts.join(" | ").toStdString();
    }
    EXPECT_EQ(widgets::ProfileView::elidedOpType("com.microsoft::GroupQueryAttention"),
              QStringLiteral("GroupQueryAttention"));
    const QString elided =
        widgets::ProfileView::elidedOpType("SkipSimplifiedLayerNormalizationWithGamma");
    EXPECT_EQ(elided.size(), widgets::ProfileView::kLabelChars);
    EXPECT_TRUE(elided.startsWith(QStringLiteral("SkipSimplif"))) << elided.toStdString();
    EXPECT_TRUE(elided.endsWith(QStringLiteral("WithGamma"))) << elided.toStdString();
    EXPECT_TRUE(elided.contains(QChar(0x2026)));
    // Taller, more bars.
    profile.resize(1000, 600);
    QApplication::processEvents();
    QApplication::processEvents();
    EXPECT_GT(profile.barCount(), bars);
}

TEST(Roofline, ThePeakIsNeverBelowANodesAchievedRate) {
    QTemporaryDir dir;
    const QString path = testing::writeModel(dir, "cnn.onnx", *testing::makeSmallCnn());
    auto document = widgets::loadModelDocument(path);
    ASSERT_TRUE(document) << document.error().message;
    // conv1's 102,752 FLOPs in a nanosecond: 1e8 GFLOP/s, far above any measured peak; fc at
    // a plausible 1 ms.
    engine::BenchmarkResult result;
    result.threads = 1;
    result.profiled = true;
    engine::NodeTimeSummary conv;
    conv.nodeName = "conv1";
    conv.opType = "Conv";
    conv.perRunMs = conv.totalMs = 1e-6;
    conv.calls = 1;
    engine::NodeTimeSummary fc;
    fc.nodeName = "fc";
    fc.opType = "Gemm";
    fc.perRunMs = fc.totalMs = 1.0;
    fc.calls = 1;
    result.nodes = {conv, fc};
    const widgets::RooflineAnalysis analysis = widgets::analyseRoofline(**document, result);
    ASSERT_GT(analysis.peak.gflops, 0) << analysis.error.toStdString();
    ASSERT_EQ(analysis.rates.size(), 2u);
    const double convRate = 102752 / (1e-6 * 1e-3) / 1e9;
    for (const auto& rate : analysis.rates) {
        EXPECT_LE(rate.gflops, analysis.peak.gflops) << rate.nodeName;
        EXPECT_LE(rate.peakShare, 1.0) << rate.nodeName;
        EXPECT_NEAR(rate.peakShare, rate.gflops / analysis.peak.gflops, 1e-12);
    }
    EXPECT_NEAR(analysis.peak.gflops, convRate, 1e-9 * convRate);
    // Said so, with the measured figure.
    EXPECT_NE(analysis.peak.method.find("conv1"), std::string::npos) << analysis.peak.method;
    EXPECT_NE(analysis.peak.method.find("above the measured peak"), std::string::npos)
        << analysis.peak.method;

    // A peak above every node stays the measured one.
    engine::PeakThroughput peak{500, 1, "512^3 MatMul"};
    std::vector<engine::NodeRate> rates(2);
    rates[0].gflops = 100;
    rates[1].gflops = 400;
    engine::coverAchievedRates(peak, rates);
    EXPECT_EQ(peak.gflops, 500);
    EXPECT_EQ(peak.method, "512^3 MatMul");
}

}  // namespace
}  // namespace onnxlens
