package protocol

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
)

// Units are the per-input values behind a result's scalars: for each
// scalar that is a mean over the evaluated test inputs, every input's own
// value, so that its uncertainty can be estimated by resampling inputs and
// two methods compared input by input. Input i is the i-th evaluated test
// input (the first N of the test set), the same input in every result of
// one dataset and seed of a campaign; a value is NaN where it is undefined
// for that input (Kendall's τ of a constant curve), as the scalar's mean
// leaves it out. For a retraining protocol an input's value is what the
// retrained models made of it — ROAR's mean accuracy is, per input, its
// correctness averaged over the rates — so that the accuracy is resampled
// over the test set, not only over seeds.
//
// A scalar whose per-input values lie on a grid — multiples of 1/k, as an
// input's accuracy over k removal rates — records k (Grids), its values
// rounded to the grid, so that Exact reads them back as exact counts:
// float32 fractions would make equal differences unequal by rounding, and
// paired tests would see no ties where there are.
//
// In JSON they take little room: the values as float32, little-endian,
// scalar after scalar, deflated and in base64.
type Units struct {
	N      int         // inputs
	Names  []string    // the scalars, in Result.Scalars order
	Values [][]float32 // Values[k][i]: scalar Names[k] on input i
	// Grids[k] > 0: scalar Names[k]'s values are multiples of
	// 1/Grids[k]; 0 (or past the end): any values.
	Grids []int
}

// maxGrid bounds a grid's k: beyond, float32 cannot hold the counts' steps.
const maxGrid = 1 << 20

// Of returns the named scalar's per-input values (nil when not kept).
func (u Units) Of(name string) []float32 {
	if k := slices.Index(u.Names, name); k >= 0 {
		return u.Values[k]
	}
	return nil
}

// IsZero reports that no values are kept (for omitzero).
func (u Units) IsZero() bool { return len(u.Names) == 0 }

// Exact returns the named scalar's per-input values as numerators over
// den: for a scalar on a grid of k, the counts (integers, exactly: equal
// values and equal differences compare equal) over k; else the values
// over 1. NaN stays NaN; nil when the scalar is not kept.
func (u Units) Exact(name string) (num []float64, den float64) {
	k := slices.Index(u.Names, name)
	if k < 0 {
		return nil, 1
	}
	grid := 0
	if k < len(u.Grids) {
		grid = u.Grids[k]
	}
	num = make([]float64, len(u.Values[k]))
	for i, x := range u.Values[k] {
		num[i] = float64(x)
		if grid > 0 {
			num[i] = math.Round(num[i] * float64(grid))
		}
	}
	return num, float64(max(grid, 1))
}

// keep records per as the per-input values of the scalar name, whose
// value is their mean (NaN left out), as the caller computes it.
func (r *Result) keep(name string, per []float64) { r.keepGrid(name, per, 0) }

// keepGrid is keep for values on a grid of k (multiples of 1/k; 0: none):
// they are written rounded to it.
func (r *Result) keepGrid(name string, per []float64, k int) {
	v := make([]float32, len(per))
	for i, x := range per {
		if k > 0 {
			x = math.Round(x*float64(k)) / float64(k)
		}
		v[i] = float32(x)
	}
	if r.Units.N == 0 {
		r.Units.N = len(per)
	}
	if len(per) == r.Units.N {
		if k > 0 {
			for len(r.Units.Grids) < len(r.Units.Names) {
				r.Units.Grids = append(r.Units.Grids, 0)
			}
			r.Units.Grids = append(r.Units.Grids, k)
		}
		r.Units.Names = append(r.Units.Names, name)
		r.Units.Values = append(r.Units.Values, v)
	}
}

// unitsJSON is Units as written.
type unitsJSON struct {
	N      int      `json:"n"`
	Names  []string `json:"names"`
	Values string   `json:"values"`          // base64 of deflated float32 LE, scalar-major
	Grids  []int    `json:"grids,omitempty"` // per scalar; absent: none on a grid
}

// MarshalJSON implements json.Marshaler.
func (u Units) MarshalJSON() ([]byte, error) {
	if len(u.Grids) > len(u.Names) {
		return nil, fmt.Errorf("units: %d grids for %d scalars", len(u.Grids), len(u.Names))
	}
	var grids []int
	if slices.ContainsFunc(u.Grids, func(k int) bool { return k != 0 }) {
		grids = make([]int, len(u.Names))
		copy(grids, u.Grids)
	}
	raw := make([]byte, 0, 4*u.N*len(u.Names))
	for _, v := range u.Values {
		if len(v) != u.N {
			return nil, fmt.Errorf("units: %d values for %d inputs", len(v), u.N)
		}
		for _, x := range v {
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(x))
		}
	}
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestSpeed)
	w.Write(raw)
	w.Close()
	return json.Marshal(unitsJSON{N: u.N, Names: u.Names, Values: base64.StdEncoding.EncodeToString(buf.Bytes()), Grids: grids})
}

// maxUnits bounds what a record's units may inflate to (a million inputs
// times 64 scalars).
const maxUnits = 1 << 28

// UnmarshalJSON implements json.Unmarshaler.
func (u *Units) UnmarshalJSON(b []byte) error {
	var j unitsJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	want := int64(j.N) * int64(len(j.Names)) * 4
	if j.N < 0 || want > maxUnits {
		return fmt.Errorf("units: %d inputs × %d scalars: too many", j.N, len(j.Names))
	}
	if j.Grids != nil && len(j.Grids) != len(j.Names) {
		return fmt.Errorf("units: %d grids for %d scalars", len(j.Grids), len(j.Names))
	}
	for k, g := range j.Grids {
		if g < 0 || g > maxGrid {
			return fmt.Errorf("units: scalar %q: grid %d: want 0 (none) to %d", j.Names[k], g, maxGrid)
		}
	}
	z, err := base64.StdEncoding.DecodeString(j.Values)
	if err != nil {
		return fmt.Errorf("units: %w", err)
	}
	raw, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(z)), want+1))
	if err != nil {
		return fmt.Errorf("units: %w", err)
	}
	if int64(len(raw)) != want {
		return fmt.Errorf("units: %d bytes of values for %d inputs × %d scalars", len(raw), j.N, len(j.Names))
	}
	*u = Units{N: j.N, Names: j.Names, Values: make([][]float32, len(j.Names)), Grids: j.Grids}
	for k := range j.Names {
		v := make([]float32, j.N)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*(k*j.N+i):]))
		}
		u.Values[k] = v
	}
	return nil
}

// spread returns each point's sample standard deviation over inputs of
// per-input curves (per[i][j]: input i at point j; NaN left out), and the
// inputs: Curve.SD and Curve.N.
func spread(per [][]float64) (Values, int) {
	if len(per) == 0 {
		return nil, 0
	}
	sd := make(Values, len(per[0]))
	for j := range sd {
		var s, ss float64
		var n int
		for _, c := range per {
			if x := c[j]; !math.IsNaN(x) {
				s, ss, n = s+x, ss+x*x, n+1
			}
		}
		if n < 2 {
			sd[j] = math.NaN()
			continue
		}
		m := s / float64(n)
		sd[j] = math.Sqrt(math.Max(0, (ss-float64(n)*m*m)/float64(n-1)))
	}
	return sd, len(per)
}

// spreadOfCorrect is spread for per-point correctness (correct[j][i]:
// input i at point j).
func spreadOfCorrect(correct [][]bool) (Values, int) {
	if len(correct) == 0 {
		return nil, 0
	}
	per := make([][]float64, len(correct[0]))
	for i := range per {
		per[i] = make([]float64, len(correct))
		for j, c := range correct {
			if c[i] {
				per[i][j] = 1
			}
		}
	}
	return spread(per)
}
