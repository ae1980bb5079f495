package campaign

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"weak"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/engine/native"
	"faithlab/core/model"
	"faithlab/core/perturb"
	"faithlab/core/protocol"
)

// References are the removal references a sample is shown filled with:
// those of ROAR (zero), the channel and dataset means, blur and ROAD.
func References() []string { return []string{"zero", "mean", "dataset-mean", "blur", "road"} }

// Removal is a sample with a fraction of its features removed and filled
// from one reference — what a removal protocol feeds the model — and the
// model's prediction on it.
type Removal struct {
	Reference  string
	Image      []float32 // C×H×W
	Predicted  int       // the class the model predicts
	Confidence float64   // its softmax probability
	TargetProb float64   // the softmax probability of the class explained
}

// Removed is one sample at one rate: the keep-mask (H×W, 1 kept, 0
// removed) and a Removal per reference; the first is the original (no
// reference, nothing removed).
type Removed struct {
	Keep     []float32
	Removals []Removal
}

// Remove removes the rate most relevant features of sample i of ds (the
// least relevant when !morf), ranked by the map's magnitude as the removal
// protocols do by default, fills them from each reference (References
// when refs is empty) and scores every version with the model; target is
// the class explained. trainSet gives the dataset mean.
func Remove(ctx context.Context, m *model.Model, trainSet, ds *data.Dataset, i int, saliency []float32, rate float64, morf bool, target int, refs []string, seed uint64) (Removed, error) {
	var out Removed
	if i < 0 || i >= ds.Len() {
		return out, fmt.Errorf("sample %d outside the %d of %s", i, ds.Len(), ds.Name)
	}
	fs := protocol.FeatureShape(ds.Shape)
	feats, err := perturb.NewFeatures(fs[1], fs[2], 0)
	if err != nil {
		return out, err
	}
	if k := m.Net.Classes(); target < 0 || target >= k {
		return out, fmt.Errorf("class %d outside the model's %d", target, k)
	}
	if len(saliency) != fs[1]*fs[2] {
		return out, fmt.Errorf("map of %d values for samples of %d features", len(saliency), fs[1]*fs[2])
	}
	mag := make([]float32, len(saliency))
	for j, v := range saliency {
		mag[j] = float32(math.Abs(float64(v)))
	}
	scores, err := feats.Scores(mag)
	if err != nil {
		return out, err
	}
	k, err := perturb.Count(rate, feats.N())
	if err != nil {
		return out, err
	}
	out.Keep = make([]float32, feats.N())
	feats.Keep(out.Keep, perturb.Order(scores, morf), k)
	if len(refs) == 0 {
		refs = References()
	}
	x := ds.Sample(i)
	imgs := append([]float32(nil), x...)
	for _, name := range refs {
		ref, err := perturb.ParseReference(name, func() []float32 { return datasetMeans(trainSet, fs) })
		if err != nil {
			return out, err
		}
		img := append([]float32(nil), x...)
		if err := perturb.FillAll(ctx, ref, img, fs, out.Keep, seed, uint64(i)); err != nil {
			return out, fmt.Errorf("%s: %w", name, err)
		}
		imgs = append(imgs, img...)
	}
	n := len(refs) + 1
	dim := ds.Dim()
	out.Removals = make([]Removal, n)
	prob := make([]float32, m.Net.Classes())
	err = engine.EachLogits(ctx, m.Net, imgs, n, n, func(j int, row []float32) {
		engine.Softmax(prob, row, len(prob))
		c := engine.Argmax(row)
		r := Removal{Image: imgs[j*dim : (j+1)*dim], Predicted: c, Confidence: float64(prob[c]), TargetProb: float64(prob[target])}
		if j > 0 {
			r.Reference = refs[j-1]
		}
		out.Removals[j] = r
	})
	return out, err
}

// CascadeStep is one model of the model parameter randomisation test's
// cascade: which layers are random ("" for the trained model), the
// sample's map on it (H×W) and how similar that map is to the trained
// model's (MPRT's three similarities; 1 for the trained model itself).
type CascadeStep struct {
	Random              string
	Map                 []float32
	Spearman, SSIM, HOG float64
}

// Cascade explains sample q.Offset of q's split on the model m and on
// copies of it with its layers randomised in cascade from the top, as
// MPRT does with the seed q.Seed: Adebayo et al.'s picture of one sample.
// The method is built as Attribute builds it; m must be a native model.
func Cascade(ctx context.Context, m *model.Model, trainSet, testSet *data.Dataset, q Request) ([]CascadeStep, error) {
	if m.Net == nil {
		return nil, fmt.Errorf("the randomisation test needs a model Faithlab runs itself, not a TorchScript module")
	}
	ds := testSet
	if q.Split == "train" {
		ds = trainSet
	}
	if q.Offset < 0 || q.Offset >= ds.Len() {
		return nil, fmt.Errorf("sample %d outside the %d of %s", q.Offset, ds.Len(), ds.Name)
	}
	one := &data.Dataset{Name: ds.Name, Shape: ds.Shape, Classes: ds.Classes, X: ds.Sample(q.Offset), Y: ds.Y[q.Offset : q.Offset+1]}
	env := &protocol.Env{Net: m.Net, Test: one, Method: q.Method, Seed: q.Seed,
		Explain: func(ctx context.Context, net engine.Network, x []float32, n int, target []int) ([]float32, error) {
			c := m.Copy()
			c.Net = net.(*native.Net)
			r := q
			r.Split, r.Offset, r.Count, r.Engine = "test", 0, n, nil
			ex, err := attribute(ctx, c, trainSet, &data.Dataset{Name: one.Name, Shape: one.Shape, Classes: one.Classes, X: x, Y: make([]int, n)}, r, target)
			return ex.Maps.Data, err
		}}
	target := cmp.Or(q.Target, "predicted")
	res, err := protocol.MPRT{Samples: 1, Target: target}.Run(ctx, env)
	if err != nil {
		return nil, err
	}
	steps := []CascadeStep{{Map: res.Samples[1].Values, Spearman: 1, SSIM: 1, HOG: 1}}
	for k, sm := range res.Samples[2:] {
		st := CascadeStep{Random: strings.TrimSuffix(strings.TrimPrefix(sm.Name, "MPRT "), " random test"), Map: sm.Values,
			SSIM: math.NaN(), HOG: math.NaN()}
		for _, c := range res.Curves {
			switch c.Name {
			case "spearman":
				st.Spearman = c.Y[k]
			case "ssim":
				st.SSIM = c.Y[k]
			case "hog":
				st.HOG = c.Y[k]
			}
		}
		steps = append(steps, st)
	}
	return steps, nil
}

// datasetMeans is perturb.ChannelMeans of a training set, computed once
// per set: Inspect asks for it at every step, and over Fashion-MNIST's
// 47 M values it took a fifth of the workbench's CPU while a user stepped
// through samples. The cache holds its sets weakly.
func datasetMeans(ds *data.Dataset, shape []int) []float32 {
	key := weak.Make(ds)
	meansMu.Lock()
	defer meansMu.Unlock()
	if m, ok := means[key]; ok {
		return m
	}
	for k := range means {
		if k.Value() == nil {
			delete(means, k)
		}
	}
	m := perturb.ChannelMeans(ds.X, shape)
	means[key] = m
	return m
}

var (
	meansMu sync.Mutex
	means   = map[weak.Pointer[data.Dataset]][]float32{}
)
