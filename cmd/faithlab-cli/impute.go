package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"faithlab/core/campaign"
	"faithlab/core/data"
)

func runImpute(ctx context.Context, args []string) error {
	fs := newFlags("impute", "", "fill the removed pixels (mask 0) of an image (.npy) from a reference, ROAD's noisy linear imputation included")
	method := fs.String("method", "road", "zero, mean, blur or road")
	noise := fs.Float64("noise", 0.01, "road: standard deviation of the noise added to imputed pixels")
	sigma := fs.Float64("sigma", 5, "blur: Gaussian σ in pixels")
	seed := fs.Uint64("seed", 0, "seed of the road noise")
	in := fs.String("image", "", "image .npy, float32 (C,H,W) or (H,W) (required)")
	maskPath := fs.String("mask", "", "mask .npy (H,W): 1 kept, 0 removed (required)")
	out := fs.String("out", "", "imputed image .npy to write (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" || *maskPath == "" || *out == "" {
		return errors.New("--image, --mask and --out are required")
	}
	spec := *method
	switch spec {
	case "road":
		spec += ":" + strconv.FormatFloat(*noise, 'g', -1, 64)
	case "blur":
		spec += ":" + strconv.FormatFloat(*sigma, 'g', -1, 64)
	}
	img, err := data.LoadNPY(*in)
	if err != nil {
		return err
	}
	mask, err := data.LoadNPY(*maskPath)
	if err != nil {
		return err
	}
	shape := img.Shape
	if len(shape) == 2 {
		shape = []int{1, shape[0], shape[1]}
	}
	if len(shape) != 3 {
		return fmt.Errorf("%s: shape %v, want (C,H,W) or (H,W)", *in, img.Shape)
	}
	if len(mask.Shape) != 2 || mask.Shape[0] != shape[1] || mask.Shape[1] != shape[2] {
		return fmt.Errorf("%s: mask shape %v does not match the image's %d×%d (%s)", *maskPath, mask.Shape, shape[1], shape[2], *in)
	}
	if err := campaign.Impute(ctx, spec, img.Data, shape, mask.Data, *seed); err != nil {
		return fmt.Errorf("%s with %s, --method %s: %w", *in, *maskPath, spec, err)
	}
	return data.SaveNPY(*out, img.Shape, img.Data)
}

// evalRow is one line of results.jsonl: a protocol's result for a method,
// with what made it.
type evalRow struct {
}
