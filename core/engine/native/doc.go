// Package native is Faithlab's fast CPU engine for its built-in
// architectures: hand-written float32 layers over preallocated buffers, with
// every classifier convolution lowered to one im2col + GEMM and the GEMM delegated to a
// gemm.Kernel (OpenBLAS where it loads). Forward and Backward take the whole
// batch, the GEMMs and elementwise work split over cores. Gradient — what
// training and gradient attributions use — instead cuts the batch into
// pieces small enough for a core's cache and runs each piece's forward and
// backward on one replica per core: the elementwise layers, bound by memory
// on a whole batch, then run from cache. In steady state (same or smaller
// batch) a pass allocates nothing.
//
// unet-s (UNet) goes further, since a diffusion prior's every pass is a
// training step or a sampler's step: all its passes run as pieces of four
// samples on per-core replicas, its 3×3 convolutions as Winograd F(2×2, 3×3)
// (16 GEMMs of tiles × channels per chunk of tiles that stays in cache, with
// the exact adjoint for the backward pass), and GroupNorm and SiLU as one
// fused layer that writes the zero-framed layout the next convolution reads.
// The elementwise kernels of both paths run on AVX2 through simd/archsimd
// when built with GOEXPERIMENT=simd, and as scalar code with the same
// operations otherwise.
//
// Activations are kept channels-last (NHWC) inside the network so that one
// GEMM per layer writes its output in place without a transpose; inputs,
// input gradients and Activation copies are NCHW as package engine specifies.
// Parameters keep PyTorch's layouts and names, so weights move to and from
// PyTorch unchanged.
package native
