#!/usr/bin/python3
"""Write a classifier of ResNet-18's size at 224×224 for make bench-campaigns' field224 cases, with
Debian's python3-torch (torch.onnx.export needs no `onnx` module): OUT.onnx (opset 13) and OUT.pt
(TorchScript), the same seeded random weights in both, each with its description (OUT.onnx.json,
OUT.pt.json: input 3×224×224, 10 classes c0…c9, the classes of scripts/genimages).

Usage: /usr/bin/python3 scripts/gen224model.py [--arch plain18|resnet18] OUT

- plain18 (default): ResNet-18 without its residual additions — torchvision's stem (7×7 stride-2
  convolution, batch norm, ReLU; then a 2×2 max-pool where ResNet has a 3×3 stride-2 one), four
  stages of four 3×3 convolutions with batch norm and ReLU (64, 128, 256, 512 channels, stride 2
  from the second stage), global average pooling, a linear layer. 11.2 M parameters and 1.8 GFLOP
  a 224×224 image, as ResNet-18; a chain, so that the ONNX reader of this version runs it.
- resnet18: torchvision.models.resnet18(num_classes=10) itself (residual additions and a strided
  max-pool: for an ONNX reader that takes graphs).
"""
import argparse
import json

import torch
import torch.nn as nn

CLASSES = ["c%d" % k for k in range(10)]


def plain18():
    layers = [nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2)]
    cin = 64
    for s, cout in enumerate([64, 128, 256, 512]):
        for b in range(4):
            stride = 2 if s > 0 and b == 0 else 1
            layers += [nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]
            cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 10)]
    return nn.Sequential(*layers)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="plain18", choices=["plain18", "resnet18"])
    ap.add_argument("out")
    a = ap.parse_args()
    torch.manual_seed(18)
    if a.arch == "plain18":
        net = plain18()
    else:
        import torchvision
        net = torchvision.models.resnet18(num_classes=10)
    # Batch norm statistics of a forward over noise, so that activations keep their scale.
    net.train()
    with torch.no_grad():
        for _ in range(3):
            net(torch.rand(8, 3, 224, 224))
    net.eval()
    x = torch.rand(1, 3, 224, 224)
    torch.onnx.export(net, x, a.out + ".onnx", opset_version=13, input_names=["x"], output_names=["logits"],
                      dynamic_axes={"x": {0: "n"}, "logits": {0: "n"}})
    torch.jit.trace(net, x).save(a.out + ".pt")
    desc = {"input_shape": [3, 224, 224], "classes": CLASSES}
    for ext in (".onnx.json", ".pt.json"):
        with open(a.out + ext, "w") as f:
            json.dump(desc, f)


if __name__ == "__main__":
    main()
