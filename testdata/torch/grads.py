#!/usr/bin/python3
"""Reference logits and gradients from PyTorch, for the native engine's tests.

Usage: grads.py PEER_DIR ARCH TRAIN(0|1) WEIGHTS.npz X.npy DLOGITS.npy OUT.npz [T.npy]
Builds ARCH (goar-cnn from shared/bench/torch_peer.py, or resnet18, the CIFAR
ResNet18 below), loads WEIGHTS.npz, runs X forward in train or eval mode and
backward from DLOGITS, and writes logits, the input gradient, every parameter's
gradient (as grad.NAME) and the running statistics after the pass.
"""
import sys
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(h)) + self.shortcut(x))


class ResNet18(nn.Module):
    def __init__(self, cin=3, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, 64, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        layers, c = [], 64
        for i, cout in enumerate((64, 128, 256, 512)):
            stride = 1 if i == 0 else 2
            layers.append(nn.Sequential(BasicBlock(c, cout, stride), BasicBlock(cout, cout, 1)))
            c = cout
        self.layer1, self.layer2, self.layer3, self.layer4 = layers
        self.linear = nn.Linear(512, classes)

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        h = self.layer4(self.layer3(self.layer2(self.layer1(h))))
        return self.linear(F.adaptive_avg_pool2d(h, 1).flatten(1))


peer_dir, arch, train, win, xin, dlin, out = sys.argv[1:8]
tin = sys.argv[8] if len(sys.argv) > 8 else None
sys.path.insert(0, peer_dir)
torch.set_default_dtype(torch.float64)
x = torch.from_numpy(np.load(xin).astype(np.float64)).requires_grad_(True)
import torch_peer  # noqa: E402
if arch == "goar-cnn":
    net = torch_peer.GoarCNN().double()
elif arch == "unet-s":
    net = torch_peer.UNetS().double()
    # The peer builds the time embedding in float32; feed it on in float64.
    net.temb.register_forward_pre_hook(lambda m, inp: (inp[0].double(),))
else:
    net = ResNet18(cin=x.shape[1])
w = np.load(win)
sd = net.state_dict()
missing = [k for k in sd if k not in w.files and not k.endswith("num_batches_tracked")]
if missing:
    sys.exit(f"faithlab weights lack {missing}")
net.load_state_dict({k: torch.from_numpy(w[k].astype(np.float64)) if k in w.files else v for k, v in sd.items()})
net.train(train == "1")
if tin is not None:
    logits = net(x, torch.from_numpy(np.load(tin).astype(np.int64)))
else:
    logits = net(x)
(logits * torch.from_numpy(np.load(dlin).astype(np.float64))).sum().backward()
res = {"logits": logits.detach().numpy(), "dx": x.grad.numpy()}
for k, p in net.named_parameters():
    res["grad." + k] = p.grad.numpy()
for k, b in net.named_buffers():
    if not k.endswith("num_batches_tracked"):
        res["buffer." + k] = b.numpy()
np.savez(out, **{k: v.astype(np.float32) for k, v in res.items()})
