package native

import "math"

// The kernels of broadcasting arithmetic (tensorjoins.go): a run of the
// output's last axis — after axes that every operand walks alike are
// merged (coalesce), a whole sample where the shapes agree — with the
// function chosen once per run, not per value, and loops of their own for
// the strides transformers make (same shape, a constant or a row's value
// on one side, a trailing-axis bias). Every path computes each value with
// the same float32 operations in the same order as the general one, so
// the choice of path never changes a bit.

// coalesce merges adjacent axes that each operand walks contiguously (or
// not at all) into one, so that runs grow: shapes that agree become one
// run of a sample's values.
func coalesce(out, sa, sb []int) (o, a, b []int) {
	o, a, b = []int{out[0]}, []int{sa[0]}, []int{sb[0]}
	for i := 1; i < len(out); i++ {
		k := len(o) - 1
		if out[i] == 1 {
			continue
		}
		if o[k] == 1 || a[k] == sa[i]*out[i] && b[k] == sb[i]*out[i] {
			o[k] *= out[i]
			a[k], b[k] = sa[i], sb[i]
			continue
		}
		o, a, b = append(o, out[i]), append(a, sa[i]), append(b, sb[i])
	}
	return o, a, b
}

// powf is float32(p^q) through float64 math.Pow; p·p where q is 2, which
// is the same value (the product of two float32 values is exact in
// float64) without the general power.
func powf(p, q float32) float32 {
	if q == 2 {
		return p * p
	}
	return float32(math.Pow(float64(p), float64(q)))
}

// runOp sets y[j] = a[j·la] op b[j·lb] for j < len(y).
func runOp(fn string, y, a []float32, la int, b []float32, lb int) {
	n := len(y)
	switch {
	case la == 1 && lb == 1:
		a, b = a[:n], b[:n]
		switch fn {
		case "add":
			for j := range y {
				y[j] = a[j] + b[j]
			}
		case "sub":
			for j := range y {
				y[j] = a[j] - b[j]
			}
		case "mul":
			for j := range y {
				y[j] = a[j] * b[j]
			}
		case "div":
			for j := range y {
				y[j] = a[j] / b[j]
			}
		case "pow":
			for j := range y {
				y[j] = powf(a[j], b[j])
			}
		}
	case la == 1 && lb == 0:
		a, q := a[:n], b[0]
		switch fn {
		case "add":
			for j := range y {
				y[j] = a[j] + q
			}
		case "sub":
			for j := range y {
				y[j] = a[j] - q
			}
		case "mul":
			for j := range y {
				y[j] = a[j] * q
			}
		case "div":
			for j := range y {
				y[j] = a[j] / q
			}
		case "pow":
			for j := range y {
				y[j] = powf(a[j], q)
			}
		}
	case la == 0 && lb == 1:
		p, b := a[0], b[:n]
		switch fn {
		case "add":
			for j := range y {
				y[j] = p + b[j]
			}
		case "sub":
			for j := range y {
				y[j] = p - b[j]
			}
		case "mul":
			for j := range y {
				y[j] = p * b[j]
			}
		case "div":
			for j := range y {
				y[j] = p / b[j]
			}
		case "pow":
			for j := range y {
				y[j] = powf(p, b[j])
			}
		}
	default:
		for j := range y {
			y[j] = opf(fn, a[j*la], b[j*lb])
		}
	}
}

func opf(fn string, p, q float32) float32 {
	switch fn {
	case "add":
		return p + q
	case "sub":
		return p - q
	case "mul":
		return p * q
	case "div":
		return p / q
	}
	return powf(p, q)
}

// runGrad adds the gradients of a run of y = a op b from dy into da and
// db (nil: not wanted), at strides la and lb; with setA (a's values are
// each read once, and da holds zeros) it writes 0 + ∂ instead of adding,
// the same value without reading da first.
func runGrad(fn string, dy, a []float32, la int, b []float32, lb int, da, db []float32, setA bool) {
	n := len(dy)
	if da != nil {
		if la == 1 && setA {
			grad1(fn, dy, a[:n], b, lb, da[:n])
		} else {
			for j, g := range dy {
				p, q := a[j*la], b[j*lb]
				da[j*la] += gradA(fn, g, p, q)
			}
		}
	}
	if db != nil {
		for j, g := range dy {
			p, q := a[j*la], b[j*lb]
			db[j*lb] += gradB(fn, g, p, q)
		}
	}
}

// grad1 writes da[j] = 0 + ∂(a op b)/∂a · dy[j] for a run of a read once.
func grad1(fn string, dy, a, b []float32, lb int, da []float32) {
	switch {
	case fn == "add":
		for j, g := range dy {
			da[j] = 0 + g
		}
	case fn == "sub":
		for j, g := range dy {
			da[j] = 0 + g
		}
	case fn == "mul" && lb == 0:
		q := b[0]
		for j, g := range dy {
			da[j] = 0 + g*q
		}
	case fn == "div" && lb == 0:
		q := b[0]
		for j, g := range dy {
			da[j] = 0 + g/q
		}
	case fn == "pow" && lb == 0 && b[0] == 2:
		for j, g := range dy {
			da[j] = 0 + float32(float64(g)*2*float64(a[j]))
		}
	default:
		for j, g := range dy {
			da[j] = 0 + gradA(fn, g, a[j], b[j*lb])
		}
	}
}

// gradA is dy·∂(p op q)/∂p.
func gradA(fn string, g, p, q float32) float32 {
	switch fn {
	case "add", "sub":
		return g
	case "mul":
		return g * q
	case "div":
		return g / q
	}
	if q == 2 { // math.Pow(p, 1) is p
		return float32(float64(g) * 2 * float64(p))
	}
	return float32(float64(g) * float64(q) * math.Pow(float64(p), float64(q)-1))
}

// gradB is dy·∂(p op q)/∂q (for a power, 0 where p ≤ 0).
func gradB(fn string, g, p, q float32) float32 {
	switch fn {
	case "add":
		return g
	case "sub":
		return -g
	case "mul":
		return g * p
	case "div":
		return -g * p / (q * q)
	}
	if p > 0 {
		return float32(float64(g) * math.Pow(float64(p), float64(q)) * math.Log(float64(p)))
	}
	return 0
}
