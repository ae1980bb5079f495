#!/usr/bin/python3
"""Make the TorchScript fixture of Faithlab's tests: a researcher's own small Fashion-MNIST CNN.

Usage: /usr/bin/python3 testdata/torch/make_scripted_cnn.py [OUT.pt]   (default: beside this script)
Writes OUT.pt (torch.jit.save) and OUT.pt.json, the description Faithlab reads beside it.

The module is what a researcher would hand over: it expects normalised inputs ((x − 0.2860)/0.3530),
has batch norm (running statistics to keep, parameters to reset), and exports forward_activations,
which names its intermediate activations so that Grad-CAM can weigh them. It is trained for three
epochs on the first 4000 Fashion-MNIST training images (Debian's dataset-fashion-mnist), seeded, on
one thread, so that a re-run gives the same file on the same torch version.
"""
import gzip
import json
import os
import sys
from typing import Dict, Tuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

FMNIST = "/usr/share/datasets/fashion-mnist/"
CLASSES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]
MEAN, STD = 0.2860, 0.3530


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3)
        self.fc = nn.Linear(16 * 5 * 5, 10)

    @torch.jit.export
    def forward_activations(self, x: torch.Tensor) -> Tuple[torch.Tensor, Dict[str, torch.Tensor]]:
        acts: Dict[str, torch.Tensor] = {}
        h = F.relu(self.bn1(self.conv1(x)))
        acts["block1"] = h
        h = F.relu(self.conv2(F.max_pool2d(h, 2)))
        acts["block2"] = h
        h = F.max_pool2d(h, 2).flatten(1)
        acts["features"] = h
        return self.fc(h), acts

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.forward_activations(x)[0]


def idx(path):
    b = gzip.open(path).read()
    dims = [int.from_bytes(b[4 + 4 * i:8 + 4 * i], "big") for i in range(b[3])]
    return np.frombuffer(b, dtype=np.uint8, offset=4 + 4 * b[3]).reshape(dims)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripted-cnn.pt")
    torch.manual_seed(0)
    torch.set_num_threads(1)
    x = torch.tensor(idx(FMNIST + "train-images-idx3-ubyte.gz")[:4000] / 255.0, dtype=torch.float32).unsqueeze(1)
    y = torch.tensor(idx(FMNIST + "train-labels-idx1-ubyte.gz")[:4000].astype(np.int64))
    net = SmallCNN()
    opt = torch.optim.Adam(net.parameters(), lr=2e-3)
    for epoch in range(3):
        perm = torch.randperm(len(x))
        for i in range(0, len(x), 64):
            ix = perm[i:i + 64]
            opt.zero_grad()
            F.cross_entropy(net((x[ix] - MEAN) / STD), y[ix]).backward()
            opt.step()
    net.eval()
    torch.jit.save(torch.jit.script(net), out)
    with open(out + ".json", "w") as f:
        json.dump({"input_shape": [1, 28, 28], "classes": CLASSES, "mean": [MEAN], "std": [STD],
                   "cam_layer": "block2", "dataset": {"ref": "fashion-mnist", "options": {}}}, f, indent=2)
        f.write("\n")
    print(f"wrote {out} and {out}.json (torch {torch.__version__})")


if __name__ == "__main__":
    main()
