package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"faithlab/core/data"
	"faithlab/core/engine/gemm"
	"faithlab/core/model"
	"faithlab/resources"
)

// The app opens the newest model trained here that takes the dataset it
// opens, not the newest whatever its shape (an mlp of a table beside
// Fashion-MNIST), else the shipped goar-cnn; a model named wins.
func TestFirstModelFitsTheDatasetOpened(t *testing.T) {
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
	cnn := save("cnn.flm", "goar-cnn", fmnist, 2*time.Hour)
	mlp := save("mlp.flm", "mlp", gmm, time.Hour)
	shipped := filepath.Join(dir, resources.ModelName)
	for _, c := range []struct{ dataset, named, want string }{
		{"fashion-mnist", "", cnn},
		{"gmm", "", mlp},
		{"breast-cancer", "", shipped},
		{"gmm", cnn, cnn},
	} {
		got, err := firstModel(root, c.named, fitsDataset(c.dataset))
		if err != nil || got != c.want {
			t.Errorf("on %s (model named %q): %s, %v; want %s", c.dataset, c.named, filepath.Base(got), err, filepath.Base(c.want))
		}
	}
	os.Remove(cnn)
	if got, _ := firstModel(root, "", fitsDataset("fashion-mnist")); got != shipped {
		t.Errorf("on fashion-mnist with only gmm's mlp trained: %s, want the shipped model", filepath.Base(got))
	}
	if _, err := os.Stat(shipped); err != nil {
		t.Errorf("the shipped model was not written: %v", err)
	}
}
