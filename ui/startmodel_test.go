package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"faithlab/core/data"
	"faithlab/core/engine/gemm"
	"faithlab/core/model"
)

// The app opens the model the user chose last where it takes the dataset
// opened — the shipped one they switched back to, not the one trained
// after it — else the newest trained here that takes it (not the newest
// whatever its shape), else the shipped one; a model named wins. It says
// on the status bar which model it opened and why.
func TestStartModelIsTheOneChosenLast(t *testing.T) {
	app := test.NewTempApp(t)
	root := t.TempDir()
	dir := filepath.Join(root, "models")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	save := func(name, arch string, ds *data.Dataset, age time.Duration) string {
		t.Helper()
		m, err := model.New(arch, ds, gemm.Gonum{}, 1)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := m.Save(path); err != nil {
			t.Fatal(err)
		}
		when := time.Now().Add(-age)
		if err := os.Chtimes(path, when, when); err != nil {
			t.Fatal(err)
		}
		return path
	}
	gmm, _, err := data.Open("gmm", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fmnist := &data.Dataset{Shape: []int{1, 28, 28}, Classes: data.FashionMNISTClasses()}
	shippedBytes, err := os.ReadFile(save("shipped-src.flm", "goar-cnn", fmnist, 0))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "shipped-src.flm"))
	shipped := filepath.Join(dir, "shipped.flm")
	older := save("older.flm", "goar-cnn", fmnist, 3*time.Hour)
	cnn := save("cnn.flm", "goar-cnn", fmnist, 2*time.Hour)
	mlp := save("mlp.flm", "mlp", gmm, time.Hour)
	fits := model.FitsDataset // the app's own
	prefs := app.Preferences()
	cfg := Config{Root: root, Prefs: prefs}
	for _, c := range []struct {
		dataset, named string
		recent         []string
		want, why      string
	}{
		{"fashion-mnist", "", nil, cnn, "the newest trained here"},
		{"gmm", "", nil, mlp, "the newest trained here"},
		{"breast-cancer", "", nil, shipped, "the shipped model"},
		{"gmm", cnn, nil, cnn, "named"},
		// Trained cnn, then switched back to older: older is opened.
		{"fashion-mnist", "", []string{older, cnn}, older, "the one chosen last"},
		// The one chosen last does not take gmm: the newest that does.
		{"gmm", "", []string{older, cnn}, mlp, "the newest trained here"},
		{"fashion-mnist", "", []string{shipped, cnn}, shipped, "the one chosen last"},
	} {
		prefs.SetStringList(prefRecentModels, c.recent)
		got, why, err := StartModel(cfg, c.named, fits(c.dataset), "shipped.flm", shippedBytes)
		if err != nil || got != c.want || !strings.HasPrefix(why, c.why) {
			t.Errorf("on %s (named %q, recent %v): %s (%s), %v; want %s (%s)", c.dataset, c.named, c.recent, filepath.Base(got), why, err, filepath.Base(c.want), c.why)
		}
	}
	if _, err := os.Stat(shipped); err != nil {
		t.Errorf("the shipped model was not written: %v", err)
	}

	// At start, the status bar says which model is under explanation and why.
	loop := newUILoop(t)
	prefs.SetStringList(prefRecentModels, []string{older, cnn})
	var wb *Workbench
	loop.run(func() {
		wb = NewWorkbench(Config{Kernel: gemm.Gonum{}, Root: root, Prefs: prefs, Do: loop.do, Worker: testWorker})
		w := test.NewTempWindow(t, wb.Content())
		w.Resize(fyne.NewSize(1280, 800))
		wb.OpenFirstModel("", func() func(model.Header) bool { return fits("fashion-mnist") }, "shipped.flm", shippedBytes)
		wb.State.OpenData("gmm") // any dataset: its own message comes first
	})
	t.Cleanup(wb.State.Wait)
	loop.waitFor(t, "the model and the data", func() bool { return wb.State.Model != nil && wb.State.Data != nil })
	wb.State.Wait()
	loop.run(func() {
		if wb.State.ModelPath != older {
			t.Errorf("opened %s, want older.flm", wb.State.ModelPath)
		}
		if st := wb.Status().Text(); !strings.Contains(st, "older.flm") || !strings.Contains(st, "the one chosen last") {
			t.Errorf("status at start %q", st)
		}
	})
}

// The case, after a restart: the model chosen last, an ONNX
// classifier of 3×12×12 inputs, is opened again for the folder of
// 100×80 photos it was used on, not passed over for the shipped model
// because the folder, described at the defaults for a folder, seemed to
// hold 1×28×28 images (and because only a Faithlab file's header was read).
func TestTheONNXModelChosenLastOpensAgainForAFolderOfPhotos(t *testing.T) {
	app := test.NewTempApp(t)
	root := t.TempDir()
	path := smallONNX(t, `{"input_shape": [3, 12, 12], "classes": ["circles", "dots", "plain", "stripes", "zigzag"]}`)
	folder := photoFolder(t)
	prefs := app.Preferences()
	prefs.SetStringList(prefRecentModels, []string{path})
	got, why, err := StartModel(Config{Root: root, Prefs: prefs}, "", model.FitsDataset(folder), "shipped.flm", []byte("not read"))
	if err != nil || got != path || why != "the one chosen last" {
		t.Errorf("at start on the photos: %s (%s), %v; want %s, the one chosen last", got, why, err, path)
	}
	if model.FitsDataset(folder)(model.Header{InputShape: []int{1, 28, 28}, Classes: data.FashionMNISTClasses()}) {
		t.Error("a model of 10 classes fits a folder of 5")
	}
}
