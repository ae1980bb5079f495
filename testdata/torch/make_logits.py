#!/usr/bin/python3
"""One PyTorch classifier as the files Faithlab opens, a dataset, and PyTorch's logits on its test split: what
cmd/faithlab-cli's TestEvalLogitsMatchPyTorch compares `eval --logits` with (generated at test time, never committed).

Usage: /usr/bin/python3 testdata/torch/make_logits.py OUTDIR

Writes into OUTDIR:
- model.onnx and model.pt (torch.jit.script), each with its description (.json: input shape, classes whose names
  hold a slash, a comma and a quote, the normalisation the module expects);
- data.npz: x_train, y_train, x_test, y_test (1×12×12 images in [0, 1], 4 classes);
- logits.npy: the module's logits on x_test, computed in float64 from its float32 weights after the
  normalisation ((x − mean)/std), as float32.
"""
import json
import os
import sys

import numpy as np
import torch
import torch.nn as nn

CLASSES = ["T-shirt/top", "Trouser, long", 'Bag "tote"', "Ankle boot"]
MEAN, STD = 0.25, 0.5


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3)
        self.bn1 = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 16, 3)
        self.fc = nn.Linear(16 * 3 * 3, len(CLASSES))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.pool(torch.relu(self.bn1(self.conv1(x))))
        h = torch.relu(self.conv2(h))
        return self.fc(torch.flatten(h, 1))


def main():
    out = sys.argv[1]
    torch.manual_seed(3)
    torch.set_num_threads(1)
    m = Small()
    with torch.no_grad():
        m.bn1.running_mean.uniform_(-0.2, 0.2)
        m.bn1.running_var.uniform_(0.5, 1.5)
    m.eval()
    rng = np.random.default_rng(3)
    x = (rng.integers(0, 256, (60, 1, 12, 12)) / 255).astype(np.float32)
    y = rng.integers(0, len(CLASSES), 60).astype(np.float32)
    np.savez(os.path.join(out, "data.npz"), x_train=x[:40], y_train=y[:40], x_test=x[40:], y_test=y[40:])
    desc = {"input_shape": [1, 12, 12], "classes": CLASSES, "mean": [MEAN], "std": [STD]}
    torch.onnx.export(m, torch.zeros(1, 1, 12, 12), os.path.join(out, "model.onnx"), opset_version=13,
                      input_names=["x"], output_names=["logits"], dynamic_axes={"x": {0: "n"}, "logits": {0: "n"}})
    torch.jit.script(m).save(os.path.join(out, "model.pt"))
    for name in ("model.onnx", "model.pt"):
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(desc, f)
    with torch.no_grad():
        logits = m.double()((torch.tensor(x[40:], dtype=torch.float64) - MEAN) / STD)
    np.save(os.path.join(out, "logits.npy"), logits.numpy().astype(np.float32))


if __name__ == "__main__":
    main()
