#!/usr/bin/python3
"""PyTorch's side of scripts/zoo (make zoo): one of torchvision 0.14's ImageNet architectures with seeded
random weights — batch-norm statistics from a forward over noise, as a trained model's scale; vit_b_16
with make_vit.py's perturbation, as make bench-vit's — exported to ONNX (opset 13; vit_b_16 at 14, as
torch 1.13 writes LayerNorm decomposed) beside its reference on the images of a folder, in float64:
every image's logits, the input gradient of its predicted class, and Integrated Gradients (zero
baseline, 25 points of the right Riemann sum: Faithlab's defaults) on the first two.

Usage: /usr/bin/python3 scripts/zoo_ref.py NAME IMAGES OUT
  writes OUT/NAME.onnx and OUT/NAME.ref.npz (files: the images in name order; logits, pred, grad, ig).
"""
import os
import sys

import numpy as np
import torch
import torchvision
from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata", "onnx"))


def build(name):
    torch.manual_seed(51)
    if name == "vit_b_16":
        import make_vit
        m = torchvision.models.vit_b_16()
        make_vit.perturb(m, 1)
        return m.eval()
    m = getattr(torchvision.models, name)()
    m.train()
    with torch.no_grad():
        for _ in range(3):
            m(torch.rand(8, 3, 224, 224))
    return m.eval()


def main():
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    name, images, out = sys.argv[1:4]
    m = build(name)
    torch.onnx.export(m, torch.rand(1, 3, 224, 224), os.path.join(out, name + ".onnx"),
                      opset_version=14 if name == "vit_b_16" else 13, input_names=["x"], output_names=["logits"],
                      dynamic_axes={"x": {0: "n"}, "logits": {0: "n"}})
    files = sorted(f for f in os.listdir(images) if f.endswith(".png"))
    x = np.stack([np.asarray(Image.open(os.path.join(images, f)).convert("RGB"), dtype=np.float64).transpose(2, 0, 1) / 255
                  for f in files])
    m = m.double()
    xd = torch.tensor(x, requires_grad=True)
    logits = m(xd)
    pred = logits.argmax(1)
    logits.gather(1, pred[:, None]).sum().backward()
    grad = xd.grad.numpy()
    ig = []
    for i in range(2):
        acc = torch.zeros_like(xd[i:i + 1])
        for k in range(1, 26):
            p = (k / 25 * torch.tensor(x[i:i + 1])).requires_grad_(True)
            m(p)[0, pred[i]].backward()
            acc += p.grad
        ig.append((acc / 25 * torch.tensor(x[i:i + 1])).numpy()[0])
    np.savez(os.path.join(out, name + ".ref.npz"), files=np.array(files), logits=logits.detach().numpy(),
             pred=pred.numpy(), grad=grad, ig=np.stack(ig))


if __name__ == "__main__":
    main()
