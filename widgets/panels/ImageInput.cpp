#include "widgets/panels/ImageInput.h"

#include <QImage>
#include <QString>

namespace onnxlens::widgets {

using engine::DataType;
using engine::Shape;
using engine::Tensor;

Result<Tensor> imageToTensor(const std::filesystem::path& file, const Shape& shape, DataType dtype,
                             const ImagePreprocessing& preprocessing) {
    const std::string where = file.string();
    if (!engine::isFloatingPoint(dtype))
        return makeError(where, std::string("an image needs a floating-point input, this one is ") +
                                    engine::dataTypeName(dtype));
    if (shape.size() != 4 || (shape[1] != 1 && shape[1] != 3) || shape[2] <= 0 || shape[3] <= 0 ||
        shape[0] <= 0)
        return makeError(where, "an image needs a 4-D input [N, 1 or 3, H, W], this one is " +
                                    engine::shapeToString(shape));
    QImage image(QString::fromStdString(file.string()));
    if (image.isNull()) return makeError(where, "not a readable image (PNG, JPEG, BMP, ...)");
    const int height = static_cast<int>(shape[2]), width = static_cast<int>(shape[3]);
    const int channels = static_cast<int>(shape[1]);
    image = image.convertToFormat(channels == 1 ? QImage::Format_Grayscale8 : QImage::Format_RGB888)
                .scaled(width, height, Qt::IgnoreAspectRatio, Qt::SmoothTransformation);

    std::array<double, 3> mean{0, 0, 0}, stddev{1, 1, 1};
    if (preprocessing.scaling == ImagePreprocessing::Scaling::ImageNet) {
        const ImagePreprocessing imageNet;
        mean = imageNet.mean;
        stddev = imageNet.std;
    } else if (preprocessing.scaling == ImagePreprocessing::Scaling::Custom) {
        mean = preprocessing.mean;
        stddev = preprocessing.std;
    }
    for (double s : stddev)
        if (s == 0) return makeError(where, "a std of 0 in the image normalization");
    if (channels == 1) {  // grey: the three channels' figures averaged
        mean[0] = (mean[0] + mean[1] + mean[2]) / 3;
        stddev[0] = (stddev[0] + stddev[1] + stddev[2]) / 3;
    }

    Tensor planar;
    try {
        planar = Tensor(DataType::Float, shape);
    } catch (const std::exception& e) {
        return makeError(where, e.what());
    }
    float* out = planar.data<float>();
    const std::int64_t plane = shape[2] * shape[3];
    for (int y = 0; y < height; ++y) {
        const uchar* row = image.constScanLine(y);
        for (int x = 0; x < width; ++x)
            for (int c = 0; c < channels; ++c) {
                const double v = row[x * channels + c] / 255.0;
                out[c * plane + y * width + x] = static_cast<float>((v - mean[c]) / stddev[c]);
            }
    }
    const std::int64_t item = channels * plane;
    for (std::int64_t n = 1; n < shape[0]; ++n) std::copy_n(out, item, out + n * item);
    if (dtype == DataType::Float) return planar;
    try {
        return planar.castTo(dtype);
    } catch (const std::exception& e) {
        return makeError(where, e.what());
    }
}

}  // namespace onnxlens::widgets
