package data

import (
	"strings"
	"testing"
)

// gmm ids carry the mixture's settings; the others keep their defaults.
func TestParseGMM(t *testing.T) {
	for _, tc := range []struct {
		ref  string
		ok   bool
		want GaussianMixture
		err  string
	}{
		{"gmm", true, GaussianMixture{Dim: 20, Samples: 6000, Variance: 0.3}, ""},
		{"gmm:dim=64", true, GaussianMixture{Dim: 64, Samples: 6000, Variance: 0.3}, ""},
		{"gmm:samples=100,variance=0.5,dim=3", true, GaussianMixture{Dim: 3, Samples: 100, Variance: 0.5}, ""},
		{"gmm:dim=0", true, GaussianMixture{}, "dim=0"},
		{"gmm:dim=4,dim=5", true, GaussianMixture{}, "at most once"},
		{"gmm:colour=red", true, GaussianMixture{}, "unknown setting"},
		{"gmm:variance=-1", true, GaussianMixture{}, "positive"},
		{"gmmx", false, GaussianMixture{}, ""},
		{"iris", false, GaussianMixture{}, ""},
	} {
		g, ok, err := ParseGMM(tc.ref)
		if ok != tc.ok || tc.err == "" && (err != nil || g != tc.want) || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: %+v %v %v", tc.ref, g, ok, err)
		}
	}
	if !IsID("gmm:dim=64") || !IsID("iris") || IsID("/data/x.csv") {
		t.Error("IsID")
	}
	train, test, err := Open("gmm:dim=64,samples=100", Options{Seed: 2})
	if err != nil || train.Dim() != 64 || train.Len()+test.Len() != 100 || len(train.Truth) != 2 {
		t.Errorf("Open gmm:dim=64: %v", err)
	}
}
