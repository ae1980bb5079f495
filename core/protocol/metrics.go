package protocol

import (
	"fmt"
	"strings"
)

// The metrics each protocol reports, described for figures and tables
// (Metric): the curves with their parameter, every scalar with its axis,
// the headline score.

// unitAxis is an axis of values in [0, 1]: accuracies, probabilities,
// fractions.
func unitAxis(title string) Axis { return Axis{Title: title, Range: []float64{0, 1}} }

// signedAxis is an axis of values in [−1, 1] with a line at 0, labelled.
func signedAxis(title, zero string) Axis {
	return Axis{Title: title, Range: []float64{-1, 1}, Reference: &Reference{0, zero}}
}

// removedAxis is the x axis of a removal protocol's curves.
func removedAxis(what string) *Axis {
	a := unitAxis("fraction of " + what + " removed")
	return &a
}

// accuracyMetrics are the curves of a removal protocol scored by accuracy
// (ROAR, KAR, ROAD, Eval-X) with their mean, suffixed by the removal order
// ("_morf") and labelled by it ("MoRF") where the protocol has two.
func accuracyMetrics(suffix, label, accuracy, masks string, better Better, over *Axis) []Metric {
	acc, tv := "accuracy"+suffix, "mask_tv"+suffix
	return []Metric{
		{Name: acc, Better: better, Label: label, Over: over, Value: unitAxis(accuracy), MaskTV: tv,
			Doc: accuracy + " at each drop rate"},
		{Name: tv, Label: label, Over: over, Value: Axis{Title: "mean total variation of the " + masks},
			Doc: "mean total variation of the " + masks + " at each drop rate (DPI paper: smooth masks score better)"},
		{Name: "mean_" + acc, Better: better, Label: "mean", Of: acc, Value: unitAxis(accuracy + ", mean over drop rates"),
			Doc: accuracy + " averaged over the drop rates"},
	}
}

// shiftMetrics are the Shift curves of a protocol's perturbed test images
// and their means over the curve's parameter (FUD paper, §4.3): measures of
// the protocol, not scores of the method. points says which rates the
// means are over, levels what they are in the means' axis titles
// ("removal rates").
func shiftMetrics(suffix, label, points, levels string, over *Axis) []Metric {
	var out []Metric
	for _, m := range []struct {
		name, doc string
		value     Axis
	}{
		{"ood_auroc", "AUROC with which the model's energy score tells the perturbed test images from the clean ones (0.5: not at all)",
			Axis{Title: "energy OOD AUROC, perturbed vs clean", Range: []float64{0, 1}, Reference: &Reference{0.5, "chance"}}},
		{"psnr", "PSNR of the perturbed test images against the clean ones",
			Axis{Title: "PSNR against the clean images", Unit: "dB"}},
		{"ssim", "SSIM of the perturbed test images against the clean ones",
			unitAxis("SSIM against the clean images")},
		{"msssim", "multi-scale SSIM of the perturbed test images against the clean ones (the scales a small image has: 3 at 28×28)",
			unitAxis("MS-SSIM against the clean images")},
		{"gmsd", "gradient magnitude similarity deviation of the perturbed test images from the clean ones (0: same edges)",
			Axis{Title: "GMSD against the clean images", Range: []float64{0, 1}}},
		{"ood_fpr95", "false positive rate at 95 % true positive rate of the model's energy score, clean test images the positives (0.95: the perturbed cannot be told apart; lower: easily)",
			Axis{Title: "energy OOD FPR at 95% TPR", Range: []float64{0, 1}, Reference: &Reference{0.95, "indistinguishable"}}},
		{"ood_aupr_in", "average precision of the negated energy score with the clean test images as positives (0.5: not told apart)",
			Axis{Title: "energy OOD AUPR-In", Range: []float64{0, 1}, Reference: &Reference{0.5, "chance"}}},
		{"ood_aupr_out", "average precision of the energy score with the perturbed test images as positives (0.5: not told apart)",
			Axis{Title: "energy OOD AUPR-Out", Range: []float64{0, 1}, Reference: &Reference{0.5, "chance"}}},
	} {
		mean := m.value
		mean.Title += ", mean over " + levels
		images := !strings.HasPrefix(m.name, "ood_")
		out = append(out,
			Metric{Name: m.name + suffix, Label: label, Over: over, Value: m.value, Measure: m.name, Doc: m.doc, Images: images},
			Metric{Name: m.name + suffix, Label: "mean", Of: m.name + suffix, Value: mean, Measure: m.name, Images: images,
				Doc: m.doc + ", averaged over the " + points})
	}
	return out
}

func (r ROAR) metrics() []Metric {
	better := Lower
	if r.Keep {
		better = Higher
	}
	m := accuracyMetrics("", "", "test accuracy after retraining", "training masks", better, removedAxis("pixels"))
	m[2].Headline = true
	return append(m, shiftMetrics("", "", "drop rates", "removal rates", removedAxis("pixels"))...)
}

func (r ROAD) metrics() []Metric {
	accuracy := "test accuracy"
	if r.Retrain {
		accuracy += " after retraining"
	}
	over := removedAxis("pixels")
	var m []Metric
	for _, o := range []struct {
		suffix, label string
		better        Better
	}{{"_morf", "MoRF", Lower}, {"_lerf", "LeRF", Higher}} {
		m = append(m, accuracyMetrics(o.suffix, o.label, accuracy, "masks", o.better, over)...)
	}
	m = append(m, Metric{Name: "lerf_minus_morf", Better: Higher, Headline: true,
		Value: signedAxis("mean accuracy, LeRF − MoRF", "no difference"),
		Doc:   "mean LeRF accuracy − mean MoRF accuracy"})
	return append(append(m, shiftMetrics("_morf", "MoRF", "drop rates", "removal rates", over)...), shiftMetrics("_lerf", "LeRF", "drop rates", "removal rates", over)...)
}

func (e EvalX) metrics() []Metric {
	m := accuracyMetrics("", "", "proxy test accuracy", "masks", Lower, removedAxis("features"))
	m[2].Headline = true
	return append(m, shiftMetrics("", "", "drop rates", "removal rates", removedAxis("features"))...)
}

func (d Deletion) metrics() []Metric {
	over := removedAxis("features")
	score := Axis{Title: "explained-class " + d.Output}
	auc := Axis{Title: "area under the curve"}
	diff := Axis{Title: "AUC(LeRF) − AUC(MoRF)", Reference: &Reference{0, "no difference"}}
	if d.Output == "probability" {
		score.Range, auc.Range, diff.Range = []float64{0, 1}, []float64{0, 1}, []float64{-1, 1}
	}
	tau := signedAxis("Kendall's τ of the curve against removal, mean over images", "no trend")
	m := []Metric{
		{Name: "morf", Better: Lower, Label: "MoRF", Over: over, Value: score,
			Doc: fmt.Sprintf("%s of the explained class with the most relevant features removed first, mean over images", d.Output)},
		{Name: "lerf", Better: Higher, Label: "LeRF", Over: over, Value: score,
			Doc: fmt.Sprintf("%s of the explained class with the least relevant features removed first, mean over images", d.Output)},
		{Name: "auc_morf", Better: Lower, Label: "AUC", Of: "morf", Value: auc, Doc: "area under the MoRF deletion curve (fraction removed 0…1)"},
		{Name: "auc_lerf", Better: Higher, Label: "AUC", Of: "lerf", Value: auc, Doc: "area under the LeRF deletion curve"},
		{Name: "lerf_minus_morf", Better: Higher, Headline: true, Value: diff, Doc: "AUC(LeRF) − AUC(MoRF), the TRACE objective"},
		{Name: "tau_morf", Better: Higher, Label: "MoRF", Value: tau, Doc: "mean Kendall τ of the MoRF curve against removal (1: strictly falling)"},
		{Name: "tau_lerf", Better: Lower, Label: "LeRF", Value: tau, Doc: "mean Kendall τ of the LeRF curve against removal"},
		{Name: "aopc_morf", Better: Higher, Label: "AOPC", Of: "morf", Value: Axis{Title: "area over the perturbation curve"},
			Doc: "AOPC of the MoRF curve (Samek et al. 2017): the mean over its steps, the unperturbed included, of the drop from the unperturbed score"},
		{Name: "aopc_lerf", Better: Lower, Label: "AOPC", Of: "lerf", Value: Axis{Title: "area over the perturbation curve"},
			Doc: "AOPC of the LeRF curve: the mean drop from the unperturbed score over its steps"},
	}
	for i := range m {
		if d.as.headline != "" {
			m[i].Headline = m[i].Name == d.as.headline
		}
	}
	at := fmt.Sprintf("%g, %g and %g %% removed", 100*shiftFractions[0], 100*shiftFractions[1], 100*shiftFractions[2])
	return append(append(m, shiftMetrics("_morf", "MoRF", at, "removal rates", over)...), shiftMetrics("_lerf", "LeRF", at, "removal rates", over)...)
}

// shiftScalars are shiftMetrics for a protocol with one level of
// perturbation: scalars of its perturbed test images, no curves.
func shiftScalars(what string) []Metric {
	var out []Metric
	for _, m := range shiftMetrics("", "", "", "", nil) {
		if m.Of == "" { // the curve's own metric, made a scalar
			m.Over, m.Label, m.Doc = nil, "", m.Doc+" ("+what+")"
			out = append(out, m)
		}
	}
	return out
}

func (s SensitivityN) metrics() []Metric {
	corr := signedAxis("Pearson correlation", "no correlation")
	if len(s.Ns) == 1 {
		corr.Title += fmt.Sprintf(" at |S| = %d, mean over inputs", s.Ns[0])
		return append([]Metric{{Name: "mean_correlation", Better: Higher, Headline: true, Value: corr,
			Doc: fmt.Sprintf("Pearson correlation of attribution sums with output drops over random subsets of %d features, mean over inputs", s.Ns[0])}},
			shiftScalars("each image's first occluded copy")...)
	}
	mean := corr
	mean.Title += ", mean over N"
	return append([]Metric{
		{Name: "correlation", Better: Higher, Over: &Axis{Title: "pixels removed, N", Log: true}, Value: corr,
			Doc: "Pearson correlation of attribution sums with output drops over random subsets of N pixels, mean over images"},
		{Name: "mean_correlation", Better: Higher, Headline: true, Label: "mean", Of: "correlation", Value: mean,
			Doc: "Pearson correlation averaged over images and N"},
	}, shiftMetrics("", "", "subset sizes N (each image's first occluded copy)", "N", &Axis{Title: "pixels removed, N", Log: true})...)
}

func (Infidelity) metrics() []Metric {
	return append([]Metric{{Name: "infidelity", Better: Lower, Headline: true, Value: Axis{Title: "infidelity"},
		Doc: "mean over images of E[(Iᵀφ − Δf)²]"}}, shiftScalars("each image's first perturbed copy")...)
}

func (GroundTruth) metrics() []Metric {
	agreement := unitAxis("agreement with the ground truth")
	corr := signedAxis("correlation with the ground truth", "none")
	return []Metric{
		{Name: "fa", Better: Higher, Label: "FA", Value: agreement, Doc: "feature agreement: share of the top-k features found in both"},
		{Name: "ra", Better: Higher, Label: "RA", Value: agreement, Doc: "rank agreement: share of the top-k ranks held by the same feature"},
		{Name: "sa", Better: Higher, Label: "SA", Value: agreement, Doc: "sign agreement: top-k features found in both with the same sign"},
		{Name: "sra", Better: Higher, Label: "SRA", Value: agreement, Doc: "signed rank agreement: same feature, rank and sign"},
		{Name: "pra", Better: Higher, Label: "PRA", Value: agreement, Doc: "pairwise rank agreement over the truth's top-k pairs"},
		{Name: "rc", Better: Higher, Label: "RC", Value: corr, Doc: "rank correlation: Spearman's ρ of all features' magnitudes"},
		{Name: "cos", Better: Higher, Label: "cosine", Headline: true, Value: corr, Doc: "cosine similarity with the truth (GOAR §5.1)"},
	}
}

// strengthAxis is the x axis of GOAR's curves.
func strengthAxis() *Axis { return &Axis{Title: "perturbation strength s (L2 norm of the shift)"} }

// l2Metrics are the mean L2 distance of a protocol's perturbed test inputs
// to the originals over its curve's parameter, and its mean (FUD Appendix
// J): a measure of the protocol.
func l2Metrics(label, points, levels string, over *Axis) []Metric {
	v := Axis{Title: "mean L2 distance to the original test inputs"}
	m := v
	m.Title += ", mean over " + levels
	doc := "mean L2 distance between the perturbed test inputs (what the model is scored on) and the originals, in the data's units"
	return []Metric{
		{Name: "l2", Label: label, Over: over, Value: v, Measure: "l2", Doc: doc},
		{Name: "l2", Label: "mean", Of: "l2", Value: m, Measure: "l2", Doc: doc + ", averaged over the " + points},
	}
}

func (g GOAR) metrics() []Metric {
	over := strengthAxis()
	frac := unitAxis("test inputs misclassified at any strength up to s")
	m := []Metric{
		{Name: "cumulative_misclassification", Better: Higher, Over: over, Value: frac, Beside: "no_projection",
			BesideLabels: []string{"projected", "not projected (§6.3)"},
			Doc:          "fraction of the test inputs that a model retrained at some strength up to s misclassifies (§5.3)"},
		{Name: "area", Better: Higher, Headline: true, Label: "area", Of: "cumulative_misclassification",
			Value: unitAxis("area under the cumulative misclassification, over the strengths' span"),
			Doc:   "trapezoidal area under the cumulative misclassification curve divided by the strengths' span: its mean height"},
		{Name: "accuracy", Better: Lower, Over: over, Value: unitAxis("test accuracy after retraining"),
			Doc: "accuracy of the model retrained at each strength on the test inputs shifted (and projected) alike"},
		{Name: "mean_accuracy", Better: Lower, Label: "mean", Of: "accuracy", Value: unitAxis("test accuracy after retraining, mean over strengths"),
			Doc: "accuracy after retraining averaged over the strengths"},
	}
	m = append(m, l2Metrics("", "strengths", "strengths", over)...)
	return append(m, shiftMetrics("", "", "strengths", "strengths", over)...)
}

func (f FUD) metrics() []Metric {
	over := &Axis{Title: "fraction of features kept", Range: []float64{0, 1}}
	better, order := Higher, "the least relevant features removed first (LeRF)"
	if f.Order == "morf" {
		better, order = Lower, "the most relevant features removed first (MoRF)"
	}
	tau := signedAxis("Kendall's τ of the confidence against the fraction kept, mean over inputs", "no trend")
	m := []Metric{
		{Name: "confidence", Better: better, Label: map[bool]string{true: "MoRF", false: "LeRF"}[f.Order == "morf"], Over: over,
			Value: unitAxis("probability of the explained class"),
			Doc:   "the model's probability of the explained class on the in-painted test inputs, " + order + ", mean over inputs"},
		{Name: "auc", Better: better, Headline: true, Label: "AUC", Of: "confidence",
			Value: unitAxis("area under the confidence curve, over the ratios' span"),
			Doc:   "area under each input's confidence curve divided by the retained ratios' span, mean over inputs"},
		{Name: "tau", Better: Higher, Value: tau,
			Doc: "Kendall's τ of each input's confidence against the fraction kept, mean over inputs (1: the confidence falls with every removal; FUD Table 4)"},
	}
	m = append(m, l2Metrics("", "retained ratios", "retained ratios", over)...)
	m = append(m, Metric{Name: "l2_trajectory", Over: &Axis{Title: "DDIM steps taken"}, Value: Axis{Title: "mean L2 distance of x_t to the original"},
		Doc: "mean L2 distance of the in-painting's x_t to the original test inputs before each step and after the last, at the retained ratio nearest 90 % (FUD Appendix J, Fig. 5)"})
	return append(m, shiftMetrics("", "", "retained ratios", "retained ratios", over)...)
}
