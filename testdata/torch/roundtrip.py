#!/usr/bin/python3
"""Round trip of Faithlab weights through PyTorch, for cmd/faithlab-cli's tests.

Usage: roundtrip.py PEER_DIR ARCH WEIGHTS.npz X.npy LOGITS_OUT.npy WEIGHTS_OUT.npz
Loads WEIGHTS.npz into the peer's module (shared/bench/torch_peer.py), checks that
every state_dict key and shape matches, writes the logits for X and the module's
state_dict back out as .npz.
"""
import sys
import numpy as np
import torch

peer_dir, arch, win, xin, lout, wout = sys.argv[1:7]
sys.path.insert(0, peer_dir)
import torch_peer  # noqa: E402

net = {"goar-cnn": torch_peer.GoarCNN}[arch]()
w = np.load(win)
sd = net.state_dict()
if set(w.files) != set(sd):
    sys.exit(f"keys differ: faithlab {sorted(w.files)} torch {sorted(sd)}")
for k, v in sd.items():
    if tuple(w[k].shape) != tuple(v.shape):
        sys.exit(f"{k}: faithlab {w[k].shape} torch {tuple(v.shape)}")
net.load_state_dict({k: torch.from_numpy(w[k]) for k in w.files})
net.eval()
with torch.no_grad():
    logits = net(torch.from_numpy(np.load(xin)))
np.save(lout, logits.numpy().astype(np.float32))
np.savez(wout, **{k: v.numpy() for k, v in net.state_dict().items()})
