#!/usr/bin/python3
"""Write torchvision's ResNet-18 for make bench-campaigns' field224 cases, with Debian's
python3-torch and python3-torchvision (torch.onnx.export needs no `onnx` module): OUT.onnx
(opset 13, a graph with its residual additions and strided max-pool, for the native engine) and
OUT.pt (TorchScript, for the torch engine), the same seeded random weights in both, each with its
description (OUT.onnx.json, OUT.pt.json: input 3×224×224, 10 classes c0…c9, the classes of
scripts/genimages). 11.2 M parameters, 1.8 GFLOP a 224×224 image.

Usage: /usr/bin/python3 scripts/gen224model.py OUT
"""
import argparse
import json

import torch
import torchvision

CLASSES = ["c%d" % k for k in range(10)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    a = ap.parse_args()
    torch.manual_seed(18)
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
