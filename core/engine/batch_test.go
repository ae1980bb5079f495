package engine

import "testing"

func TestBatchBoundsTheBytesOfACall(t *testing.T) {
	for _, tc := range []struct {
		shape []int
		limit int
		want  int
	}{
		{[]int{1, 28, 28}, 256, 256},    // 3 KiB inputs: the caller's count
		{[]int{1, 28, 28}, 1024, 668},   // 2 MiB / 3 KiB
		{[]int{3, 32, 32}, 256, 170},    // CIFAR: 2 MiB / 12 KiB
		{[]int{3, 224, 224}, 1024, 3},   // 2 MiB / 588 KiB
		{[]int{3, 224, 224}, 0, 3},      // no count of the caller's
		{[]int{3, 224, 224}, 2, 2},      // a smaller count stays
		{[]int{3, 1024, 1024}, 1024, 1}, // larger than the bound: one at a time
	} {
		if got := Batch(tc.shape, tc.limit); got != tc.want {
			t.Errorf("Batch(%v, %d) = %d, want %d", tc.shape, tc.limit, got, tc.want)
		}
	}
}
