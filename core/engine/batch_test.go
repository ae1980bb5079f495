package engine

import "testing"

// Batch bounds a call's bytes, rounds an odd count of large inputs up to
// an even one (never a single one up to two) and keeps a caller's
// smaller count.
func TestBatchBoundsTheBytesOfACall(t *testing.T) {
	for _, tc := range []struct {
		shape []int
		limit int
		want  int
	}{
		{[]int{1, 28, 28}, 256, 256},    // 3 KiB inputs: the caller's count
		{[]int{1, 28, 28}, 1024, 668},   // 2 MiB / 3 KiB
		{[]int{3, 32, 32}, 256, 170},    // CIFAR: 2 MiB / 12 KiB
		{[]int{3, 224, 224}, 1024, 4},   // 2 MiB / 588 KiB = 3, odd: 4 for two cores
		{[]int{3, 224, 224}, 0, 4},      // no count of the caller's
		{[]int{3, 224, 224}, 2, 2},      // a smaller count stays
		{[]int{3, 224, 224}, 3, 3},      // and so does an odd one
		{[]int{3, 160, 160}, 0, 6},      // 2 MiB / 300 KiB: even already
		{[]int{1, 300, 300}, 0, 6},      // 5, odd: 6
		{[]int{3, 300, 300}, 0, 1},      // 1.9 inputs' worth: one, not two
		{[]int{3, 1024, 1024}, 1024, 1}, // larger than the bound: one at a time
	} {
		if got := Batch(tc.shape, tc.limit); got != tc.want {
			t.Errorf("Batch(%v, %d) = %d, want %d", tc.shape, tc.limit, got, tc.want)
		}
	}
}
