package campaign

import (
	"context"
	"fmt"
	"time"

	"faithlab/core/attr"
	"faithlab/core/attr/methods"
	"faithlab/core/data"
	"faithlab/core/engine/gemm"
	"faithlab/core/job"
	"faithlab/core/model"
	"faithlab/core/protocol"
	"faithlab/core/spec"
	"faithlab/core/train"
)

// Size is what a campaign does, counted before it runs, and roughly how
// long that takes on this machine.
type Size struct {
	Tasks       int
	BaseModels  int     // models trained to be explained (none with a model file)
	Retrainings int     // models the protocols train
	MapSets     int     // maps computed: a method and post-processing on a split
	Images      float64 // training images (one per sample and epoch) and map passes
	Seconds     float64 // Images at the measured speed, at most: early stopping ends sooner
}

// Estimate counts the work of the campaign and estimates its time from
// speed, the training images per second this machine reaches on the
// campaign's architecture (MeasureSpeed); speed 0 leaves Seconds 0. The
// datasets are opened to count their samples. Base models are counted at
// their full epochs (early stopping usually ends them sooner); a map pass
// (a gradient, one IG step) costs about one training image; the
// protocols' own forward passes are not counted.
func (c *Campaign) Estimate(speed float64) (Size, error) {
	s := c.Spec
	var z Size
	z.Tasks = len(c.Tasks(job.Shard{}))
	baseEpochs := train.Config{Epochs: s.Model.Epochs}.Defaults().Epochs
	for _, d := range s.Datasets {
		trainN, testN, err := samples(d)
		if err != nil {
			return z, err
		}
		for range s.Seeds {
			if s.Model.File == "" {
				z.BaseModels++
				z.Images += float64(baseEpochs * trainN)
			}
			retrains := false
			for _, p := range s.Protocols {
				pr, err := p.New()
				if err != nil {
					return z, err
				}
				k := protocol.RetrainingsOf(pr) * len(s.Methods) * len(s.Post)
				z.Retrainings += k
				z.Images += float64(k * s.Retrain.Epochs * trainN)
				retrains = retrains || k > 0
			}
			for _, m := range s.Methods {
				meth, err := methods.New(m.Name, m.Params, attr.CheckSetup)
				if err != nil {
					return z, err
				}
				n := testN
				if retrains {
					n += trainN
				}
				z.MapSets += len(s.Post) * map[bool]int{false: 1, true: 2}[retrains]
				z.Images += attr.PassesOf(meth) * float64(n)
			}
		}
	}
	if speed > 0 {
		z.Seconds = z.Images / speed
	}
	return z, nil
}

// samples counts a dataset's training and test samples as a campaign uses
// them (the spec's caps applied).
func samples(d spec.Dataset) (trainN, testN int, err error) {
	tr, te, err := data.Open(d.Ref, d.Options)
	if err != nil {
		return 0, 0, err
	}
	trainN, testN = tr.Len(), te.Len()
	if d.TrainSamples > 0 {
		trainN = min(trainN, d.TrainSamples)
	}
	if d.TestSamples > 0 {
		testN = min(testN, d.TestSamples)
	}
	return trainN, testN, nil
}

// MeasureSpeed trains a fresh model of arch on ds for about a second and
// returns the training images per second: what Estimate needs.
func MeasureSpeed(ctx context.Context, arch string, ds *data.Dataset, kernel gemm.Kernel) (float64, error) {
	m, err := model.New(arch, ds, kernel, 1)
	if err != nil {
		return 0, err
	}
	n := min(ds.Len(), 1024)
	probe := ds.Head(n)
	var seen int
	t0 := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	bs := train.Config{}.Defaults().BatchSize
	_, err = train.Train(ctx, m.Net, probe, train.Config{Epochs: 1000, Patience: -1, ValFraction: -1}, func(p train.Progress) {
		if p.EpochDone {
			return
		}
		seen += min(bs, n-(p.Batch-1)*bs)
		if time.Since(t0) > time.Second {
			cancel()
		}
	})
	if err != nil && ctx.Err() == nil {
		return 0, err
	}
	if seen == 0 {
		return 0, fmt.Errorf("measuring %s: no batch finished", arch)
	}
	return float64(seen) / time.Since(t0).Seconds(), nil
}
