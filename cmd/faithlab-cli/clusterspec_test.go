package main

import (
	"testing"

	"faithlab/core/data"
	"faithlab/core/spec"
)

// clusterSpec has 8 tasks, two per shard of four: shard 2 runs two ROAR
// tasks of a few seconds each, so that it can be killed between them.
const clusterSpec = `name: cluster-test
output: run
datasets: [{id: "gmm:dim=512", test_samples: 1000}] # all 4800 training samples
model: {arch: mlp, epochs: 3}
methods: [gradient, gradxinput, random, smoothgrad]
protocols:
  - {name: roar, params: {rates: [0.3, 0.6, 0.9]}}
  - {name: deletion, params: {samples: 100}}
retrain: {epochs: 10}
`

// The cluster test's campaign (run only by make test-cluster, under the
// cluster tag) asks for no more samples than its data holds: a spec the
// shards would refuse at once is caught by make test, before the daemons.
func TestClusterSpecFitsItsData(t *testing.T) {
	s, err := spec.Parse("campaign.yaml", []byte(clusterSpec))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range s.Datasets {
		if _, _, err := data.Open(d.Ref, d.OpenOptions()); err != nil {
			t.Error(err)
		}
	}
}
