package model

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
	"faithlab/core/engine/native"
	"faithlab/core/engine/torch"
)

// Engine is where a model's networks compute: Faithlab's native CPU
// engine, or a PyTorch worker (core/engine/torch) on this machine or on a
// GPU host over SSH. It is the one place a setting —
//
//	native | torch | torch@ssh://HOST   (torch options: see torch.Target)
//
// becomes networks, for the CLI, a campaign and the workbench alike. A nil
// *Engine is the native engine. Model files hold the weights either way:
// a network trained on the torch engine is saved as a model file, and a
// model file is moved to the worker by parameter name. Results on the
// torch engine are close to the native engine's, not equal bit for bit
// (other summation orders, other kernels; on a GPU, other hardware).
type Engine struct {
	setting string
	kern    gemm.Kernel
	torch   *torch.Engine
}

// EngineKind checks an engine setting and returns its kind: "native"
// ("" too) or "torch". Results are filed under the kind, so that a
// campaign may move between machines but not between engines.
func EngineKind(setting string) (string, error) {
	switch s := strings.TrimSpace(setting); {
	case s == "" || s == "native":
		return "native", nil
	case strings.HasPrefix(s, torch.Kind):
		if _, err := torch.ParseTarget(s); err != nil {
			return "", err
		}
		return torch.Kind, nil
	}
	return "", fmt.Errorf("engine %q: native, torch or torch@ssh://HOST", setting)
}

// NativeEngine is the native engine on a GEMM kernel.
func NativeEngine(kern gemm.Kernel) *Engine { return &Engine{setting: "native", kern: kern} }

// OpenEngine opens an engine setting; a torch engine's worker is started
// at once, so that a missing interpreter, torch or host is reported here.
// Close it when done.
func OpenEngine(ctx context.Context, setting string, kern gemm.Kernel) (*Engine, error) {
	kind, err := EngineKind(setting)
	if err != nil {
		return nil, err
	}
	e := &Engine{setting: strings.TrimSpace(setting), kern: kern}
	if kind == "native" {
		e.setting = "native"
		return e, nil
	}
	if e.torch, err = torch.Open(ctx, e.setting, torch.Options{}); err != nil {
		return nil, err
	}
	return e, nil
}

// Kind is "native" or "torch".
func (e *Engine) Kind() string {
	if e == nil || e.torch == nil {
		return "native"
	}
	return torch.Kind
}

// String is the engine's setting.
func (e *Engine) String() string {
	if e == nil {
		return "native"
	}
	return e.setting
}

// Kernel is the native engine's GEMM kernel.
func (e *Engine) Kernel() gemm.Kernel {
	if e == nil || e.kern == nil {
		k, _ := gemm.Best()
		return k
	}
	return e.kern
}

// Close ends a torch engine's worker.
func (e *Engine) Close() error {
	if e == nil || e.torch == nil {
		return nil
	}
	return e.torch.Close()
}

// EngineInfo is what a run's manifest records of its engine.
type EngineInfo struct {
	Engine string // the setting
	Torch  string // torch's version ("" on the native engine)
	Device string // e.g. "cpu (native, OpenBLAS Haswell)", "cuda:0 (NVIDIA H100 80GB HBM3)"
	PID    int    // the PyTorch worker's process on this machine (0: native, or on another host)
}

// Info describes the engine.
func (e *Engine) Info(ctx context.Context) (EngineInfo, error) {
	if e.Kind() == "native" {
		return EngineInfo{Engine: "native", Device: "cpu (native, " + e.Kernel().Name() + ")"}, nil
	}
	in, err := e.torch.Info(ctx)
	if err != nil {
		return EngineInfo{Engine: e.setting}, err
	}
	dev := in.Device
	if in.DeviceName != "" && in.DeviceName != in.Device {
		dev += " (" + in.DeviceName + ")"
	} else if in.Device == "cpu" {
		dev = fmt.Sprintf("cpu (%d threads)", in.Threads)
	}
	info := EngineInfo{Engine: e.setting, Torch: in.Torch, Device: dev}
	if _, host, err := EngineReach(e.setting); err == nil && host == "" {
		info.PID = in.PID
	}
	return info, nil
}

// Network returns m's classifier on the engine: m.Net itself on the
// native engine, else a network in the worker holding m's weights (or
// m's TorchScript module). Networks are not safe for concurrent use:
// call it once per user.
func (e *Engine) Network(ctx context.Context, m *Model) (engine.Network, error) {
	if m.Script != nil {
		if e.Kind() != torch.Kind {
			return nil, fmt.Errorf("%s is a TorchScript model: it runs on the torch engine (--engine torch; in a spec, engine: torch)", m.Script.Path)
		}
		return e.torch.LoadScript(ctx, m.Script.Bytes, m.Script.spec(m))
	}
	if m.Net == nil {
		return nil, errors.New("the model holds no classifier")
	}
	if m.ONNX != nil && e.Kind() != "native" {
		return nil, fmt.Errorf("%s is an ONNX model: it runs on the native engine (leave out --engine, or engine: in a spec)", m.ONNX.Path)
	}
	return e.Move(ctx, m.Net)
}

// Move returns a native network on the engine: net itself on the native
// engine, else a network in the worker holding net's weights.
func (e *Engine) Move(ctx context.Context, net *native.Net) (engine.Network, error) {
	if e.Kind() == "native" {
		return net, nil
	}
	t, err := e.torch.New(ctx, net.Arch(), net.InputShape(), net.Classes())
	if err != nil {
		return nil, err
	}
	if err := CopyWeights(t, net); err != nil {
		return nil, err
	}
	return t, nil
}

// MoveDenoiser is Move for a diffusion prior's denoiser.
func (e *Engine) MoveDenoiser(ctx context.Context, u *native.UNet) (engine.Denoiser, error) {
	if e.Kind() == "native" {
		return u, nil
	}
	t, err := e.torch.NewUNet(ctx, u.InputShape())
	if err != nil {
		return nil, err
	}
	src, dst := u.Params(), t.Params()
	for i := range dst {
		if dst[i].Name != src[i].Name || len(dst[i].Data) != len(src[i].Data) {
			return nil, fmt.Errorf("unet-s: the worker's parameter %d is %s %v, native's %s %v", i, dst[i].Name, dst[i].Shape, src[i].Name, src[i].Shape)
		}
		copy(dst[i].Data, src[i].Data)
	}
	return t, nil
}

// Fresh returns an untrained network of m's architecture for ds, seeded:
// what a retraining protocol trains. A built-in architecture starts from
// the native engine's initialisation on every engine, and so does an ONNX
// model's graph (its layers are native ones); a TorchScript model
// is a copy of m's module with every submodule's parameters reset, or an
// error saying why they cannot be.
func (e *Engine) Fresh(ctx context.Context, m *Model, ds *data.Dataset, seed uint64) (engine.Network, error) {
	if m.Script != nil {
		net, err := e.Network(ctx, m)
		if err != nil {
			return nil, err
		}
		if err := net.(*torch.Net).Reset(ctx, seed); err != nil {
			return nil, fmt.Errorf("retraining %s: %w", m.Script.Path, err)
		}
		return net, nil
	}
	if m.ONNX != nil { // the same layers, from the native engine's initialisation
		net, err := e.Network(ctx, m)
		if err != nil {
			return nil, err
		}
		fresh := net.Clone().(*native.Net)
		fresh.Init(seed)
		return fresh, nil
	}
	fresh, err := New(m.Arch, ds, e.Kernel(), seed)
	if err != nil {
		return nil, err
	}
	return e.Network(ctx, fresh)
}

// CopyWeights copies src's parameters into dst's by name, checking that
// they hold the same names and shapes.
func CopyWeights(dst, src engine.Network) error {
	from := map[string]engine.Param{}
	for _, p := range src.Params() {
		from[p.Name] = p
	}
	to := dst.Params()
	if len(to) != len(from) {
		return fmt.Errorf("copy weights: %s holds %d parameters, %s %d", src.Arch(), len(from), dst.Arch(), len(to))
	}
	for _, p := range to {
		q, ok := from[p.Name]
		if !ok || len(q.Data) != len(p.Data) {
			return fmt.Errorf("copy weights: %s has no parameter %s of shape %v", src.Arch(), p.Name, p.Shape)
		}
		copy(p.Data, q.Data)
	}
	return nil
}

// RetrainedExt is the file extension of EncodeRetrained's bytes.
func (m *Model) RetrainedExt() string {
	if m.Script != nil || m.ONNX != nil {
		return ".npz"
	}
	return ".flm"
}

// EncodeRetrained returns the bytes that store net, a network retrained
// from m's architecture: a model file with m's header (less its training
// record) for a built-in architecture, the weights as .npz (PyTorch's
// names) for a TorchScript or ONNX model, whose graph is m's.
func (m *Model) EncodeRetrained(net engine.Network) ([]byte, error) {
	if m.Script != nil || m.ONNX != nil {
		return encodeNPZ(net.Params())
	}
	h := m.Header
	h.Training = nil
	n, ok := net.(*native.Net)
	if !ok {
		var err error
		if n, err = native.New(m.Arch, m.InputShape, len(m.Classes), gemm.Gonum{}); err != nil {
			return nil, err
		}
		if err := CopyWeights(n, net); err != nil {
			return nil, err
		}
	}
	return (&Model{Header: h, Net: n}).Encode()
}

// DecodeRetrained is EncodeRetrained's inverse, on the engine.
func (e *Engine) DecodeRetrained(ctx context.Context, m *Model, b []byte) (engine.Network, error) {
	if m.Script == nil && m.ONNX == nil {
		r, err := Decode(b, e.Kernel())
		if err != nil {
			return nil, err
		}
		return e.Network(ctx, r)
	}
	arrays, err := data.ParseNPZ(b)
	if err != nil {
		return nil, err
	}
	net, err := e.Network(ctx, m)
	if err != nil {
		return nil, err
	}
	if m.ONNX != nil {
		net = net.Clone() // m's own network keeps its weights
	}
	for _, p := range net.Params() {
		a, ok := arrays[p.Name]
		if !ok || len(a.Data) != len(p.Data) {
			return nil, fmt.Errorf("retrained weights lack %s of shape %v", p.Name, p.Shape)
		}
		copy(p.Data, a.Data)
	}
	return net, nil
}

// EngineReach says what an engine setting makes Faithlab start or reach
// beyond itself: the program it names (torch's python=) and the host it
// connects to (torch@ssh://, with its port). Both are empty for native and
// for torch with only device= and threads=, which run Faithlab's own
// worker under this machine's python3. A setting from a file someone sent
// that reaches anything is for the user to allow (campaign.Trust).
func EngineReach(setting string) (program, host string, err error) {
	kind, err := EngineKind(setting)
	if err != nil || kind == "native" {
		return "", "", err
	}
	t, err := torch.ParseTarget(setting)
	if err != nil {
		return "", "", err
	}
	host = t.Host
	if host != "" && t.Port != 0 {
		host = fmt.Sprintf("%s:%d", host, t.Port)
	}
	return t.Python, host, nil
}

// SameEngine reports whether two settings name the same engine, written
// alike or not (options in another order, spaces, "" for native).
func SameEngine(a, b string) bool {
	ka, erra := EngineKind(a)
	kb, errb := EngineKind(b)
	if erra != nil || errb != nil || ka != kb {
		return false
	}
	if ka == "native" {
		return true
	}
	ta, _ := torch.ParseTarget(a)
	tb, _ := torch.ParseTarget(b)
	return ta.String() == tb.String()
}
