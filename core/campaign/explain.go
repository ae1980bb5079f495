package campaign

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"faithlab/core/attr"
	"faithlab/core/attr/methods"
	"faithlab/core/attr/trace"
	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/model"
	"faithlab/core/perturb"
	"faithlab/core/protocol"
)

// Methods describes every attribution method (methods.All).
func Methods() []attr.Info { return methods.All() }

// MethodsFor describes the methods that can explain samples of ds with
// net (nil: whatever the model): of its kind of data, needing no ground
// truth it lacks (v_λ on any dataset but the Gaussian mixture), and, given
// a network, the transformer methods only where it has attention to read.
func MethodsFor(ds *data.Dataset, net engine.Network) []attr.Info {
	attends := false
	if at, ok := net.(engine.Attentioner); ok {
		attends = len(at.AttentionLayers()) > 0
	}
	var out []attr.Info
	for _, m := range methods.All() {
		if !m.Applies(ds.Shape, len(ds.Truth) > 0) || net != nil && m.Category == attr.CategoryTransformer && !attends {
			continue
		}
		out = append(out, m)
	}
	return out
}

// Protocols describes every evaluation protocol with its defaults.
func Protocols() []protocol.Info {
	var out []protocol.Info
	for _, p := range protocol.All() {
		out = append(out, p.Info())
	}
	return out
}

// Request says which maps to compute: the method, its parameters, the
// samples and what to explain.
type Request struct {
	Method string         `json:"method"`
	Params map[string]any `json:"params,omitempty"` // by the names in the method's Info.Params
	Post   string         `json:"post,omitempty"`   // post-processing steps, e.g. "abs,gaussian:1"
	Reduce string         `json:"reduce,omitempty"` // colour channels to one map: sum, mean, max ("": keep; tabular data: ignored)
	Split  string         `json:"split"`            // "test" (default) or "train"
	Offset int            `json:"offset"`           // first sample of the split
	Count  int            `json:"count"`            // samples (0: all from Offset)
	Target string         `json:"target"`           // "predicted" (default) or "label"
	Seed   uint64         `json:"seed"`
	Chunk  int            `json:"-"` // inputs per engine call (0: 256)
	Engine *model.Engine  `json:"-"` // where the model computes (nil: native)
}

// Explained is what Attribute made.
type Explained struct {
	Request  Request        `json:"request"`
	Maps     attr.Maps      `json:"-"`
	Dataset  string         `json:"dataset"`  // the split's name
	Method   string         `json:"method"`   // the method's own name, e.g. "IntegratedGradients"
	Settings map[string]any `json:"settings"` // every setting it ran with, defaults included
	Post     []string       `json:"post"`
	Targets  []int          `json:"targets"`
	Trace    []trace.Result `json:"trace,omitempty"` // TRACE: per sample, trajectory, objective, iterations, time
	Elapsed  time.Duration  `json:"-"`
}

// Attribute computes maps for samples of a split under the model m, with
// the method built from the registry exactly as a campaign builds it (the
// same training data for the methods that draw on it).
func Attribute(ctx context.Context, m *model.Model, trainSet, testSet *data.Dataset, q Request) (Explained, error) {
	return attribute(ctx, m, trainSet, testSet, q, nil)
}

// attribute is Attribute explaining the given classes, when not nil,
// instead of those q.Target names.
func attribute(ctx context.Context, m *model.Model, trainSet, testSet *data.Dataset, q Request, target []int) (Explained, error) {
	ex := Explained{Request: q}
	ds := testSet
	switch q.Split {
	case "", "test":
		ex.Request.Split = "test"
	case "train":
		ds = trainSet
	default:
		return ex, fmt.Errorf("split %q: train or test", q.Split)
	}
	ex.Dataset = ds.Name
	if q.Offset < 0 || q.Offset >= ds.Len() {
		return ex, fmt.Errorf("first sample %d outside the %d samples of %s", q.Offset, ds.Len(), ds.Name)
	}
	if q.Count < 0 {
		return ex, fmt.Errorf("%d samples: want 0 (all) or more", q.Count)
	}
	if q.Chunk <= 0 {
		q.Chunk = 256
	}
	steps, err := attr.ParseSteps(q.Post)
	if err != nil {
		return ex, err
	}
	meth, err := methods.New(q.Method, q.Params, attr.Setup{Seed: q.Seed, Chunk: q.Chunk, Train: trainSet.X, TrainN: trainSet.Len(), Truth: trainSet.Truth})
	if err != nil {
		return ex, err
	}
	n := ds.Len() - q.Offset
	if q.Count > 0 {
		n = min(n, q.Count)
	}
	dim := ds.Dim()
	in := attr.Input{X: ds.X[q.Offset*dim : (q.Offset+n)*dim], N: n, Shape: ds.Shape, Split: ex.Request.Split, Index: make([]int, n), Rows: ds.Rows, SourceLen: ds.SourceLen}
	for j := range in.Index {
		in.Index[j] = q.Offset + j
	}
	net, err := q.Engine.Network(ctx, m)
	if err != nil {
		return ex, err
	}
	defer engine.Release(net)
	switch {
	case target != nil:
		in.Target = target
	case q.Target == "" || q.Target == "predicted":
		ex.Request.Target = "predicted"
		if in.Target, err = engine.Predicted(ctx, net, in.X, n, q.Chunk); err != nil {
			return ex, err
		}
	case q.Target == "label":
		in.Target = ds.Y[q.Offset : q.Offset+n]
	default:
		return ex, fmt.Errorf("target %q: predicted or label", q.Target)
	}
	t0 := time.Now()
	if t, ok := meth.(trace.TRACE); ok {
		meth = recordTrace{t, &ex.Trace}
	}
	maps, err := attr.Run(ctx, meth, net, in)
	if err != nil {
		return ex, err
	}
	maps = attr.Apply(maps, steps)
	if q.Reduce != "" && data.Kind(ds.Shape) != "tabular" { // a table's "channels" are features, never reduced
		if maps, err = attr.ReduceChannels(maps, q.Reduce); err != nil {
			return ex, err
		}
	}
	ex.Maps, ex.Method, ex.Settings, ex.Targets, ex.Elapsed = maps, meth.Name(), meth.Settings(), in.Target, time.Since(t0)
	for _, s := range steps {
		ex.Post = append(ex.Post, s.String())
	}
	return ex, nil
}

// mapsRecord is what Save writes beside a maps file: what made the maps,
// enough to make them again.
type mapsRecord struct {
	Explained
	Model    string    `json:"model"`
	Arch     string    `json:"arch"`
	Shape    []int     `json:"shape"`
	Seconds  float64   `json:"seconds"`
	Faithlab string    `json:"faithlab_version"`
	Created  time.Time `json:"created"`
}

// Save writes the maps to path as .npy — (N,H,W) for maps of one channel,
// else (N,C,H,W), the split's inputs from Request.Offset on — or, for a
// path ending in .npz, as an archive of arrays maps (as the .npy), index
// (each map's input: its position in the split) and targets (the class
// each map explains), which the file method reads back; and what made them (the request, the method's settings,
// the targets, TRACE's trajectories, the model) to path.json.
func (ex Explained) Save(path, modelPath, arch string) error {
	shape := ex.Maps.Shape
	if shape[1] == 1 {
		shape = []int{shape[0], shape[2], shape[3]}
	}
	if strings.HasSuffix(strings.ToLower(path), ".npz") {
		n := shape[0]
		index, targets := make([]float32, n), make([]float32, n)
		for i := range n {
			index[i], targets[i] = float32(ex.Request.Offset+i), float32(ex.Targets[i])
		}
		if err := data.SaveNPZ(path, []data.NamedArray{{Name: "maps", Shape: shape, Data: ex.Maps.Data},
			{Name: "index", Shape: []int{n}, Data: index}, {Name: "targets", Shape: []int{n}, Data: targets}}); err != nil {
			return err
		}
	} else if err := data.SaveNPY(path, shape, ex.Maps.Data); err != nil {
		return err
	}
	b, err := json.MarshalIndent(mapsRecord{Explained: ex, Model: modelPath, Arch: arch, Shape: shape, Seconds: ex.Elapsed.Seconds(),
		Faithlab: model.Version, Created: time.Now().UTC()}, "", "  ")
	if err != nil {
		return err
	}
	return data.WriteFileAtomic(path+".json", b)
}

// recordTrace runs a TRACE method and keeps its per-image results.
type recordTrace struct {
	trace.TRACE
	results *[]trace.Result
}

func (r recordTrace) Attribute(ctx context.Context, net engine.Network, in attr.Input) (attr.Maps, error) {
	maps, res, err := r.Explain(ctx, net, in)
	*r.results = res
	return maps, err
}

// Impute fills the removed pixels (mask 0) of a C×H×W image in place from
// the named reference (zero, mean, blur[:σ], road[:noise]).
func Impute(ctx context.Context, reference string, img []float32, shape []int, mask []float32, seed uint64) error {
	ref, err := perturb.ParseReference(reference, nil)
	if err != nil {
		return err
	}
	if err := engine.CheckInput(img, 1, shape); err != nil {
		return err
	}
	return perturb.FillAll(ctx, ref, img, shape, mask, seed, 0)
}

// TraceScore is one method's mean deletion scores over the images.
type TraceScore struct {
	Method        string
	LeRF, MoRF    float64
	LeRFMinusMoRF float64
}

// TraceCompare scores methods and TRACE (greedy Le, annealed LeMo) on the
// deletion metric of the TRACE paper (Table 1): the first n test images,
// g×g patches, zero reference, the predicted class's probability. Methods
// come out best LeRF − MoRF first; done is called after each.
func TraceCompare(ctx context.Context, m *model.Model, ds *data.Dataset, n, grid, iterations int, seed uint64, done func(method string)) ([]TraceScore, error) {
	n = min(n, ds.Len())
	in := attr.Input{X: ds.X[:n*ds.Dim()], N: n, Shape: ds.Shape}
	var err error
	if in.Target, err = engine.Predicted(ctx, m.Net, in.X, n, 256); err != nil {
		return nil, err
	}
	var ms []attr.Method
	setup := attr.Setup{Seed: seed}
	for _, name := range []string{"gradient", "gradxinput", "ig", "smoothgrad", "sgsq", "vargrad", "deeplift", "gradcam", "sobel", "random"} {
		meth, err := methods.New(name, nil, setup)
		if err != nil {
			return nil, err
		}
		ms = append(ms, meth)
	}
	for _, t := range []struct {
		name   string
		params map[string]any
	}{
		{"trace-greedy", map[string]any{"objective": "le", "grid": grid}},
		{"trace-sa", map[string]any{"objective": "lemo", "grid": grid, "iterations": iterations}},
	} {
		meth, err := methods.New(t.name, t.params, setup)
		if err != nil {
			return nil, err
		}
		ms = append(ms, meth)
	}
	feats, err := perturb.NewFeatures(ds.Shape[1], ds.Shape[2], grid)
	if err != nil {
		return nil, err
	}
	var rows []TraceScore
	for _, meth := range ms {
		maps, err := attr.Run(ctx, meth, m.Net, in)
		if err != nil {
			return nil, err
		}
		if maps, err = attr.ReduceChannels(maps, "sum"); err != nil {
			return nil, err
		}
		r := TraceScore{Method: meth.Name()}
		for i := range n {
			f, err := trace.NetScorer(m.Net, in.Sample(i), make([]float32, in.Dim()), ds.Shape, grid, in.Target[i], true, 256)
			if err != nil {
				return nil, err
			}
			c, err := trace.Evaluate(ctx, f, trace.TrajectoryOf(trace.PatchScores(maps.Map(i), feats)))
			if err != nil {
				return nil, err
			}
			r.LeRF += c.Value(trace.Le) / float64(n)
			r.MoRF += -c.Value(trace.Mo) / float64(n)
			r.LeRFMinusMoRF += c.Value(trace.LeMo) / float64(n)
		}
		rows = append(rows, r)
		if done != nil {
			done(r.Method)
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].LeRFMinusMoRF > rows[j].LeRFMinusMoRF })
	return rows, nil
}
