package ui

import (
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/engine/gemm"
)

// folderClasses are the class folders of the pictures photoFolder writes:
// five, as the small ONNX model has logits.
var folderClasses = []string{"circles", "dots", "plain", "stripes", "zigzag"}

// photoFolder writes an image folder of pictures of 100×80 pixels, two
// a class: RGB ones, and the last of each class in grey.
func photoFolder(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "photos")
	for ci, c := range folderClasses {
		if err := os.MkdirAll(filepath.Join(root, c), 0o755); err != nil {
			t.Fatal(err)
		}
		for k := range 2 {
			var img image.Image
			if k == 1 {
				g := image.NewGray(image.Rect(0, 0, 100, 80))
				for i := range g.Pix {
					g.Pix[i] = uint8(i*3 + 50*ci)
				}
				img = g
			} else {
				c := image.NewNRGBA(image.Rect(0, 0, 100, 80))
				for i := range c.Pix {
					c.Pix[i] = uint8(i*5 + 40*ci)
				}
				img = c
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

// smallONNX copies the small ONNX classifier (3×12×12 inputs, 5 logits)
// into a folder of its own, with description (its FILE.json) unless "".
func smallONNX(t *testing.T, description string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "onnx", "small.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "small.onnx")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if description != "" {
		if err := os.WriteFile(path+".json", []byte(description), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// shownText is the text of the labels shown under o (hidden ones left
// out), a line each.
func shownText(o fyne.CanvasObject) string {
	var b strings.Builder
	var walk func(o fyne.CanvasObject)
	root := o // a screen not shown is hidden as a whole: what it shows when shown
	walk = func(o fyne.CanvasObject) {
		if o == nil || (o != root && !o.Visible()) {
			return
		}
		switch v := o.(type) {
		case *widget.Label:
			b.WriteString(v.Text + "\n")
			return
		case *fyne.Container:
			for _, k := range v.Objects {
				walk(k)
			}
		case fyne.Widget:
			for _, k := range test.WidgetRenderer(v).Objects() {
				walk(k)
			}
		}
	}
	walk(o)
	return b.String()
}

// newWorkbenchWithPrefs is a workbench in a test window on root, with
// the test app's preferences (what a restart keeps) and no dataset open.
func newWorkbenchWithPrefs(t *testing.T, a fyne.App, loop uiLoop, root string) *Workbench {
	t.Helper()
	var wb *Workbench
	loop.run(func() {
		wb = NewWorkbench(Config{Kernel: gemm.Gonum{}, Root: root, Prefs: a.Preferences(), Do: loop.do, Worker: testWorker, Speeds: testSpeeds})
		w := test.NewTempWindow(t, wb.Content())
		w.Resize(fyne.NewSize(1280, 800))
	})
	t.Cleanup(wb.State.Wait)
	return wb
}

// The case: pictures of 100×80, some grey, on a model of 3×12×12
// inputs whose description declares torchvision's resize and ImageNet's
// statistics on the 0–255 scale. Data, Explain, Inspect and Evaluate each
// say, in words from core (model.Conversions), every conversion: the
// resize from 100×80 to 12×12 and how, the grey pictures copied to three
// channels, the [0, 1] scale and the normalisation with the statistics
// divided by 255.
func TestEveryScreenSaysHowTheImagesWereConverted(t *testing.T) {
	a := test.NewTempApp(t)
	loop := newUILoop(t)
	names := `["circles", "dots", "plain", "stripes", "zigzag"]`
	path := smallONNX(t, `{"input_shape": [3, 12, 12], "classes": `+names+`, "resize": "short-side+center-crop",
		"mean": [123.675, 116.28, 103.53], "std": [58.395, 57.12, 57.375]}`)
	folder := photoFolder(t)
	wb := newWorkbenchWithPrefs(t, a, loop, t.TempDir())
	loop.run(func() { wb.State.OpenModel(path) })
	loop.waitFor(t, "the model", func() bool { return wb.State.Model != nil })
	loop.run(func() { wb.State.OpenData(folder) })
	loop.waitFor(t, "the folder", func() bool { return wb.State.Data != nil })
	want := []string{
		"100×80 → 12×12", "shorter side resized to 14", "centre 12×12 cropped", // the resize: from, to, how
		"5 of 10 files in grey copied to R, G and B", // the channels
		"[0, 1]", "mean [0.485, 0.456, 0.406]", "std [0.229, 0.224, 0.225]", "0–255 scale, divided by 255", // the normalisation
	}
	loop.run(func() {
		if got := wb.State.Data.Train.Shape; !slices.Equal(got, []int{3, 12, 12}) {
			t.Fatalf("the folder read as %v, want the model's [3 12 12]", got)
		}
		for _, screen := range []struct {
			name string
			o    fyne.CanvasObject
		}{{"Data", wb.Data.Content()}, {"Explain", wb.Explain.Content()}, {"Inspect", wb.Inspect.Content()}, {"Evaluate", wb.Evaluate.Content()}} {
			text := shownText(screen.o)
			for _, w := range want {
				if !strings.Contains(text, w) {
					t.Errorf("%s does not say %q of the conversions; it says:\n%s", screen.name, w, text)
				}
			}
		}
	})
}

// The case: an image folder opened before the model (as at a
// start, where the dataset named loads beside the model chosen last) is
// read at the defaults for a folder, 1×28×28; once the model is open it is
// read again at the model's 3×12×12, and the Library lists it so, not as
// the [1 28 28] of the defaults. After a restart, with the model open,
// the Library lists the recent folder at the model's shape too.
func TestLibraryListsAnImageFolderAtTheShapeItIsReadFor(t *testing.T) {
	a := test.NewTempApp(t)
	loop := newUILoop(t)
	root := t.TempDir()
	path := smallONNX(t, `{"input_shape": [3, 12, 12], "classes": ["circles", "dots", "plain", "stripes", "zigzag"]}`)
	folder := photoFolder(t)
	rowOf := func(wb *Workbench, ref string) string {
		l := wb.Library
		return l.dsInfo[l.datasetKey(ref)]
	}
	wb := newWorkbenchWithPrefs(t, a, loop, root)
	loop.run(func() { wb.State.OpenData(folder) })
	loop.waitFor(t, "the folder", func() bool { return wb.State.Data != nil })
	loop.run(func() { wb.State.OpenModel(path) })
	loop.waitFor(t, "the folder read again for the model", func() bool {
		return wb.State.Model != nil && slices.Equal(wb.State.Data.Train.Shape, []int{3, 12, 12})
	})
	loop.waitFor(t, "the Library's row of the folder", func() bool { return strings.Contains(rowOf(wb, folder), "[3 12 12]") })

	// A restart: the same preferences, the model opened first as the
	// app's start does, the folder listed from the recent datasets.
	wb2 := newWorkbenchWithPrefs(t, a, loop, root)
	loop.run(func() { wb2.State.OpenModel(path) })
	loop.waitFor(t, "the model after the restart", func() bool { return wb2.State.Model != nil })
	var row string
	loop.waitFor(t, "the Library's row of the folder after the restart", func() bool {
		row = rowOf(wb2, folder)
		return row != ""
	})
	if !strings.Contains(row, "of shape [3 12 12]") || strings.Contains(row, "[1 28 28]") {
		t.Errorf("after a restart the Library lists the folder as %q, want the model's shape [3 12 12]", row)
	}
}
