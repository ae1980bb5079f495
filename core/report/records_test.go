package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"maps"
	"strings"
	"testing"

	"faithlab/core/protocol"
	"faithlab/core/store"
)

// A protocol run in several settings on one dataset is titled, after its
// first setting, by what sets each apart: a switch turned on by its name,
// other values as name=value, in the names' order.
func TestSettingDiffNamesWhatSetsAProtocolApart(t *testing.T) {
	first := map[string]any{"strengths": []any{0.0, 4.0}, "no_projection": false, "prior": "mixture", "steps": 25.0}
	for _, tc := range []struct {
		cfg  map[string]any
		want string
	}{
		{map[string]any{"strengths": []any{0.0, 4.0}, "no_projection": true, "prior": "auto", "steps": 25.0}, "no_projection, prior=auto"},
		{map[string]any{"strengths": []any{0.0, 8.0}, "no_projection": false, "prior": "mixture", "steps": 10.0}, "steps=10, strengths=[0,8]"},
		{map[string]any{"strengths": []any{0.0, 4.0}, "no_projection": false, "prior": "mixture", "steps": 25.0, "advance": 0.2}, "advance=0.2"},
	} {
		if got := settingDiff(first, tc.cfg); got != tc.want {
			t.Errorf("settingDiff(%v) = %q, want %q", tc.cfg, got, tc.want)
		}
	}
}

// Two settings of one protocol on a dataset stay apart in the tidy CSV
// and in the diagnostics: rows and fits name the later setting by what
// sets it apart, as its figures do.
func TestSettingsOfAProtocolStayApartInCSVAndDiagnostics(t *testing.T) {
	rates := protocol.Values{0.1, 0.5, 0.9}
	var recs []store.Record
	for _, ref := range []string{"zero", "mean"} {
		cfg := map[string]any{"rates": []any{0.1, 0.5, 0.9}, "keep": false, "reference": ref, "rank": "magnitude"}
		for m, name := range []string{"gradient", "ig", "random"} {
			acc := protocol.Values{0.8 - 0.1*float64(m), 0.6, 0.3 + 0.1*float64(m)}
			if ref == "mean" {
				acc = protocol.Values{0.85, 0.8 - 0.05*float64(m), 0.7}
			}
			tv := protocol.Values{10 + float64(m), 30, 12 - float64(m)}
			recs = append(recs, store.Record{Dataset: "fmnist", Model: "m", Method: name, Protocol: "ROAR", Seed: 1,
				Result: &protocol.Result{Protocol: "ROAR", Method: name, Config: cfg,
					Curves:  []protocol.Curve{{Name: "accuracy", X: rates, Y: acc}, {Name: "mask_tv", X: rates, Y: tv}},
					Scalars: []protocol.Scalar{{Name: "mean_accuracy", Value: mean(acc), Better: protocol.Lower}}}})
		}
	}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, "run", recs, Confident(recs, ConfidenceOptions{})); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, r := range rows[1:] {
		count[r[5]]++
	}
	if want := map[string]int{"ROAR": 21, "ROAR (reference=mean)": 21}; !maps.Equal(count, want) {
		t.Errorf("rows by protocol %v, want %v", count, want)
	}
	d := Diagnose(recs)
	var fits []string
	for _, f := range d.TVFits {
		fits = append(fits, fmt.Sprintf("%s/%d", f.Protocol, len(f.Points)))
	}
	if got := strings.Join(fits, " "); got != "ROAR/9 ROAR (reference=mean)/9" {
		t.Errorf("TV fits %s, want one of 9 points per setting", got)
	}
}

// A protocol's setting that turns on a parameter its figures draw side by
// side (GOAR's no_projection) is named so even alone in a campaign.
func TestASwitchedOnSettingIsNamedAlone(t *testing.T) {
	cfg := map[string]any{"strengths": []any{0.0, 4.0}, "no_projection": true, "prior": "auto", "steps": 25.0, "advance": 0.16}
	x := protocol.Values{0, 4}
	recs := []store.Record{{Dataset: "gmm", Method: "gradient", Protocol: "GOAR", Seed: 1,
		Result: &protocol.Result{Protocol: "GOAR", Method: "gradient", Config: cfg,
			Curves:  []protocol.Curve{{Name: "cumulative_misclassification", X: x, Y: protocol.Values{0.1, 0.3}}},
			Scalars: []protocol.Scalar{{Name: "area", Value: 0.2, Better: protocol.Higher}}}}}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, "run", recs, Confident(recs, ConfidenceOptions{})); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), ",GOAR (no_projection),") {
		t.Errorf("CSV:\n%s", buf.String())
	}
	cfg["no_projection"] = false
	buf.Reset()
	if err := WriteCSV(&buf, "run", recs, Confident(recs, ConfidenceOptions{})); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), ",GOAR,") {
		t.Errorf("CSV of the projected setting:\n%s", buf.String())
	}
}
