#!/usr/bin/python3
"""PyTorch CPU peer of Faithlab's ResNet benchmarks at the field's size (`faithlab-cli bench-compare
--only resnet --peer testdata/onnx/resnet_peer.py`), in the manner of ../shared/bench/torch_peer.py: one
JSON object per line, {"bench": NAME, "value": X, "unit": U, ...}.

Usage:
  /usr/bin/python3 resnet_peer.py --export DIR
      write DIR/resnet18.onnx and DIR/resnet50.onnx: torchvision's models, seeded random weights,
      batch-norm statistics as training leaves them, each batch norm folded into its convolution
      (torch.nn.utils.fuse_conv_bn_eval), so that the file and the module timed here compute the same
      thing with the same weights.
  /usr/bin/python3 resnet_peer.py [--threads 2] [--only resnet] [--quick]
      time, on batches of 16 random 3×224×224 images:
        resnet18_224_forward      logits, no gradient kept (img/s)
        resnet18_224_input_grad   logits and the input gradient of each image's top logit (img/s)
        resnet50_224_forward      logits (img/s)
Fairness: same machine, same run, same threads; PyTorch runs its own kernels (oneDNN where built in)
in channels-last layout, its faster one on the CPU.
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn as nn
import torchvision

B = 16


def fused(name):
    """torchvision's model, seeded, with trained-looking batch-norm statistics folded into the convolutions."""
    torch.manual_seed({"resnet18": 18, "resnet50": 50}[name])
    m = getattr(torchvision.models, name)()
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, nn.BatchNorm2d):
                c = mod.num_features
                mod.running_mean.copy_(torch.randn(c) * 0.1)
                mod.running_var.copy_(torch.rand(c) + 0.5)
                mod.weight.copy_(torch.rand(c) + 0.5)
                mod.bias.copy_(torch.randn(c) * 0.1)
    m.eval()

    def fold(parent, conv, bn):
        setattr(parent, conv, torch.nn.utils.fuse_conv_bn_eval(getattr(parent, conv), getattr(parent, bn)))
        setattr(parent, bn, nn.Identity())

    fold(m, "conv1", "bn1")
    for layer in (m.layer1, m.layer2, m.layer3, m.layer4):
        for block in layer:
            for i in (1, 2, 3):
                if hasattr(block, "conv%d" % i):
                    fold(block, "conv%d" % i, "bn%d" % i)
            if block.downsample is not None:
                block.downsample[0] = torch.nn.utils.fuse_conv_bn_eval(block.downsample[0], block.downsample[1])
                block.downsample[1] = nn.Identity()
    return m


def rate(fn, items, warm=2, min_s=3.0, max_calls=200):
    for _ in range(warm):
        fn()
    n, t0 = 0, time.perf_counter()
    while n < max_calls:
        fn()
        n += 1
        if time.perf_counter() - t0 >= min_s:
            break
    return n * items / (time.perf_counter() - t0)


def emit(name, value, unit):
    print(json.dumps(dict(bench=name, value=round(value, 3), unit=unit, peer="torch-" + torch.__version__,
                          threads=torch.get_num_threads())), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", default="resnet")
    ap.add_argument("--quick", action="store_true", help="shorter timing windows")
    ap.add_argument("--export", metavar="DIR", help="write the models as ONNX files there and stop")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    if a.export:
        for name in ("resnet18", "resnet50"):
            torch.onnx.export(fused(name), torch.zeros(1, 3, 224, 224), os.path.join(a.export, name + ".onnx"),
                              opset_version=13, input_names=["x"], output_names=["logits"],
                              dynamic_axes={"x": {0: "n"}, "logits": {0: "n"}})
        return
    if "resnet" not in a.only.split(","):
        return
    min_s = 1.0 if a.quick else 3.0
    # Channels-last layout, oneDNN's own: PyTorch's faster one on the CPU (ResNet-18's forward
    # pass 1.5× its default layout's on two cores), as Faithlab's torch worker runs such models.
    x = torch.rand(B, 3, 224, 224, generator=torch.Generator().manual_seed(0)).contiguous(memory_format=torch.channels_last)
    for name in ("resnet18", "resnet50"):
        m = fused(name).to(memory_format=torch.channels_last)
        for p in m.parameters():
            p.requires_grad_(False)  # input gradients only, as Faithlab's figure

        def forward():
            with torch.no_grad():
                m(x)

        emit(name + "_224_forward", rate(forward, B, min_s=min_s), "img/s")
        if name != "resnet18":
            continue

        def input_grad():
            xg = x.clone().requires_grad_(True)
            logits = m(xg)
            logits.gather(1, logits.argmax(1, keepdim=True)).sum().backward()

        emit(name + "_224_input_grad", rate(input_grad, B, min_s=min_s), "img/s")


if __name__ == "__main__":
    sys.exit(main())
