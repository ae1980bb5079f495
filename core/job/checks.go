package job

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/protocol"
)

// The answer's checks (report.Answer; MetaQuantus's two, Hedström et al.
// 2023). Every task of a faithfulness protocol that evaluates a fixed
// model (Info.Category "model", a family where chance should score worst)
// runs its protocol twice more on the first CheckInputs test inputs, with
// the method's maps computed afresh on another model:
//
//   - perturbed: every weight times (1 + ε), ε ~ N(0, protocol.CheckNoise²), a
//     perturbation that leaves the model's predictions as they were on
//     almost every input (the record says on how many) — noise
//     resilience: the answer should not flip;
//   - randomised: every layer drawn afresh as an untrained network's
//     (engine.Randomiser) — reactivity: the answer should change, since
//     a faithful map of a model that learned nothing says something else.
//
// Each map explains the class that model predicts. The draws are the
// task's seed's. A model that cannot be randomised (a TorchScript module)
// or a method that cannot recompute its maps (maps from a file) leaves
// the check's Note saying why, and no values.

// CheckInputs is how many test inputs the checks evaluate.
const CheckInputs = 32

// CheckKinds are the checks, each a run of the protocol on another model.
var CheckKinds = []string{protocol.CheckPerturbed, protocol.CheckRandomised}

// Checked says whether a task of the protocol runs the answer's checks
// where its method can recompute its maps: a faithfulness protocol of a
// fixed model whose headline a random control should score worst. Each
// check is one more run of the protocol on CheckInputs test inputs, with
// the maps of those inputs computed afresh (what an estimate counts).
func Checked(prot protocol.Protocol) bool {
	info := prot.Info()
	_, ok := info.Headline()
	return ok && info.Category == "model" && info.Family.ControlScoresWorst()
}

// checks runs the answer's checks of a task's protocol on env's model.
func checks(ctx context.Context, prot protocol.Protocol, env *protocol.Env) []protocol.Check {
	if !Checked(prot) || env.Explain == nil {
		return nil
	}
	h, _ := prot.Info().Headline()
	// The model's own classes on the inputs, which each copy's are
	// compared with.
	test := env.Test.Head(CheckInputs)
	own, ownErr := engine.Predicted(ctx, env.Net, test.X, test.Len(), 1024)
	var out []protocol.Check
	for _, kind := range CheckKinds {
		c := protocol.Check{Model: kind}
		vals, agree, err := []float32(nil), 0.0, ownErr
		if err == nil {
			vals, agree, err = checkRun(ctx, prot, env, test, own, kind, h.Name)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil // cancelled: the task is not recorded anyway
			}
			c.Note = "not run: " + err.Error()
		} else {
			c.Units, c.Agree = protocol.Units{N: len(vals), Names: []string{h.Name}, Values: [][]float32{vals}}, agree
		}
		out = append(out, c)
	}
	return out
}

// checkRun evaluates the protocol on the first CheckInputs test inputs
// with the maps of a perturbed or randomised copy of the model, and says
// on how many of them that copy predicts what the model does.
func checkRun(ctx context.Context, prot protocol.Protocol, env *protocol.Env, test *data.Dataset, own []int, kind, headline string) ([]float32, float64, error) {
	net := env.Net.Clone()
	defer engine.Release(net)
	rng := rand.New(rand.NewPCG(env.Seed, 0xc4ec6))
	switch kind {
	case protocol.CheckPerturbed:
		for _, p := range net.Params() {
			for i := range p.Data {
				p.Data[i] *= float32(1 + protocol.CheckNoise*rng.NormFloat64())
			}
		}
	case protocol.CheckRandomised:
		r, ok := net.(engine.Randomiser)
		if !ok || len(r.RandomLayers()) == 0 {
			return nil, 0, fmt.Errorf("a %s model's layers cannot be drawn afresh here", net.Arch())
		}
		for k, layer := range r.RandomLayers() {
			if err := r.Randomise(layer, env.Seed+uint64(k)*0x9e3779b97f4a7c15); err != nil {
				return nil, 0, err
			}
		}
	}
	n := test.Len()
	target, err := engine.Predicted(ctx, net, test.X, n, 1024)
	if err != nil {
		return nil, 0, err
	}
	same := 0
	for i := range own {
		if own[i] == target[i] {
			same++
		}
	}
	maps, err := env.Explain(ctx, net, test.X, n, target)
	if err != nil {
		return nil, 0, err
	}
	sub := *env
	sub.Net, sub.Test, sub.Progress, sub.Artefacts = net, test, nil, nil
	sub.Maps = func(_ context.Context, split string) ([]float32, error) {
		if split != "test" {
			return nil, fmt.Errorf("the answer's checks evaluate test inputs only")
		}
		return maps, nil
	}
	res, err := prot.Run(ctx, &sub)
	if err != nil {
		return nil, 0, err
	}
	v := res.Units.Of(headline)
	if len(v) != n {
		return nil, 0, fmt.Errorf("%s kept %d per-input values of %s for %d inputs", prot.Info().Name, len(v), headline, n)
	}
	return v, float64(same) / float64(n), nil
}

// predict names the class the model predicts for each image of the
// samples the protocol perturbed or left untouched (Sample.Predicted);
// maps, tabular rows and trajectories are left alone.
func predict(ctx context.Context, net engine.Network, classes []string, shape []int, samples []protocol.Sample) error {
	for i, sm := range samples {
		if sm.Kind != protocol.Perturbed && sm.Kind != protocol.Original || len(sm.Shape) != 4 || !slices.Equal(sm.Shape[1:], shape) || len(shape) != 3 || shape[1] < 2 {
			continue
		}
		pred, err := engine.Predicted(ctx, net, sm.Values, sm.Shape[0], 256)
		if err != nil {
			return fmt.Errorf("sample %s: %w", sm.Name, err)
		}
		names := make([]string, len(pred))
		for k, c := range pred {
			names[k] = fmt.Sprint(c)
			if c >= 0 && c < len(classes) {
				names[k] = classes[c]
			}
		}
		samples[i].Predicted = names
	}
	return nil
}
