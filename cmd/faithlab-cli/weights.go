package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"faithlab/core/data"
	"faithlab/core/model"
)

func runWeightsExport(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("weights-export", flag.ContinueOnError)
	path := fs.String("model", "", "model file (required)")
	out := fs.String("out", "", ".npz to write (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *path == "" || *out == "" {
		return errors.New("--model FILE and --out W.npz are required")
	}
	m, err := loadModel(*path)
	if err != nil {
		return err
	}
	var arrs []data.NamedArray
	for _, p := range m.Net.Params() {
		arrs = append(arrs, data.NamedArray{Name: p.Name, Shape: p.Shape, Data: p.Data})
	}
	return data.SaveNPZ(*out, arrs)
}

func runWeightsImport(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("weights-import", flag.ContinueOnError)
	arch := fs.String("arch", "goar-cnn", "architecture the weights belong to")
	weights := fs.String("weights", "", ".npz of PyTorch state_dict arrays (required)")
	out := fs.String("out", "", "model file to write (required)")
	shape := fs.String("input-shape", "1,28,28", "C,H,W of one input")
	classes := fs.String("classes", "", "comma-separated class names (default: fashion-mnist's when there are 10, else numbers)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *weights == "" || *out == "" {
		return errors.New("--weights W.npz and --out FILE are required")
	}
	if err := model.CheckWritable(*out); err != nil {
		return err
	}
	var in []int
	for _, f := range strings.Split(*shape, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("--input-shape %q: %w", *shape, err)
		}
		in = append(in, v)
	}
	z, err := data.OpenNPZ(*weights)
	if err != nil {
		return err
	}
	defer z.Close()
	// The number of classes is the length of the architecture's last
	// parameter, the output layer's bias.
	probe, err := model.New(*arch, &data.Dataset{Shape: in, Classes: []string{"a", "b"}}, kernel(), 0)
	if err != nil {
		return err
	}
	ps := probe.Net.Params()
	lastName := ps[len(ps)-1].Name
	var k int
	if z.Has(lastName) {
		shape, err := z.Shape(lastName)
		if err != nil {
			return err
		}
		if len(shape) == 1 {
			k = shape[0]
		}
	}
	if k < 2 || k > 1<<16 {
		return fmt.Errorf("%s: no 1-D array %s with the output size (2 to 65536 classes)", *weights, lastName)
	}
	cls := data.FashionMNISTClasses()
	if *classes != "" {
		cls = strings.Split(*classes, ",")
	} else if k != len(cls) {
		cls = nil
		for i := 0; i < k; i++ {
			cls = append(cls, strconv.Itoa(i))
		}
	}
	ds := &data.Dataset{Shape: in, Classes: cls}
	m, err := model.New(*arch, ds, kernel(), 0)
	if err != nil {
		return err
	}
	// Names first, then each array's shape from its header, then the
	// arrays: an archive that is not these weights is refused before any
	// array is read (a zip bomb under another name is never inflated).
	want := map[string]bool{}
	for _, p := range m.Net.Params() {
		want[p.Name] = true
		if !z.Has(p.Name) {
			return fmt.Errorf("%s has no array %s (%s needs %d parameters)", *weights, p.Name, *arch, len(m.Net.Params()))
		}
	}
	var extra []string
	for _, name := range z.Names() {
		if !want[name] && !strings.HasSuffix(name, ".num_batches_tracked") { // a PyTorch counter that inference does not use
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		return fmt.Errorf("%s holds arrays %s expects none of: %v", *weights, *arch, extra)
	}
	for _, p := range m.Net.Params() {
		shape, err := z.Shape(p.Name)
		if err != nil {
			return err
		}
		if !slices.Equal(shape, p.Shape) {
			return fmt.Errorf("%s: %s has shape %v, %s expects %v", *weights, p.Name, shape, *arch, p.Shape)
		}
		a, err := z.Array(p.Name)
		if err != nil {
			return err
		}
		copy(p.Data, a.Data)
	}
	if err := m.CheckWeights(); err != nil {
		return fmt.Errorf("%s: %w: not imported", *weights, err)
	}
	return m.Save(*out)
}
