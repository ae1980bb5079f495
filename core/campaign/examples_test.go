package campaign

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"faithlab/core/data"
)

// Every example campaign under testdata/campaigns loads and fits its data
// (Applies), as `faithlab-cli run` checks before any work: a README that
// points at one points at a campaign that runs. Fashion-MNIST's are
// checked where its files are here; the field224 and CIFAR-sized ones read what `make
// bench-campaigns` generates first, and are checked there.
func TestExampleCampaignsLoadAndFitTheirData(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "campaigns", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatal(paths, err)
	}
	_, fmnist := os.Stat(data.FashionMNISTDir)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if fmnist != nil && strings.Contains(string(b), "fashion-mnist") || strings.Contains(string(b), "runs/field224-") || strings.Contains(string(b), "runs/cifar-sized-") {
			continue
		}
		c, err := Load(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if err := c.Applies(); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
