package protocol

import (
	"context"
	"math"
	"strings"
	"testing"
)

// Image-quality measures (PSNR, SSIM) are written for images only: a
// tabular deletion writes the OOD AUROC and no psnr or ssim curve or
// scalar (no ssim = NaN rows); an image one writes all three.
func TestDeletionWritesImageQualityForImagesOnly(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shape []int
		image bool
	}{
		{"tabular, 16 features", []int{16, 1, 1}, false},
		{"image 4×4", []int{1, 4, 4}, true},
	} {
		env, _ := linearEnvShape(5, tc.shape)
		res, err := Deletion{Grid: 4, Output: "logit", Samples: 5}.Run(context.Background(), env)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, c := range res.Curves {
			names = append(names, c.Name)
		}
		for _, s := range res.Scalars {
			names = append(names, s.Name)
			if math.IsNaN(s.Value) {
				t.Errorf("%s: scalar %s is NaN", tc.name, s.Name)
			}
		}
		all := strings.Join(names, " ")
		for _, order := range []string{"morf", "lerf"} {
			if !strings.Contains(all, "ood_auroc_"+order) {
				t.Errorf("%s: no ood_auroc_%s in %s", tc.name, order, all)
			}
			for _, q := range []string{"psnr_", "ssim_"} {
				if got := strings.Contains(all, q+order); got != tc.image {
					t.Errorf("%s: %s%s written %v, want %v (%s)", tc.name, q, order, got, tc.image, all)
				}
			}
		}
	}
}
