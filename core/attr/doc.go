// Package attr computes feature-attribution (saliency) maps: one type per
// method from the literature, each named as its paper names it and
// documented with the paper and its defaults.
//
// Conventions. A method takes an Input — a batch of n samples (NCHW float32)
// with the class to explain for each — and returns Maps: n×C×H×W, or
// n×1×H×W for methods that give one value per pixel (Grad-CAM, PixelRandom,
// BlockRandom). Methods never modify their input and never keep state
// between calls: all randomness comes from the Seed in their settings, so the
// same settings give the same maps. Gradient-based methods batch their inner
// samples (IG steps, SmoothGrad draws) through the engine, at most Chunk
// inputs per forward pass and at most engine.Batch of them (4
// ImageNet-sized images), which bounds memory.
//
// Every method returns an error, naming the method, when a map holds NaN or
// Inf. Post-processing (absolute value, square, Gaussian and maximum
// filters, normalisation, channel reduction) lives in post.go and is applied
// by the caller, so that it is recorded separately from the method.
package attr
