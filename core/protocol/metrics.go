package protocol

import "fmt"

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
// means are over.
func shiftMetrics(suffix, label, points string, over *Axis) []Metric {
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
	} {
		mean := m.value
		mean.Title += ", mean over removal rates"
		out = append(out,
			Metric{Name: m.name + suffix, Label: label, Over: over, Value: m.value, Measure: m.name, Doc: m.doc, Images: m.name != "ood_auroc"},
			Metric{Name: m.name + suffix, Label: "mean", Of: m.name + suffix, Value: mean, Measure: m.name, Images: m.name != "ood_auroc",
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
	return append(m, shiftMetrics("", "", "drop rates", removedAxis("pixels"))...)
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
	return append(append(m, shiftMetrics("_morf", "MoRF", "drop rates", over)...), shiftMetrics("_lerf", "LeRF", "drop rates", over)...)
}

func (e EvalX) metrics() []Metric {
	m := accuracyMetrics("", "", "proxy test accuracy", "masks", Lower, removedAxis("features"))
	m[2].Headline = true
	return append(m, shiftMetrics("", "", "drop rates", removedAxis("features"))...)
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
	}
	at := fmt.Sprintf("%g, %g and %g %% removed", 100*shiftFractions[0], 100*shiftFractions[1], 100*shiftFractions[2])
	return append(append(m, shiftMetrics("_morf", "MoRF", at, over)...), shiftMetrics("_lerf", "LeRF", at, over)...)
}

func (s SensitivityN) metrics() []Metric {
	corr := signedAxis("Pearson correlation", "no correlation")
	mean := corr
	mean.Title += ", mean over N"
	return []Metric{
		{Name: "correlation", Better: Higher, Over: &Axis{Title: "pixels removed, N", Log: true}, Value: corr,
			Doc: "Pearson correlation of attribution sums with output drops over random subsets of N pixels, mean over images"},
		{Name: "mean_correlation", Better: Higher, Headline: true, Label: "mean", Of: "correlation", Value: mean,
			Doc: "Pearson correlation averaged over images and N"},
	}
}

func (Infidelity) metrics() []Metric {
	return []Metric{{Name: "infidelity", Better: Lower, Headline: true, Value: Axis{Title: "infidelity"},
		Doc: "mean over images of E[(Iᵀφ − Δf)²]"}}
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
