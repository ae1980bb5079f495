package main

import (
	"os"
	"strings"
	"testing"

	"faithlab/core/data"
)

// `datasets` lists the planted-truth set and says that it, and no other
// built-in set, carries ground-truth masks.
func TestDatasetsSaysWhichCarryMasks(t *testing.T) {
	if _, err := os.Stat(data.FashionMNISTDir); err != nil {
		t.Skip("Fashion-MNIST is not installed (dataset-fashion-mnist)")
	}
	var b strings.Builder
	listDatasets(&b)
	lines := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		lines[strings.Fields(l)[0]] = l
	}
	for _, id := range data.IDs() {
		l, ok := lines[id]
		switch {
		case !ok:
			t.Errorf("%s is not listed:\n%s", id, b.String())
		case id == "fashion-mnist-planted" && !strings.Contains(l, "60000 train   10000 test  shape [1 28 28]  10 classes  ground-truth masks"):
			t.Errorf("the planted set is listed as %q", l)
		case id != "fashion-mnist-planted" && strings.Contains(l, "masks"):
			t.Errorf("%s is listed with masks: %q", id, l)
		}
	}
}
