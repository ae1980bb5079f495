#!/usr/bin/python3
"""Make the ONNX graph fixtures of Faithlab's tests: the field's architectures, with branches, exported by
Debian's python3-torch and python3-torchvision (torch.onnx.export needs no `onnx` module).

Usage:
  /usr/bin/python3 testdata/onnx/make_graphs.py [OUTDIR]
      the committed fixtures (default: beside this script): width-reduced variants of the architectures,
      built from torchvision's own blocks where it has them, on 3×32×32 inputs, each exported at opsets
      11, 13 and 17 as NAME.opN.onnx, with NAME.expected.npz.
  /usr/bin/python3 testdata/onnx/make_graphs.py --full OUTDIR [NAME...]
      torchvision's full models (resnet18 resnet50 vgg16_bn mobilenet_v2 densenet121 efficientnet_b0 at
      3×224×224, and pytorch-cifar's ResNet-18 at 3×32×32), generated at test time, never committed; one
      opset each, from 11 to 17; one input, its logits and input gradients.
  /usr/bin/python3 testdata/onnx/make_graphs.py --opsets OUTDIR [NAME...]
      the small models at the opsets between (12 to 16), generated at test time, with their expectations.

Models (random weights, seeded; batch-norm statistics drawn as a trained model's would be):
- resnet-basic: torchvision's ResNet layout with its BasicBlock (7×7 stem, batch norm, 3×3 max-pool of
  stride 2 and padding 1, a residual Add per block, a 1×1 downsampling shortcut), widths 8 and 16.
- resnet-bottleneck: the same with torchvision's Bottleneck (ResNet-50's block), widths 4 and 8 (×4).
- cifar-resnet: pytorch-cifar's ResNet-18 layout (3×3 stem, no max-pool, shortcut Sequential,
  F.avg_pool2d(out, 4), out.view(out.size(0), -1): a Shape, Gather, Unsqueeze, Concat, Reshape chain).
- vgg-bn: torchvision's make_layers with batch norm, an adaptive average pool to 2×2, Dropout.
- mobilenet-v2: torchvision's InvertedResidual and Conv2dNormActivation (depthwise convolutions, ReLU6).
- efficientnet: torchvision's EfficientNet with a short MBConv setting (depthwise 3×3 and 5×5, SiLU,
  squeeze-and-excitation).
- densenet: torchvision's DenseNet with two short dense blocks (Concat; a transition's Pad + AveragePool).
- zoo: the other operators: dilated, grouped and non-square convolutions, asymmetric zero padding,
  HardSwish, a HardSigmoid gate, LeakyRelu, Clip with other bounds, ceil-mode max and average pools
  with and without counted padding, ReduceMean with keepdims both ways, arithmetic with per-channel
  constants, a three-way Concat.
- tabular: a multilayer perceptron with a residual Add, for tables (gmm's 20 features, 2 classes).
Exports alternate between constant folding (batch norm folded into the convolutions) and none
(batch norm kept; shape chains left for Faithlab to fold).

NAME.expected.npz holds x (2 inputs, NCHW), logits, grads (the gradient of each input's logit of class
3, or of the last class where there are fewer, with respect to x) and ig8 (Integrated Gradients of class 3 from a zero baseline, the right Riemann
sum of 8 steps), computed in float64 from the float32 weights, so that a comparison measures
Faithlab's float32 alone (logits stored in float64, the maps rounded to float32).
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torchvision.models import densenet, efficientnet, mobilenetv2, resnet, vgg
from torchvision.ops.misc import Conv2dNormActivation

CLASS = 3
IG_STEPS = 8


class ResNetSmall(nn.Module):
    """torchvision.models.ResNet's layout with two stages."""

    def __init__(self, block, widths, classes=10):
        super().__init__()
        self.inplanes = 8
        self.conv1 = nn.Conv2d(3, 8, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = self._layer(block, widths[0], 1)
        self.layer2 = self._layer(block, widths[1], 2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(widths[1] * block.expansion, classes)

    def _layer(self, block, planes, stride):
        down = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            down = nn.Sequential(nn.Conv2d(self.inplanes, planes * block.expansion, 1, stride, bias=False),
                                 nn.BatchNorm2d(planes * block.expansion))
        b = block(self.inplanes, planes, stride, down)
        self.inplanes = planes * block.expansion
        return nn.Sequential(b)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer2(self.layer1(x))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class CifarBlock(nn.Module):
    """pytorch-cifar's BasicBlock."""
    expansion = 1

    def __init__(self, in_planes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != planes:
            self.shortcut = nn.Sequential(nn.Conv2d(in_planes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class CifarResNet(nn.Module):
    """pytorch-cifar's ResNet (models/resnet.py), widths and block counts as given."""

    def __init__(self, blocks=(1, 1, 1, 1), widths=(8, 16, 32, 64), classes=10):
        super().__init__()
        self.in_planes = widths[0]
        self.conv1 = nn.Conv2d(3, widths[0], 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        layers = []
        for i, (n, w) in enumerate(zip(blocks, widths)):
            strides = [1 if i == 0 else 2] + [1] * (n - 1)
            ls = []
            for s in strides:
                ls.append(CifarBlock(self.in_planes, w, s))
                self.in_planes = w
            layers.append(nn.Sequential(*ls))
        self.layer1, self.layer2, self.layer3, self.layer4 = layers
        self.linear = nn.Linear(widths[3], classes)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.layer4(self.layer3(self.layer2(self.layer1(out))))
        out = F.avg_pool2d(out, 4)
        out = out.view(out.size(0), -1)
        return self.linear(out)


class VGGSmall(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = vgg.make_layers([8, "M", 16, "M", 32, 32, "M"], batch_norm=True)
        self.avgpool = nn.AdaptiveAvgPool2d((2, 2))
        self.classifier = nn.Sequential(nn.Linear(32 * 4, 32), nn.ReLU(True), nn.Dropout(), nn.Linear(32, classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


class MobileNetV2Small(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        IR = mobilenetv2.InvertedResidual
        self.features = nn.Sequential(
            Conv2dNormActivation(3, 8, stride=2, norm_layer=nn.BatchNorm2d, activation_layer=nn.ReLU6),
            IR(8, 8, 1, 1), IR(8, 16, 2, 6), IR(16, 16, 1, 6),
            Conv2dNormActivation(16, 32, kernel_size=1, norm_layer=nn.BatchNorm2d, activation_layer=nn.ReLU6))
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(32, classes))

    def forward(self, x):
        x = F.adaptive_avg_pool2d(self.features(x), (1, 1))
        return self.classifier(torch.flatten(x, 1))


def efficientnet_small(classes=10):
    C = efficientnet.MBConvConfig
    setting = [C(1, 3, 1, 8, 8, 1), C(6, 3, 2, 8, 16, 2), C(6, 5, 2, 16, 24, 1)]
    return efficientnet.EfficientNet(setting, dropout=0.2, num_classes=classes)


def densenet_small(classes=10):
    return densenet.DenseNet(growth_rate=4, block_config=(2, 2), num_init_features=8, bn_size=2, num_classes=classes)


class Zoo(nn.Module):
    """The operators the architectures above leave out."""

    def __init__(self, classes=10):
        super().__init__()
        self.dil = nn.Conv2d(3, 8, 3, padding=2, dilation=2)
        self.wide = nn.Conv2d(8, 8, (1, 3), padding=(0, 1))
        self.tall = nn.Conv2d(8, 8, (3, 1), stride=(2, 1), padding=(1, 0))
        self.grouped = nn.Conv2d(8, 12, 3, padding=1, groups=2)
        self.asym = nn.Conv2d(12, 12, 2)
        self.se1 = nn.Conv2d(12, 4, 1)
        self.se2 = nn.Conv2d(4, 12, 1)
        self.bn = nn.BatchNorm2d(12, eps=1e-3)
        self.fc = nn.Linear(12 + 12 + 12, classes)
        self.register_buffer("mean", torch.tensor([0.4, 0.5, 0.6]).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor([0.2, 0.25, 0.3]).view(1, 3, 1, 1))

    def forward(self, x):
        x = (x - self.mean) / self.std
        h = F.hardswish(self.dil(x))
        h = F.leaky_relu(self.wide(h), 0.1)
        h = F.hardtanh(self.tall(h), -1.0, 2.0)
        h = F.max_pool2d(h, 3, 2, 1, ceil_mode=True)
        h = self.grouped(h)
        h = self.asym(F.pad(h, (0, 1, 0, 1)))
        g = h.mean((2, 3), keepdim=True)
        h = h * F.hardsigmoid(self.se2(F.relu(self.se1(g))))
        h = self.bn(h) * 1.5 + 0.25
        a = F.avg_pool2d(h, 3, 2, 1, ceil_mode=True, count_include_pad=False)
        b = F.avg_pool2d(h, 3, 2, 1, count_include_pad=True)
        c = F.max_pool2d(h, 2)
        pooled = torch.cat([a.mean((2, 3)), b.mean((2, 3)), torch.flatten(c.mean((2, 3), keepdim=True), 1)], 1)
        return self.fc(torch.sigmoid(pooled) - 0.5)


class TabularResidual(nn.Module):
    """A multilayer perceptron with a residual connection, for tables (gmm's 20 features)."""

    def __init__(self, features=20, classes=2):
        super().__init__()
        self.f1 = nn.Linear(features, 16)
        self.f2 = nn.Linear(16, 16)
        self.f3 = nn.Linear(16, classes)

    def forward(self, x):
        h = F.relu(self.f1(x))
        return self.f3(F.relu(h + F.relu(self.f2(h))))


SMALL = {
    "resnet-basic": lambda: ResNetSmall(resnet.BasicBlock, (8, 16)),
    "resnet-bottleneck": lambda: ResNetSmall(resnet.Bottleneck, (4, 8)),
    "cifar-resnet": lambda: CifarResNet(widths=(8, 16, 16, 32)),
    "vgg-bn": VGGSmall,
    "mobilenet-v2": MobileNetV2Small,
    "efficientnet": efficientnet_small,
    "densenet": densenet_small,
    "zoo": Zoo,
    "tabular": TabularResidual,
}

FULL = {  # name: (builder, input size, opset)
    "resnet18": (torchvision.models.resnet18, 224, 11),
    "resnet50": (torchvision.models.resnet50, 224, 12),
    "vgg16_bn": (torchvision.models.vgg16_bn, 224, 13),
    "mobilenet_v2": (torchvision.models.mobilenet_v2, 224, 14),
    "densenet121": (torchvision.models.densenet121, 224, 15),
    "efficientnet_b0": (torchvision.models.efficientnet_b0, 224, 16),
    "cifar-resnet18": (lambda: CifarResNet(blocks=(2, 2, 2, 2), widths=(64, 128, 256, 512)), 32, 17),
}


def trained_statistics(m, gen):
    """Batch-norm statistics and affine parameters as training would leave them (not 0, 1)."""
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, nn.BatchNorm2d):
                c = mod.num_features
                mod.running_mean.copy_(torch.randn(c, generator=gen) * 0.1)
                mod.running_var.copy_(torch.rand(c, generator=gen) + 0.5)
                mod.weight.copy_(torch.rand(c, generator=gen) + 0.5)
                mod.bias.copy_(torch.randn(c, generator=gen) * 0.1)
    return m.eval()


def export(m, shape, path, opset, fold):
    """Export m (in eval mode) with constant folding and batch norm folded into the convolutions before it, or
    with neither (TrainingMode.PRESERVE skips the exporter's evaluation-mode fusions; the graph stays eval's)."""
    mode = torch.onnx.TrainingMode.EVAL if fold else torch.onnx.TrainingMode.PRESERVE
    torch.onnx.export(m, torch.zeros((1,) + shape), path, opset_version=opset, input_names=["x"],
                      output_names=["logits"], dynamic_axes={"x": {0: "n"}, "logits": {0: "n"}},
                      do_constant_folding=fold, training=mode)


def expected(m, x, path, ig=True):
    """Logits, input gradients and IG of the float32 model's weights, in float64."""
    m64 = m.double()
    xd = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    logits = m64(xd)
    cls = min(CLASS, logits.shape[1] - 1)
    logits[:, cls].sum().backward()
    arrays = dict(x=x, logits=logits.detach().numpy(), grads=xd.grad.numpy().astype(np.float32))
    if ig:
        total = np.zeros_like(x, dtype=np.float64)
        for k in range(1, IG_STEPS + 1):
            p = torch.tensor(x * (k / IG_STEPS), dtype=torch.float64, requires_grad=True)
            m64(p)[:, cls].sum().backward()
            total += p.grad.numpy()
        arrays["ig8"] = (x.astype(np.float64) * total / IG_STEPS).astype(np.float32)
    np.savez(path, **arrays)
    m.float()


def make(name, builder, shape, opsets, out, seed, n=2, ig=True):
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    m = trained_statistics(builder(), gen)
    for i, opset in enumerate(opsets):
        export(m, shape, os.path.join(out, "%s.op%d.onnx" % (name, opset)), opset, fold=(i + seed) % 2 == 0)
    x = np.random.default_rng(seed).random((n,) + shape).astype(np.float32)
    expected(m, x, os.path.join(out, name + ".expected.npz"), ig)


def main():
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    args = sys.argv[1:]
    if args and args[0] == "--full":
        out = args[1]
        for i, name in enumerate(args[2:] or FULL):
            builder, size, opset = FULL[name]
            make(name, builder, (3, size, size), [opset], out, 100 + i, n=1, ig=False)
        return
    if args and args[0] == "--opsets":
        for i, (name, builder) in enumerate(SMALL.items()):
            if name in (args[2:] or SMALL):
                make(name, builder, shape_of(name), range(12, 17), args[1], 7 + i)
        return
    out = args[0] if args else os.path.dirname(os.path.abspath(__file__))
    for i, (name, builder) in enumerate(SMALL.items()):
        make(name, builder, shape_of(name), [11, 17], out, 7 + i)


def shape_of(name):
    return (20,) if name == "tabular" else (3, 32, 32)


if __name__ == "__main__":
    main()
