package job

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"

	"faithlab/core/data"
	"faithlab/core/model"
	"faithlab/core/spec"
	"faithlab/core/store"
)

// Task is one unit of a campaign: one protocol run for one method.
type Task struct {
	Index    int    // position in the plan
	Key      string // content address: everything its result depends on
	Label    string // e.g. "fashion-mnist seed 1 · gradient · ROAR"
	Dataset  int    // index into the spec's lists
	Method   int
	Post     int
	Protocol int
	Seed     uint64
	Base     string // content address of the base model the task explains
}

// Plan expands a spec into its tasks, in a fixed order (datasets, seeds,
// methods, post-processings, protocols).
func Plan(s *spec.Spec) []Task {
	var tasks []Task
	for d, ds := range s.Datasets {
		for _, seed := range s.Seeds {
			base := baseKey(s, d, seed)
			for m, meth := range s.Methods {
				for p, post := range s.Post {
					for q, pr := range s.Protocols {
						label := fmt.Sprintf("%s seed %d · %s", dsName(ds), seed, meth.Label())
						if post != "" {
							label += "+" + post
						}
						label += " · " + pr.Name
						key := store.Key("result", base, ds.TrainSamples, ds.TestSamples, meth.Label(), post, pr.Name, paramsKey(pr.Params), s.Retrain, seed)
						if pk := priorKey(ds, pr); pk != "" {
							key = store.Key("result", key, pk) // a prior's content, not its name, decides
						}
						if fk := filesKey(meth); fk != "" {
							key = store.Key("result", key, fk) // so do the maps files'
						}
						tasks = append(tasks, Task{Index: len(tasks), Dataset: d, Method: m, Post: p, Protocol: q, Seed: seed, Label: label, Base: base, Key: key})
					}
				}
			}
		}
	}
	return tasks
}

// paramsKey is how a protocol's parameters enter its tasks' keys: none
// set is one setting however it is held — no map (a spec file's protocol
// without params) or an empty one (a form with every field at its
// default) —, so that a run folder's records are found by every front end
// that holds the same spec (an empty map keyed as {} and a file's nil as
// null: the workbench counted its own finished Deletion tasks as to run).
func paramsKey(p map[string]any) map[string]any {
	if len(p) == 0 {
		return nil
	}
	return p
}

// Shard is the part of a plan one machine runs: task i belongs to shard
// i mod Of. The zero Shard is the whole plan.
type Shard struct{ I, Of int }

// Has reports whether the task is in the shard.
func (s Shard) Has(t Task) bool { return s.Of <= 1 || t.Index%s.Of == s.I }

func (s Shard) String() string {
	if s.Of <= 1 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.I, s.Of)
}

// ParseShard reads what String writes (a manifest's shard, "I/N"); false
// for the whole plan ("") or anything else.
func ParseShard(s string) (Shard, bool) {
	var sh Shard
	if _, err := fmt.Sscanf(s, "%d/%d", &sh.I, &sh.Of); err != nil || sh.Of < 2 || sh.I < 0 || sh.I >= sh.Of {
		return Shard{}, false
	}
	return sh, true
}

// dsName is how results name a dataset: its id, or its file or folder name.
func dsName(d spec.Dataset) string { return filepath.Base(d.Ref) }

// baseKey addresses the base model of dataset d trained with seed: the
// model file's content, or the recipe and the data it is trained on; and
// the engine's kind unless native, so that another engine's models, maps
// and results are its own.
func baseKey(s *spec.Spec, d int, seed uint64) string {
	key := modelKey(s, d, seed)
	if kind, _ := model.EngineKind(s.Engine); kind != "native" {
		return store.Key(key, "engine", kind)
	}
	return key
}

func modelKey(s *spec.Spec, d int, seed uint64) string {
	ds := s.Datasets[d]
	if f := s.Model.File; f != "" && model.IsTorchScript(f) {
		h, err := model.ScriptDigest(f)
		if err != nil {
			return store.Key("torchscript-file", f, err.Error())
		}
		return store.Key("torchscript-file", h)
	}
	if f := s.Model.File; f != "" && model.IsONNX(f) {
		h, err := model.ONNXDigest(f)
		if err != nil {
			return store.Key("onnx-file", f, err.Error())
		}
		return store.Key("onnx-file", h)
	}
	if f := s.Model.File; f != "" {
		b, err := model.ReadFile(f)
		if err != nil {
			return store.Key("model-file", f, err.Error())
		}
		h := sha256.Sum256(b)
		return store.Key("model-file", hex.EncodeToString(h[:]))
	}
	return store.Key("model", ds.Ref, optionsKey(ds.Options), ds.TrainSamples, s.Model, seed)
}

// optionsKey is how a dataset's options enter a key: with the field names
// they had before data.Options gained JSON names, so that caches and the
// results' model names carry over.
func optionsKey(o data.Options) any {
	return struct {
		Label               string
		ImageSize, Channels int
		TestFrac            float64
		Seed                uint64
	}{o.Label, o.ImageSize, o.Channels, o.TestFrac, o.Seed}
}
