package engine

import "testing"

func TestBatchBoundsTheBytesOfACall(t *testing.T) {
	for _, tc := range []struct {
		shape []int
		limit int
		want  int
	}{
		{[]int{1, 28, 28}, 1024, 1024},  // 3 KiB inputs: the caller's count
		{[]int{3, 32, 32}, 256, 256},    // CIFAR
		{[]int{3, 32, 32}, 1024, 682},   // 8 MiB / 12 KiB
		{[]int{3, 224, 224}, 1024, 13},  // 8 MiB / 588 KiB
		{[]int{3, 224, 224}, 0, 13},     // no count of the caller's
		{[]int{3, 224, 224}, 4, 4},      // a smaller count stays
		{[]int{3, 4096, 4096}, 1024, 1}, // larger than the bound: one at a time
	} {
		if got := Batch(tc.shape, tc.limit); got != tc.want {
			t.Errorf("Batch(%v, %d) = %d, want %d", tc.shape, tc.limit, got, tc.want)
		}
	}
}
