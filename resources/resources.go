// Package resources embeds Faithlab's static assets: the application icon
// and the Fashion-MNIST goar-cnn the workbench opens on its first start
// (made by `make shipped-model`, whose recipe the model file records).
// It imports no GUI toolkit, so that core packages and the CLI may use it.
package resources

import (
	"bytes"
	_ "embed"
)

//go:embed icon.png
var icon []byte

//go:embed goar-cnn-fashion-mnist.flm
var model []byte

// IconPNG returns the application icon as PNG bytes (a copy).
func IconPNG() []byte { return bytes.Clone(icon) }

// ModelName is the shipped model's file name.
const ModelName = "goar-cnn-fashion-mnist.flm"

// Model returns the shipped model's file bytes (a copy).
func Model() []byte { return bytes.Clone(model) }
