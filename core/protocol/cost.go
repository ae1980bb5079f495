package protocol

// Retrainer is a protocol that trains models of its own: what a front end
// counts when it tells a user the size of a campaign before launch.
type Retrainer interface {
	// Retrainings is how many models one run of the protocol trains (with
	// its parameters' defaults filled in).
	Retrainings() int
}

// Retrainings implements Retrainer: one model per rate.
func (r ROAR) Retrainings() int { return len(r.defaults().Rates) }

// Retrainings implements Retrainer: with Retrain, one model per rate and
// order; none otherwise.
func (r ROAD) Retrainings() int {
	if !r.Retrain {
		return 0
	}
	return 2 * len(r.defaults().Rates)
}

// Retrainings implements Retrainer: the proxy model.
func (EvalX) Retrainings() int { return 1 }

// RetrainingsOf is p's Retrainings, 0 for a protocol that trains nothing.
func RetrainingsOf(p Protocol) int {
	if r, ok := p.(Retrainer); ok {
		return r.Retrainings()
	}
	return 0
}
