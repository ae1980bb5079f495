package main

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"faithlab/core/campaign"
	"faithlab/core/data"
)

// rgbFolder writes an image folder of classes sub-folders, each of per
// random 32×32 RGB images, and returns its path.
func rgbFolder(t *testing.T, classes, per int) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "rgb")
	rng := rand.New(rand.NewPCG(1, 2))
	for c := range classes {
		dir := filepath.Join(root, fmt.Sprintf("c%d", c))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range per {
			img := image.NewRGBA(image.Rect(0, 0, 32, 32))
			for p := 0; p < len(img.Pix); p += 4 {
				img.Pix[p], img.Pix[p+1], img.Pix[p+2], img.Pix[p+3] = uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(rng.IntN(256)), 255
			}
			img.Set(0, 0, color.RGBA{uint8(c * 20), 0, 0, 255})
			f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%d.png", i)))
			if err != nil {
				t.Fatal(err)
			}
			if err := png.Encode(f, img); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
	}
	return root
}

// copyFixture copies testdata/onnx/name to dir.
func copyFixture(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "onnx", name))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Every method of `faithlab-cli methods` runs on imported ONNX graphs: the
// image methods on a ResNet of residual Adds (Grad-CAM on the layer its
// description names and on one --layer names), DeepLIFT and Grad-CAM on a
// DenseNet (Concat) and an EfficientNet (squeeze-and-excitation Mul,
// SiLU), v_λ on a tabular graph with a residual Add (it needs gmm's known
// truth), the transformer methods on a small ViT; and a ROAD campaign
// retrains the ResNet from fresh weights.
func TestEveryMethodRunsOnImportedGraphs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every method and a retraining campaign")
	}
	ctx := context.Background()
	dir := t.TempDir()
	images := rgbFolder(t, 10, 3)
	resnet := copyFixture(t, dir, "resnet-basic.op17.onnx")
	classes := `["c0","c1","c2","c3","c4","c5","c6","c7","c8","c9"]`
	desc := `{"input_shape": [3, 32, 32], "classes": ` + classes + `, "cam_layer": "layer1.0.relu_1"}`
	if err := os.WriteFile(resnet+".json", []byte(desc), 0o644); err != nil {
		t.Fatal(err)
	}
	imageArgs := []string{"--dataset", images, "--image-size", "32", "--channels", "3"}
	attribute := func(model, method, out string, n int, extra ...string) *data.Array {
		t.Helper()
		args := append([]string{"--model", model, "--method", method, "--n", fmt.Sprint(n), "--out", out}, extra...)
		if err := runAttribute(ctx, args); err != nil {
			t.Fatalf("%s on %s: %v", method, filepath.Base(model), err)
		}
		a, err := data.LoadNPY(out)
		if err != nil || a.Shape[0] != n && n != 0 {
			t.Fatalf("%s on %s: %v %v", method, filepath.Base(model), a, err)
		}
		return a
	}
	// Maps of every test input, for the file method to read back.
	all := attribute(resnet, "gradient", filepath.Join(dir, "all.npy"), 0, imageArgs...)
	ran := map[string]bool{}
	for _, tc := range []struct {
		method string
		args   []string
	}{
		{"gradient", nil}, {"gradxinput", nil}, {"ig", []string{"--steps", "4"}},
		{"smoothgrad", []string{"--samples", "3"}}, {"sgsq", []string{"--samples", "3"}}, {"vargrad", []string{"--samples", "3"}},
		{"deeplift", nil}, {"gradientshap", []string{"--samples", "4"}}, {"kernelshap", []string{"--samples", "64", "--grid", "4"}},
		{"gradcam", nil},
		{"sobel", nil}, {"random", nil}, {"pixelrandom", nil}, {"blockrandom", []string{"--drop-rate", "0.25"}},
		{"file", []string{"--test", filepath.Join(dir, "all.npy")}},
		{"trace-sa", []string{"--grid", "2", "--iterations", "50"}}, {"trace-greedy", []string{"--grid", "2"}}, {"trace-go", []string{"--grid", "2"}},
	} {
		a := attribute(resnet, tc.method, filepath.Join(dir, tc.method+".npy"), 2, append(tc.args, imageArgs...)...)
		if tc.method == "file" && !slices.Equal(a.Data, all.Data[:len(a.Data)]) {
			t.Errorf("the file method's maps are not the maps it read")
		}
		ran[tc.method] = true
	}
	// Grad-CAM's layer is the description's cam_layer unless --layer names another.
	cam := func(layer ...string) []float32 {
		args := imageArgs
		if layer != nil {
			args = append([]string{"--layer", layer[0]}, args...)
		}
		return attribute(resnet, "gradcam", filepath.Join(dir, "cam.npy"), 2, args...).Data
	}
	if described, named, other := cam(), cam("layer1.0.relu_1"), cam("layer2.0.add"); !slices.Equal(described, named) || slices.Equal(described, other) {
		t.Errorf("Grad-CAM's maps of the described layer and of --layer layer1.0.relu_1 differ, or equal layer2.0.add's")
	}
	for _, f := range []string{"densenet.op11.onnx", "efficientnet.op17.onnx"} {
		model := copyFixture(t, dir, f)
		for _, m := range []string{"deeplift", "gradcam"} {
			attribute(model, m, filepath.Join(dir, f+m+".npy"), 2, imageArgs...)
		}
	}
	tab := copyFixture(t, dir, "tabular.op17.onnx")
	for _, m := range []string{"vlambda", "gradient", "deeplift"} {
		args := []string{"--dataset", "gmm"}
		if m == "vlambda" {
			args = append(args, "--lambda", "0.5")
		}
		attribute(tab, m, filepath.Join(dir, "tab-"+m+".npy"), 2, args...)
		ran[m] = true
	}
	// The transformer methods on a vision transformer (a small torchvision
	// VisionTransformer at 32×32), with the same 10-class description.
	vit := copyFixture(t, dir, "vit-tiny.op17.onnx")
	if err := os.WriteFile(vit+".json", []byte(`{"input_shape": [3, 32, 32], "classes": `+classes+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"rollout", "gradrollout", "rawattention", "gradient"} {
		attribute(vit, m, filepath.Join(dir, "vit-"+m+".npy"), 2, imageArgs...)
		ran[m] = true
	}
	for _, m := range campaign.Methods() {
		if !ran[m.Name] {
			t.Errorf("method %s did not run on an imported graph", m.Name)
		}
	}
	t.Logf("%d methods ran on imported graphs", len(ran))

	spec := fmt.Sprintf(`output: run
datasets: [{id: %s, image_size: 32, channels: 3}]
model: {file: resnet-basic.op17.onnx}
methods: [gradient, random]
protocols:
  - {name: road, params: {rates: [0.5], retrain: true}}
retrain: {epochs: 1}
`, images)
	if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := runCampaign(ctx, []string{filepath.Join(dir, "c.yaml"), "--quiet", "--allow-folder", images}); err != nil {
		t.Fatal(err)
	}
	csv := string(readCSV(t, filepath.Join(dir, "run")))
	if !strings.Contains(csv, ",ROAD,") || !strings.Contains(csv, ",random,") {
		t.Errorf("the retraining campaign's results lack ROAD or random:\n%s", csv)
	}
}
