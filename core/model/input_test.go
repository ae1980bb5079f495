package model

import (
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"faithlab/core/data"
	"faithlab/core/engine/gemm"
)

// imageNetDescription is a TorchScript-style description of a 1000-class
// RGB model at side, with wnids; extra adds fields ("": none).
func imageNetDescription(side int, extra string) string {
	var classes, wnids []string
	for i := range 1000 {
		classes = append(classes, fmt.Sprintf("%q", fmt.Sprintf("class %d", i)))
		wnids = append(wnids, fmt.Sprintf("\"n%08d\"", 1000000+i))
	}
	classes[1] = `"goldfish"`
	return fmt.Sprintf(`{"input_shape": [3, %d, %d], "classes": [%s], "wnids": [%s]%s}`, side, side, strings.Join(classes, ","), strings.Join(wnids, ","), extra)
}

// scriptFixture writes a stand-in TorchScript file (a zip's magic: enough
// to be read as one, not to be run) with the description given.
func scriptFixture(t *testing.T, description string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.pt")
	if err := os.WriteFile(path, []byte("PK\x03\x04 not run by these tests"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".json", []byte(description), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// photoFolder writes root/<class>/<k>.png, n RGB images of w×h each.
func photoFolder(t *testing.T, classes []string, n, w, h int) string {
	t.Helper()
	root := t.TempDir()
	for ci, c := range classes {
		if err := os.MkdirAll(filepath.Join(root, c), 0o755); err != nil {
			t.Fatal(err)
		}
		for k := range n {
			img := image.NewNRGBA(image.Rect(0, 0, w, h))
			for i := range img.Pix {
				img.Pix[i] = uint8(i*7 + 40*ci + k)
			}
			f, err := os.Create(filepath.Join(root, c, fmt.Sprintf("%d.png", k)))
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

// The case: a 1000-class model on a folder of 4 classes named by
// wnids and names opens, with the model's class indices as labels, the
// model's classes, and the images at its side, as its description says.
func TestA1000ClassModelOpensAFolderOf4Classes(t *testing.T) {
	m, err := LoadTorchScript(scriptFixture(t, imageNetDescription(32, `, "resize": "short-side+center-crop", "mean": [123.675, 116.28, 103.53], "std": [58.395, 57.12, 57.375]`)))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Script.Info.Mean; math.Abs(got[0]-0.485) > 1e-9 || math.Abs(m.Script.Info.Std[2]-0.225) > 1e-9 {
		t.Errorf("0–255 statistics used as mean %v, std %v: want ImageNet's on [0, 1]", got, m.Script.Info.Std)
	}
	root := photoFolder(t, []string{"goldfish", "n01000007", "n01000999", "class 500"}, 3, 48, 40)
	tr, te, err := m.Data(root, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(te.Classes) != 1000 || !slices.Equal(te.Shape, []int{3, 32, 32}) {
		t.Fatalf("test part: %d classes, shape %v", len(te.Classes), te.Shape)
	}
	seen := map[int]bool{}
	for _, y := range append(slices.Clone(tr.Y), te.Y...) {
		seen[y] = true
	}
	if len(seen) != 4 || !seen[1] || !seen[7] || !seen[999] || !seen[500] {
		t.Errorf("labels %v: want the model's indices 1, 7, 500 and 999", seen)
	}
}

// Folder names the model does not have are refused with them and the
// model's first classes, not "data has 4 classes, the model 1000".
func TestFoldersTheModelDoesNotNameAreRefusedWithItsClasses(t *testing.T) {
	m, err := LoadTorchScript(scriptFixture(t, imageNetDescription(16, "")))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = m.Data(photoFolder(t, []string{"cat", "dog", "goldfish", "owl"}, 1, 16, 16), data.Options{})
	for _, want := range []string{`3 of 4 class folders match none of the model's 1000 classes: "cat", "dog", "owl"`, `n01000000 "class 0"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v: want it to say %q", err, want)
		}
	}
}

// A folder of images alone opens for a model where the caller explains
// the predicted class (Unlabelled), and is refused otherwise.
func TestAFolderOfImagesAloneOpensUnlabelledForAModel(t *testing.T) {
	m, err := LoadTorchScript(scriptFixture(t, imageNetDescription(16, "")))
	if err != nil {
		t.Fatal(err)
	}
	root := photoFolder(t, []string{"."}, 3, 20, 16)
	if _, _, err := m.Data(root, data.Options{}); err == nil || !strings.Contains(err.Error(), "needs labels") {
		t.Errorf("opened for a command that needs labels: %v", err)
	}
	_, te, err := m.Data(root, data.Options{Unlabelled: true})
	if err != nil || te.Len() != 3 || !te.Unlabelled || len(te.Classes) != 1000 {
		t.Fatalf("unlabelled: %v", err)
	}
}

func TestDescriptionsOfInputAreChecked(t *testing.T) {
	for _, tc := range []struct{ extra, want string }{
		{`, "resize": "crop"`, `resize "crop": want "squash" or "short-side+center-crop"`},
		{`, "resize": "short-side+center-crop", "resize_short": 20`, "want a short side in [32, 4096]"},
		{`, "resize_short": 300`, "takes no short side"},
		{`, "mean": [123.675, 116.28, 103.53], "std": [0.229, 0.224, 0.225]`, "on a 0–255 scale but std"},
		{`, "mean": [300], "std": [50]`, "beyond 255"},
	} {
		_, err := LoadTorchScript(scriptFixture(t, imageNetDescription(32, tc.extra)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.extra, err, tc.want)
		}
	}
	bad := strings.Replace(imageNetDescription(32, ""), `"n01000003"`, `"n0100000x"`, 1)
	if _, err := LoadTorchScript(scriptFixture(t, bad)); err == nil || !strings.Contains(err.Error(), "wnid 3") {
		t.Errorf("a bad wnid: %v", err)
	}
	if _, err := LoadONNX(onnxFixture(t, `{"input_shape": [1, 28, 28], "classes": `+tenClasses+`, "resize": "short-side+center-crop", "wnids": ["n1"]}`), gemm.Gonum{}); err == nil || !strings.Contains(err.Error(), "1 wnids for 10 classes") {
		t.Errorf("ONNX with one wnid: %v", err)
	}
	m, err := LoadONNX(onnxFixture(t, `{"input_shape": [1, 28, 28], "classes": `+tenClasses+`, "resize": "short-side+center-crop", "resize_short": 32}`), gemm.Gonum{})
	if err != nil || m.Input == nil || m.Input.Resize != (data.Resize{Mode: data.ResizeShortSideCrop, Short: 32}) {
		t.Fatalf("ONNX's resize: %v", err)
	}
	if opt, err := m.ImageOptions(data.Options{}); err != nil || opt.Resize.Short != 32 || opt.Classes == nil || len(opt.Classes.Names) != 10 {
		t.Errorf("ImageOptions %+v, %v", opt, err)
	}
}

// What the description leaves to defaults, or Faithlab changes, is said
// once; a description that declares all says nothing.
func TestInputNoticeSaysWhatTheDescriptionLeavesOut(t *testing.T) {
	for _, tc := range []struct {
		path string
		want []string
	}{
		{onnxFixture(t, ""), []string{"has no description", "squashed", "no normalisation"}},
		{scriptFixture(t, imageNetDescription(32, "")), []string{"no resize declared", "squashed to 32×32 (Lanczos, aspect not kept)", `"short-side+center-crop" for torchvision's Resize(37) + CenterCrop(32)`, "no normalisation declared"}},
		{scriptFixture(t, imageNetDescription(32, `, "resize": "squash", "mean": [123.675, 116.28, 103.53], "std": [58.395, 57.12, 57.375]`)), []string{"0–255 scale", "divided by 255 (mean [0.485 0.456 0.406]"}},
		{scriptFixture(t, imageNetDescription(32, `, "resize": "short-side+center-crop", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]`)), nil},
	} {
		n := InputNotice(tc.path)
		if (n == "") != (tc.want == nil) {
			t.Errorf("%s: notice %q", tc.path, n)
		}
		for _, w := range tc.want {
			if !strings.Contains(n, w) {
				t.Errorf("notice %q: want it to say %q", n, w)
			}
		}
	}
}

// The description's parser never panics and refuses what it cannot use.
func FuzzDescription(f *testing.F) {
	for _, p := range []string{"../../testdata/onnx/goar-cnn.onnx.json", "../../testdata/torch/scripted-cnn.pt.json"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(imageNetDescription(8, `, "resize": "short-side+center-crop", "resize_short": 9, "mean": [123.675], "std": [58.395]`)))
	f.Fuzz(func(t *testing.T, b []byte) {
		info, _, err := decodeInfo(b)
		if err != nil {
			return
		}
		if err := info.check(); err != nil {
			t.Fatalf("accepted, then refused: %v", err)
		}
		if len(info.Mean) > 0 && slices.Max(info.Mean) > maxScale01 {
			t.Fatalf("mean %v left on a 0–255 scale", info.Mean)
		}
		json.Marshal(info)
	})
}
