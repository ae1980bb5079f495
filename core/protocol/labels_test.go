package protocol

import (
	"strings"
	"testing"

	"faithlab/core/data"
)

// Protocols that retrain, count correct answers, build mosaics by class or
// explain the labelled class need labels; the others explain the predicted
// class and run on a folder of images alone.
func TestWhichProtocolsNeedLabels(t *testing.T) {
	for _, tc := range []struct {
		p    Protocol
		want string
	}{
		{ROAR{}, "retrains"},
		{ROAD{Retrain: true}, "retrains"},
		{EvalX{}, "retrains"},
		{DataRandomisation{}, "retrains"},
		{GOAR{}, "classifies correctly"},
		{Focus{}, "mosaics"},
		{Deletion{Target: "label"}, "target: label"},
		{MPRT{Target: "label"}, "target: label"},
		{Deletion{}, ""},
		{Deletion{Target: "predicted"}, ""},
		{ROAD{}, ""},
		{MPRT{}, ""},
	} {
		got := NeedsLabels(tc.p)
		if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s %+v: %q, want %q", tc.p.Info().Name, tc.p, got, tc.want)
		}
		unl := &data.Dataset{Shape: []int{3, 8, 8}, Unlabelled: true}
		if err := AppliesTo(tc.p, unl); (err == nil) != (tc.want == "") {
			t.Errorf("%s on unlabelled images: %v", tc.p.Info().Name, err)
		}
	}
}
