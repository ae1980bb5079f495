package ui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"faithlab/core/model"
)

// StartModel chooses the model the workbench opens at start and says why:
// the one named (-model), else the one the user chose last — opened,
// trained, or switched back to; Prefs keep the recent models — where it
// still exists and takes the dataset opened (fits), else the newest
// trained here that takes it, else the shipped model, written into the
// models folder on the first start (shippedName, shipped) so that it has
// a file like any other. A model trained last never silently replaces one
// the user switched back to.
func StartModel(cfg Config, named string, fits func(model.Header) bool, shippedName string, shipped []byte) (path, why string, err error) {
	if named != "" {
		return named, "named on the command line", nil
	}
	takes := func(p string) bool {
		h, err := model.HeaderOf(p) // an ONNX or TorchScript file's too, not a Faithlab file's alone
		return err == nil && fits(h)
	}
	dir := cfg.dir("models")
	shippedPath := filepath.Join(dir, shippedName)
	if cfg.Prefs != nil {
		for _, p := range cfg.Prefs.StringList(prefRecentModels) {
			if _, err := os.Stat(p); err == nil && takes(p) {
				return p, "the one chosen last", nil
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.flm"))
	var newest string
	var when int64
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil || f == shippedPath || st.ModTime().UnixNano() <= when {
			continue
		}
		if takes(f) {
			newest, when = f, st.ModTime().UnixNano()
		}
	}
	if newest != "" {
		return newest, "the newest trained here for the dataset opened", nil
	}
	if _, err := os.Stat(shippedPath); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", "", err
		}
		if err := os.WriteFile(shippedPath, shipped, 0o644); err != nil {
			return "", "", err
		}
	}
	return shippedPath, "the shipped model", nil
}

// OpenStartModel opens the model StartModel chose and says on the status
// bar which it is and why, so that the model under explanation never
// changes silently between two sessions.
// The dataset's own message, when it opens later, comes first.
func (s *State) OpenStartModel(path, why string) {
	s.openModel(path, func() {
		say := func() {
			s.status.Info(fmt.Sprintf("The model under explanation is %s: %s (Model: open another).", s.modelName(), why))
		}
		if s.Data != nil {
			say()
			return
		}
		said := false
		s.OnData(func() {
			if !said {
				said = true
				say()
			}
		})
	})
}

// OpenFirstModel runs StartModel in the background and opens its
// choice (cmd/faithlab): describing a dataset named by path may mean
// opening it.
func (w *Workbench) OpenFirstModel(named string, fits func() func(model.Header) bool, shippedName string, shipped []byte) {
	var path, why string
	w.State.Go("choosing a model", func(context.Context) error {
		var err error
		path, why, err = StartModel(w.State.cfg, named, fits(), shippedName, shipped)
		return err
	}, func(err error) {
		if err == nil {
			w.State.OpenStartModel(path, why)
		}
	})
}
