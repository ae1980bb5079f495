package diffusion

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"faithlab/core/data"
	"faithlab/core/engine/gemm"
	"faithlab/core/engine/native"
)

// tinyImages is 48 random 1×8×8 images in [0, 1] with stripes, enough for
// unet-s to learn something in a few steps.
func tinyImages() *data.Dataset {
	rng := rand.New(rand.NewPCG(3, 4))
	ds := &data.Dataset{Name: "tiny", Shape: []int{1, 8, 8}, Classes: []string{"a", "b"}, X: make([]float32, 48*64), Y: make([]int, 48)}
	for i := range 48 {
		ds.Y[i] = i % 2
		for p := range 64 {
			v := 0.2 + 0.6*float32((p/8+i)%2) + 0.1*float32(rng.Float64())
			ds.X[i*64+p] = v
		}
	}
	return ds
}

func tinyConfig(ckpt string, epochs int) TrainConfig {
	return TrainConfig{Epochs: epochs, BatchSize: 8, Warmup: 5, Seed: 9, Checkpoint: ckpt, CheckpointEvery: 2}
}

// trainTiny trains unet-s from seed 1 and returns its final weights.
func trainTiny(t *testing.T, ctx context.Context, cfg TrainConfig, progress func(TrainProgress)) ([]float32, TrainRecord, error) {
	t.Helper()
	u, err := native.NewUNet([]int{1, 8, 8}, gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	u.Init(1)
	rec, err := TrainPrior(ctx, u, tinyImages(), cfg, progress)
	var w []float32
	for _, p := range u.Params() {
		w = append(w, p.Data...)
	}
	return w, rec, err
}

// TestTrainPriorResumesAfterKillToSameWeights trains once without stopping,
// and once in a child process killed with SIGKILL after its first
// checkpoint and then run again: the weights must be the same bit for bit.
// It also stops a run through its context and resumes it in process.
func TestTrainPriorResumesAfterKillToSameWeights(t *testing.T) {
	const epochs = 4 // 6 steps each
	if ck := os.Getenv("FAITHLAB_TRAIN_CHILD"); ck != "" {
		slow, _ := strconv.Atoi(os.Getenv("FAITHLAB_TRAIN_SLOW"))
		w, _, err := trainTiny(t, context.Background(), tinyConfig(ck, epochs), func(TrainProgress) {
			time.Sleep(time.Duration(slow) * time.Millisecond) // long enough to be killed mid-run
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := data.SaveNPY(ck+".weights.npy", []int{len(w)}, w); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, rec, err := trainTiny(t, context.Background(), tinyConfig("", epochs), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Steps != epochs*6 || len(rec.History) != epochs || rec.Resumed != 0 {
		t.Fatalf("record: %d steps, %d epochs, resumed %d", rec.Steps, len(rec.History), rec.Resumed)
	}
	if !(rec.History[epochs-1].Loss < rec.History[0].Loss) {
		t.Errorf("the loss did not fall: %+v", rec.History)
	}

	dir := t.TempDir()
	ck := filepath.Join(dir, "prior.ckpt")
	child := func(slow string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestTrainPriorResumesAfterKillToSameWeights$", "-test.count=1")
		cmd.Env = append(os.Environ(), "FAITHLAB_TRAIN_CHILD="+ck, "FAITHLAB_TRAIN_SLOW="+slow)
		return cmd
	}
	first := child("150")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(ck); err == nil {
			break
		}
		if time.Now().After(deadline) {
			first.Process.Kill()
			t.Fatal("the child wrote no checkpoint within a minute")
		}
	}
	if err := first.Process.Kill(); err != nil { // SIGKILL: no chance to tidy up
		t.Fatal(err)
	}
	first.Wait()
	if _, err := os.Stat(ck + ".weights.npy"); err == nil {
		t.Fatal("the child finished before it was killed")
	}
	if out, err := child("0").CombinedOutput(); err != nil {
		t.Fatalf("resumed child: %v\n%s", err, out)
	}
	got, err := data.LoadNPY(ck + ".weights.npy")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Data, want) {
		t.Error("killed and resumed training ends with other weights than uninterrupted training")
	}

	// In process: cancel after 7 steps, then resume.
	ck2 := filepath.Join(dir, "cancel.ckpt")
	ctx, cancel := context.WithCancel(context.Background())
	steps := 0
	_, _, err = trainTiny(t, ctx, tinyConfig(ck2, epochs), func(p TrainProgress) {
		if steps++; steps == 7 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v, want context.Canceled", err)
	}
	resumed := time.Now()
	again, rec2, err := trainTiny(t, context.Background(), tinyConfig(ck2, epochs), nil)
	if err != nil {
		t.Fatal(err)
	}
	if wall := time.Since(resumed).Seconds(); rec2.Seconds < wall {
		t.Errorf("the record counts %.3f s of training, less than the resumed run's own %.3f s", rec2.Seconds, wall)
	}
	if !slices.Equal(again, want) || rec2.Resumed != 1 || rec2.Steps != epochs*6 {
		t.Errorf("cancelled and resumed: same weights %v, resumed %d times, %d steps", slices.Equal(again, want), rec2.Resumed, rec2.Steps)
	}
	// A finished run of 2 epochs, asked for 4, ends as the 4-epoch run; asked
	// for 1, it refuses.
	ck3 := filepath.Join(dir, "extend.ckpt")
	if _, _, err := trainTiny(t, context.Background(), tinyConfig(ck3, 2), nil); err != nil {
		t.Fatal(err)
	}
	longer, rec3, err := trainTiny(t, context.Background(), tinyConfig(ck3, epochs), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(longer, want) || rec3.Config.Epochs != epochs || len(rec3.History) != epochs {
		t.Errorf("extended from 2 to %d epochs: same weights %v, record of %d epochs (config %d)", epochs, slices.Equal(longer, want), len(rec3.History), rec3.Config.Epochs)
	}
	if _, _, err := trainTiny(t, context.Background(), tinyConfig(ck3, 1), nil); err == nil {
		t.Error("a checkpoint of 4 epochs resumed a run asking for 1")
	}
	// A checkpoint of another run is refused.
	if _, _, err := trainTiny(t, context.Background(), TrainConfig{Epochs: epochs, BatchSize: 4, Checkpoint: ck2}, nil); err == nil {
		t.Error("a checkpoint made with another batch size was resumed")
	}
}
