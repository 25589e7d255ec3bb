// The Run dock's defaults for a decoder with a KV cache (RunPanel::applyDecoderDefaults): kept
// apart from RunPanel.cpp, which holds the dock's general rows.
#include <QSettings>
#include <QSpinBox>
#include <QTableWidget>

#include "widgets/panels/RunPanel.h"

namespace onnxlens::widgets {

void RunPanel::applyDecoderDefaults() {
    if (!decoder_) return;
    const DecoderRunInputs& d = *decoder_;
    // The rows' sources: ones for the mask and the cache switch, positions for the position ids.
    const auto sourceOf = [](InputSource::Kind kind) {
        InputSource source;
        source.kind = kind;
        source.low = 0;  // positions start at 0
        return source;
    };
    if (!d.mask.empty())
        setInputSource(QString::fromStdString(d.mask), sourceOf(InputSource::Kind::Ones));
    if (!d.useCacheBranch.empty())
        setInputSource(QString::fromStdString(d.useCacheBranch), sourceOf(InputSource::Kind::Ones));
    if (!d.positions.empty())
        setInputSource(QString::fromStdString(d.positions), sourceOf(InputSource::Kind::Positions));
    // The dims: the past length starts at 0 (the prefill); the mask's length is not typed.
    QSettings settings;
    settings.beginGroup(settingsGroup());
    for (int row = 0; row < dims_->rowCount(); ++row) {
        const QString symbol = dims_->item(row, 0)->text();
        auto* spin = qobject_cast<QSpinBox*>(dims_->cellWidget(row, 1));
        if (!spin) continue;
        const QSignalBlocker quiet(spin);  // the remembered values stay as they are
        if (!d.pastSymbol.empty() && symbol.toStdString() == d.pastSymbol) {
            spin->setMinimum(0);
            spin->setValue(settings.value(QStringLiteral("dims/") + symbol, 0).toInt());
            spin->setToolTip(
                tr("The decoder's past length: 0 runs the prefill with empty past key/value "
                   "inputs (the Benchmark dock's Decode tab runs the steps after it)"));
        } else if (!d.maskSymbol.empty() && symbol.toStdString() == d.maskSymbol &&
                   symbol.toStdString() != d.pastSymbol) {
            spin->setMinimum(0);
            spin->setSpecialValueText(tr("past + sequence"));
            spin->setValue(0);
            spin->setEnabled(false);
            spin->setToolTip(tr("%1's length is the past length plus the new tokens")
                                 .arg(QString::fromStdString(d.mask)));
        }
    }
    settings.endGroup();
}

}  // namespace onnxlens::widgets
