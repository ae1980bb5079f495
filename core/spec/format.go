package spec

import (
	"bytes"

	"go.yaml.in/yaml/v3"
)

// The spec's YAML layout, for writing: fields in the order a reader
// expects, defaults left out.
type (
	fileSpec struct {
		Name      string         `yaml:"name,omitempty"`
		Output    string         `yaml:"output"`
		Cache     string         `yaml:"cache,omitempty"`
		Datasets  []fileDataset  `yaml:"datasets"`
		Model     fileModel      `yaml:"model"`
		Methods   []any          `yaml:"methods"`
		Post      []string       `yaml:"post,omitempty"`
		Reduce    string         `yaml:"reduce,omitempty"`
		Protocols []fileProtocol `yaml:"protocols"`
		Seeds     []uint64       `yaml:"seeds,flow"`
		Retrain   Retrain        `yaml:"retrain"`
		Workers   int            `yaml:"workers,omitempty"`
		MemoryGB  float64        `yaml:"memory_gb,omitempty"`
		Engine    string         `yaml:"engine,omitempty"`
	}
	fileDataset struct {
		ID           string `yaml:"id"`
		TrainSamples int    `yaml:"train_samples,omitempty"`
		TestSamples  int    `yaml:"test_samples,omitempty"`
		Label        string `yaml:"label,omitempty"`
		ImageSize    int    `yaml:"image_size,omitempty"`
		Channels     int    `yaml:"channels,omitempty"`
	}
	fileModel struct {
		File        string  `yaml:"file,omitempty"`
		Arch        string  `yaml:"arch,omitempty"`
		Epochs      int     `yaml:"epochs,omitempty"`
		Patience    int     `yaml:"patience,omitempty"`
		LR          float64 `yaml:"lr,omitempty"`
		Batch       int     `yaml:"batch,omitempty"`
		Optimizer   string  `yaml:"optimizer,omitempty"`
		Momentum    float64 `yaml:"momentum,omitempty"`
		WeightDecay float64 `yaml:"weight_decay,omitempty"`
		Schedule    string  `yaml:"schedule,omitempty"`
	}
	fileMethod struct {
		Name   string         `yaml:"name"`
		Label  string         `yaml:"label,omitempty"`
		Params map[string]any `yaml:"params,omitempty,flow"`
	}
	fileProtocol struct {
		Name   string         `yaml:"name"`
		Params map[string]any `yaml:"params,omitempty,flow"`
	}
)

// Format writes a spec as YAML that Parse reads back to the same spec
// (paths as they are in s): what the GUI saves and `evaluate` runs.
func Format(s *Spec) ([]byte, error) {
	f := fileSpec{Name: s.Name, Output: s.Output, Cache: s.Cache, Post: s.Post, Protocols: []fileProtocol{},
		Seeds: s.Seeds, Retrain: s.Retrain, Workers: s.Workers, MemoryGB: s.MemoryGB, Engine: s.Engine,
		Model: fileModel{File: s.Model.File, Arch: s.Model.Arch, Epochs: s.Model.Epochs, Patience: s.Model.Patience, LR: s.Model.LR, Batch: s.Model.Batch,
			Optimizer: s.Model.Optimizer, Momentum: s.Model.Momentum, WeightDecay: s.Model.WeightDecay, Schedule: s.Model.Schedule}}
	if s.Reduce != "sum" {
		f.Reduce = s.Reduce
	}
	for _, d := range s.Datasets {
		f.Datasets = append(f.Datasets, fileDataset{ID: d.Ref, TrainSamples: d.TrainSamples, TestSamples: d.TestSamples,
			Label: d.Options.Label, ImageSize: d.Options.ImageSize, Channels: d.Options.Channels})
	}
	for _, m := range s.Methods {
		if len(m.Params) == 0 && m.As == "" {
			f.Methods = append(f.Methods, m.Name)
		} else {
			f.Methods = append(f.Methods, fileMethod{Name: m.Name, Label: m.As, Params: m.Params})
		}
	}
	for _, p := range s.Protocols {
		f.Protocols = append(f.Protocols, fileProtocol{Name: p.Name, Params: p.Params})
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	return buf.Bytes(), enc.Close()
}
