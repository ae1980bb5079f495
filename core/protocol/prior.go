package protocol

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
	"strings"

	"faithlab/core/data"
	"faithlab/core/diffusion"
	"faithlab/core/engine"
)

// The diffusion priors GOAR and FUD stand on, by their prior parameter:
const (
	// PriorAuto is the default: the fitted mixture for tabular data, the
	// prior shipped for the dataset for images (Env.Prior with "").
	PriorAuto = "auto"
	// PriorMixture is the class-conditional Gaussian mixture fitted to the
	// training split (one component per class, its weight the class's
	// share, diagonal covariance), whose noised score is exact
	// (diffusion.MixturePrior): on the gmm dataset it is the generator up
	// to sampling error.
	PriorMixture = "mixture"
	// PriorEmpirical is the training split's empirical distribution
	// noised (diffusion.Empirical): training-free, exact for the finite
	// set, two GEMMs against the whole split per step.
	PriorEmpirical = "empirical"
)

// builtinSchedule is the noising process of the built-in priors: Ho et
// al.'s linear schedule over 1000 steps, as the shipped prior's.
func builtinSchedule() *diffusion.Schedule {
	s, err := diffusion.NewSchedule(diffusion.Linear, 1000)
	if err != nil {
		panic(err) // a built-in schedule; cannot fail
	}
	return s
}

// IsPriorFile reports whether a prior parameter names a file rather than
// a built-in prior (auto, mixture, empirical).
func IsPriorFile(ref string) bool {
	switch strings.ToLower(ref) {
	case "", PriorAuto, PriorMixture, PriorEmpirical:
		return false
	}
	return true
}

// openPrior returns the prior the parameter ref names for env's data, with
// a key naming its content, and checks it models samples of the data's
// shape.
func openPrior(ctx context.Context, env *Env, ref string) (diffusion.Prior, string, error) {
	if env.Train == nil || env.Train.Len() == 0 {
		return nil, "", fmt.Errorf("prior: no training set")
	}
	ref = strings.ToLower(ref)
	if ref == "" || ref == PriorAuto {
		ref = PriorMixture
		if !tabular(env.Train.Shape) {
			ref = ""
		}
	}
	var (
		p   diffusion.Prior
		key string
		err error
	)
	switch ref {
	case PriorMixture:
		var m diffusion.Mixture
		if m, err = FitMixture(env.Train); err == nil {
			p, err = diffusion.NewMixturePrior(m, builtinSchedule(), diffusion.ScalingFor(env.Train))
		}
		key = "mixture/" + digestSet(env.Train)
	case PriorEmpirical:
		p, err = diffusion.NewEmpirical(env.Train, builtinSchedule(), diffusion.ScalingFor(env.Train), nil)
		key = "empirical/" + digestSet(env.Train)
	default:
		if env.Prior == nil {
			return nil, "", fmt.Errorf("prior %q: this environment opens no prior files", ref)
		}
		p, key, err = env.Prior(ctx, ref)
	}
	if err != nil {
		return nil, "", fmt.Errorf("prior: %w", err)
	}
	// The samplers see a sample as its values in order: a mixture of
	// images models them as (H·W·C)×1×1, which is the same layout.
	if got, want := p.Shape(), env.Train.Shape; engine.Size(got) != engine.Size(want) {
		return nil, "", fmt.Errorf("prior models samples of shape %v, the data are %v", got, want)
	}
	return p, key, nil
}

// tabular reports whether samples of the shape are tabular rows (D×1×1).
func tabular(shape []int) bool { return data.Kind(shape) == "tabular" }

// FitMixture fits the class-conditional Gaussian mixture of PriorMixture
// to ds, by maximum likelihood: component k is class k, its weight the
// class's share, its mean and per-coordinate variance the class's (the
// variance at least 1e-6 of the largest, so that a constant coordinate
// keeps a density). Values stay in ds's units (a scaling maps them into
// the prior's space).
func FitMixture(ds *data.Dataset) (diffusion.Mixture, error) {
	dim, counts := ds.Dim(), ds.ClassCounts()
	var m diffusion.Mixture
	sums := make([][]float64, len(counts))
	sqs := make([][]float64, len(counts))
	for k := range counts {
		sums[k], sqs[k] = make([]float64, dim), make([]float64, dim)
	}
	for i, y := range ds.Y {
		for j, v := range ds.Sample(i) {
			sums[y][j] += float64(v)
			sqs[y][j] += float64(v) * float64(v)
		}
	}
	var top float64
	for k, c := range counts {
		if c == 0 {
			continue // a class absent from the split gets no component
		}
		mean, vars := make([]float64, dim), make([]float64, dim)
		for j := range mean {
			mean[j] = sums[k][j] / float64(c)
			vars[j] = max(sqs[k][j]/float64(c)-mean[j]*mean[j], 0)
			top = max(top, vars[j])
		}
		m.Weights = append(m.Weights, float64(c)/float64(ds.Len()))
		m.Means, m.Vars = append(m.Means, mean), append(m.Vars, vars)
	}
	if len(m.Weights) == 0 || !(top > 0) || math.IsInf(top, 0) {
		return m, fmt.Errorf("mixture of %s: the data do not vary", ds.Name)
	}
	var total float64
	for k := range m.Weights {
		total += m.Weights[k]
		for j, v := range m.Vars[k] {
			m.Vars[k][j] = max(v, 1e-6*top)
		}
	}
	for k := range m.Weights {
		m.Weights[k] /= total
	}
	return m, nil
}

// digestSet is a hex SHA-256 of a data set's shape, values and labels.
func digestSet(ds *data.Dataset) string {
	h := sha256.New()
	fmt.Fprint(h, ds.Shape, len(ds.Y))
	hashFloats(h, ds.X)
	b := make([]byte, 8)
	for _, y := range ds.Y {
		binary.LittleEndian.PutUint64(b, uint64(y))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// digestValues is a hex SHA-256 of the parts (written with fmt) and the
// values.
func digestValues(x []float32, parts ...any) string {
	h := sha256.New()
	fmt.Fprintln(h, parts...)
	hashFloats(h, x)
	return hex.EncodeToString(h.Sum(nil))
}

func hashFloats(h hash.Hash, x []float32) {
	buf := make([]byte, 0, 1<<16)
	for _, v := range x {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		if len(buf) == cap(buf) {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
}
