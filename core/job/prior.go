package job

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	"faithlab/core/attr"
	"faithlab/core/diffusion"
	"faithlab/core/engine/gemm"
	"faithlab/core/model"
	"faithlab/core/protocol"
	"faithlab/core/spec"
	"faithlab/core/store"
	"faithlab/resources/priors"
)

// shippedPriors are the model files of the priors Faithlab ships, by
// dataset id.
func shippedPriors() map[string]func() []byte {
	return map[string]func() []byte{"fashion-mnist": priors.FashionMNIST}
}

// priorKey names the content of the diffusion prior a protocol runs with
// (GOAR, FUD): the SHA-256 of its file, or of the prior shipped for the
// dataset, so that a task whose prior changed is not taken as done; ""
// for protocols without a prior. Built-in priors (mixture, empirical) are
// named by name: they are made from the task's own data.
func priorKey(ds spec.Dataset, pr spec.Protocol) string {
	p, err := pr.New()
	if err != nil || !slices.ContainsFunc(protocol.Params(p), func(q protocol.Param) bool { return q.Name == "prior" }) {
		return ""
	}
	name, _ := pr.Params["prior"].(string)
	var b []byte
	switch name {
	case "mixture", "empirical":
		return name
	case "", "auto":
		if shipped := shippedPriors()[ds.Ref]; shipped != nil {
			b = shipped()
		}
	default:
		b, err = model.ReadFile(name)
		if err != nil {
			return "unreadable:" + name
		}
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// openPrior is protocol.Env.Prior for a task on the dataset ref (OpenPrior
// on the runner's kernel).
func (r *Runner) openPrior(ref, path string) (diffusion.Prior, string, error) {
	return OpenPrior(ref, path, r.Kernel)
}

// OpenPrior opens the diffusion prior of a file (GOAR, FUD) — "" is the
// prior shipped for the dataset ref — as a private copy (a prior's network
// is not safe for concurrent use), with a key naming the file's content.
func OpenPrior(ref, path string, kernel gemm.Kernel) (diffusion.Prior, string, error) {
	var b []byte
	if path == "" {
		shipped := shippedPriors()[ref]
		if shipped == nil {
			return nil, "", fmt.Errorf("no diffusion prior is shipped for %s: name a prior file (prior: FILE) or a built-in prior (mixture, empirical)", ref)
		}
		b, path = shipped(), "the shipped "+ref+" prior"
	} else {
		var err error
		if b, err = model.ReadFile(path); err != nil {
			return nil, "", err
		}
	}
	m, err := model.DecodePrior(b, kernel)
	if err != nil {
		return nil, "", fmt.Errorf("prior %s: %w", path, err)
	}
	d := m.Diffusion
	s, err := diffusion.NewSchedule(d.Schedule, d.Steps)
	if err != nil {
		return nil, "", fmt.Errorf("prior %s: %w", path, err)
	}
	p, err := diffusion.NewNetPrior(m.Prior, s, diffusion.Scaling{Lo: d.DataLo, Hi: d.DataHi})
	if err != nil {
		return nil, "", fmt.Errorf("prior %s: %w", path, err)
	}
	h := sha256.Sum256(b)
	return p, "prior-file/" + hex.EncodeToString(h[:]), nil
}

// artefacts is protocol.Env.Artefacts: what protocols make, kept in the
// run's cache like maps and models (a damaged entry rebuilt).
type artefacts struct{ r *Runner }

func (a artefacts) Artefact(ctx context.Context, key, ext string, build func() ([]byte, error)) ([]byte, error) {
	return a.r.artefact(ctx, store.Key("protocol-artefact", key), ext, build)
}

// filesKey names the content of the maps files a method serves (file):
// the SHA-256 of the files, so that maps and results made from a file
// that changed since are not taken as its; "" for methods that compute.
// Its prefix names how the files are read: "rows" since a .npy as long as
// the file a split was drawn from is read in that file's order (before,
// its first rows were served as the split's), so that results read the
// old way are made again.
func filesKey(meth spec.Method) string {
	m, err := meth.New(attr.CheckSetup)
	f, ok := m.(attr.File)
	if err != nil || !ok {
		return ""
	}
	h, err := f.Digest()
	if err != nil {
		return "unreadable:" + err.Error()
	}
	return "rows:" + h
}
