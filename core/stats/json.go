package stats

import (
	"encoding/json"
	"math"
)

// MarshalJSON implements json.Marshaler: JSON has no NaN, so an undefined
// estimate or end is written as null.
func (iv Interval) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Estimate *float64 `json:"estimate"`
		Lo       *float64 `json:"lo"`
		Hi       *float64 `json:"hi"`
		Units    int      `json:"units"`
		Groups   int      `json:"groups"`
		Method   string   `json:"ci_method,omitempty"`
		Few      bool     `json:"few_inputs,omitempty"`
	}{Null(iv.Estimate), Null(iv.Lo), Null(iv.Hi), iv.Units, iv.Groups, iv.Method, iv.Few})
}

// UnmarshalJSON implements json.Unmarshaler, reading null as NaN.
func (iv *Interval) UnmarshalJSON(b []byte) error {
	var v struct {
		Estimate, Lo, Hi *float64
		Units, Groups    int
		Method           string `json:"ci_method"`
		Few              bool   `json:"few_inputs"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	nan := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	*iv = Interval{Estimate: nan(v.Estimate), Lo: nan(v.Lo), Hi: nan(v.Hi), Units: v.Units, Groups: v.Groups, Method: v.Method, Few: v.Few}
	return nil
}

// Null is x for JSON: nil (null) where x is NaN or infinite, which JSON
// cannot hold.
func Null(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}
