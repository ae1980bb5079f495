# Monotonicity's rising steps by PyTorch float32 on the same weights and
# maps: for each input, the copies with the first j pixels of the map's
# ascending order (ties by index) put back on a zero baseline, j = 0…784,
# scored in one batch by the explained (predicted) class's probability;
# a copy equal to the one before it scored alike. Prints each input's
# count of steps that do not fall, as JSON.
# Usage: monotonicity_ref.py WEIGHTS.npz MAPS.npy N
import gzip, json, sys
import numpy as np, torch, torch.nn as nn, torch.nn.functional as F

def idx(path):
    b = gzip.open(path).read(); nd = b[3]
    dims = [int.from_bytes(b[4 + 4 * i:8 + 4 * i], "big") for i in range(nd)]
    return np.frombuffer(b, dtype=np.uint8, offset=4 + 4 * nd).reshape(dims)

class GoarCNN(nn.Module):  # as ../../../../shared/bench/torch_peer.py
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 32, 5); self.c2 = nn.Conv2d(32, 64, 3); self.c3 = nn.Conv2d(64, 64, 3)
        self.f1 = nn.Linear(576, 64); self.f2 = nn.Linear(64, 32); self.f3 = nn.Linear(32, 10)
    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x)), 2); x = F.max_pool2d(F.relu(self.c2(x)), 2)
        x = F.relu(self.c3(x)).flatten(1)
        return self.f3(F.relu(self.f2(F.relu(self.f1(x)))))

weights, maps, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
torch.set_num_threads(1)
x = (idx("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz")[:n] / 255.0).astype(np.float32).reshape(n, -1)
net = GoarCNN(); w = np.load(weights)
net.load_state_dict({k: torch.tensor(w[k]) for k in w.files}); net.eval()
m = np.load(maps).reshape(-1, 784)[:n]
out = []
with torch.no_grad():
    for i in range(n):
        target = int(net(torch.tensor(x[i]).reshape(1, 1, 28, 28)).argmax())
        order = np.argsort(m[i], kind="stable")
        copies = np.zeros((785, 784), np.float32)
        for j in range(1, 785):
            copies[j] = copies[j - 1]; copies[j, order[j - 1]] = x[i, order[j - 1]]
        p = torch.softmax(net(torch.tensor(copies).reshape(785, 1, 28, 28)), 1)[:, target].numpy()
        for j in range(1, 785):
            if np.array_equal(copies[j], copies[j - 1]):
                p[j] = p[j - 1]
        out.append(int(np.sum(p[1:] >= p[:-1])))
json.dump(out, sys.stdout)
