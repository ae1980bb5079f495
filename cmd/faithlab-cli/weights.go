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
	m, err := model.Load(*path, kernel())
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
	var in []int
	for _, f := range strings.Split(*shape, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("--input-shape %q: %w", *shape, err)
		}
		in = append(in, v)
	}
	arrs, err := data.LoadNPZ(*weights)
	if err != nil {
		return err
	}
	// The number of classes is the length of the architecture's last
	// parameter, the output layer's bias.
	probe, err := model.New(*arch, &data.Dataset{Shape: in, Classes: []string{"a", "b"}}, kernel(), 0)
	if err != nil {
		return err
	}
	ps := probe.Net.Params()
	last, ok := arrs[ps[len(ps)-1].Name]
	if !ok || len(last.Shape) != 1 || last.Shape[0] < 2 {
		return fmt.Errorf("%s: no 1-D array %s with the output size", *weights, ps[len(ps)-1].Name)
	}
	k := last.Shape[0]
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
	for _, p := range m.Net.Params() {
		a, ok := arrs[p.Name]
		if !ok {
			return fmt.Errorf("%s has no array %s (%s needs %d parameters)", *weights, p.Name, *arch, len(m.Net.Params()))
		}
		if !slices.Equal(a.Shape, p.Shape) {
			return fmt.Errorf("%s: %s has shape %v, %s expects %v", *weights, p.Name, a.Shape, *arch, p.Shape)
		}
		copy(p.Data, a.Data)
		delete(arrs, p.Name)
	}
	for k := range arrs {
		if strings.HasSuffix(k, ".num_batches_tracked") {
			delete(arrs, k) // a PyTorch counter that inference does not use
		}
	}
	if len(arrs) > 0 {
		return fmt.Errorf("%s holds arrays %s expects none of: %v", *weights, *arch, keys(arrs))
	}
	return m.Save(*out)
}

func keys(m map[string]*data.Array) []string {
	var s []string
	for k := range m {
		s = append(s, k)
	}
	slices.Sort(s)
	return s
}
