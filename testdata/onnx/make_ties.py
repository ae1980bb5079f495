#!/usr/bin/python3
"""Max-pool ties against PyTorch: networks and 8-bit images with flat regions, where most pooling windows
hold their largest value more than once and PyTorch's max_pool2d sends the gradient to the first of them.
Run by core/engine/onnx's TestMaxPoolTiesMatchPyTorch at test time (never committed).

Usage: /usr/bin/python3 testdata/onnx/make_ties.py OUTDIR

Writes OUTDIR/NAME.onnx for two networks and OUTDIR/ties.npz: x (4 images, 3×48×48, NCHW, in [0, 1]) and, per
network, NAME.g64 and NAME.g32, the gradient of each image's logit of class 3 with respect to x computed by
autograd in float64 (from the float32 weights) and in float32.
- resnet: torchvision's ResNet layout at widths 16 and 32 (7×7 stem of stride 2, batch norm, ReLU, a 3×3 max-pool
  of stride 2 and padding 1, torchvision's BasicBlocks), with trained-like batch-norm statistics, exported with
  batch norm folded into the convolutions. (make_graphs.py's resnet-basic has a stem of 8 channels, too few for
  OpenBLAS's Haswell kernel to sum its rows in two orders, which is what broke the ties.)
- pools: every max-pool path of the native engine: a 3×3 pool of stride 2 and padding 1 on the image itself
  (overlapping windows; three channels), a ReLU then a 2×2 pool on eight channels, a 3×3 convolution then a 2×2
  pool without ReLU, a 3×3 pool of stride 3, and a linear layer that weighs every window differently.
The images: a sky of one colour, a saturated white patch, a black band, a ramp quantised to 8 bits (runs of
equal values), noise, and one white pixel at an odd row and column, which is the largest value of the four
overlapping stem windows that hold it.
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn
from torchvision.models import resnet

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_graphs  # noqa: E402

CLASS = 3


class ResNet16(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = nn.Sequential(resnet.BasicBlock(16, 16))
        down = nn.Sequential(nn.Conv2d(16, 32, 1, 2, bias=False), nn.BatchNorm2d(32))
        self.layer2 = nn.Sequential(resnet.BasicBlock(16, 32, 2, down))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer2(self.layer1(x))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class Pools(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool1 = nn.MaxPool2d(3, 2, 1)
        self.conv1 = nn.Conv2d(3, 8, 1)
        self.relu = nn.ReLU()
        self.pool2 = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 8, 3, 1, 1)
        self.pool3 = nn.MaxPool2d(2)
        self.pool4 = nn.MaxPool2d(3)
        self.fc = nn.Linear(8 * 2 * 2, 10)

    def forward(self, x):
        x = self.pool2(self.relu(self.conv1(self.pool1(x))))
        x = self.pool4(self.pool3(self.conv2(x)))
        return self.fc(torch.flatten(x, 1))


def images(n=4, size=48, seed=5):
    rng = np.random.default_rng(seed)
    x = np.zeros((n, 3, size, size), np.float32)
    for i in range(n):
        img = rng.integers(0, 256, (3, size, size)).astype(np.float32)  # noise where nothing else is
        img[:, : size // 3, :] = rng.integers(0, 256, (3, 1, 1))  # sky
        r, c = rng.integers(size // 3, size // 2, 2)
        img[:, r : r + 12, c : c + 14] = 255  # saturated
        img[:, size - 10 - i : size - 6 - i, :] = 0  # black band
        ramp = np.floor(np.arange(size) / 5 + 20 * i)  # runs of five equal values
        img[:, size // 2 : size // 2 + 6, :] = ramp
        img[:, 1 + 2 * i, 1 + 2 * i] = 255  # the largest of four stem windows
        x[i] = img / 255
    return x


def gradients(m, x):
    out = {}
    for dtype, tag in ((torch.float64, "g64"), (torch.float32, "g32")):
        xd = torch.tensor(x, dtype=dtype, requires_grad=True)
        m.to(dtype)(xd)[:, CLASS].sum().backward()
        out[tag] = xd.grad.numpy().astype(np.float32)
    m.float()
    return out


def main():
    torch.set_num_threads(1)
    out = sys.argv[1]
    x = images()
    arrays = {"x": x}
    torch.manual_seed(7)
    gen = torch.Generator().manual_seed(7)
    nets = {
        "resnet": make_graphs.trained_statistics(ResNet16(), gen),
        "pools": Pools().eval(),
    }
    for name, m in nets.items():
        make_graphs.export(m, x.shape[1:], os.path.join(out, name + ".onnx"), 13, fold=name == "resnet")
        for tag, g in gradients(m, x).items():
            arrays[name + "." + tag] = g
    np.savez(os.path.join(out, "ties.npz"), **arrays)


if __name__ == "__main__":
    main()
