package onnx

import (
	"math"
	"slices"
	"strings"

	"faithlab/core/engine/native"
)

// Fusions: patterns of nodes that exporters write for one function, read
// as one native layer that computes the same values (and, for GELU, the
// same bits) in one pass.

// fuseSiLU finds the products x·σ(x) whose σ(x) nothing else reads:
// PyTorch exports SiLU (Swish) as a Sigmoid and a Mul.
func (im *importer) fuseSiLU(nodes []*node) {
	sig := map[string]*node{}
	for _, n := range nodes {
		if n.op == "Sigmoid" && len(n.inputs) == 1 {
			sig[n.outputs[0]] = n
		}
		if n.op != "Mul" || len(n.inputs) != 2 {
			continue
		}
		for k, x := range n.inputs {
			s, ok := sig[x]
			if ok && s.inputs[0] == n.inputs[1-k] && im.readers[x] == 1 {
				im.silu[n], im.skip[s] = s.inputs[0], true
				break
			}
		}
	}
}

// fuseGELU replaces the layers PyTorch exports nn.GELU as — x/√2, erf,
// + 1, a product with x, ·0.5, each intermediate read once — by one
// "gelu" layer named for their module (mlp.1) where that name is free,
// which computes the same float32 operations in the same order (package
// native), without four activations' passes through memory.
func fuseGELU(g *Graph) {
	ls := g.Layers
	for i := 1; i < len(ls); i++ {
		if len(ls[i].In) == 0 {
			ls[i].In = []string{ls[i-1].Name} // explicit, since layers are removed
		}
	}
	readers := map[string]int{}
	at := map[string]int{}
	for i, l := range ls {
		at[l.Name] = i
		for _, x := range l.In {
			readers[x]++
		}
	}
	scalar := func(l native.Layer, fn string, v float32) bool {
		return l.Op == "arith" && l.Fn == fn && !l.Swap && len(l.Value) == 1 && (v == 0 || l.Value[0] == v)
	}
	drop := map[string]bool{}
	rename := map[string]string{}
	for i, div := range ls {
		if !scalar(div, "div", 0) || math.Abs(float64(div.Value[0])-math.Sqrt2) > 1e-6 || len(div.In) != 1 {
			continue
		}
		x := div.In[0]
		erf, ok := next(ls, i, div.Name, "erf")
		if !ok || readers[div.Name] != 1 || readers[erf.Name] != 1 {
			continue
		}
		add, ok := next(ls, at[erf.Name], erf.Name, "arith")
		if !ok || !scalar(add, "add", 1) || readers[add.Name] != 1 {
			continue
		}
		mul, ok := next(ls, at[add.Name], add.Name, "mul")
		if !ok || len(mul.In) != 2 || !slices.Contains(mul.In, x) || readers[mul.Name] != 1 {
			continue
		}
		half, ok := next(ls, at[mul.Name], mul.Name, "arith")
		if !ok || !scalar(half, "mul", 0.5) {
			continue
		}
		name := half.Name
		if base, ok := strings.CutSuffix(erf.Name, ".erf"); ok {
			if _, taken := at[base]; !taken {
				name = base
			}
		}
		for _, l := range []native.Layer{div, erf, add, mul} {
			drop[l.Name] = true
		}
		ls[at[half.Name]] = native.Layer{Op: "gelu", Name: name, In: []string{x}, Shape: div.Shape, Alpha: div.Value[0]}
		at[name] = at[half.Name]
		rename[half.Name] = name
	}
	if len(drop) == 0 {
		return
	}
	g.Layers = without(ls, drop, rename)
}

// without is ls less the layers in drop, their readers reading rename's
// names.
func without(ls []native.Layer, drop map[string]bool, rename map[string]string) []native.Layer {
	out := ls[:0]
	for _, l := range ls {
		if drop[l.Name] {
			continue
		}
		for k, x := range l.In {
			if r, ok := rename[x]; ok {
				l.In[k] = r
			}
		}
		out = append(out, l)
	}
	return out
}

// next finds the first layer after i of kind op that reads name.
func next(ls []native.Layer, i int, name, op string) (native.Layer, bool) {
	for _, l := range ls[i+1:] {
		if slices.Contains(l.In, name) {
			return l, l.Op == op
		}
	}
	return native.Layer{}, false
}

// fuseLayerNorm replaces the layers an exporter writes for nn.LayerNorm
// before opset 17 — the mean over the last axis, x − mean, its square, the
// mean of that, + ε, √, the quotient, · weight, + bias, each intermediate
// read only within them — by one "layernorm" layer over that axis with
// the weight and bias as its parameters, named for its module (ln_1) where
// that name is free: one pass that sums in float64 as LayerNormalization's
// does (values within float32 rounding of the nine layers'), where the
// nine made eleven passes through memory.
func fuseLayerNorm(g *Graph) {
	ls := g.Layers
	readers, at := map[string]int{}, map[string]int{}
	for i, l := range ls {
		at[l.Name] = i
		for _, x := range l.In {
			readers[x]++
		}
	}
	once := func(l native.Layer) bool { return readers[l.Name] == 1 }
	scalar := func(l native.Layer, fn string) bool {
		return l.Op == "arith" && l.Fn == fn && !l.Swap && len(l.Value) == 1
	}
	drop, rename := map[string]bool{}, map[string]string{}
	for i, mean := range ls {
		r := len(mean.Shape)
		if mean.Op != "reducemean" || len(mean.In) != 1 || r == 0 || mean.Axis != r-1 || mean.AxisEnd > r || !once(mean) {
			continue
		}
		x, d := mean.In[0], mean.Shape[r-1]
		sub, ok := next(ls, i, mean.Name, "elementwise")
		if !ok || sub.Fn != "sub" || len(sub.In) != 2 || sub.In[0] != x || sub.In[1] != mean.Name || readers[sub.Name] != 2 {
			continue
		}
		sq, ok := next(ls, at[sub.Name], sub.Name, "arith")
		if !ok || !scalar(sq, "pow") || sq.Value[0] != 2 || !once(sq) {
			continue
		}
		v, ok := next(ls, at[sq.Name], sq.Name, "reducemean")
		if !ok || v.Axis != mean.Axis || v.AxisEnd != mean.AxisEnd || !once(v) {
			continue
		}
		eps, ok := next(ls, at[v.Name], v.Name, "arith")
		if !ok || !scalar(eps, "add") || !(eps.Value[0] > 0) || !once(eps) {
			continue
		}
		root, ok := next(ls, at[eps.Name], eps.Name, "sqrt")
		if !ok || !once(root) {
			continue
		}
		div, ok := next(ls, at[root.Name], root.Name, "elementwise")
		if !ok || div.Fn != "div" || len(div.In) != 2 || div.In[0] != sub.Name || div.In[1] != root.Name || !once(div) {
			continue
		}
		w, ok := next(ls, at[div.Name], div.Name, "arith")
		if !ok || w.Fn != "mul" || w.Swap || len(w.Value) != d || !once(w) {
			continue
		}
		b, ok := next(ls, at[w.Name], w.Name, "arith")
		if !ok || b.Fn != "add" || b.Swap || len(b.Value) != d {
			continue
		}
		name := b.Name
		if base, ok := strings.CutSuffix(mean.Name, ".reducemean"); ok {
			if _, taken := at[base]; !taken {
				name = base
			}
		}
		if _, taken := g.Weights[name+".weight"]; taken {
			continue
		}
		for _, l := range []native.Layer{mean, sub, sq, v, eps, root, div, w} {
			drop[l.Name] = true
		}
		ls[at[b.Name]] = native.Layer{Op: "layernorm", Name: name, In: []string{x}, Shape: mean.Shape, Axis: r - 1, Eps: eps.Value[0]}
		g.Weights[name+".weight"], g.Weights[name+".bias"] = w.Value, b.Value
		at[name] = at[b.Name]
		rename[b.Name] = name
	}
	if len(drop) > 0 {
		g.Layers = without(ls, drop, rename)
	}
}
