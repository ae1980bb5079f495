// Package native is Faithlab's fast CPU engine for its built-in
// architectures: hand-written float32 layers over preallocated buffers, with
// every convolution lowered to one im2col + GEMM over the whole batch and the
// GEMM delegated to a gemm.Kernel (OpenBLAS where it loads). Elementwise work
// is split over cores by image. In steady state (same or smaller batch) a
// forward or backward pass allocates nothing.
//
// Activations are kept channels-last (NHWC) inside the network so that one
// GEMM per layer writes its output in place without a transpose; inputs,
// input gradients and Activation copies are NCHW as package engine specifies.
// Parameters keep PyTorch's layouts and names, so weights move to and from
// PyTorch unchanged.
package native
