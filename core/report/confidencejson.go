package report

import (
	"encoding/json"

	"faithlab/core/stats"
)

// JSON has no NaN: the types below write an undefined number as null.

// MarshalJSON implements json.Marshaler: what the score is, then its
// interval's fields (the embedded Interval's own MarshalJSON would
// otherwise stand for the whole and drop what it is of).
func (s ScoreCI) MarshalJSON() ([]byte, error) {
	head, err := json.Marshal(struct {
		Dataset  string `json:"dataset"`
		Protocol string `json:"protocol"`
		Method   string `json:"method"`
		Metric   string `json:"metric"`
		Seed     string `json:"seed"`
	}{s.Dataset, s.Protocol, s.Method, s.Metric, s.Seed})
	if err != nil {
		return nil, err
	}
	iv, err := json.Marshal(s.Interval)
	if err != nil {
		return nil, err
	}
	return append(append(head[:len(head)-1], ','), iv[1:]...), nil
}

// MarshalJSON implements json.Marshaler.
func (m RankedMethod) MarshalJSON() ([]byte, error) {
	type plain RankedMethod
	return json.Marshal(struct {
		plain
		PFirst   *float64 `json:"p_first"`
		MeanRank *float64 `json:"mean_rank"`
	}{plain(m), stats.Null(m.PFirst), stats.Null(m.MeanRank)})
}

// MarshalJSON implements json.Marshaler.
func (p Pair) MarshalJSON() ([]byte, error) {
	type plain Pair
	return json.Marshal(struct {
		plain
		P          *float64 `json:"p"`
		PHolm      *float64 `json:"p_holm"`
		PWilcoxon  *float64 `json:"p_wilcoxon"`
		Level      *float64 `json:"level"`
		Detectable *float64 `json:"detectable"`
	}{plain(p), stats.Null(p.P), stats.Null(p.PHolm), stats.Null(p.PWilcoxon), stats.Null(p.Level), stats.Null(p.Detectable)})
}
