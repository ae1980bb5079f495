package protocol

import (
	"fmt"
	"math"
)

// TVPoint is one (method, drop rate) of a retraining protocol: the mean
// total variation of its masks and the accuracy it reached.
type TVPoint struct {
	Method   string  `json:"method"`
	Rate     float64 `json:"rate"`
	TV       float64 `json:"tv"`
	Accuracy float64 `json:"accuracy"`
}

// TVPoints collects the (mask TV, accuracy) pairs of results that carry
// the named accuracy and mask-TV curves (ROAR: "accuracy", "mask_tv"; ROAD:
// "accuracy_morf", "mask_tv_morf").
func TVPoints(results []Result, accCurve, tvCurve string) []TVPoint {
	var pts []TVPoint
	for _, r := range results {
		var acc, tv *Curve
		for i := range r.Curves {
			switch r.Curves[i].Name {
			case accCurve:
				acc = &r.Curves[i]
			case tvCurve:
				tv = &r.Curves[i]
			}
		}
		if acc == nil || tv == nil {
			continue
		}
		for j := range acc.X {
			pts = append(pts, TVPoint{Method: r.Method, Rate: acc.X[j], TV: tv.Y[j], Accuracy: acc.Y[j]})
		}
	}
	return pts
}

// TVFit fits accuracy against mask total variation over the points: the
// DPI paper's Table 3 (a high R² means the protocol rewards blurry masks).
// Fewer than three points, or accuracies that do not vary, leave nothing
// for R² to measure: an error says which.
func TVFit(pts []TVPoint) (Fit, error) {
	x, y := make([]float64, len(pts)), make([]float64, len(pts))
	for i, p := range pts {
		x[i], y[i] = p.TV, p.Accuracy
	}
	f, err := LinearFit(x, y)
	if err != nil {
		return f, fmt.Errorf("accuracy against mask TV: %w", err)
	}
	return f, nil
}

// PostCount is the DPI paper's Table 2 cell: over the (method, rate)
// points present in both, how often the post-processed maps reach a better
// accuracy than the plain ones (lower where lower is better, as for ROAR;
// higher for KAR), out of how many comparisons. Points are matched by
// method (the plain method name) and rate.
func PostCount(plain, processed []TVPoint, better Better) (wins, total int) {
	type key struct {
		m string
		r float64
	}
	base := map[key]float64{}
	for _, p := range plain {
		base[key{p.Method, p.Rate}] = p.Accuracy
	}
	for _, p := range processed {
		if a, ok := base[key{p.Method, p.Rate}]; ok && !math.IsNaN(a) {
			total++
			if better == Lower && p.Accuracy < a || better == Higher && p.Accuracy > a {
				wins++
			}
		}
	}
	return wins, total
}
