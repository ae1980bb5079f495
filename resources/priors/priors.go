// Package priors embeds the diffusion priors Faithlab ships, so that GOAR
// and FUD run without training one first. It imports nothing (no GUI
// toolkit), so the CLI and core code may use it.
//
// fashion-mnist-unet-s.flm is unet-s trained on Fashion-MNIST's 60 000
// training images by `make prior` (faithlab-cli train-prior; its header
// holds the command's settings and the training record). Decode it with
// model.DecodePrior.
package priors

import (
	_ "embed"
	"slices"
)

//go:embed fashion-mnist-unet-s.flm
var fashionMNIST []byte

// FashionMNIST returns a copy of the Fashion-MNIST unet-s prior's model file.
func FashionMNIST() []byte { return slices.Clone(fashionMNIST) }
