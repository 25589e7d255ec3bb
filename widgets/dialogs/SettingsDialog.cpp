#include "widgets/dialogs/SettingsDialog.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QDoubleValidator>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QThread>
#include <QToolButton>
#include <QVBoxLayout>

#include "onnxlens/workflows/ReferenceComparison.h"
#include "widgets/SettingsKeys.h"

namespace onnxlens::widgets {

namespace {

QSpinBox* spin(int minimum, int maximum, QWidget* parent) {
    auto* box = new QSpinBox(parent);
    box->setRange(minimum, maximum);
    return box;
}

QSpinBox* threadsSpin(QWidget* parent) {
    auto* box = spin(0, 256, parent);
    box->setSpecialValueText(QObject::tr("all cores (%1)").arg(QThread::idealThreadCount()));
    return box;
}

QLineEdit* toleranceEdit(QWidget* parent) {
    auto* edit = new QLineEdit(parent);
    auto* validator = new QDoubleValidator(0, 1e300, 20, edit);
    validator->setNotation(QDoubleValidator::ScientificNotation);
    edit->setValidator(validator);
    return edit;
}

bool readTolerance(const QLineEdit* edit, double& value) {
    bool ok = false;
    value = edit->text().toDouble(&ok);
    return ok && value >= 0;
}

}  // namespace

SettingsDialog::SettingsDialog(QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Settings"));

    benchmarkThreads_ = threadsSpin(this);
    benchmarkWarmup_ = spin(0, 100000, this);
    benchmarkRuns_ = spin(1, 1000000, this);
    benchmarkProfile_ = new QCheckBox(tr("Profile operators (time every node)"), this);
    auto* benchmark = new QGroupBox(tr("Benchmark"), this);
    auto* benchmarkForm = new QFormLayout(benchmark);
    benchmarkForm->addRow(tr("Threads:"), benchmarkThreads_);
    benchmarkForm->addRow(tr("Warm-up runs:"), benchmarkWarmup_);
    benchmarkForm->addRow(tr("Timed runs:"), benchmarkRuns_);
    benchmarkForm->addRow(QString(), benchmarkProfile_);

    compareRtol_ = toleranceEdit(this);
    compareAtol_ = toleranceEdit(this);
    auto* compare = new QGroupBox(tr("Compare with reference outputs"), this);
    auto* compareForm = new QFormLayout(compare);
    compareForm->addRow(tr("Relative tolerance (rtol):"), compareRtol_);
    compareForm->addRow(tr("Absolute tolerance (atol):"), compareAtol_);

    exportPython_ = new QLineEdit(this);
    auto* browse = new QToolButton(this);
    browse->setText(QStringLiteral("…"));
    connect(browse, &QToolButton::clicked, this, &SettingsDialog::browsePython);
    auto* pythonRow = new QHBoxLayout;
    pythonRow->addWidget(exportPython_, 1);
    pythonRow->addWidget(browse);
    exportTimeout_ = spin(1, 24 * 3600, this);
    exportTimeout_->setSuffix(tr(" s"));
    exportThreads_ = threadsSpin(this);
    exportWarmup_ = spin(0, 100000, this);
    exportRuns_ = spin(1, 1000000, this);
    auto* exporter = new QGroupBox(tr("Export from PyTorch"), this);
    auto* exportForm = new QFormLayout(exporter);
    exportForm->addRow(tr("Python interpreter:"), pythonRow);
    exportForm->addRow(tr("Time limit:"), exportTimeout_);
    exportForm->addRow(tr("Benchmark threads:"), exportThreads_);
    exportForm->addRow(tr("Benchmark warm-up runs:"), exportWarmup_);
    exportForm->addRow(tr("Benchmark timed runs:"), exportRuns_);

    auto* buttons = new QDialogButtonBox(
        QDialogButtonBox::Ok | QDialogButtonBox::Cancel | QDialogButtonBox::RestoreDefaults, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &SettingsDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(buttons->button(QDialogButtonBox::RestoreDefaults), &QPushButton::clicked, this,
            &SettingsDialog::restoreDefaults);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(benchmark);
    layout->addWidget(compare);
    layout->addWidget(exporter);
    layout->addWidget(buttons);
    load();
}

void SettingsDialog::load() {
    QSettings s;
    benchmarkThreads_->setValue(
        s.value(settings::kBenchmarkThreads, settings::kBenchmarkThreadsDefault).toInt());
    benchmarkWarmup_->setValue(
        s.value(settings::kBenchmarkWarmup, settings::kBenchmarkWarmupDefault).toInt());
    benchmarkRuns_->setValue(
        s.value(settings::kBenchmarkRuns, settings::kBenchmarkRunsDefault).toInt());
    benchmarkProfile_->setChecked(
        s.value(settings::kBenchmarkProfile, settings::kBenchmarkProfileDefault).toBool());
    const engine::Tolerance tolerance;
    compareRtol_->setText(s.value(settings::kCompareRtol, tolerance.rtol).toString());
    compareAtol_->setText(s.value(settings::kCompareAtol, tolerance.atol).toString());
    s.beginGroup(QLatin1String(settings::kExportGroup));
    exportPython_->setText(
        s.value(settings::kExportPython, QString::fromLatin1(settings::kExportPythonDefault))
            .toString());
    exportTimeout_->setValue(
        s.value(settings::kExportTimeout, settings::kExportTimeoutDefault).toInt());
    exportThreads_->setValue(s.value(settings::kExportThreads, 0).toInt());
    exportWarmup_->setValue(
        s.value(settings::kExportWarmup, settings::kExportWarmupDefault).toInt());
    exportRuns_->setValue(s.value(settings::kExportRuns, settings::kExportRunsDefault).toInt());
}

void SettingsDialog::restoreDefaults() {
    benchmarkThreads_->setValue(settings::kBenchmarkThreadsDefault);
    benchmarkWarmup_->setValue(settings::kBenchmarkWarmupDefault);
    benchmarkRuns_->setValue(settings::kBenchmarkRunsDefault);
    benchmarkProfile_->setChecked(settings::kBenchmarkProfileDefault);
    const engine::Tolerance tolerance;
    compareRtol_->setText(QString::number(tolerance.rtol));
    compareAtol_->setText(QString::number(tolerance.atol));
    exportPython_->setText(QString::fromLatin1(settings::kExportPythonDefault));
    exportTimeout_->setValue(settings::kExportTimeoutDefault);
    exportThreads_->setValue(0);
    exportWarmup_->setValue(settings::kExportWarmupDefault);
    exportRuns_->setValue(settings::kExportRunsDefault);
}

bool SettingsDialog::save() {
    double rtol = 0, atol = 0;
    if (!readTolerance(compareRtol_, rtol) || !readTolerance(compareAtol_, atol) ||
        exportPython_->text().trimmed().isEmpty())
        return false;
    QSettings s;
    s.setValue(settings::kBenchmarkThreads, benchmarkThreads_->value());
    s.setValue(settings::kBenchmarkWarmup, benchmarkWarmup_->value());
    s.setValue(settings::kBenchmarkRuns, benchmarkRuns_->value());
    s.setValue(settings::kBenchmarkProfile, benchmarkProfile_->isChecked());
    s.setValue(settings::kCompareRtol, rtol);
    s.setValue(settings::kCompareAtol, atol);
    s.beginGroup(QLatin1String(settings::kExportGroup));
    s.setValue(settings::kExportPython, exportPython_->text().trimmed());
    s.setValue(settings::kExportTimeout, exportTimeout_->value());
    s.setValue(settings::kExportThreads, exportThreads_->value());
    s.setValue(settings::kExportWarmup, exportWarmup_->value());
    s.setValue(settings::kExportRuns, exportRuns_->value());
    return true;
}

void SettingsDialog::accept() {
    if (!save()) {
        QMessageBox::warning(this, windowTitle(),
                             tr("rtol and atol must be numbers ≥ 0 (e.g. 1e-3 and 1e-5), and the "
                                "Python interpreter must be given."));
        return;
    }
    QDialog::accept();
}

void SettingsDialog::browsePython() {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Python Interpreter"), exportPython_->text());
    if (!path.isEmpty()) exportPython_->setText(path);
}

}  // namespace onnxlens::widgets
