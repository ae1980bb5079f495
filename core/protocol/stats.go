package protocol

import (
	"fmt"
	"math"
	"slices"
)

// AUC is the trapezoidal area under y over x.
func AUC(x, y []float64) float64 {
	var a float64
	for i := 1; i < len(x); i++ {
		a += (x[i] - x[i-1]) * (y[i] + y[i-1]) / 2
	}
	return a
}

// KendallTau is Kendall's τ-b between x and y (ties in either counted as
// neither concordant nor discordant, and corrected for), NaN when either
// is constant.
func KendallTau(x, y []float64) float64 {
	var conc, disc, tx, ty float64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			dx, dy := x[i]-x[j], y[i]-y[j]
			switch {
			case dx == 0 && dy == 0:
			case dx == 0:
				tx++
			case dy == 0:
				ty++
			case (dx > 0) == (dy > 0):
				conc++
			default:
				disc++
			}
		}
	}
	return (conc - disc) / math.Sqrt((conc+disc+tx)*(conc+disc+ty))
}

// Pearson is the sample correlation of x and y, NaN when either is constant.
func Pearson(x, y []float64) float64 {
	_, _, sxy, sxx, syy := moments(x, y)
	return sxy / math.Sqrt(sxx*syy)
}

// moments returns the means of x and y and their centred sums of products.
func moments(x, y []float64) (mx, my, sxy, sxx, syy float64) {
	n := float64(len(x))
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx, my = mx/n, my/n
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	return mx, my, sxy, sxx, syy
}

// Spearman is Pearson's correlation of the ranks (ties get their mean rank).
func Spearman(x, y []float64) float64 { return Pearson(ranks(x), ranks(y)) }

// ranks returns 1-based ranks, tied values sharing their mean rank.
func ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case v[a] < v[b]:
			return -1
		case v[a] > v[b]:
			return 1
		}
		return 0
	})
	r := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			r[idx[k]] = float64(i+j)/2 + 1
		}
		i = j + 1
	}
	return r
}

// Fit is a least-squares line y = Slope·x + Intercept with its coefficient
// of determination.
type Fit struct {
	Slope     float64 `json:"slope"`
	Intercept float64 `json:"intercept"`
	R2        float64 `json:"r2"`
	N         int     `json:"n"`
}

// LinearFit fits y against x by least squares.
func LinearFit(x, y []float64) (Fit, error) {
	if len(x) != len(y) || len(x) < 2 {
		return Fit{}, fmt.Errorf("linear fit needs at least two (x, y) pairs, got %d and %d values", len(x), len(y))
	}
	mx, my, sxy, sxx, syy := moments(x, y)
	if sxx == 0 {
		return Fit{}, fmt.Errorf("linear fit: all x equal %g", mx)
	}
	f := Fit{Slope: sxy / sxx, N: len(x)}
	f.Intercept = my - f.Slope*mx
	f.R2 = 1
	if syy > 0 {
		f.R2 = sxy * sxy / (sxx * syy)
	}
	return f, nil
}

// mean is the mean of v, NaNs left out (a constant curve has no τ).
func mean(v []float64) float64 {
	var s float64
	n := 0
	for _, x := range v {
		if !math.IsNaN(x) {
			s += x
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return s / float64(n)
}

// AUROC is the area under the ROC curve of a score that should be higher
// for pos than for neg: the probability that a random positive outscores a
// random negative, ties counting half (the Mann–Whitney U over |pos|·|neg|).
// 0.5 means the score cannot tell them apart.
func AUROC(pos, neg []float64) float64 {
	if len(pos) == 0 || len(neg) == 0 {
		return math.NaN()
	}
	r := ranks(append(slices.Clone(pos), neg...))
	var sum float64
	for _, v := range r[:len(pos)] {
		sum += v
	}
	np, nn := float64(len(pos)), float64(len(neg))
	return (sum - np*(np+1)/2) / (np * nn)
}
