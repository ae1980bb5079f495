#!/usr/bin/python3
"""The README's example of one's own images on a pretrained ImageNet model,
made without downloads: torchvision's resnet18 with random weights (and
random batch-norm statistics) exported to ONNX with a description that
names its 1000 classes, declares torchvision's evaluation transform and
ImageNet's normalisation; a folder of 4 class folders named by classes
(mine/train/ and mine/test/),
and a folder of images alone. With --check LOGITS.csv it compares the
logits `faithlab-cli eval --logits` wrote with PyTorch's on the same files
through torchvision's own transform.

    /usr/bin/python3 testdata/resize/example_resnet18.py DIR
    faithlab-cli eval --model DIR/resnet18.onnx --dataset DIR/mine --logits DIR/logits.csv
    /usr/bin/python3 testdata/resize/example_resnet18.py DIR --check DIR/logits.csv
"""
import csv
import json
import os
import sys

import numpy as np
import torch
import torchvision
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_resize import photo  # noqa: E402  (generated photograph-like images)

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
weights = torchvision.models.ResNet18_Weights.IMAGENET1K_V1  # its metadata only: nothing is downloaded
classes = weights.meta["categories"]
tf = weights.transforms()  # Resize(256, bilinear), CenterCrop(224), ToTensor, Normalize
torch.manual_seed(0)
net = torchvision.models.resnet18(weights=None).eval()
with torch.no_grad():
    for m in net.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.1, 0.1)
            m.running_var.uniform_(0.5, 1.5)
folders = {"tench": 0, "goldfish": 1, "great_white_shark": 2, "tiger shark": 3}

if "--check" in sys.argv:
    rows = list(csv.DictReader(open(sys.argv[sys.argv.index("--check") + 1])))
    files = []  # the test part's files, in Faithlab's order: class folders, then files, lexically
    for f in sorted(folders):
        for name in sorted(os.listdir(os.path.join(out, "mine", "test", f))):
            files.append(os.path.join(out, "mine", "test", f, name))
    worst = 0.0
    for r in rows:
        k = int(r["input"])
        x = tf(Image.open(files[k]).convert("RGB"))
        with torch.no_grad():
            want = net(x[None])[0].numpy()
        got = np.array([float(r[f"logit_{j}"]) for j in range(1000)])
        worst = max(worst, float(np.abs(got - want).max() / np.abs(want).max()))
    print(f"{len(rows)} inputs: largest logit difference {worst:.2e} of the largest logit")
    sys.exit(0)

torch.onnx.export(net, torch.zeros(1, 3, 224, 224), os.path.join(out, "resnet18.onnx"), opset_version=13,
                  input_names=["x"], output_names=["logits"], dynamic_axes={"x": {0: "n"}, "logits": {0: "n"}})
json.dump({"input_shape": [3, 224, 224], "classes": classes, "resize": "short-side+center-crop",
           "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]},
          open(os.path.join(out, "resnet18.onnx.json"), "w"))
for i, f in enumerate(folders):  # mine/train/<class>/, mine/test/<class>/
    for part, n in (("train", 1), ("test", 4)):
        os.makedirs(os.path.join(out, "mine", part, f), exist_ok=True)
        for k in range(n):
            photo(400 - 40 * k, 300 + 30 * i).save(os.path.join(out, "mine", part, f, f"{k}.png"))
os.makedirs(os.path.join(out, "loose"), exist_ok=True)
for k in range(3):
    photo(320, 480).save(os.path.join(out, "loose", f"{k}.png"))
print("wrote", out)
