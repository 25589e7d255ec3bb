#pragma once
// An image file as the input of a vision model: decoded with QImage (safe off the GUI thread),
// resized to the input's H and W, laid out NCHW, scaled to 0..1 and optionally normalized with a
// per-channel mean and std (ImageNet's by default).
#include <array>
#include <filesystem>

#include "onnxlens/engine/Tensor.h"
#include "onnxlens/model/Result.h"

namespace onnxlens::widgets {

struct ImagePreprocessing {
    enum class Scaling { ImageNet, UnitRange, Custom };
    Scaling scaling = Scaling::ImageNet;
    // Used by Custom, on the 0..1 scale: value = (pixel / 255 - mean[c]) / std[c].
    std::array<double, 3> mean{0.485, 0.456, 0.406};
    std::array<double, 3> std{0.229, 0.224, 0.225};
};

// `shape` is the input's concrete shape [N, C, H, W] with C 1 (grey) or 3 (RGB); every item of
// the batch gets the same image. `dtype` must be a floating-point type. Errors name the file.
Result<engine::Tensor> imageToTensor(const std::filesystem::path& file, const engine::Shape& shape,
                                     engine::DataType dtype,
                                     const ImagePreprocessing& preprocessing);

}  // namespace onnxlens::widgets
