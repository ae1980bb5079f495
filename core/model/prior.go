package model

import (
	"encoding/json"
	"fmt"
	"math"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
	"faithlab/core/engine/native"
)

// Diffusion marks a model file as a diffusion prior (a denoiser, unet-s,
// in Model.Prior instead of a classifier in Model.Net) and records what
// sampling from it needs: the noise schedule it was trained for and the
// data range its [−1, 1] stands for. Files without it are classifiers, as
// every file written before priors existed.
type Diffusion struct {
	Schedule string `json:"schedule"` // "linear" or "cosine"
	Steps    int    `json:"steps"`    // T
	// DataLo and DataHi are the data values that −1 and 1 in the prior's
	// space stand for (Fashion-MNIST: 0 and 1).
	DataLo float64 `json:"data_lo"`
	DataHi float64 `json:"data_hi"`
	// Training is the trainer's record (core/diffusion.TrainRecord).
	Training json.RawMessage `json:"training,omitempty"`
}

func (d *Diffusion) check() error {
	if d.Steps < 2 || d.Steps > 100000 {
		return fmt.Errorf("diffusion prior of %d steps: want 2 to 100 000", d.Steps)
	}
	if !(d.DataHi > d.DataLo) || math.IsInf(d.DataHi-d.DataLo, 0) {
		return fmt.Errorf("diffusion prior's data range [%g, %g]: want a finite range with lo < hi", d.DataLo, d.DataHi)
	}
	return nil
}

// NewPrior builds an untrained unet-s prior for a dataset.
func NewPrior(ds *data.Dataset, d Diffusion, kern gemm.Kernel, seed uint64) (*Model, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	u, err := native.NewUNet(ds.Shape, kern)
	if err != nil {
		return nil, err
	}
	u.Init(seed)
	return &Model{Header: Header{Arch: u.Arch(), InputShape: ds.Shape, Classes: ds.Classes, Diffusion: &d}, Prior: u}, nil
}

// LoadPrior reads a diffusion prior's model file.
func LoadPrior(path string, kern gemm.Kernel) (*Model, error) {
	b, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := DecodePrior(b, kern)
	if err != nil {
		return nil, fmt.Errorf("load prior %s: %w", path, err)
	}
	return m, nil
}

// DecodePrior parses a diffusion prior's model file held in memory.
func DecodePrior(b []byte, kern gemm.Kernel) (*Model, error) {
	m, err := decode(b, kern)
	if err == nil && m.Prior == nil {
		return nil, fmt.Errorf("the file holds a classifier (%s), not a diffusion prior", m.Arch)
	}
	return m, err
}

// params lists the weights the file holds, the classifier's or the prior's.
func (m *Model) params() []engine.Param {
	if m.Prior != nil {
		return m.Prior.Params()
	}
	if m.Net == nil {
		return nil
	}
	return m.Net.Params()
}

// build makes the network a header describes: a classifier, or the
// denoiser of a diffusion prior.
func build(h Header, kern gemm.Kernel) (*native.Net, *native.UNet, []engine.Param, error) {
	if d := h.Diffusion; d != nil {
		if err := d.check(); err != nil {
			return nil, nil, nil, err
		}
		if h.Arch != "unet-s" {
			return nil, nil, nil, fmt.Errorf("diffusion prior of architecture %q: want unet-s", h.Arch)
		}
		u, err := native.NewUNet(h.InputShape, kern)
		if err != nil {
			return nil, nil, nil, err
		}
		return nil, u, u.Params(), nil
	}
	net, err := native.New(h.Arch, h.InputShape, len(h.Classes), kern)
	if err != nil {
		return nil, nil, nil, err
	}
	return net, nil, net.Params(), nil
}
