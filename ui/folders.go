package ui

import (
	"os"
	"path/filepath"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
)

// File dialogs open in the folder last used for their kind of file (a
// dataset, a model, a campaign, a run, an export), else where the work is:
// exports beside the run they export, the rest in the workbench's folder
// for that kind — never in the app's resources.

// Kinds of file dialogs, each with its own remembered folder.
const (
	folderData     = "data"
	folderModel    = "model"
	folderCampaign = "campaign"
	folderRun      = "run"
	folderExport   = "export"
)

// folderKind is the kind of an open dialog for files with these extensions.
func folderKind(exts []string) string {
	if len(exts) == 0 {
		return folderData
	}
	switch exts[0] {
	case ".flm", ".pt":
		return folderModel
	case ".yaml", ".yml":
		return folderCampaign
	}
	return folderData
}

// startFolder is where a dialog of kind opens: the folder last used for
// it, else fallback, else the workbench's own folder for the kind; only a
// folder that exists.
func (s *State) startFolder(kind, fallback string) string {
	var candidates []string
	if p := s.cfg.Prefs; p != nil {
		candidates = append(candidates, p.String("folder."+kind))
	}
	own := map[string]string{folderModel: "models", folderCampaign: "campaigns", folderRun: "runs", folderExport: "runs"}
	candidates = append(candidates, fallback)
	if d, ok := own[kind]; ok && s.cfg.Root != "" {
		candidates = append(candidates, s.cfg.dir(d))
	}
	for _, c := range candidates {
		if st, err := os.Stat(c); c != "" && err == nil && st.IsDir() {
			return c
		}
	}
	return ""
}

// usedFolder remembers the folder of a path chosen in a dialog of kind (a
// folder itself when the dialog picked one).
func (s *State) usedFolder(kind, path string) {
	p := s.cfg.Prefs
	if p == nil || path == "" {
		return
	}
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		path = filepath.Dir(path)
	}
	p.SetString("folder."+kind, path)
}

// locate points a file dialog at a folder ("": as it is).
func locate(d interface{ SetLocation(fyne.ListableURI) }, dir string) {
	if dir == "" {
		return
	}
	if u, err := storage.ListerForURI(storage.NewFileURI(dir)); err == nil {
		d.SetLocation(u)
	}
}
