// Package gemm holds the single-precision matrix multiply that the native
// engine's convolutions and linear layers rest on.
//
// A Kernel is a value, never global state: the engine is handed one and every
// GEMM goes through it. Two kernels exist. Gonum is pure Go and always works.
// OpenBLAS is Debian's libopenblas, loaded at run time with dlopen so that the
// binary still starts where the library is absent; before loading it, the CPU
// is checked for AVX-512 and, unless the user already chose one, the core type
// SKYLAKEX is requested, because OpenBLAS 0.3.21 mistakes recent AMD and Intel
// CPUs for a "Prescott" and runs SSE3 kernels at a quarter of the speed.
//
// All matrices are row-major. Sgemm computes C = alpha·op(A)·op(B) + beta·C
// where op(A) is m×k and op(B) is k×n.
package gemm
