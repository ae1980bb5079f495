#!/usr/bin/python3
"""Makes the fixtures of core/data's resize tests: a few generated,
photograph-like images (smooth light, blurred shapes, texture, sensor
noise) and what torchvision 0.14's evaluation transform makes of them,

    Image.open(p).convert("RGB") -> Resize(short) -> CenterCrop(size)

(Pillow's bilinear resize, torchvision's default interpolation), saved as
8-bit PNGs (ToTensor is the pixels / 255), with cases.json naming each
image, size and short side. Run with Debian's python3-torchvision:

    /usr/bin/python3 testdata/resize/make_resize.py
"""
import json
import os

import numpy as np
from PIL import Image, ImageFilter
import torchvision
from torchvision import transforms

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(51)


def photo(w, h, alpha=False):
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    light = 0.55 + 0.35 * (x / w) * (1 - y / h) + 0.1 * np.sin(x / 17.0 + y / 29.0)
    img = np.stack([light * c for c in rng.uniform(120, 230, 3)], axis=-1)
    for _ in range(5):  # blurred objects
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        rx, ry = rng.uniform(w / 12, w / 4), rng.uniform(h / 12, h / 4)
        inside = ((x - cx) / rx) ** 2 + ((y - cy) / ry) ** 2 < 1
        img[inside] = rng.uniform(0, 255, 3) * (0.7 + 0.3 * light[inside, None])
    img += 6 * np.sin(x[..., None] / 3.1) * np.cos(y[..., None] / 4.3)  # texture
    im = Image.fromarray(np.clip(img, 0, 255).astype(np.uint8)).filter(ImageFilter.GaussianBlur(1.2))
    a = np.asarray(im).astype(np.float64) + rng.normal(0, 2.5, (h, w, 3))  # sensor noise
    im = Image.fromarray(np.clip(np.round(a), 0, 255).astype(np.uint8))
    if alpha:
        im.putalpha(Image.fromarray(rng.integers(0, 256, (h, w), dtype=np.uint8)))
    return im


def main():
    cases = []
    for name, (w, h), alpha, size in [
        ("landscape.png", (150, 110), False, 64),   # downsampled both ways
        ("portrait-alpha.png", (97, 131), True, 32),  # alpha dropped, as convert("RGB")
        ("small.png", (40, 30), False, 64),          # upsampled
        ("photo.jpg", (400, 300), False, 224),       # ImageNet's 256 / 224, a JPEG
    ]:
        im = photo(w, h, alpha)
        path = os.path.join(here, name)
        if name.endswith(".jpg"):
            im.save(path, quality=88)  # 4:2:0, as most cameras
        else:
            im.save(path, optimize=True)
        short = int(round(size * 256 / 224))
        t = transforms.Compose([transforms.Resize(short), transforms.CenterCrop(size)])
        out = t(Image.open(path).convert("RGB"))
        want = name.rsplit(".", 1)[0] + f".want{size}.png"
        out.save(os.path.join(here, want), optimize=True)
        case = {"image": name, "size": size, "short": short, "want": want}
        if name.endswith(".jpg"):  # Pillow's (libjpeg's) decoding, for the decoders' difference
            dec = name.rsplit(".", 1)[0] + ".decoded.png"
            Image.open(path).convert("RGB").save(os.path.join(here, dec), optimize=True)
            case["decoded"] = dec
        cases.append(case)

    with open(os.path.join(here, "cases.json"), "w") as f:
        json.dump({"torchvision": torchvision.__version__, "pillow": Image.__version__, "cases": cases}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
