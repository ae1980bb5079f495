package main

import (
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"faithlab/core/data"
)

// captureStdout runs f with the process's standard output captured; f's
// error fails the test.
func captureStdout(t *testing.T, f func() error) string {
	t.Helper()
	out, err := captured(t, &os.Stdout, f)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// photos writes n w×h grey-ish RGB PNGs into dir.
func photos(t *testing.T, dir string, n, w, h, tone int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for k := range n {
		img := image.NewNRGBA(image.Rect(0, 0, w, h))
		for i := range img.Pix {
			img.Pix[i] = uint8(tone + (i/4)%w + 3*k)
			if i%4 == 3 {
				img.Pix[i] = 255
			}
		}
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%d.png", k)))
		if err != nil {
			t.Fatal(err)
		}
		if err := png.Encode(f, img); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}

// One's own images on a model from a file: class folders named by the
// model's classes or wnids are explained and evaluated with the model's
// labels; a folder of images alone is explained at the predicted class by
// attribute and by a campaign's protocols that explain it, and refused,
// saying why, by eval, by attribute --target label and by a campaign's
// protocols that need labels; what the description leaves to defaults is
// said.
func TestOwnImagesOnAModelFromAFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	m := copyFixture(t, dir, "goar-cnn.onnx")
	var wnids []string
	for i := range 10 {
		wnids = append(wnids, fmt.Sprintf(`"n%08d"`, 2000000+i))
	}
	desc := `{"input_shape": [1, 28, 28], "classes": ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"],
	 "wnids": [` + strings.Join(wnids, ",") + `], "resize": "short-side+center-crop"}`
	if err := os.WriteFile(m+".json", []byte(desc), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, c := range []string{"Bag", "n02000005", "ankle_boot"} {
		photos(t, filepath.Join(p("mine"), c), 5, 40, 30, 20+60*i)
	}
	photos(t, p("loose"), 3, 50, 40, 90)

	out, err := stderrOf(t, func() error { return runEval(ctx, []string{"--model", m, "--dataset", p("mine")}) })
	if err != nil {
		t.Fatalf("eval on folders named by classes and wnids: %v", err)
	}
	if !strings.Contains(out, "no normalisation declared") || strings.Contains(out, "no resize declared") {
		t.Errorf("eval's notes:\n%s", out)
	}
	if !strings.Contains(out, "images as read: images of 40×30 → 28×28: shorter side resized to 32") || !strings.Contains(out, "made grey") {
		t.Errorf("eval does not say how the images were converted:\n%s", out)
	}
	if err := runAttribute(ctx, []string{"--model", m, "--dataset", p("mine"), "--method", "gradient", "--target", "label", "--n", "0", "--out", p("mine.npy")}); err != nil {
		t.Fatalf("attribute --target label: %v", err)
	}
	if err := runAttribute(ctx, []string{"--model", m, "--dataset", p("loose"), "--method", "gradient", "--n", "0", "--out", p("loose.npy")}); err != nil {
		t.Fatalf("attribute on a folder of images alone: %v", err)
	}
	if a, err := data.LoadNPY(p("loose.npy")); err != nil || a.Shape[0] != 3 || a.Shape[len(a.Shape)-1] != 28 {
		t.Fatalf("maps of the 3 loose images: %v %v", a, err)
	}
	for name, run := range map[string]func() error{
		"eval": func() error { return runEval(ctx, []string{"--model", m, "--dataset", p("loose")}) },
		"attribute --target label": func() error {
			return runAttribute(ctx, []string{"--model", m, "--dataset", p("loose"), "--target", "label", "--out", p("x.npy")})
		},
	} {
		if err := run(); err == nil || !strings.Contains(err.Error(), "3 images and no class folders: this command needs labels") {
			t.Errorf("%s on a folder of images alone: %v", name, err)
		}
	}
	// The logits need no labels: eval --logits reads the folder as it is,
	// each row's label −1, and claims no accuracy.
	said := captureStdout(t, func() error {
		return runEval(ctx, []string{"--model", m, "--dataset", p("loose"), "--logits", p("loose.csv")})
	})
	rows, err := os.ReadFile(p("loose.csv"))
	if err != nil || strings.Count(string(rows), "\n") != 4 || !strings.Contains(string(rows), "\n0,-1,") || !strings.Contains(said, "3 inputs without labels, so no accuracy") {
		t.Errorf("eval --logits on a folder of images alone: %v; it said %q and wrote:\n%s", err, said, rows)
	}
	spec := "output: run\ndatasets: [{id: loose}]\nmodel: {file: goar-cnn.onnx}\nmethods: [gradient, random]\nprotocols: [{name: deletion, params: {samples: 3}}, PROTOCOL]\nretrain: {epochs: 1}\n"
	for protocol, want := range map[string]string{
		"{name: road, params: {retrain: true}}": "road: ROAD needs labels, and the data has none (a folder of images without class folders): it retrains the model on labelled data",
		"{name: irof, params: {target: label}}": "IROF needs labels",
		"{name: mprt, params: {samples: 2}}":    "",
	} {
		if err := os.WriteFile(p("c.yaml"), []byte(strings.Replace(spec, "PROTOCOL", protocol, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(p("run"))
		err := runCampaign(ctx, []string{p("c.yaml"), "--quiet"})
		if want == "" && err != nil {
			t.Errorf("a campaign of %s on a folder of images alone: %v", protocol, err)
		}
		if want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("a campaign of %s on a folder of images alone: %v, want %q", protocol, err, want)
		}
	}
	if err := os.WriteFile(m+".json", []byte(strings.Replace(desc, `"wnids"`, `"mean": [127], "std": [64], "wnids"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ = stderrOf(t, func() error { return runEval(ctx, []string{"--model", m, "--dataset", p("mine")}) })
	if !strings.Contains(out, "0–255 scale") || !strings.Contains(out, "divided by 255") {
		t.Errorf("0–255 statistics unsaid:\n%s", out)
	}
	photos(t, filepath.Join(p("mine"), "cat"), 1, 30, 30, 0)
	err = runEval(ctx, []string{"--model", m, "--dataset", p("mine")})
	if err == nil || !strings.Contains(err.Error(), `1 of 4 class folders match none of the model's 10 classes: "cat"`) || !strings.Contains(err.Error(), `n02000000 "T-shirt/top"`) {
		t.Errorf("a folder the model does not name: %v", err)
	}
}
