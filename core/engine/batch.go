package engine

// BatchBytes bounds the inputs of one engine call where a caller cuts many
// inputs into calls (the protocols' perturbed copies, the attributions'
// interpolations and draws, evaluation): 8 MiB of float32 values. A
// caller's own count (Deletion's chunk, an attribution's 256) still caps
// small inputs, so that 28×28 images run 1 024 to a call as before, but a
// count of inputs alone would hold 600 MiB for 1 024 ImageNet-sized images
// before any layer ran, and a worker that runs the whole call at once (the
// torch engine) gigabytes of activations beside them. The memory plan
// (core/campaign) counts a call's inputs and what a caller holds per input
// beside them from this bound.
const BatchBytes = 8 << 20

// Batch is how many inputs of shape one call takes: at most limit (a
// caller's count; 0 or less: no count), at most BatchBytes of them, and
// at least one.
func Batch(shape []int, limit int) int {
	n := max(1, BatchBytes/(4*max(1, Size(shape))))
	if limit > 0 {
		n = min(n, limit)
	}
	return n
}
