#!/usr/bin/python3
"""Make the vision-transformer fixtures of Faithlab's tests with Debian's python3-torch and python3-torchvision.

Usage:
  /usr/bin/python3 testdata/onnx/make_vit.py [OUTDIR]
      the committed fixtures (default: beside this script):
      - vit-tiny: torchvision's own VisionTransformer class (vit_b_16's code: nn.MultiheadAttention, its
        exported Transpose/Reshape/Slice chains that move the batch between axes) on 3×32×32 inputs, patch 4,
        depth 2, width 64, 4 heads, MLP 128, 10 classes; exported at opset 17 (LayerNormalization) as
        vit-tiny.op17.onnx;
      - deit-tiny: a DeiT/timm-style block written out (one qkv Linear, reshape to (B, T, 3, heads, d),
        permute(2, 0, 3, 1, 4), q k^T · scale, softmax, @ v, nn.GELU, LayerNorm), same sizes, at opset
        14 (LayerNorm decomposed into ReduceMean, Sub, Pow, Sqrt, Div) as deit-tiny.op14.onnx;
      each with NAME.expected.npz.
  /usr/bin/python3 testdata/onnx/make_vit.py --opsets OUTDIR
      both small models at every opset from 13 to 17, with their expectations, for tests (never committed).
  /usr/bin/python3 testdata/onnx/make_vit.py --full OUTDIR
      torchvision's vit_b_16 (random weights, 330 MB) at 3×224×224, opset 14, as vit_b_16.op14.onnx with
      vit_b_16.expected.npz (one input): generated on demand, never committed.

Weights are random and seeded, with LayerNorm scales and shifts, class token and position embeddings drawn
away from their initial values (torchvision's zero head drawn too). NAME.expected.npz holds, computed in float64 from the float32 weights:
x (the inputs, NCHW), logits, grads (the gradient of each input's logit of class 3 with respect to x), and
the transformer methods' maps on the patch grid (n×g×g) and upsampled to the input (n×1×H×W) by
F.interpolate(mode="bilinear", align_corners=False):
- rawattn: the last block's attention of the class token to the patches, mean over heads;
- rollout: Abnar & Zuidema (2020): per block Â = row-normalised (mean over heads of A + I),
  R = Â_L ⋯ Â_1, the class token's row of R over the patches;
- gradrollout: Chefer et al. (2021, "Generic Attention-model Explainability", Eqs. 5–6): per block
  Ā = mean over heads of (∂y_c/∂A ⊙ A)⁺, R ← R + Ā·R from R = I, the class token's row over the patches
  (y_c: the logit of class 3).
Each map is followed by _grid (the patch grid).
"""
import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

CLASS = 3


class Block(nn.Module):
    """A DeiT (timm) encoder block."""

    def __init__(self, dim, heads, mlp):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.fc1 = nn.Linear(dim, mlp)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(mlp, dim)
        self.attn = None  # kept by the reference

    def attention(self, x):
        B, T, C = x.shape
        qkv = self.qkv(x).reshape(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        a = (q @ k.transpose(-2, -1)) * (C // self.heads) ** -0.5
        a = a.softmax(dim=-1)
        self.attn = a
        return self.proj((a @ v).transpose(1, 2).reshape(B, T, C))

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.fc2(self.act(self.fc1(self.norm2(x))))


class DeiT(nn.Module):
    def __init__(self, size=32, patch=4, dim=64, depth=2, heads=4, mlp=128, classes=10):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, patch, patch)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim) * 0.5)
        self.pos_embed = nn.Parameter(torch.randn(1, (size // patch) ** 2 + 1, dim) * 0.5)
        self.blocks = nn.Sequential(*[Block(dim, heads, mlp) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = torch.cat((self.cls_token.expand(x.shape[0], -1, -1), x), dim=1) + self.pos_embed
        x = self.norm(self.blocks(x))
        return self.head(x[:, 0])

    def attentions(self, x):
        """The logits and each block's attention probabilities (n×heads×T×T)."""
        logits = self.forward(x)
        return logits, [b.attn for b in self.blocks]


def tv_attentions(m, x):
    """torchvision's VisionTransformer.forward written out, keeping each block's attention probabilities."""
    x = m._process_input(x)
    n = x.shape[0]
    x = torch.cat([m.class_token.expand(n, -1, -1), x], dim=1)
    enc = m.encoder
    x = x + enc.pos_embedding
    attns = []
    for blk in enc.layers:
        y = blk.ln_1(x)
        mha = blk.self_attention
        E, h = mha.embed_dim, mha.num_heads
        q, k, v = F.linear(y, mha.in_proj_weight, mha.in_proj_bias).chunk(3, dim=-1)
        B, T, _ = q.shape
        q, k, v = [t.reshape(B, T, h, E // h).transpose(1, 2) for t in (q, k, v)]
        a = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(E // h), dim=-1)
        attns.append(a)
        o = (a @ v).transpose(1, 2).reshape(B, T, E)
        x = x + mha.out_proj(o)
        x = x + blk.mlp(blk.ln_2(x))
    x = enc.ln(x)
    return m.heads(x[:, 0]), attns


def perturb(m, seed):
    """Draw LayerNorm's scales and shifts, the class token and position embeddings away from their
    initial values (so that a wrong wiring shows), keeping the other weights as initialised."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, nn.LayerNorm):
                mod.weight.copy_(1 + 0.2 * torch.randn(mod.weight.shape, generator=g))
                mod.bias.copy_(0.1 * torch.randn(mod.bias.shape, generator=g))
            if isinstance(mod, nn.Linear) and not mod.weight.any():  # torchvision's zero head
                mod.weight.copy_(0.1 * torch.randn(mod.weight.shape, generator=g))
                mod.bias.copy_(0.1 * torch.randn(mod.bias.shape, generator=g))
            if isinstance(mod, nn.MultiheadAttention):
                mod.in_proj_bias.copy_(0.1 * torch.randn(mod.in_proj_bias.shape, generator=g))
                mod.out_proj.bias.copy_(0.1 * torch.randn(mod.out_proj.bias.shape, generator=g))
        for name, p in m.named_parameters():
            if name in ("class_token", "encoder.pos_embedding"):
                p.copy_(0.5 * torch.randn(p.shape, generator=g))


def maps(attns, grads, H, W):
    """The three methods' maps from each block's attention probabilities and their gradients
    (n×heads×T×T), on the patch grid and upsampled."""
    T = attns[0].shape[-1]
    g = int(round(math.sqrt(T - 1)))
    eye = torch.eye(T, dtype=attns[0].dtype)
    out = {}
    raw = attns[-1].mean(1)[:, 0, 1:]
    R = eye.expand(attns[0].shape[0], T, T)
    for a in attns:
        ah = a.mean(1) + eye
        ah = ah / ah.sum(-1, keepdim=True)
        R = ah @ R
    roll = R[:, 0, 1:]
    R = eye.expand(attns[0].shape[0], T, T).clone()
    for a, d in zip(attns, grads):
        ab = (d * a).clamp(min=0).mean(1)
        R = R + ab @ R
    grad = R[:, 0, 1:]
    for name, m in (("rawattn", raw), ("rollout", roll), ("gradrollout", grad)):
        grid = m.reshape(-1, 1, g, g)
        out[name + "_grid"] = grid[:, 0].numpy().astype(np.float32)
        out[name] = F.interpolate(grid, size=(H, W), mode="bilinear", align_corners=False).numpy().astype(np.float32)
    return out


def expected(m, attentions, x, path):
    m = m.double().eval()
    x = x.double().requires_grad_(True)
    logits = m(x)
    logits[:, CLASS].sum().backward()
    grads = x.grad.detach().clone()
    x2 = x.detach().clone()
    lg, attns = attentions(m, x2)
    assert torch.allclose(lg, logits, atol=1e-9), "the written-out forward is not the model's"
    for a in attns:
        a.retain_grad()
    lg[:, CLASS].sum().backward()
    out = maps([a.detach() for a in attns], [a.grad.detach() for a in attns], x.shape[2], x.shape[3])
    np.savez(path, x=x.detach().numpy().astype(np.float32), logits=logits.detach().numpy(),
             grads=grads.numpy().astype(np.float32), **out)
    m.float()


def export(m, shape, path, opset):
    torch.onnx.export(m, torch.zeros(shape), path, opset_version=opset, input_names=["x"], output_names=["out"],
                      dynamic_axes={"x": {0: "n"}, "out": {0: "n"}}, do_constant_folding=opset % 2 == 1)


def small():
    torch.manual_seed(0)
    vit = torchvision.models.VisionTransformer(image_size=32, patch_size=4, num_layers=2, num_heads=4,
                                               hidden_dim=64, mlp_dim=128, num_classes=10).eval()
    perturb(vit, 1)
    torch.manual_seed(2)
    deit = DeiT().eval()
    perturb(deit, 3)
    return {"vit-tiny": (vit, tv_attentions), "deit-tiny": (deit, DeiT.attentions)}


def main():
    args = sys.argv[1:]
    mode = args.pop(0) if args and args[0].startswith("--") else ""
    out = args[0] if args else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(5)
    if mode == "--full":
        torch.manual_seed(0)
        m = torchvision.models.vit_b_16().eval()
        perturb(m, 1)
        x = torch.rand(1, 3, 224, 224)
        export(m, (1, 3, 224, 224), os.path.join(out, "vit_b_16.op14.onnx"), 14)
        expected(m, tv_attentions, x, os.path.join(out, "vit_b_16.expected.npz"))
        return
    x = torch.rand(2, 3, 32, 32)
    opsets = {"vit-tiny": [17], "deit-tiny": [14]}
    for name, (m, att) in small().items():
        for op in (range(13, 18) if mode == "--opsets" else opsets[name]):
            export(m, (1, 3, 32, 32), os.path.join(out, f"{name}.op{op}.onnx"), op)
        expected(m, att, x, os.path.join(out, name + ".expected.npz"))


if __name__ == "__main__":
    main()
