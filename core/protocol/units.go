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
// In JSON they take little room: the values as float32, little-endian,
// scalar after scalar, deflated and in base64.
type Units struct {
	N      int         // inputs
	Names  []string    // the scalars, in Result.Scalars order
	Values [][]float32 // Values[k][i]: scalar Names[k] on input i
}

// Of returns the named scalar's per-input values (nil when not kept).
func (u Units) Of(name string) []float32 {
	if k := slices.Index(u.Names, name); k >= 0 {
		return u.Values[k]
	}
	return nil
}

// IsZero reports that no values are kept (for omitzero).
func (u Units) IsZero() bool { return len(u.Names) == 0 }

// keep records per as the per-input values of the scalar name, whose
// value is their mean (NaN left out), as the caller computes it.
func (r *Result) keep(name string, per []float64) {
	v := make([]float32, len(per))
	for i, x := range per {
		v[i] = float32(x)
	}
	if r.Units.N == 0 {
		r.Units.N = len(per)
	}
	if len(per) == r.Units.N {
		r.Units.Names = append(r.Units.Names, name)
		r.Units.Values = append(r.Units.Values, v)
	}
}

// unitsJSON is Units as written.
type unitsJSON struct {
	N      int      `json:"n"`
	Names  []string `json:"names"`
	Values string   `json:"values"` // base64 of deflated float32 LE, scalar-major
}

// MarshalJSON implements json.Marshaler.
func (u Units) MarshalJSON() ([]byte, error) {
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
	return json.Marshal(unitsJSON{N: u.N, Names: u.Names, Values: base64.StdEncoding.EncodeToString(buf.Bytes())})
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
	*u = Units{N: j.N, Names: j.Names, Values: make([][]float32, len(j.Names))}
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
