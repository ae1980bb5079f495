package report

import "testing"

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
