//go:build race

package onnx

// raceEnabled skips the models PyTorch exports at test time under the race
// detector: they test arithmetic, not concurrency, and a 224×224 VGG takes
// many minutes there.
const raceEnabled = true
