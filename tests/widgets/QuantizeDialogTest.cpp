// Tools > Quantize Model..., offscreen: the sample CNN quantized on a worker thread to a report
// card (the verdict follows the tolerance set in the dialog), the int8 model opened in a new tab
// and coloured by quantization error with its legend; Cancel leaves nothing behind. Before any Qt
// header: Session.h (through QuantizationReport.h) has a member named `slots`.
#include "onnxlens/workflows/QuantizationReport.h"
//
#include <gtest/gtest.h>

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QTimer>
#include <filesystem>
#include <fstream>
#include <map>

#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "onnxlens/model/NodeNames.h"
#include "widgets/dialogs/QuantizationReportCard.h"
#include "widgets/dialogs/QuantizeDialog.h"
#include "widgets/graph/GraphNodeItem.h"
#include "widgets/graph/GraphPage.h"
#include "widgets/graph/GraphScene.h"
#include "widgets/graph/QuantizationLegend.h"

namespace onnxlens {
namespace {

using gui::MainWindow;
using widgets::QuantizeDialog;

QString sample(const char* name) {
    return QString::fromStdString(std::string(ONNXLENS_SOURCE_DIR) + "/resources/samples/" + name +
                                  "/model.onnx");
}

TEST(QuantizeDialogTest, QuantizesToAReportCardAndColoursTheInt8Model) {
    testing::clearSettings();
    QTemporaryDir dir;
    MainWindow window;
    window.show();
    auto* floatPage = testing::openAndDraw(window, sample("mnist_cnn"));
    ASSERT_NE(floatPage, nullptr) << window.lastError().toStdString();

    window.showQuantizeDialog();
    QuantizeDialog* dialog = window.quantizeDialog();
    ASSERT_TRUE(dialog->isVisible());
    EXPECT_EQ(dialog->modelPath(), floatPage->document().path);
    EXPECT_TRUE(dialog->outputEdit()->text().endsWith(QStringLiteral("model.int8.onnx")));
    const QString output = dir.filePath(QStringLiteral("cnn.int8.onnx"));
    dialog->outputEdit()->setText(output);
    dialog->opTypeBox(QStringLiteral("Conv"))->setChecked(true);
    dialog->perChannelBox()->setChecked(true);
    dialog->runsBox()->setValue(2);

    testing::StallMeter stalls;
    ASSERT_TRUE(dialog->start()) << dialog->errorText().toStdString();
    EXPECT_EQ(dialog->state(), QuantizeDialog::State::Running);
    ASSERT_TRUE(testing::waitFor([&] { return dialog->state() != QuantizeDialog::State::Running; },
                                 120000));
    ASSERT_EQ(dialog->state(), QuantizeDialog::State::Done) << dialog->errorText().toStdString();
    EXPECT_LT(stalls.worstStallMs(),
              500 * testing::kStallBoundScale);  // the work ran off the GUI thread
    EXPECT_TRUE(QFile::exists(output));
    EXPECT_TRUE(QFile::exists(dialog->reportFolder() + QStringLiteral("/report.json")));

    // The card: every output against the tolerance, then the nodes, weakest first.
    auto* card = dialog->reportCard();
    const auto report = dialog->report();
    ASSERT_NE(report, nullptr);
    EXPECT_TRUE(card->passed());
    EXPECT_TRUE(card->verdictText().startsWith(QStringLiteral("PASS")));
    ASSERT_EQ(card->outputTable()->rowCount(), 1);
    EXPECT_EQ(card->outputTable()->item(0, 0)->text(), QStringLiteral("log_probs"));
    EXPECT_EQ(card->outputTable()->item(0, 4)->text(),
              QString::fromStdString(engine::formatSqnr(report->outputs[0].figures.sqnrDb)));
    EXPECT_EQ(card->nodeTable()->rowCount(), 4);  // 2 Conv + 2 Gemm
    EXPECT_EQ(card->nodeTable()->item(0, 0)->text(), QString::fromStdString(report->nodes[0].name));
    EXPECT_TRUE(card->footerText().contains(QStringLiteral("smaller")));
    // A tolerance above the model's SQNR turns the verdict to FAIL, without rerunning.
    dialog->toleranceBox()->setValue(report->outputs[0].figures.sqnrDb + 1);
    EXPECT_FALSE(card->passed());
    EXPECT_TRUE(card->verdictText().startsWith(QStringLiteral("FAIL")));
    EXPECT_EQ(card->outputTable()->item(0, 7)->text(), QStringLiteral("fail"));

    // Open int8 model: a new tab; View > Colour by Quantization Error paints its nodes.
    ASSERT_TRUE(dialog->openButton()->isEnabled());
    dialog->openButton()->click();
    ASSERT_TRUE(
        testing::waitFor([&] { return window.pageCount() == 2 && window.page(1)->isDrawn(); }));
    auto* int8Page = window.page(1);
    EXPECT_EQ(window.currentPage(), int8Page);
    window.quantizationErrorAction()->setChecked(true);
    ASSERT_TRUE(int8Page->hasQuantizationError());
    auto* scene = int8Page->scene();
    std::size_t int8Nodes = 0;
    for (const auto& n : report->nodes) int8Nodes += n.int8Nodes.size();
    // Both Conv share nothing; each node's DynamicQuantizeLinear, integer op, Cast, two Mul and
    // Add.
    EXPECT_EQ(scene->sqnrNodeCount(), static_cast<int>(int8Nodes));
    EXPECT_TRUE(int8Page->quantizationLegend()->isVisible());
    EXPECT_TRUE(int8Page->quantizationLegend()->caption().startsWith(
        QStringLiteral("%1 quantized").arg(int8Nodes)));
    const auto sqnr = dialog->sqnrByNode();
    int checked = 0;
    for (std::size_t n = 0; n < scene->view().nodes.size(); ++n) {
        const auto& node = scene->view().nodes[n];
        auto* item = scene->nodeItem(static_cast<int>(n));
        if (!item || !node.proto) continue;
        auto it = sqnr.find(profileNameOf(*node.proto));
        if (it == sqnr.end()) {
            EXPECT_EQ(item->heatColour(), std::nullopt) << node.proto->name();
        } else {
            EXPECT_EQ(item->heatColour(), widgets::sqnrColour(it->second)) << node.proto->name();
            ++checked;
        }
    }
    EXPECT_EQ(checked, static_cast<int>(int8Nodes));
    window.quantizationErrorAction()->setChecked(false);
    EXPECT_FALSE(int8Page->hasQuantizationError());
    EXPECT_FALSE(int8Page->quantizationLegend()->isVisible());

    // The float tab has no overlay; the action follows the tab.
    window.quantizationErrorAction()->setChecked(true);
    EXPECT_TRUE(int8Page->hasQuantizationError());
    window.openFile(floatPage->document().path);  // switches back to the float tab
    EXPECT_FALSE(window.quantizationErrorAction()->isChecked());
}

TEST(QuantizeDialogTest, CancelWritesNothingAndBadOutputIsRefused) {
    testing::clearSettings();
    QTemporaryDir dir;
    MainWindow window;
    window.show();
    auto* page = testing::openAndDraw(window, sample("tiny_bert"));
    ASSERT_NE(page, nullptr);
    window.showQuantizeDialog();
    QuantizeDialog* dialog = window.quantizeDialog();

    // The input itself as output: refused before anything runs.
    dialog->outputEdit()->setText(page->document().path);
    EXPECT_FALSE(dialog->start());
    EXPECT_TRUE(dialog->errorText().contains(QStringLiteral("is the input model")))
        << dialog->errorText().toStdString();

    const QString output = dir.filePath(QStringLiteral("bert.int8.onnx"));
    dialog->outputEdit()->setText(output);
    dialog->runsBox()->setValue(100000);  // long enough to be cancelled while timing
    ASSERT_TRUE(dialog->start());
    ASSERT_TRUE(testing::waitFor(
        [&] { return dialog->statusText().contains(QStringLiteral("timing")); }, 60000))
        << dialog->statusText().toStdString();
    dialog->cancel();
    ASSERT_TRUE(
        testing::waitFor([&] { return dialog->state() != QuantizeDialog::State::Running; }, 60000));
    EXPECT_EQ(dialog->state(), QuantizeDialog::State::Cancelled);
    EXPECT_FALSE(QFile::exists(output));
    EXPECT_FALSE(dialog->openButton()->isEnabled());
    EXPECT_EQ(std::filesystem::directory_iterator(dir.path().toStdString()),
              std::filesystem::directory_iterator());
}

TEST(QuantizeDialogTest, BrowseChoosesWhereTheInt8ModelGoesAndItIsRememberedPerModel) {
    testing::clearSettings();
    QTemporaryDir dir;
    const QString model = testing::writeModel(dir, "cnn.onnx", *testing::makeSmallCnn());
    const QString other = testing::writeModel(dir, "other.onnx", *testing::makeSmallCnn());
    ASSERT_TRUE(QDir(dir.path()).mkpath(QStringLiteral("out")));
    const QString chosen = dir.filePath(QStringLiteral("out/small"));  // no suffix typed
    {
        QuantizeDialog dialog;
        dialog.setModel(model);
        // By default beside the model.
        EXPECT_EQ(dialog.outputEdit()->text(), dir.filePath(QStringLiteral("cnn.int8.onnx")));
        ASSERT_NE(dialog.browseButton(), nullptr);
        dialog.show();
        // Browse opens a save dialog; the file chosen there becomes the output (.onnx added).
        QTimer answer;
        QString startedAt;
        QObject::connect(&answer, &QTimer::timeout, [&] {
            auto* files = qobject_cast<QFileDialog*>(QApplication::activeModalWidget());
            if (!files) return;
            answer.stop();
            startedAt = files->directory().absolutePath();
            // selectFile() leaves the name box alone while it has the focus, which it gets as
            // soon as the dialog shows: type the name the way a user does.
            files->setDirectory(QFileInfo(chosen).absolutePath());
            auto* name = files->findChild<QLineEdit*>(QStringLiteral("fileNameEdit"));
            if (!name) {
                ADD_FAILURE() << "QFileDialog has no fileNameEdit";
                static_cast<QDialog*>(files)->reject();
                return;
            }
            name->setText(QFileInfo(chosen).fileName());
            static_cast<QDialog*>(files)->accept();  // QFileDialog keeps its override protected
        });
        answer.start(20);
        dialog.browseButton()->click();
        EXPECT_EQ(startedAt, QFileInfo(model).absolutePath());  // where the output was
        EXPECT_EQ(dialog.outputEdit()->text().toStdString(),
                  (chosen + QStringLiteral(".onnx")).toStdString());
    }
    // A later session proposes it again for that model, and the default for another.
    QuantizeDialog later;
    later.setModel(model);
    EXPECT_EQ(later.outputEdit()->text().toStdString(),
              (chosen + QStringLiteral(".onnx")).toStdString());
    later.setModel(other);
    EXPECT_EQ(later.outputEdit()->text(), dir.filePath(QStringLiteral("other.int8.onnx")));
    // What start() wrote to is remembered too, and the file is written there.
    const QString typed = dir.filePath(QStringLiteral("out/typed.onnx"));
    later.outputEdit()->setText(typed);
    later.runsBox()->setValue(1);
    ASSERT_TRUE(later.start()) << later.errorText().toStdString();
    ASSERT_TRUE(
        testing::waitFor([&] { return later.state() != QuantizeDialog::State::Running; }, 120000));
    EXPECT_EQ(later.state(), QuantizeDialog::State::Done) << later.errorText().toStdString();
    EXPECT_TRUE(QFile::exists(typed));
    QuantizeDialog third;
    third.setModel(other);
    EXPECT_EQ(third.outputEdit()->text(), typed);
}

// A form label with a mnemonic needs a buddy, or Qt shows its '&' as it is: the output row (a
// line edit and Browse) read "&Output model:" in the screenshot of the dialog.
TEST(QuantizeDialogTest, NoLabelShowsItsMnemonicAmpersand) {
    QuantizeDialog dialog;
    dialog.show();
    int mnemonics = 0;
    for (QLabel* label : dialog.findChildren<QLabel*>()) {
        const QString text = QString(label->text()).remove(QStringLiteral("&&"));
        if (!text.contains(QLatin1Char('&')) || label->textFormat() == Qt::RichText) continue;
        ++mnemonics;
        EXPECT_NE(label->buddy(), nullptr) << label->text().toStdString();
    }
    EXPECT_GE(mnemonics, 5);
    EXPECT_EQ(dialog.outputEdit()->parentWidget(), &dialog);
}

// The int4 option (as `onnxlens-cli quantize --format int4`): MatMul weights to MatMulNBits with
// the block size, zero points and accuracy level chosen; the card says int4 and the settings; the
// choices come back in the next dialog.
TEST(QuantizeDialogTest, Int4WritesMatMulNBitsAndTheChoicesAreRemembered) {
    testing::clearSettings();
    QTemporaryDir dir;
    MainWindow window;
    window.show();
    auto* page = testing::openAndDraw(window, sample("tiny_bert"));
    ASSERT_NE(page, nullptr);
    window.showQuantizeDialog();
    QuantizeDialog* dialog = window.quantizeDialog();
    // Defaults: int8 QOperator with the embeddings (Gather), the int4 choices greyed out.
    EXPECT_EQ(dialog->formatBox()->currentData().toString(), QStringLiteral("qoperator"));
    EXPECT_TRUE(dialog->opTypeBox(QStringLiteral("Gather"))->isChecked());
    EXPECT_FALSE(dialog->blockSizeBox()->isEnabled());
    EXPECT_TRUE(dialog->outputEdit()->text().endsWith(QStringLiteral(".int8.onnx")));

    dialog->formatBox()->setCurrentIndex(dialog->formatBox()->findData(QStringLiteral("int4")));
    EXPECT_TRUE(dialog->int4Chosen());
    EXPECT_TRUE(dialog->outputEdit()->text().endsWith(QStringLiteral(".int4.onnx")))
        << dialog->outputEdit()->text().toStdString();
    EXPECT_TRUE(dialog->blockSizeBox()->isEnabled());
    EXPECT_FALSE(dialog->opTypeBox(QStringLiteral("Gemm"))->isEnabled());
    EXPECT_FALSE(dialog->perChannelBox()->isEnabled());
    dialog->blockSizeBox()->setCurrentIndex(dialog->blockSizeBox()->findData(16));
    dialog->symmetricBox()->setChecked(false);
    dialog->accuracyLevelBox()->setValue(4);
    dialog->toleranceBox()->setValue(5.0);
    dialog->runsBox()->setValue(1);
    const QString output = dir.filePath(QStringLiteral("bert.int4.onnx"));
    dialog->outputEdit()->setText(output);
    ASSERT_TRUE(dialog->start()) << dialog->errorText().toStdString();
    ASSERT_TRUE(testing::waitFor([&] { return dialog->state() != QuantizeDialog::State::Running; },
                                 120000));
    ASSERT_EQ(dialog->state(), QuantizeDialog::State::Done) << dialog->errorText().toStdString();
    const auto report = dialog->report();
    ASSERT_NE(report, nullptr);
    EXPECT_EQ(report->settings.format, engine::QuantizationFormat::Int4);
    EXPECT_EQ(report->settings.blockSize, 16);
    EXPECT_FALSE(report->settings.symmetric);
    EXPECT_EQ(report->settings.accuracyLevel, 4);
    EXPECT_GT(report->quantizedPerOpType.at("MatMul"), 0);
    EXPECT_EQ(report->quantizedPerOpType.count("Gather"), 0u);
    const QString footer = dialog->reportCard()->footerText();
    EXPECT_TRUE(footer.contains(QStringLiteral(
        "int4 MatMulNBits weights, blocks of 16, asymmetric (zero points), accuracy level 4")))
        << footer.toStdString();
    EXPECT_TRUE(footer.contains(QStringLiteral("MB int4"))) << footer.toStdString();
    if (const QByteArray shots = qgetenv("ONNXLENS_SCREENSHOT_DIR"); !shots.isEmpty())
        dialog->grab().save(QString::fromLocal8Bit(shots) + "/quantize-dialog-int4.png");

    // The file: MatMulNBits with those attributes and a zero point input.
    onnx::ModelProto written;
    {
        std::ifstream in(output.toStdString(), std::ios::binary);
        ASSERT_TRUE(written.ParseFromIstream(&in));
    }
    int nbits = 0;
    for (const auto& node : written.graph().node()) {
        if (node.op_type() != "MatMulNBits") continue;
        ++nbits;
        EXPECT_EQ(node.domain(), "com.microsoft");
        EXPECT_GE(node.input_size(), 4) << "asymmetric: zero points";
        for (const auto& a : node.attribute()) {
            const std::map<std::string, std::int64_t> expected = {
                {"block_size", 16}, {"accuracy_level", 4}, {"bits", 4}};
            if (expected.count(a.name())) {
                EXPECT_EQ(a.i(), expected.at(a.name())) << a.name();
            }
        }
    }
    EXPECT_EQ(nbits, report->quantizedPerOpType.at("MatMul"));

    // Remembered: the next dialog comes back with int4, block 16, asymmetric, level 4, 5 dB.
    QuantizeDialog next;
    EXPECT_TRUE(next.int4Chosen());
    EXPECT_EQ(next.blockSizeBox()->currentData().toInt(), 16);
    EXPECT_FALSE(next.symmetricBox()->isChecked());
    EXPECT_EQ(next.accuracyLevelBox()->value(), 4);
    EXPECT_DOUBLE_EQ(next.toleranceBox()->value(), 5.0);
    EXPECT_TRUE(next.blockSizeBox()->isEnabled());
    EXPECT_FALSE(next.opTypeBox(QStringLiteral("MatMul"))->isEnabled());
    testing::clearSettings();
}

// The dialog for docs/ (issue 33: the output's place is chosen in it), after quantizing
// tiny_bert's MatMul weights to int8:
//   ONNXLENS_SCREENSHOT_DIR=docs widgets_tests --gtest_filter='QuantizeDialogTest.Screenshot*'
TEST(QuantizeDialogTest, ScreenshotOfTheDialogWithItsReportCard) {
    const QString out = qEnvironmentVariable("ONNXLENS_SCREENSHOT_DIR");
    if (out.isEmpty()) GTEST_SKIP() << "set ONNXLENS_SCREENSHOT_DIR to take the screenshot";
    testing::clearSettings();
    QTemporaryDir dir;
    MainWindow window;
    window.show();
    auto* page = testing::openAndDraw(window, sample("tiny_bert"));
    ASSERT_NE(page, nullptr) << window.lastError().toStdString();
    window.showQuantizeDialog();
    QuantizeDialog* dialog = window.quantizeDialog();
    dialog->outputEdit()->setText(dir.filePath(QStringLiteral("tiny_bert.int8.onnx")));
    dialog->runsBox()->setValue(5);
    ASSERT_TRUE(dialog->start()) << dialog->errorText().toStdString();
    ASSERT_TRUE(testing::waitFor([&] { return dialog->state() != QuantizeDialog::State::Running; },
                                 120000));
    ASSERT_EQ(dialog->state(), QuantizeDialog::State::Done) << dialog->errorText().toStdString();
    QTest::qWait(200);
    ASSERT_TRUE(dialog->grab().save(out + QStringLiteral("/screenshot-quantize.png")));
}

}  // namespace
}  // namespace onnxlens
