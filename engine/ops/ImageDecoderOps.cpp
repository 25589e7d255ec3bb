// ImageDecoder (opset 20): an encoded image (1-D uint8: JPEG through libjpeg, PNG through libpng)
// to an [H, W, C] uint8 tensor; C is 3 for pixel_format "RGB" (the default) and "BGR", 1 for
// "Grayscale" (from RGB with PIL's integer weights, as the ONNX reference decodes through PIL).
// Gray sources are replicated to RGB, PNG alpha is dropped, palettes are expanded, 16-bit PNG
// samples keep their high byte. Other formats and damaged data are errors naming the problem.
//
// The input is fuzzed: libjpeg and libpng report errors by longjmp, so every frame between a
// setjmp and the library calls holds only trivially destructible objects (the C structs below);
// buffers are allocated outside those frames, and the output tensor (whose allocation checks the
// session's memory limit) is allocated from the header's dimensions before any pixel is decoded.
#include <cstdio>  // jpeglib.h needs FILE
// clang-format off
#include <jpeglib.h>
#include <png.h>
// clang-format on

#include <csetjmp>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "OpFamilies.h"
#include "onnxlens/engine/EngineError.h"
#include "onnxlens/engine/Kernel.h"

namespace onnxlens::engine::ops {

namespace {

enum class PixelFormat { RGB, BGR, Grayscale };

// Images wider or taller than this are refused before decoding (libpng's own default limit).
constexpr std::uint32_t kMaxSide = 1000000;

// ---------------------------------------------------------------------------------------------
// JPEG

struct JpegErrorManager {
    jpeg_error_mgr mgr;
    std::jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void jpegErrorExit(j_common_ptr info) {
    auto* e = reinterpret_cast<JpegErrorManager*>(info->err);
    (*info->err->format_message)(info, e->message);
    std::longjmp(e->jump, 1);
}

void jpegIgnoreMessage(j_common_ptr, int) {}  // warnings: decode what the data holds

struct JpegDecoder {
    jpeg_decompress_struct info;
    JpegErrorManager error;
    bool created;
};

// Reads the header and sets up RGB output; false (message in error.message) on bad data.
bool jpegReadHeader(JpegDecoder& d, const unsigned char* data, unsigned long size) {
    d.info.err = jpeg_std_error(&d.error.mgr);
    d.error.mgr.error_exit = jpegErrorExit;
    d.error.mgr.emit_message = jpegIgnoreMessage;
    if (setjmp(d.error.jump)) return false;
    jpeg_create_decompress(&d.info);
    d.created = true;
    jpeg_mem_src(&d.info, data, size);
    jpeg_read_header(&d.info, TRUE);
    d.info.out_color_space = JCS_RGB;
    jpeg_calc_output_dimensions(&d.info);
    return true;
}

// Decodes into `out` (height rows of width * 3 bytes).
bool jpegDecode(JpegDecoder& d, std::uint8_t* out) {
    if (setjmp(d.error.jump)) return false;
    jpeg_start_decompress(&d.info);
    const std::size_t stride = static_cast<std::size_t>(d.info.output_width) * 3;
    while (d.info.output_scanline < d.info.output_height) {
        JSAMPROW row = out + static_cast<std::size_t>(d.info.output_scanline) * stride;
        if (jpeg_read_scanlines(&d.info, &row, 1) != 1) break;
    }
    jpeg_abort_decompress(&d.info);  // no need to read what follows the image
    return true;
}

Tensor decodeJpeg(const std::uint8_t* data, std::size_t size) {
    JpegDecoder d;
    std::memset(&d, 0, sizeof d);
    const bool headerOk = jpegReadHeader(d, data, static_cast<unsigned long>(size));
    std::string problem = headerOk ? "" : d.error.message;
    Tensor image;
    if (headerOk) {
        const JDIMENSION w = d.info.output_width, h = d.info.output_height;
        if (d.info.output_components != 3)
            problem = "unsupported JPEG color space";
        else if (w == 0 || h == 0 || w > kMaxSide || h > kMaxSide)
            problem =
                "image size " + std::to_string(w) + "x" + std::to_string(h) + " is out of range";
        if (problem.empty()) {
            try {
                image = Tensor(DataType::UInt8,
                               {static_cast<std::int64_t>(h), static_cast<std::int64_t>(w), 3});
            } catch (const EngineError& e) {
                problem = e.what();
            }
        }
        if (problem.empty() && !jpegDecode(d, image.data<std::uint8_t>()))
            problem = d.error.message;
    }
    if (d.created) jpeg_destroy_decompress(&d.info);
    require(problem.empty(), [&] { return "ImageDecoder: bad JPEG data: " + problem; });
    return image;
}

// ---------------------------------------------------------------------------------------------
// PNG

struct PngDecoder {
    png_structp png;
    png_infop info;
    const std::uint8_t* data;
    std::size_t size, position;
    char message[256];
};

[[noreturn]] void pngError(png_structp png, png_const_charp message) {
    auto* d = static_cast<PngDecoder*>(png_get_error_ptr(png));
    std::snprintf(d->message, sizeof d->message, "%s", message ? message : "unknown error");
    png_longjmp(png, 1);
}

void pngWarning(png_structp, png_const_charp) {}

void pngRead(png_structp png, png_bytep out, png_size_t count) {
    auto* d = static_cast<PngDecoder*>(png_get_io_ptr(png));
    if (count > d->size - d->position) png_error(png, "the PNG data ends early");
    std::memcpy(out, d->data + d->position, count);
    d->position += count;
}

// Reads the header and sets up 8-bit RGB output; false (message set) on bad data.
bool pngReadHeader(PngDecoder& d) {
    d.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &d, pngError, pngWarning);
    if (d.png) d.info = png_create_info_struct(d.png);
    if (!d.png || !d.info) {
        std::snprintf(d.message, sizeof d.message, "out of memory");
        return false;
    }
    if (setjmp(png_jmpbuf(d.png))) return false;
    png_set_read_fn(d.png, &d, pngRead);
    png_set_user_limits(d.png, kMaxSide, kMaxSide);
    png_read_info(d.png, d.info);
    png_set_expand(d.png);  // palette to RGB, gray below 8 bits to 8, tRNS to alpha
    png_set_strip_16(d.png);
    png_set_strip_alpha(d.png);
    png_set_gray_to_rgb(d.png);
    png_set_interlace_handling(d.png);
    png_read_update_info(d.png, d.info);
    return true;
}

bool pngDecode(PngDecoder& d, png_bytepp rows) {
    if (setjmp(png_jmpbuf(d.png))) return false;
    png_read_image(d.png, rows);
    return true;
}

Tensor decodePng(const std::uint8_t* data, std::size_t size) {
    PngDecoder d;
    std::memset(&d, 0, sizeof d);
    d.data = data;
    d.size = size;
    const bool headerOk = pngReadHeader(d);
    std::string problem = headerOk ? "" : d.message;
    Tensor image;
    if (headerOk) {
        const png_uint_32 w = png_get_image_width(d.png, d.info);
        const png_uint_32 h = png_get_image_height(d.png, d.info);
        if (png_get_channels(d.png, d.info) != 3 || png_get_bit_depth(d.png, d.info) != 8 ||
            png_get_rowbytes(d.png, d.info) != static_cast<std::size_t>(w) * 3)
            problem = "unsupported PNG layout";
        else if (w == 0 || h == 0)
            problem = "empty image";
        std::vector<png_bytep> rows;
        if (problem.empty()) {
            try {
                image = Tensor(DataType::UInt8,
                               {static_cast<std::int64_t>(h), static_cast<std::int64_t>(w), 3});
                rows.resize(h);
                for (png_uint_32 y = 0; y < h; ++y)
                    rows[y] = image.data<std::uint8_t>() + static_cast<std::size_t>(y) * w * 3;
            } catch (const EngineError& e) {
                problem = e.what();
            }
        }
        if (problem.empty() && !pngDecode(d, rows.data())) problem = d.message;
    }
    png_destroy_read_struct(d.png ? &d.png : nullptr, d.info ? &d.info : nullptr, nullptr);
    require(problem.empty(), [&] { return "ImageDecoder: bad PNG data: " + problem; });
    return image;
}

// ---------------------------------------------------------------------------------------------

Tensor toPixelFormat(const Tensor& rgb, PixelFormat format) {
    const std::int64_t pixels = rgb.dim(0) * rgb.dim(1);
    const std::uint8_t* in = rgb.data<std::uint8_t>();
    if (format == PixelFormat::RGB) return rgb;
    if (format == PixelFormat::BGR) {
        Tensor out(DataType::UInt8, rgb.shape());
        std::uint8_t* o = out.data<std::uint8_t>();
        for (std::int64_t p = 0; p < pixels; ++p) {
            o[3 * p] = in[3 * p + 2];
            o[3 * p + 1] = in[3 * p + 1];
            o[3 * p + 2] = in[3 * p];
        }
        return out;
    }
    // PIL's convert("L"): (R * 19595 + G * 38470 + B * 7471 + 0x8000) >> 16.
    Tensor out(DataType::UInt8, {rgb.dim(0), rgb.dim(1), 1});
    std::uint8_t* o = out.data<std::uint8_t>();
    for (std::int64_t p = 0; p < pixels; ++p)
        o[p] = static_cast<std::uint8_t>(
            (in[3 * p] * 19595u + in[3 * p + 1] * 38470u + in[3 * p + 2] * 7471u + 0x8000u) >> 16);
    return out;
}

class ImageDecoderKernel final : public Kernel {
  public:
    explicit ImageDecoderKernel(const NodeInfo& node) {
        const std::string format = node.getString("pixel_format", "RGB");
        if (format == "RGB")
            format_ = PixelFormat::RGB;
        else if (format == "BGR")
            format_ = PixelFormat::BGR;
        else if (format == "Grayscale")
            format_ = PixelFormat::Grayscale;
        else
            fail("ImageDecoder: pixel_format must be RGB, BGR or Grayscale, got '" + format + "'");
    }

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& encoded = inputTensor(inputs, 0);
        require(encoded.dtype() == DataType::UInt8 && encoded.rank() == 1, [&] {
            return std::string("ImageDecoder: encoded_stream must be a 1-D uint8 tensor, got ") +
                   dataTypeName(encoded.dtype()) + " " + shapeToString(encoded.shape());
        });
        const auto* bytes = encoded.data<std::uint8_t>();
        const auto size = static_cast<std::size_t>(encoded.numel());
        static constexpr std::uint8_t kPng[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
        Tensor rgb;
        if (size >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF)
            rgb = decodeJpeg(bytes, size);
        else if (size >= 8 && std::memcmp(bytes, kPng, 8) == 0)
            rgb = decodePng(bytes, size);
        else
            fail("ImageDecoder: the " + std::to_string(size) +
                 " bytes are neither JPEG nor PNG (the formats this build decodes)");
        outputs[0] = Value(toPixelFormat(rgb, format_));
    }

  private:
    PixelFormat format_ = PixelFormat::RGB;
};

}  // namespace

void registerImageDecoderOps(KernelRegistry& registry) {
    registry.add<ImageDecoderKernel>("ImageDecoder", 20);
}

}  // namespace onnxlens::engine::ops
