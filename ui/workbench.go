package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"

	"faithlab/core/engine/gemm"
)

// Workbench is the main window's content: one tab per screen.
type Workbench struct {
	Browser *Browser
	Trainer *Trainer
	Tabs    *container.AppTabs
}

// Config is what the workbench needs from its host.
type Config struct {
	Kernel   gemm.Kernel  // GEMM kernel for training
	ModelDir string       // where trained models are saved
	Do       func(func()) // runs UI updates from background goroutines; default fyne.Do
}

// NewWorkbench wires the screens together: the trainer trains on what the
// browser has loaded.
func NewWorkbench(cfg Config) *Workbench {
	if cfg.Do == nil {
		cfg.Do = fyne.Do
	}
	w := &Workbench{Browser: NewBrowser(cfg.Do), Trainer: NewTrainer(cfg.Kernel, cfg.ModelDir, cfg.Do)}
	w.Browser.OnLoad(w.Trainer.SetDataset)
	w.Tabs = container.NewAppTabs(
		container.NewTabItem("Datasets", w.Browser.Content()),
		container.NewTabItem("Train", w.Trainer.Content()),
	)
	return w
}

// Content is the workbench's root object.
func (w *Workbench) Content() fyne.CanvasObject { return w.Tabs }
