// Command gencifar writes a CIFAR-10-sized binary folder (data_batch_1..5.bin
// of 10 000 records each, test_batch.bin, batches.meta.txt) whose classes a
// network can learn: class k is noise plus a bright 8×8 square whose place
// and colour channel depend on k. It exists to measure a campaign's memory
// and time at CIFAR's size (make bench-campaigns cifar-sized-roar) where the
// real CIFAR-10 cannot be downloaded. Same arguments, same bytes.
//
// Usage: go run ./scripts/gencifar DIR
package main

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gencifar DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	if err := generate(dir); err != nil {
		fmt.Fprintln(os.Stderr, "gencifar:", err)
		os.Exit(1)
	}
}

func generate(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(10, 3072))
	files := []string{"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin"}
	for _, name := range files {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		w := bufio.NewWriter(f)
		rec := make([]byte, 1+3072)
		for range 10000 {
			k := rng.IntN(10)
			rec[0] = byte(k)
			for j := 1; j < len(rec); j++ {
				rec[j] = byte(rng.IntN(128))
			}
			c, r0, c0 := k%3, 4+(k/3)*8, 4+(k%4)*6
			for y := r0; y < r0+8; y++ {
				for x := c0; x < c0+8; x++ {
					rec[1+c*1024+y*32+x] = byte(192 + rng.IntN(64))
				}
			}
			w.Write(rec)
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	names := "airplane automobile bird cat deer dog frog horse ship truck"
	return os.WriteFile(filepath.Join(dir, "batches.meta.txt"), []byte(strings.ReplaceAll(names, " ", "\n")+"\n"), 0o644)
}
