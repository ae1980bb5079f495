#!/usr/bin/python3
"""Make the ONNX fixtures of Faithlab's tests with Debian's python3-torch (torch.onnx.export needs no
`onnx` module).

Usage: /usr/bin/python3 testdata/onnx/make_onnx.py [OUTDIR]   (default: beside this script)

- goar-cnn.onnx (opset 13) and goar-cnn-op9.onnx, goar-cnn-op11.onnx: GOAR's CNN with PyTorch's module
  names (c1 c2 c3 f1 f2 f3, Faithlab's goar-cnn), seeded random weights; goar-cnn.onnx.json describes it
  as a Fashion-MNIST classifier (the description Faithlab reads beside an ONNX file, as beside a
  TorchScript one).
- small.onnx (opset 11): what other exporters write: a convolution without bias, stride 2 and padding
  1 followed by batch norm (kept: exported in training-mode graph form would not be a classifier, so it
  is exported with do_constant_folding=False), global average pooling, a MatMul + Add linear layer,
  and a final Softmax; with NHWC input (a leading transpose, as tf2onnx writes).
- NAME.expected.npz beside each: x (inputs, NCHW as Faithlab holds them), logits (before any softmax)
  and grads (the gradient of each input's logit of class 3 with respect to x), from PyTorch, in
  float64 so that the comparison measures Faithlab's float32 alone.
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CLASSES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]


class GoarCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 32, 5)
        self.c2 = nn.Conv2d(32, 64, 3)
        self.c3 = nn.Conv2d(64, 64, 3)
        self.f1 = nn.Linear(64 * 3 * 3, 64)
        self.f2 = nn.Linear(64, 32)
        self.f3 = nn.Linear(32, 10)

    def forward(self, x):
        h = F.max_pool2d(F.relu(self.c1(x)), 2)
        h = F.max_pool2d(F.relu(self.c2(h)), 2)
        h = torch.flatten(F.relu(self.c3(h)), 1)
        return self.f3(F.relu(self.f2(F.relu(self.f1(h)))))


class Small(nn.Module):
    """Takes NHWC input; softmax at the end; MatMul + Add linear layer."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.w = nn.Parameter(torch.randn(16, 5) * 0.3)
        self.b = nn.Parameter(torch.randn(5) * 0.1)

    def logits(self, x_nhwc):
        h = x_nhwc.permute(0, 3, 1, 2)
        h = F.relu(self.bn(self.conv(h)))
        h = F.max_pool2d(h, 2)
        h = F.relu(self.conv2(h))
        h = torch.flatten(F.adaptive_avg_pool2d(h, 1), 1)
        return torch.matmul(h, self.w) + self.b

    def forward(self, x_nhwc):
        return F.softmax(self.logits(x_nhwc), dim=1)


def expected(path, logits_of, x_nchw, to_input=lambda x: x):
    m64 = logits_of
    x = torch.tensor(x_nchw, dtype=torch.float64, requires_grad=True)
    logits = m64(to_input(x))
    logits[:, 3].sum().backward()
    np.savez(path, x=x_nchw.astype(np.float32), logits=logits.detach().numpy(), grads=x.grad.numpy())


def export(m, shape, path, opset, names):
    torch.onnx.export(m, torch.zeros(shape), path, opset_version=opset, input_names=["x"], output_names=["out"],
                      dynamic_axes={"x": {0: "n"}, "out": {0: "n"}}, do_constant_folding=False, **names)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    torch.manual_seed(7)
    rng = np.random.default_rng(7)
    torch.set_num_threads(1)

    g = GoarCNN().eval()
    for opset, name in [(13, "goar-cnn"), (11, "goar-cnn-op11"), (9, "goar-cnn-op9")]:
        export(g, (1, 1, 28, 28), os.path.join(out, name + ".onnx"), opset, {})
    x = rng.random((4, 1, 28, 28)).astype(np.float32)
    expected(os.path.join(out, "goar-cnn.expected.npz"), GoarCNN.forward.__get__(g.double()), x)
    g.float()
    with open(os.path.join(out, "goar-cnn.onnx.json"), "w") as f:
        f.write('{"input_shape": [1, 28, 28], "classes": %s, "dataset": {"ref": "fashion-mnist", "options": {}}}\n'
                % str(CLASSES).replace("'", '"'))

    s = Small()
    with torch.no_grad():  # running statistics a trained model would have
        s.bn.running_mean.copy_(torch.randn(8) * 0.1)
        s.bn.running_var.copy_(torch.rand(8) + 0.5)
        s.bn.weight.copy_(torch.rand(8) + 0.5)
        s.bn.bias.copy_(torch.randn(8) * 0.1)
    s.eval()
    export(s, (1, 12, 12, 3), os.path.join(out, "small.onnx"), 11, {"training": torch.onnx.TrainingMode.EVAL})
    x = rng.random((3, 3, 12, 12)).astype(np.float32)
    expected(os.path.join(out, "small.expected.npz"), Small.logits.__get__(s.double()), x, lambda x: x.permute(0, 2, 3, 1))


if __name__ == "__main__":
    main()
