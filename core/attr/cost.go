package attr

// Coster is a method that says what one map costs, in passes through the
// network per sample (a forward and a backward pass count as one; a
// forward pass alone as a third of one): what a front end uses to estimate
// a campaign's time before launch. Methods that are not Costers cost about
// one pass.
type Coster interface {
	Passes() float64
}

// PassesOf is m's Passes, 1 for a method that does not say.
func PassesOf(m Method) float64 {
	if c, ok := m.(Coster); ok {
		return c.Passes()
	}
	return 1
}

// Passes implements Coster.
func (ig IntegratedGradients) Passes() float64 {
	ig = ig.defaults()
	if ig.Rule == "trapezoid" {
		return float64(ig.Steps + 1)
	}
	return float64(ig.Steps)
}

// Passes implements Coster.
func (sg SmoothGrad) Passes() float64 { return float64(sg.defaults().Samples) }

// Passes implements Coster.
func (g GradientSHAP) Passes() float64 { return float64(g.defaults().Samples) }

// Passes implements Coster: forward passes over the coalitions.
func (k KernelSHAP) Passes() float64 { return float64(k.defaults().Samples+2) / 3 }

// Passes implements Coster: controls never touch the network.
func (Sobel) Passes() float64 { return 0 }

// Passes implements Coster.
func (Random) Passes() float64 { return 0 }

// Passes implements Coster.
func (PixelRandom) Passes() float64 { return 0 }

// Passes implements Coster.
func (BlockRandom) Passes() float64 { return 0 }
