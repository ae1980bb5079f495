package protocol

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/engine/enginetest"
	"faithlab/core/perturb"
)

// widestNet is a linear network that records the most inputs a call
// passed it (or, through imageNetEnv's Explain, asked maps of).
type widestNet struct {
	*enginetest.Linear
	widest int
}

func (w *widestNet) Forward(x []float32, n int) ([]float32, error) {
	w.widest = max(w.widest, n)
	return w.Linear.Forward(x, n)
}

// imageNetEnv is a linear model on n ImageNet-sized images (3×224×224)
// with its input as every map.
func imageNetEnv(n int) (*Env, *widestNet) {
	shape := []int{3, 224, 224}
	dim, hw := engine.Size(shape), 224*224
	net := &widestNet{Linear: enginetest.NewLinear(1, shape, 2)}
	rng := rand.New(rand.NewPCG(4, 4))
	ds := &data.Dataset{Name: "imagenet-sized", Shape: shape, Classes: []string{"a", "b"}, X: make([]float32, n*dim), Y: make([]int, n)}
	for i := range ds.X {
		ds.X[i] = rng.Float32()
	}
	maps := make([]float32, n*hw)
	for i := range maps {
		maps[i] = float32(rng.NormFloat64())
	}
	env := &Env{Net: net, Test: ds, Train: ds, Method: "noise",
		Maps: func(context.Context, string) ([]float32, error) { return maps, nil },
		Explain: func(_ context.Context, _ engine.Network, x []float32, m int, _ []int) ([]float32, error) {
			net.widest = max(net.widest, m)
			return slices.Clone(x[:m*hw]), nil // the first channel
		}}
	return env, net
}

// At ImageNet's size no protocol passes the network more inputs at once
// than engine.Batch allows (four of them), however many perturbed
// copies it makes of an image: Deletion's 49 steps, ROAD's masks,
// IROF's superpixels, Sensitivity-N's 900 subsets, Infidelity's 100 draws,
// the robustness draws, Smooth MPRT's noisy copies. Deletion sent 1 024
// inputs (600 MiB) at a time, Smooth MPRT all 50 copies of an image.
func TestProtocolBatchesAreSizedByBytesNotCounts(t *testing.T) {
	if testing.Short() {
		t.Skip("ImageNet-sized images")
	}
	ctx := context.Background()
	limit := engine.Batch([]int{3, 224, 224}, 0)
	for _, p := range []Protocol{
		Deletion{Samples: 1}, ROAD{Rates: []float64{0.5}}, IROF{Samples: 1},
		SensitivityN{Samples: 1, Ns: []int{10, 100}, Subsets: 20}, Infidelity{Samples: 1, Draws: 30}, MaxSensitivity(),
		MPRT{Samples: 1, Draws: 10, Noise: 0.1},
	} {
		env, net := imageNetEnv(1)
		if _, err := p.Run(ctx, env); err != nil {
			t.Fatalf("%s: %v", p.Info().Name, err)
		}
		if net.widest > limit {
			t.Errorf("%s passed %d inputs of 3×224×224 at once, more than %d", p.Info().Name, net.widest, limit)
		}
	}
}

// A protocol's scores do not depend on how its copies are batched: one
// copy a call gives Deletion's curves, uniform noise filled, bit for bit.
func TestDeletionScoresDoNotDependOnTheBatch(t *testing.T) {
	ctx := context.Background()
	env, _ := imageNetEnv(1)
	a, err := Deletion{Samples: 1, Reference: "uniform"}.Run(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Deletion{Samples: 1, Reference: "uniform", Chunk: 1}.Run(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Curves {
		if !slices.Equal(a.Curves[i].Y, b.Curves[i].Y) {
			t.Errorf("curve %s: %v in batches of 4, %v one at a time", a.Curves[i].Name, a.Curves[i].Y, b.Curves[i].Y)
		}
	}
}

// passesNet is a linear network that counts the inputs it is passed.
type passesNet struct {
	*enginetest.Linear
	inputs int
}

func (p *passesNet) Forward(x []float32, n int) ([]float32, error) {
	p.inputs += n
	return p.Linear.Forward(x, n)
}

// ROAD on the trained model scores each rate's perturbed test images and
// measures their energies (the shift diagnostics) in one pass: per order,
// the clean images once and each rate's copies once — the copies were
// passed twice, once for the accuracy and once for the energies.
func TestROADScoresAndMeasuresShiftInOnePass(t *testing.T) {
	env, net := smallPassesEnv()
	res, err := ROAD{Rates: []float64{0.2, 0.5, 0.8}}.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scalars) == 0 {
		t.Fatal("ROAD gave no scores")
	}
	// Two orders, each: the clean images (2) and three rates' copies (2 each).
	if want := 2 * (2 + 3*2); net.inputs != want {
		t.Errorf("ROAD passed %d inputs through the model, want %d", net.inputs, want)
	}
}

// smallPassesEnv is passesNet on two 8×8 images with their own values as
// maps.
func smallPassesEnv() (*Env, *passesNet) {
	env, _ := imageNetEnv(2)
	env.Test = &data.Dataset{Name: "small", Shape: []int{1, 8, 8}, Classes: []string{"a", "b"}, X: make([]float32, 2*64), Y: []int{0, 1}}
	for i := range env.Test.X {
		env.Test.X[i] = float32(i%7) / 7
	}
	env.Train = env.Test
	net := &passesNet{Linear: enginetest.NewLinear(1, env.Test.Shape, 2)}
	env.Net = net
	env.Maps = func(context.Context, string) ([]float32, error) { return slices.Clone(env.Test.X), nil }
	return env, net
}

// Deletion passes each image untouched once (its class, score and energy)
// and each curve's copies once: the step that removes nothing takes the
// untouched pass's logits, and the shift diagnostics at 25, 50 and 75 %
// take the curves' own. It passed the untouched images three more times
// and six more copies an image.
func TestDeletionPassesEachCopyOnce(t *testing.T) {
	env, net := smallPassesEnv()
	if _, err := (Deletion{Grid: 4, Samples: 2}).Run(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	// The two images, then per order and image the 16 steps that remove something.
	if want := 2 + 2*2*16; net.inputs != want {
		t.Errorf("Deletion passed %d inputs through the model, want %d", net.inputs, want)
	}
}

// Deletion's shift diagnostics, measured on its curves' own copies as they
// pass, are those of the images with the same features removed, measured
// on their own (the deterministic zero fill makes them the same images).
func TestDeletionShiftIsThatOfTheRemovedImages(t *testing.T) {
	ctx := context.Background()
	env, net := smallPassesEnv()
	res, err := (Deletion{Grid: 4, Samples: 2}).Run(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	x, shape := env.Test.X, env.Test.Shape
	feats, err := perturb.NewFeatures(8, 8, 4)
	if err != nil {
		t.Fatal(err)
	}
	clean, err := energies(ctx, net, x, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, order := range []string{"morf", "lerf"} {
		orders, err := Orders(ranked(env.Test.X, Magnitude), 2, feats, order == "morf")
		if err != nil {
			t.Fatal(err)
		}
		var want []Shift
		for _, f := range shiftFractions {
			k, mod := int(math.Round(f*16)), make([]float32, len(x))
			if _, err := removeInto(ctx, mod, env.Test, feats, func(m []float32, i int) { feats.Keep(m, orders[i], k) }, perturb.Zero{}, env.Seed); err != nil {
				t.Fatal(err)
			}
			sh, err := measureShift(ctx, net, clean, x, mod, 2, shape)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, sh)
		}
		cs, _ := shiftCurvesOver(want, shiftFractions, "", "_"+order)
		for _, w := range cs {
			i := slices.IndexFunc(res.Curves, func(c Curve) bool { return c.Name == w.Name })
			if i < 0 {
				t.Errorf("no %s curve", w.Name)
				continue
			}
			for j, v := range w.Y {
				if g := res.Curves[i].Y[j]; math.Abs(g-v) > 1e-9*max(1, math.Abs(v)) && !(math.IsNaN(g) && math.IsNaN(v)) {
					t.Errorf("%s at %g: %g, measured on the removed images %g", w.Name, shiftFractions[j], g, v)
				}
			}
		}
	}
}

// The probe metrics (IROF here) pass each input untouched once, for its
// class and its score together, and not again as the curve's first step.
// IROF passed them three times.
func TestIROFPassesEachCopyOnce(t *testing.T) {
	env, net := smallPassesEnv()
	if _, err := (IROF{Samples: 2, Segments: 4, Steps: 4}).Run(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	if want := 2 + 2*4; net.inputs != want {
		t.Errorf("IROF passed %d inputs through the model, want %d", net.inputs, want)
	}
}

// The previews a result keeps (the first inputs untouched, their maps and
// their perturbed copies at every rate, order or fraction) are the
// protocol's Footprint.Held, which the memory plan adds to a task: at
// 224×224 a ROAD run's previews of both orders at 9 rates hold 87 MB, and
// a plan without them set the collector's limit under the live heap.
// (Filled with uniform noise, these runs hold no solver besides.)
func TestFootprintHoldsTheResultsPreviews(t *testing.T) {
	if testing.Short() {
		t.Skip("ImageNet-sized images")
	}
	ctx := context.Background()
	env, _ := imageNetEnv(PreviewCount + 2)
	dim, hw := engine.Size(env.Test.Shape), 224*224
	for _, p := range []Protocol{
		ROAD{Rates: []float64{0.3, 0.6}, Reference: "uniform"},
		Deletion{Samples: PreviewCount + 2, Steps: 4, Reference: "uniform"},
	} {
		res, err := p.Run(ctx, env)
		if err != nil {
			t.Fatalf("%s: %v", p.Info().Name, err)
		}
		var kept float64
		for _, s := range res.Samples {
			kept += float64(4 * len(s.Values))
		}
		if held := FootprintOf(p, dim, hw).Held; kept != held {
			t.Errorf("%s keeps %.0f bytes of previews; its footprint says %.0f", p.Info().Name, kept, held)
		}
	}
}
