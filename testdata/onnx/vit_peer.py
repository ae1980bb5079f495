#!/usr/bin/python3
"""PyTorch CPU peer of Faithlab's vision-transformer benchmark (`make bench-vit`: `faithlab-cli bench-compare
--only vit --peer testdata/onnx/vit_peer.py`), in the manner of resnet_peer.py: one JSON object per line,
{"bench": NAME, "value": X, "unit": U, ...}.

Usage:
  /usr/bin/python3 vit_peer.py --export DIR
      write DIR/vit_b_16.onnx: torchvision's vit_b_16 with make_vit.py's seeded random weights (LayerNorm
      scales and shifts, class token and position embeddings drawn away from their initial values), exported
      at opset 14 (LayerNorm decomposed, as torch 1.13 writes it by default), so that the file and the
      module timed here compute the same thing with the same weights.
  /usr/bin/python3 vit_peer.py [--threads 2] [--only vit] [--quick]
      time, on batches of 16 random 3×224×224 images:
        vit_b_16_224_forward      logits, no gradient kept (img/s)
        vit_b_16_224_input_grad   logits and the input gradient of each image's top logit (img/s)
Fairness: same machine, same run, same threads; the forward runs under torch.no_grad(), where
nn.MultiheadAttention takes PyTorch's fused inference path (its fastest on the CPU).
"""
import argparse
import json
import os
import sys
import time

import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_vit  # noqa: E402

B = 16


def model():
    torch.manual_seed(0)
    m = torchvision.models.vit_b_16().eval()
    make_vit.perturb(m, 1)
    return m


def rate(fn, items, warm=1, min_s=3.0, max_calls=200):
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
    ap.add_argument("--only", default="vit")
    ap.add_argument("--quick", action="store_true", help="shorter timing windows")
    ap.add_argument("--export", metavar="DIR", help="write the model as an ONNX file there and stop")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    if a.export:
        make_vit.export(model(), (1, 3, 224, 224), os.path.join(a.export, "vit_b_16.onnx"), 14)
        return
    if "vit" not in a.only.split(","):
        return
    min_s = 1.0 if a.quick else 3.0
    x = torch.rand(B, 3, 224, 224, generator=torch.Generator().manual_seed(0))
    m = model()
    for p in m.parameters():
        p.requires_grad_(False)  # input gradients only, as Faithlab's figure

    def forward():
        with torch.no_grad():
            m(x)

    emit("vit_b_16_224_forward", rate(forward, B, min_s=min_s), "img/s")

    def input_grad():
        xg = x.clone().requires_grad_(True)
        logits = m(xg)
        logits.gather(1, logits.argmax(1, keepdim=True)).sum().backward()

    emit("vit_b_16_224_input_grad", rate(input_grad, B, min_s=min_s), "img/s")


if __name__ == "__main__":
    sys.exit(main())
