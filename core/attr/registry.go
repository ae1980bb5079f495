package attr

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"faithlab/core/data"
	"faithlab/core/param"
)

// Categories of methods.
const (
	CategoryGradient     = "gradient"     // the input gradient, as is or smoothed
	CategoryPath         = "path"         // integrate from a baseline or reference inputs
	CategoryPerturbation = "perturbation" // query the model on perturbed inputs
	CategoryControl      = "control"      // ignore the model: the baselines a method must beat
	CategoryTRACE        = "trace"        // optimal deletion trajectories
	CategoryFile         = "file"         // maps computed elsewhere, read from files
	CategoryTransformer  = "transformer"  // a vision transformer's attention probabilities
)

// Info describes a method: what a form, a spec file and `faithlab-cli
// methods` show. Params come from the method's struct tags (package param)
// with the defaults filled in.
type Info struct {
	Name      string   `json:"name"`  // the short name specs and the CLI use, e.g. "ig"
	Title     string   `json:"title"` // as in the literature
	Category  string   `json:"category"`
	Data      []string `json:"data"`                 // "image", "tabular"
	NeedsData string   `json:"needs_data,omitempty"` // what it takes from the training set, if anything
	// NeedsTruth says the method takes the data's known ground truth
	// (Setup.Truth): only datasets whose generator knows it (gmm) have one.
	NeedsTruth bool          `json:"needs_truth,omitempty"`
	Doc        string        `json:"doc"`
	Params     []param.Param `json:"params"`
}

// Setup is what building a method takes besides its parameters.
type Setup struct {
	Seed  uint64 // of random methods
	Dir   string // the folder relative file parameters are read from (a spec's; "": the working folder)
	Chunk int    // inputs per engine call, at most (0: 256; engine.Batch bounds it by their bytes)
	// Train holds training inputs (TrainN of them, n×C×H×W), for methods
	// whose Info names NeedsData.
	Train  []float32
	TrainN int
	// Truth, when the data's generator knows it, is the ground-truth
	// attribution of each class (data.Dataset.Truth), for the v_λ control.
	Truth [][]float32
}

// CheckSetup is a setup that meets every method's needs (training data, a
// truth) with placeholders: building a method with it checks its
// parameters alone, as a spec is checked before any data is read.
var CheckSetup = Setup{Train: []float32{0}, TrainN: 1, Truth: [][]float32{{0}}}

// Entry is one method of a registry: its description and its builder,
// which checks the parameters (unknown ones, types, ranges) and fills the
// defaults.
type Entry struct {
	Info  Info
	Build func(s Setup, params map[string]any) (Method, error)
}

// gradientSHAPReferences is how many training inputs GradientSHAP draws
// its references from.
const gradientSHAPReferences = 100

var (
	imageAndTabular = []string{"image", "tabular"}
	imageOnly       = []string{"image"}
)

// Entries lists the methods of this package, by short name. TRACE's live
// in package trace; package methods joins them.
func Entries() []Entry {
	return []Entry{
		entry("gradient", "Gradient", CategoryGradient, imageAndTabular, "", "the gradient of the target logit with respect to the input (Simonyan et al. 2014)",
			func(s Setup) Gradient { return Gradient{Chunk: s.Chunk} }, nil),
		entry("gradxinput", "Gradient × Input", CategoryGradient, imageAndTabular, "", "the gradient times the input, elementwise (Shrikumar et al. 2016)",
			func(s Setup) GradientXInput { return GradientXInput{Chunk: s.Chunk} }, nil),
		entry("ig", "Integrated Gradients", CategoryPath, imageAndTabular, "", "gradients averaged along the straight path from a baseline, times input − baseline (Sundararajan et al. 2017)",
			func(s Setup) IntegratedGradients { return IntegratedGradients{Train: s.Train, Chunk: s.Chunk} }, IntegratedGradients.defaults),
		entry("smoothgrad", "SmoothGrad", CategoryGradient, imageAndTabular, "", "gradients averaged over Gaussian-noised copies of the input (Smilkov et al. 2017)",
			func(s Setup) SmoothGrad { return SmoothGrad{Seed: s.Seed, Chunk: s.Chunk} }, SmoothGrad.defaults),
		entry("sgsq", "SmoothGrad-Squared", CategoryGradient, imageAndTabular, "", "the mean of the noisy copies' squared gradients (Hooker et al. 2019)",
			func(s Setup) SmoothGrad { return SmoothGrad{Aggregate: "square", Seed: s.Seed, Chunk: s.Chunk} }, SmoothGrad.defaults),
		entry("vargrad", "VarGrad", CategoryGradient, imageAndTabular, "", "the variance of the noisy copies' gradients (Adebayo et al. 2018)",
			func(s Setup) SmoothGrad { return SmoothGrad{Aggregate: "variance", Seed: s.Seed, Chunk: s.Chunk} }, SmoothGrad.defaults),
		entry("deeplift", "DeepLIFT (rescale)", CategoryPath, imageAndTabular, "", "multipliers of the rescale rule through every ReLU, times input − baseline (Shrikumar et al. 2017)",
			func(s Setup) DeepLift { return DeepLift{Train: s.Train, Chunk: s.Chunk} }, DeepLift.defaults),
		entry("gradientshap", "GradientSHAP", CategoryPath, imageAndTabular, fmt.Sprintf("references: the first %d training inputs", gradientSHAPReferences),
			"expected gradients from references drawn from the training data (Lundberg and Lee 2017; Erion et al. 2021)",
			func(s Setup) GradientSHAP {
				n := min(s.TrainN, gradientSHAPReferences)
				var refs []float32
				if n > 0 {
					refs = s.Train[:n*(len(s.Train)/s.TrainN)]
				}
				return GradientSHAP{References: refs, Seed: s.Seed, Chunk: s.Chunk}
			}, GradientSHAP.defaults),
		entry("kernelshap", "KernelSHAP", CategoryPerturbation, imageAndTabular, "", "Shapley values fitted by weighted least squares on sampled coalitions (Lundberg and Lee 2017)",
			func(s Setup) KernelSHAP { return KernelSHAP{Train: s.Train, Seed: s.Seed, Chunk: s.Chunk} }, KernelSHAP.defaults),
		entry("gradcam", "Grad-CAM", CategoryGradient, imageOnly, "", "a convolutional layer's channels weighted by their mean gradient, positive part, upsampled (Selvaraju et al. 2017)",
			func(s Setup) GradCAM { return GradCAM{Chunk: s.Chunk} }, nil),
		entry("rollout", "Attention Rollout", CategoryTransformer, imageOnly, "",
			"attention averaged over heads plus the identity, rows normalised, multiplied through the blocks; the class token's row over the patches, upsampled bilinearly (Abnar & Zuidema 2020); vision transformers only",
			func(s Setup) AttentionRollout { return AttentionRollout{Chunk: s.Chunk} }, nil),
		entry("gradrollout", "Gradient × Attention Rollout", CategoryTransformer, imageOnly, "",
			"per block the heads' mean of (∇A ⊙ A)⁺ for the explained class, R ← R + Ā·R from the identity; the class token's row over the patches, upsampled bilinearly (Chefer et al. 2021, Generic Attention-model Explainability, Eqs. 5–6); vision transformers only",
			func(s Setup) GradientRollout { return GradientRollout{Chunk: s.Chunk} }, nil),
		entry("rawattention", "Raw Attention", CategoryTransformer, imageOnly, "",
			"the last block's attention of the class token to the patches, mean over heads, upsampled bilinearly: the baseline of the rollouts; vision transformers only",
			func(s Setup) RawAttention { return RawAttention{Chunk: s.Chunk} }, nil),
		entry("sobel", "Sobel", CategoryControl, imageOnly, "", "the image's edge magnitude: a control that ignores the model",
			func(Setup) Sobel { return Sobel{} }, nil),
		entry("random", "Random", CategoryControl, imageAndTabular, "", "independent uniform random values for every input value: a control",
			func(s Setup) Random { return Random{Seed: s.Seed} }, nil),
		entry("pixelrandom", "Random (per pixel)", CategoryControl, imageOnly, "", "one uniform random value per pixel, shared by its channels: removing its top fraction erases uniformly random pixels (DPI paper): a control",
			func(s Setup) PixelRandom { return PixelRandom{Seed: s.Seed} }, nil),
		needsTruth(entry("vlambda", "v_λ (truth mixed with noise)", CategoryControl, imageAndTabular, "",
			"GOAR's synthetic control (§6.1): the unit direction v of the explained class — the model's input gradient, as the paper, or the known truth — mixed with a uniform random unit direction, λ·v + (1−λ)·w; needs a dataset with a known truth (gmm)",
			func(s Setup) VLambda { return VLambda{Truth: s.Truth, Seed: s.Seed, Chunk: s.Chunk} }, VLambda.defaults)),
		entry("blockrandom", "Random block", CategoryControl, imageOnly, "", "a random rectangle of the given area ranked first (DPI paper): a control with low mask total variation",
			func(s Setup) BlockRandom { return BlockRandom{Seed: s.Seed} }, nil),
		entry("file", "Maps from files", CategoryFile, imageAndTabular, "",
			"maps computed elsewhere (Captum, Quantus, your own code), read from .npy or .npz files: one map per input in dataset order, or with an index array naming the inputs",
			func(s Setup) File { return File{Dir: s.Dir} }, nil),
	}
}

// entry builds an Entry for a method type T: newT makes the method from
// the setup, defaults (nil: none) fills in what the parameters left zero;
// omit names parameters of T this method does not take (TRACE's greedy
// search has no annealing settings).
func entry[T Method](name, title, category string, data []string, needs, doc string, newT func(Setup) T, defaults func(T) T, omit ...string) Entry {
	if defaults == nil {
		defaults = func(v T) T { return v }
	}
	var ps []param.Param
	for _, p := range param.Of(defaults(newT(Setup{}))) {
		if !slices.Contains(omit, p.Name) {
			ps = append(ps, p)
		}
	}
	return Entry{
		Info: Info{Name: name, Title: title, Category: category, Data: data, NeedsData: needs, Doc: doc, Params: ps},
		Build: func(s Setup, params map[string]any) (Method, error) {
			if needs != "" && s.TrainN == 0 {
				return nil, fmt.Errorf("%s needs training data (%s), and none was given", name, needs)
			}
			var errs []error
			for _, k := range slices.Sorted(maps.Keys(params)) {
				if slices.Contains(omit, k) {
					errs = append(errs, &param.Error{Owner: name, Param: k, Err: fmt.Errorf("does not apply to %s", name)})
				}
			}
			if len(errs) > 0 {
				return nil, errors.Join(errs...)
			}
			m, err := param.Decode(newT(s), name, params)
			if err != nil {
				return nil, err
			}
			m = defaults(m)
			if err := param.CheckOf(m, name); err != nil {
				return nil, err
			}
			return m, nil
		},
	}
}

// needsTruth marks a method that takes the data's ground truth, and
// refuses to build without one.
func needsTruth(e Entry) Entry {
	e.Info.NeedsTruth = true
	build := e.Build
	e.Build = func(s Setup, params map[string]any) (Method, error) {
		if len(s.Truth) == 0 {
			return nil, errNoTruth(e.Info.Name)
		}
		return build(s, params)
	}
	return e
}

// Applies reports whether the method explains samples of shape (C, H, W;
// tables are C×1×1) from data that knows its ground truth or not: its
// kind of data, and a truth for a method that takes one.
func (i Info) Applies(shape []int, truth bool) bool { return i.Check(shape, truth) == nil }

// Check is Applies with the reason when the method does not apply.
func (i Info) Check(shape []int, truth bool) error {
	kind := data.Kind(shape)
	if !slices.Contains(i.Data, kind) {
		return fmt.Errorf("%s explains %s data, not %s data", i.Name, strings.Join(i.Data, " or "), kind)
	}
	if i.NeedsTruth && !truth {
		return errNoTruth(i.Name)
	}
	return nil
}

// errNoTruth says that a method taking the data's ground truth has none.
func errNoTruth(method string) error {
	return fmt.Errorf("%s needs a dataset whose generator knows the ground truth (gmm); this one has none", method)
}

// NewEntry makes the Entry of another package's method (TRACE), with the
// same checks and defaults as this package's entries.
func NewEntry[T Method](name, title, category string, data []string, doc string, newT func(Setup) T, defaults func(T) T, omit ...string) Entry {
	return entry(name, title, category, data, "", doc, newT, defaults, omit...)
}
