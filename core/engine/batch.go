package engine

// BatchBytes bounds the inputs of one engine call where a caller cuts many
// inputs into calls (the protocols' perturbed copies, the attributions'
// interpolations and draws, evaluation): 2 MiB of float32 values, three
// ImageNet-sized images (Batch rounds them up to four: see there). A count
// of inputs alone held 600 MiB for 1 024 such images before any layer
// ran, and the engines' working memory grows with the inputs of a call:
// the native engine's passes of a ResNet-18-sized network at 224×224
// (then whole calls in one pass) held 0.4 GiB for 4 inputs' logits and
// 1.1 GiB for 13, their input gradients 0.7 and 1.3 GiB (per-core pieces),
// and the torch engine's worker runs a call whole; while 2 inputs a call
// ran as fast as 13 there (the convolutions' GEMMs are large enough to
// share the cores). A caller's own count (Deletion's chunk of 1 024, an
// attribution's 256) still caps small inputs. The memory plan
// (core/campaign) counts a call's inputs and measures what the engine
// keeps for calls of this size.
const BatchBytes = 2 << 20

// Batch is how many inputs of shape one call takes: at most limit (a
// caller's count; 0 or less: no count), BatchBytes of them, and at least
// one. An odd count under 8 of such large inputs is rounded up to the
// next even one (ImageNet-sized images: 3 → 4, 2.4 MiB): the native
// engine runs them a sample a pass on a replica per core, and a call of
// three left one of two cores idle for a third of it. The count follows
// the shape alone, never the cores, so that what a call holds — and the
// numbers — do not depend on the machine.
func Batch(shape []int, limit int) int {
	n := max(1, BatchBytes/(4*max(1, Size(shape))))
	if n > 1 && n < 8 && n%2 == 1 {
		n++
	}
	if limit > 0 {
		n = min(n, limit)
	}
	return n
}
