#!/usr/bin/env python3
"""Writes the ImageDecoder test images and their expected pixels (tests/engine/ops/
ImageDecoderOpsTest.cpp). The expectations are what the ONNX reference implementation of
ImageDecoder-20 decodes them to: PIL, `np.array(img.convert("RGB"))`, and for Grayscale
`img.convert("RGB").convert("L")` (PIL's integer weights). Run with /usr/bin/python3 (numpy, PIL).
Files: NAME (the encoded image), NAME.rgb (H*W*3 bytes), NAME.gray (H*W bytes); sizes in the test.
"""
import io

import numpy as np
import PIL.Image

rng = np.random.default_rng(7)
images = {}
images["small.png"] = (PIL.Image.fromarray(rng.integers(0, 256, (2, 3, 3), dtype=np.uint8)), "PNG", {})
smooth = np.zeros((8, 8, 3), np.uint8)
smooth[..., 0] = np.arange(8) * 30
smooth[..., 1] = np.arange(8)[:, None] * 25
smooth[..., 2] = 200
images["small.jpg"] = (PIL.Image.fromarray(smooth), "JPEG", {"quality": 90})
palette = PIL.Image.fromarray(rng.integers(0, 256, (3, 5, 3), dtype=np.uint8))
images["palette_alpha.png"] = (palette.convert("P", palette=PIL.Image.ADAPTIVE, colors=4), "PNG",
                               {"transparency": 1})
for name, (image, fmt, options) in images.items():
    buf = io.BytesIO()
    image.save(buf, fmt, **options)
    with open(name, "wb") as f:
        f.write(buf.getvalue())
    decoded = PIL.Image.open(io.BytesIO(buf.getvalue())).convert("RGB")
    np.array(decoded).tofile(name + ".rgb")
    np.array(decoded.convert("L")).tofile(name + ".gray")
    print(name, decoded.size)
