"""Faithlab's PyTorch worker: serves networks to a Faithlab process over stdin/stdout.

Started by core/engine/torch (go:embed), locally or over SSH, as
    python3 -u -c "import sys;exec(compile(sys.stdin.buffer.read(N),'faithlab_worker.py','exec'))" ARGS
so the script itself arrives first on stdin and the framed protocol follows on the same stream.
Nothing else listens: no socket, no file. ARGS: --device auto|cpu|cuda[:I], --threads N (0: every
core), --deterministic 0|1, --heartbeat SECONDS.

Frames (both directions): uint32 little-endian header length, the header (a JSON object), then
the raw bytes of the arrays the header lists under "arrays" ({"name", "dtype": "f4"|"i4"|"u1",
"shape"}), little-endian, in order.

Requests carry "op" and "id"; each gets exactly one reply {"id", "ok": true, ...} or
{"id", "ok": false, "error", "trace"}. While a request runs the worker sends {"event": "alive"}
every heartbeat, and training sends {"event": "batch", "id", ...}. A request {"op": "cancel"}
stops the running one at its next layer or batch. End of stdin, or the parent's death, ends the
worker at once, whatever it is doing: a worker never outlives the process that started it.

Networks live in a table by the ids the Go side gives them. Built-in architectures are built
here module for module and name for name as Faithlab's native engine builds them (the parameter
names and shapes of shared/bench/torch_peer.py and of the pytorch-cifar ResNet18); a
researcher's TorchScript classifier is loaded from the bytes the Go side sends. Weights move by
name: any request may carry arrays "param:NAME" that are loaded before it runs.
"""
import argparse
import io
import json
import math
import os
import queue
import struct
import sys
import threading
import time
import traceback
from collections import OrderedDict

MAX_HEADER = 16 << 20
DTYPES = {"f4": "<f4", "i4": "<i4", "u1": "u1"}


def hello_failure(out, missing, err):
    """Report an import that failed, in the hello frame, and exit."""
    write_frame(out, threading.Lock(), {"event": "hello", "ok": False, "missing": missing, "error": str(err),
                                        "python": sys.version.split()[0], "executable": sys.executable}, [])
    sys.exit(3)


# ---------------------------------------------------------------- framing

def _trimmer():
    try:
        import ctypes
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


_malloc_trim = _trimmer()


def trim():
    """Hands the C heap's free pages back to the system after networks are freed, so
    that the next network's load (about three times its file, for a moment) starts
    from what is live rather than from the freed networks' pages glibc keeps."""
    if _malloc_trim is not None:
        _malloc_trim(0)


def read_exact(f, n):
    """n bytes from f, into a bytearray (writable: numpy and torch take it without a copy)."""
    b = bytearray(n)
    view, got = memoryview(b), 0
    while got < n:
        k = f.readinto(view[got:])
        if not k:
            raise EOFError
        got += k
    return b


def read_frame(f):
    hl = struct.unpack("<I", read_exact(f, 4))[0]
    if hl > MAX_HEADER:
        raise ValueError(f"frame header of {hl} bytes")
    h = json.loads(read_exact(f, hl))
    arrays = {}
    for a in h.get("arrays", []):
        n = 1
        for d in a["shape"]:
            n *= int(d)
        size = n * (1 if a["dtype"] == "u1" else 4)
        arrays[a["name"]] = (a["dtype"], list(a["shape"]), read_exact(f, size))
    return h, arrays


def write_frame(out, lock, header, arrays):
    """Write one frame; arrays is a list of (name, numpy array)."""
    metas, blobs = [], []
    for name, a in arrays:
        code = {"float32": "f4", "int32": "i4", "uint8": "u1"}[str(a.dtype)]
        a = np.ascontiguousarray(a.astype(DTYPES[code], copy=False))  # little-endian on any host
        metas.append({"name": name, "dtype": code, "shape": list(a.shape)})
        blobs.append(a.data)
    if metas:
        header = dict(header, arrays=metas)
    hb = json.dumps(header).encode()
    with lock:
        out.write(struct.pack("<I", len(hb)))
        out.write(hb)
        for b in blobs:
            out.write(b)
        out.flush()


# ---------------------------------------------------------------- start

def bootstrap():
    """Parse the arguments, take the protocol's stdout, and import numpy and torch, reporting
    a failed import in the hello frame (so the Go side can say what to install) before exiting."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="auto")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--deterministic", type=int, default=1)
    ap.add_argument("--heartbeat", type=float, default=2.0)
    args = ap.parse_args()
    # The protocol owns the real stdout; anything printed (by Python or by C code) goes to stderr.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    if args.deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # deterministic cuBLAS
    # Between requests the Faithlab process computes on the same cores (masks, imputation, image
    # quality): OpenMP threads that spin after each pass take those cores from it. Unless the user
    # chose a policy, they sleep at once (a ResNet-18 campaign at 224x224 on 2 cores: ~10 % less
    # wall time, ~18 % less CPU). Read when torch loads OpenMP, so set before the import.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    for module in ("numpy", "torch"):
        try:
            __import__(module)
        except Exception as e:
            hello_failure(out, module, e)
    return args, out


if __name__ == "__main__":
    ARGS, OUT = bootstrap()

import numpy as np  # noqa: E402  (after bootstrap, which reports them missing)
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class Cancelled(Exception):
    """The Go side cancelled the running request."""


# ---------------------------------------------------------------- built-in architectures

class ReLU(nn.Module):
    """ReLU with DeepLift's rescale rule on demand (Shrikumar et al. 2017, §3.5.1), as native."""

    def __init__(self):
        super().__init__()
        self.ref = None  # the reference batch's input to this ReLU, under the rescale rule
        self.capture = False
        self.captured = None

    def forward(self, x):
        if self.capture:
            self.captured = x.detach()
        if self.ref is None:
            return F.relu(x)
        r = self.ref
        if r.shape[0] != x.shape[0]:
            r = r[torch.arange(x.shape[0], device=x.device) % r.shape[0]]
        return RescaleReLU.apply(x, r)


class RescaleReLU(torch.autograd.Function):
    """relu(x) forward; (relu(x) − relu(x̄))/(x − x̄) backward, relu'(x) where x = x̄ (±1e-7)."""

    @staticmethod
    def forward(ctx, x, ref):
        ctx.save_for_backward(x, ref)
        return x.clamp_min(0)

    @staticmethod
    def backward(ctx, g):
        x, ref = ctx.saved_tensors
        d = x - ref
        near = d.abs() <= 1e-7
        slope = (x.clamp_min(0) - ref.clamp_min(0)) / torch.where(near, torch.ones_like(d), d)
        slope = torch.where(near, (x > 0).to(x.dtype), slope)
        return g * slope, None


def conv_out(n, k, stride=1, pad=0):
    return (n + 2 * pad - k) // stride + 1


def goar_cnn(c, h, w, classes):
    """GOAR's CNN (Appendix A), the peer's GoarCNN with named ReLU and pooling modules."""
    h1, w1 = conv_out(h, 5) // 2, conv_out(w, 5) // 2
    h2, w2 = conv_out(h1, 3) // 2, conv_out(w1, 3) // 2
    h3, w3 = conv_out(h2, 3), conv_out(w2, 3)
    return nn.Sequential(OrderedDict([
        ("c1", nn.Conv2d(c, 32, 5)), ("relu1", ReLU()), ("pool1", nn.MaxPool2d(2)),
        ("c2", nn.Conv2d(32, 64, 3)), ("relu2", ReLU()), ("pool2", nn.MaxPool2d(2)),
        ("c3", nn.Conv2d(64, 64, 3)), ("relu3", ReLU()), ("flatten", nn.Flatten()),
        ("f1", nn.Linear(64 * h3 * w3, 64)), ("relu4", ReLU()),
        ("f2", nn.Linear(64, 32)), ("relu5", ReLU()),
        ("f3", nn.Linear(32, classes))]))


def mlp(c, h, w, classes):
    return nn.Sequential(OrderedDict([
        ("flatten", nn.Flatten()),
        ("f1", nn.Linear(c * h * w, 128)), ("relu1", ReLU()),
        ("f2", nn.Linear(128, 128)), ("relu2", ReLU()),
        ("f3", nn.Linear(128, 128)), ("relu3", ReLU()),
        ("f4", nn.Linear(128, classes))]))


def logreg(c, h, w, classes):
    return nn.Sequential(OrderedDict([("flatten", nn.Flatten()), ("f1", nn.Linear(c * h * w, classes))]))


class BasicBlock(nn.Module):
    """He et al.'s basic block as pytorch-cifar names it; its last ReLU is not a layer of its own."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = ReLU()
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        h = self.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(h)) + self.shortcut(x))


class ResNet18(nn.Module):
    """The CIFAR ResNet18 (3×3 stem, no max-pool), as native's resnet18."""

    def __init__(self, c, classes):
        super().__init__()
        self.conv1 = nn.Conv2d(c, 64, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = ReLU()
        cin = 64
        for i, cout in enumerate((64, 128, 256, 512)):
            stride = 1 if i == 0 else 2
            setattr(self, f"layer{i + 1}", nn.Sequential(BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)))
            cin = cout
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.linear = nn.Linear(512, classes)

    def forward(self, x):
        h = self.relu(self.bn1(self.conv1(x)))
        h = self.layer4(self.layer3(self.layer2(self.layer1(h))))
        return self.linear(self.avgpool(h).flatten(1))


RESNET_LAYERS = ["conv1", "bn1", "relu"] + [f"layer{s}.{b}" for s in (1, 2, 3, 4) for b in (0, 1)] + ["avgpool", "linear"]


def timestep_embedding(t, dim=128):
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32, device=t.device) / half)
    a = t.float()[:, None] * freqs[None]
    return torch.cat([torch.sin(a), torch.cos(a)], dim=1)


class ResBlock(nn.Module):
    def __init__(self, cin, cout, temb=128):
        super().__init__()
        self.n1 = nn.GroupNorm(8, cin)
        self.c1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.t = nn.Linear(temb, cout)
        self.n2 = nn.GroupNorm(8, cout)
        self.c2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, e):
        h = self.c1(F.silu(self.n1(x)))
        h = h + self.t(e)[:, :, None, None]
        h = self.c2(F.silu(self.n2(h)))
        return h + self.skip(x)


class UNetS(nn.Module):
    """unet-s, the peer's ε-prediction U-Net, for C input channels."""

    def __init__(self, c, ch=(32, 64, 64)):
        super().__init__()
        self.temb = nn.Sequential(nn.Linear(128, 128), nn.SiLU(), nn.Linear(128, 128))
        self.inp = nn.Conv2d(c, ch[0], 3, padding=1)
        self.d0 = ResBlock(ch[0], ch[0])
        self.down0 = nn.Conv2d(ch[0], ch[0], 3, stride=2, padding=1)
        self.d1 = ResBlock(ch[0], ch[1])
        self.down1 = nn.Conv2d(ch[1], ch[1], 3, stride=2, padding=1)
        self.mid = ResBlock(ch[1], ch[2])
        self.up1 = nn.Conv2d(ch[2], ch[1], 3, padding=1)
        self.u1 = ResBlock(ch[1] * 2, ch[1])
        self.up0 = nn.Conv2d(ch[1], ch[0], 3, padding=1)
        self.u0 = ResBlock(ch[0] * 2, ch[0])
        self.out_n = nn.GroupNorm(8, ch[0])
        self.out = nn.Conv2d(ch[0], c, 3, padding=1)

    def forward(self, x, t):
        e = self.temb(timestep_embedding(t))
        h0 = self.d0(self.inp(x), e)
        h1 = self.d1(self.down0(h0), e)
        m = self.mid(self.down1(h1), e)
        u = self.up1(F.interpolate(m, scale_factor=2, mode="nearest"))
        u = self.u1(torch.cat([u, h1], 1), e)
        u = self.up0(F.interpolate(u, scale_factor=2, mode="nearest"))
        u = self.u0(torch.cat([u, h0], 1), e)
        return self.out(F.silu(self.out_n(u)))


def build_builtin(arch, shape, classes):
    """A built-in architecture and its layer names, input to output (native's Layers)."""
    c, h, w = shape
    if arch == "goar-cnn":
        m = goar_cnn(c, h, w, classes)
        return m, [n for n, _ in m.named_children()]
    if arch == "mlp":
        m = mlp(c, h, w, classes)
        return m, [n for n, _ in m.named_children()]
    if arch == "logreg":
        m = logreg(c, h, w, classes)
        return m, [n for n, _ in m.named_children()]
    if arch == "resnet18":
        return ResNet18(c, classes), list(RESNET_LAYERS)
    if arch == "unet-s":
        return UNetS(c), []
    raise ValueError(f"unknown architecture {arch!r}")


# ---------------------------------------------------------------- parameter reset (TorchScript)

def reset_module(m):
    """Reset one submodule's own parameters as PyTorch's constructors initialise them; False
    when its kind is unknown. TorchScript keeps no Python methods, so reset_parameters is
    re-done here by the module's original class name unless the module exports its own."""
    if hasattr(m, "reset_parameters"):
        m.reset_parameters()
        return True
    kind = getattr(m, "original_name", type(m).__name__)
    own = dict(m.named_parameters(recurse=False))
    bufs = dict(m.named_buffers(recurse=False))
    with torch.no_grad():
        if kind in ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "Linear", "Bilinear"):
            w = own["weight"]
            nn.init.kaiming_uniform_(w, a=math.sqrt(5))
            if "bias" in own:
                fan_in = nn.init._calculate_fan_in_and_fan_out(w)[0]
                b = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
                nn.init.uniform_(own["bias"], -b, b)
            return True
        if kind.startswith("BatchNorm") or kind.startswith("InstanceNorm") or kind in ("GroupNorm", "LayerNorm", "SyncBatchNorm"):
            if "weight" in own:
                nn.init.ones_(own["weight"])
            if "bias" in own:
                nn.init.zeros_(own["bias"])
            if "running_mean" in bufs:
                bufs["running_mean"].zero_()
            if "running_var" in bufs:
                bufs["running_var"].fill_(1)
            if "num_batches_tracked" in bufs:
                bufs["num_batches_tracked"].zero_()
            return True
        if kind == "Embedding":
            nn.init.normal_(own["weight"])
            return True
    return not own


# ---------------------------------------------------------------- one network

class Net:
    """One network of the table: its module, what its last forward pass left, its training."""

    def __init__(self, module, layers, kind, shape, classes, device, cancel, mean=None, std=None, cam=""):
        self.module = module.to(device)
        self.module.eval()
        self.layers = layers  # the names Activation accepts, input to output
        self.kind = kind  # "builtin", "script" or "unet"
        self.shape, self.classes, self.device = shape, classes, device
        self.mean, self.std = mean, std  # a script's input normalisation, per channel
        self.cam = cam
        self.cancel = cancel
        self.channels_last = False  # whether inputs go to the module in channels-last layout
        self.record = False  # whether forward passes keep the layers' outputs
        self.acts = {}  # layer name → its output in the last forward pass
        self.agrads = {}  # layer name → its gradient after the last backward pass
        self.x = self.t = self.out = None  # the last forward pass, for the backward pass
        self.graph = False  # whether out holds its autograd graph
        self.session = None  # training run here (op_train_start)
        if kind == "builtin":
            named = dict(module.named_modules())
            for n in layers:
                named[n].register_forward_hook(self._hook(n))

    def _hook(self, name):
        def hook(_m, _inp, out):
            if self.record:
                self.acts[name] = out
            if self.cancel.is_set():
                raise Cancelled()  # within a layer of a cancel
        return hook

    def state(self):
        """Parameters and floating-point buffers by name, in state_dict order (batch norm's
        num_batches_tracked, an integer counter nothing here reads, is left out)."""
        return [(k, v) for k, v in self.module.state_dict(keep_vars=True).items() if v.is_floating_point()]

    def run(self, x, t=None):
        """The module's output for x; a script's input is normalised first, and its activations
        come from its forward_activations method when it has one."""
        if self.kind == "unet":
            return self.module(x, t)
        if self.kind != "script":
            return self.module(x)
        if self.mean is not None:
            x = (x - self.mean) / self.std
        if self.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        if self.record and hasattr(self.module, "forward_activations"):
            logits, acts = self.module.forward_activations(x)
            self.acts.update(acts)
            return logits
        return self.module(x)


# ---------------------------------------------------------------- the worker

class Worker:
    def __init__(self, args, out):
        self.out, self.lock = out, threading.Lock()
        self.nets = {}
        self.cancel = threading.Event()
        self.busy = threading.Event()
        self.requests = queue.Queue()
        self.heartbeat = args.heartbeat
        self.ppid = os.getppid()
        dev = args.device
        if dev == "auto":
            dev = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(dev)
        if self.device.type == "cpu":
            n = args.threads
            if n <= 0:
                n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
            torch.set_num_threads(max(1, n))
        if args.deterministic:
            torch.backends.cudnn.deterministic = True
            torch.backends.cudnn.benchmark = False
            try:
                torch.use_deterministic_algorithms(True, warn_only=True)
            except TypeError:  # torch < 1.11 has no warn_only
                pass
        self.deterministic = bool(args.deterministic)

    def send(self, header, arrays=()):
        write_frame(self.out, self.lock, header, list(arrays))

    # Reading runs on its own thread so that a cancel arrives while a request runs, and so that
    # the end of stdin (the parent's end) ends the worker at once.
    def reader(self):
        f = sys.stdin.buffer
        try:
            while True:
                h, arrays = read_frame(f)
                if h.get("op") == "cancel":
                    self.cancel.set()
                    continue
                self.requests.put((h, arrays))
        except Exception:
            os._exit(0)

    def pulse(self):
        while True:
            time.sleep(self.heartbeat)
            if os.getppid() != self.ppid:
                os._exit(1)  # the parent died: we were re-parented
            if self.busy.is_set():
                try:
                    self.send({"event": "alive"})
                except Exception:
                    os._exit(1)

    def serve(self):
        dev = self.device
        name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
        self.send({"event": "hello", "ok": True, "torch": torch.__version__, "python": sys.version.split()[0],
                   "executable": sys.executable, "device": str(dev), "device_name": name,
                   "threads": torch.get_num_threads(), "deterministic": self.deterministic, "pid": os.getpid(),
                   "cuda": torch.version.cuda or ""})
        threading.Thread(target=self.reader, daemon=True).start()
        threading.Thread(target=self.pulse, daemon=True).start()
        while True:
            h, arrays = self.requests.get()
            self.cancel.clear()
            self.busy.set()
            rid = h.get("id")
            try:
                if h.get("free"):
                    for i in h["free"]:
                        self.nets.pop(i, None)
                    trim()
                op = getattr(self, "op_" + h["op"], None)
                if op is None:
                    raise ValueError(f"unknown request {h['op']!r}")
                net = self.nets.get(h.get("net")) if "net" in h else None
                if net is None and "net" in h and h["op"] not in ("build", "load_script"):
                    raise ValueError(f"network {h['net']} is not held here: released, or never built")
                if net is not None:
                    self.load_params(net, arrays)
                reply, out = op(h, arrays, net)
                self.busy.clear()
                self.send(dict(reply, id=rid, ok=True), out)
            except Cancelled:
                self.busy.clear()
                self.send({"id": rid, "ok": False, "error": "cancelled", "cancelled": True})
            except Exception as e:  # reported, and the worker goes on
                self.busy.clear()
                msg = str(e) if isinstance(e, ValueError) else f"{type(e).__name__}: {e}"  # ours, or torch's
                if "out of memory" in str(e).lower():
                    msg += " (the batch does not fit the device's memory: use smaller chunks)"
                self.send({"id": rid, "ok": False, "error": msg, "trace": traceback.format_exc(limit=6)})

    # ------------------------------------------------ helpers

    def tensor(self, arrays, name, shape=None):
        dtype, shp, buf = arrays[name]
        a = np.frombuffer(buf, dtype=DTYPES[dtype])
        if sys.byteorder != "little" and dtype != "u1":
            a = a.astype(a.dtype.newbyteorder("="))
        a = a.reshape(shape if shape is not None else shp)
        return torch.from_numpy(a).to(self.device)

    @staticmethod
    def host(t):
        return t.detach().to("cpu", torch.float32).contiguous().numpy()

    def load_params(self, net, arrays):
        sd = None
        with torch.no_grad():
            for k in arrays:
                if not k.startswith("param:"):
                    continue
                if sd is None:
                    sd = dict(net.state())
                name = k[len("param:"):]
                if name not in sd:
                    raise KeyError(f"the network has no parameter {name}")
                v = sd[name]
                v.copy_(self.tensor(arrays, k, list(v.shape)))

    def buffers(self, net):
        """Floating-point buffers (batch norm's running statistics), which a forward pass in
        training mode changes and the Go side mirrors."""
        names = {k for k, _ in net.module.named_parameters()}
        return [("buf:" + k, self.host(v)) for k, v in net.state() if k not in names]

    def layout(self, net):
        params = {k for k, p in net.module.named_parameters() if p.requires_grad}  # a frozen one has no gradient
        return {"params": [{"name": k, "shape": list(v.shape), "grad": k in params} for k, v in net.state()],
                "layers": net.layers, "cam_layer": net.cam}

    def set_mode(self, net, h):
        train = bool(h.get("train", False))
        if net.module.training != train:
            net.module.train(train)

    # ------------------------------------------------ requests

    def op_ping(self, h, arrays, net):
        return {}, []

    def op_build(self, h, arrays, _):
        module, layers = build_builtin(h["arch"], h["shape"], h.get("classes", 0))
        kind = "unet" if h["arch"] == "unet-s" else "builtin"
        cam = ""
        if kind == "builtin":  # native's CAMLayer: the last layer whose output is a map of more than one pixel
            probe = torch.zeros([1] + list(h["shape"]))
            outs = {}
            named = dict(module.named_modules())
            hooks = [named[n].register_forward_hook(lambda m, i, o, n=n: outs.__setitem__(n, o)) for n in layers]
            with torch.no_grad():
                module.eval()(probe)
            for hk in hooks:
                hk.remove()
            cam = ([n for n in layers if outs[n].dim() == 4 and outs[n].shape[2] * outs[n].shape[3] > 1] or [""])[-1]
        net = Net(module, layers, kind, h["shape"], h.get("classes", 0), self.device, self.cancel, cam=cam)
        self.nets[h["net"]] = net
        return self.layout(net), []

    def op_load_script(self, h, arrays, _):
        _, _, buf = arrays["script"]
        module = torch.jit.load(io.BytesIO(bytes(buf)), map_location=self.device)
        module = module.float()
        shape, classes = h["shape"], h["classes"]
        mean = std = None
        if h.get("mean"):
            mean = torch.tensor(h["mean"], dtype=torch.float32, device=self.device)[None, :, None, None]
            std = torch.tensor(h["std"], dtype=torch.float32, device=self.device)[None, :, None, None]
        net = Net(module, [], "script", shape, classes, self.device, self.cancel, mean, std)
        if shape[1] > 1 and shape[2] > 1:
            # Images: weights and inputs in channels-last layout, oneDNN's own, in which
            # torchvision's ResNet-18 at 224×224 runs its forward pass 1.5× and its input
            # gradients 1.2× as fast on two cores as in PyTorch's default layout (a few
            # 1e-7 apart). Replies are contiguous whatever the layout (host).
            net.module = net.module.to(memory_format=torch.channels_last)
            net.channels_last = True
        # Probe: the output must be n × classes logits; the exposed activations name the layers.
        with torch.no_grad():
            net.record = hasattr(module, "forward_activations")
            y = net.run(torch.zeros([2] + list(shape), device=self.device))
            net.record = False
        if not isinstance(y, torch.Tensor) or list(y.shape) != [2, classes] or not y.is_floating_point():
            got = list(y.shape) if isinstance(y, torch.Tensor) else type(y).__name__
            raise ValueError(f"the module maps 2 inputs of shape {shape} to {got}, not to 2 × {classes} logits")
        net.layers = list(net.acts.keys())
        cam = h.get("cam_layer", "")
        if cam and cam not in net.layers:
            raise ValueError(f"cam_layer {cam!r} is not among the activations the module exposes ({net.layers})")
        if not cam:
            for k in net.layers:
                a = net.acts[k]
                if a.dim() == 4 and a.shape[2] * a.shape[3] > 1:
                    cam = k
        net.cam, net.acts = cam, {}
        self.nets[h["net"]] = net
        return self.layout(net), []

    def op_free(self, h, arrays, net):
        for i in h.get("nets", []):
            self.nets.pop(i, None)
        return {}, []

    def op_get_params(self, h, arrays, net):
        return {}, [("param:" + k, self.host(v)) for k, v in net.state()]

    def op_reset(self, h, arrays, net):
        """Fresh parameters for retraining: each submodule re-initialised as constructed."""
        torch.manual_seed(int(h.get("seed", 0)) & 0x7FFFFFFFFFFFFFFF)
        stuck = []
        for name, m in net.module.named_modules():
            if not reset_module(m):
                stuck.append(f"{name or '(root)'} ({getattr(m, 'original_name', type(m).__name__)})")
        if stuck:
            raise ValueError("cannot reset the parameters of " + ", ".join(stuck) +
                             ": TorchScript drops Python methods such as reset_parameters; export one "
                             "(@torch.jit.export def reset_parameters(self)) in those modules")
        return self.op_get_params(h, arrays, net)

    def op_set_rule(self, h, arrays, net):
        relus = [m for n, m in net.module.named_children() if isinstance(m, ReLU)]
        if net.kind != "builtin":
            raise ValueError("DeepLift's rescale rule needs the built-in architectures' ReLU layers; "
                             "a TorchScript module's nonlinearities cannot be replaced")
        for r in relus:
            r.ref, r.captured = None, None
        if h["rule"] == "gradient":
            return {}, []
        self.set_mode(net, h)
        n = int(h["n"])
        ref = self.tensor(arrays, "x", [n] + list(net.shape))
        for r in relus:
            r.capture = True
        try:
            with torch.no_grad():
                net.run(ref)
        finally:
            for r in relus:
                r.capture = False
        for r in relus:
            r.ref, r.captured = r.captured, None
        net.x = net.out = None
        return {}, []

    def op_forward(self, h, arrays, net):
        """Forward pass. keep: hold the graph for the backward pass that follows (Gradient);
        otherwise the pass runs without one and a later backward recomputes it (so that an
        evaluation-mode forward costs no autograd memory)."""
        self.set_mode(net, h)
        n = int(h["n"])
        x = self.tensor(arrays, "x", [n] + list(net.shape))
        t = self.tensor(arrays, "t", [n]).long() if net.kind == "unet" else None
        keep = bool(h.get("keep")) or net.module.training
        net.acts, net.agrads = {}, {}
        net.record = False  # activations are recorded by the backward pass, or on request
        if keep:
            x.requires_grad_(bool(h.get("input_grad", True)))
            out = net.run(x, t)
        else:
            with torch.no_grad():
                out = net.run(x, t)
        net.x, net.t, net.out, net.graph = x, t, out, keep
        if not torch.isfinite(out).all():
            raise ValueError("non-finite output (diverged weights?)")
        extra = self.buffers(net) if net.module.training else []
        return {}, [("y", self.host(out))] + extra

    def op_backward(self, h, arrays, net):
        """Backpropagate dy through the last forward pass: the input gradient ("dx") and the
        parameters' ("grad:NAME") as asked; each recorded layer's gradient is kept for Activation."""
        if net.out is None:
            raise ValueError("no forward pass to differentiate")
        want_input, want_params = bool(h.get("input")), bool(h.get("params"))
        x, out = net.x, net.out
        if not net.graph:  # recompute with a graph, in the same (evaluation) mode
            x = x.detach().requires_grad_(True)
            net.acts, net.record = {}, net.kind != "unet"
            try:
                out = net.run(x, net.t)
            finally:
                net.record = False
        dy = self.tensor(arrays, "dy", list(out.shape))
        if want_input and not x.requires_grad:
            raise ValueError("the forward pass kept no input gradient")
        named = [(k, p) for k, p in net.module.named_parameters() if p.requires_grad] if want_params else []
        acts = [(k, a) for k, a in net.acts.items() if a.requires_grad]
        inputs = ([x] if x.requires_grad else []) + [p for _, p in named] + [a for _, a in acts]
        grads = list(torch.autograd.grad(out, inputs, dy, allow_unused=True)) if inputs else []
        res = []
        if x.requires_grad:
            g = grads.pop(0)
            if want_input:
                res.append(("dx", self.host(g if g is not None else torch.zeros_like(x))))
        for k, p in named:
            g = grads.pop(0)
            res.append(("grad:" + k, self.host(g if g is not None else torch.zeros_like(p))))
        net.agrads = {k: g for (k, _), g in zip(acts, grads) if g is not None}
        net.acts = {k: a.detach() for k, a in net.acts.items()}
        net.x = net.t = net.out = None
        net.graph = False
        return {}, res

    def op_activation(self, h, arrays, net):
        name = h["layer"]
        if name not in net.acts and net.x is not None and not net.graph:  # after a forward pass alone
            net.record = True
            try:
                with torch.no_grad():
                    net.run(net.x, net.t)
            finally:
                net.record = False
        if name not in net.acts:
            raise ValueError(f"layer {name!r} has no activation: run a forward pass first (layers: {net.layers})")
        res = [("values", self.host(net.acts[name]))]
        if name in net.agrads:
            res.append(("grad", self.host(net.agrads[name])))
        return {}, res

    # ------------------------------------------------ training, run here

    def op_train_start(self, h, arrays, net):
        """Keep the training set on the device and make the optimiser (as core/optim: Adam with
        PyTorch's defaults and coupled L2 decay, or SGD with momentum, dampening 0)."""
        n = int(h["n"])
        x = self.tensor(arrays, "x", [n] + list(net.shape))
        y = self.tensor(arrays, "y", [n]).long()
        params = [p for p in net.module.parameters() if p.requires_grad]
        lr, wd = float(h["lr"]), float(h.get("weight_decay", 0))
        if h["optimizer"] == "adam":
            opt = torch.optim.Adam(params, lr=lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=wd)
        elif h["optimizer"] == "sgd":
            opt = torch.optim.SGD(params, lr=lr, momentum=float(h.get("momentum", 0)), weight_decay=wd)
        else:
            raise ValueError(f"unknown optimiser {h['optimizer']!r}")
        net.session = {"x": x, "y": y, "opt": opt, "mask": float(h.get("mask_prob", 0))}
        return {}, []

    def op_train_epoch(self, h, arrays, net):
        """One epoch over the batches the Go side drew (order, cut every batch samples), at lr;
        a batch event at most every progress seconds and after the last batch."""
        s = net.session
        if s is None:
            raise ValueError("no training session")
        order = self.tensor(arrays, "order").long()
        bs, lr, every = int(h["batch"]), float(h["lr"]), float(h.get("progress", 0.25))
        for g in s["opt"].param_groups:
            g["lr"] = lr
        net.module.train(True)
        net.record = False
        gen = None
        if s["mask"] > 0:
            gen = torch.Generator(device=self.device)
            gen.manual_seed(int(h.get("mask_seed", 0)) & 0x7FFFFFFFFFFFFFFF)
        loss_sum = torch.zeros((), dtype=torch.float64, device=self.device)
        correct = torch.zeros((), dtype=torch.int64, device=self.device)
        batches = (len(order) + bs - 1) // bs
        last, seen = time.monotonic(), 0
        for b in range(batches):
            if self.cancel.is_set():
                raise Cancelled()
            idx = order[b * bs:(b + 1) * bs]
            xb, yb = s["x"][idx], s["y"][idx]
            if gen is not None:
                c, hh, ww = net.shape
                keep = torch.rand((len(idx), 1, hh, ww), generator=gen, device=self.device) >= s["mask"]
                xb = xb * keep
            s["opt"].zero_grad(set_to_none=True)
            logits = net.run(xb)
            loss = F.cross_entropy(logits, yb)
            loss.backward()
            s["opt"].step()
            with torch.no_grad():
                loss_sum += loss.detach().double() * len(idx)
                correct += (logits.argmax(1) == yb).sum()
            seen += len(idx)
            now = time.monotonic()
            if now - last >= every or b == batches - 1:
                last = now
                self.send({"event": "batch", "id": h["id"], "batch": b + 1, "batches": batches,
                           "loss_sum": loss_sum.item(), "correct": int(correct.item()), "seen": seen})
        net.module.train(False)
        return self.op_get_params(h, arrays, net)

    def op_train_end(self, h, arrays, net):
        net.session = None
        if self.device.type == "cuda":
            torch.cuda.empty_cache()
        return {}, []


if __name__ == "__main__":
    Worker(ARGS, OUT).serve()
