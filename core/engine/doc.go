// Package engine defines what the rest of Faithlab needs from a neural
// network: batched forward passes, gradients with respect to the input and the
// parameters, a named layer's activations and gradients (Grad-CAM), and a
// switchable backward rule for nonlinearities (DeepLift's rescale rule).
//
// Conventions. Inputs are float32 batches in NCHW order, n×C×H×W, flattened
// into one slice; tabular inputs are n×D with C=D, H=W=1. Logits are n×K.
// Slices returned by a Network belong to it and stay valid until its next
// Forward or Backward: copy what you keep. A Network is not safe for
// concurrent use; Clone gives an independent one that shares nothing.
//
// Implementations live in sub-packages: native (hand-written CPU kernels for
// the built-in architectures, the fast path) and graph (gorgonia, for general
// graphs). Nothing outside those packages imports gorgonia.
package engine
