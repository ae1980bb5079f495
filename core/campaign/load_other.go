//go:build !linux

package campaign

// loadSample knows nothing of the machine's load where there is no /proc.
type loadSample struct{}

func startLoad() loadSample { return loadSample{} }

// busy is not known here.
func (loadSample) busy() float64 { return -1 }
