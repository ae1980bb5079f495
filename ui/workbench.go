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

// NewWorkbench wires the screens together: the trainer trains on what the
// browser has loaded.
func NewWorkbench(kern gemm.Kernel, modelDir string) *Workbench {
	w := &Workbench{Browser: NewBrowser(), Trainer: NewTrainer(kern, modelDir)}
	w.Browser.OnLoad(w.Trainer.SetDataset)
	w.Tabs = container.NewAppTabs(
		container.NewTabItem("Datasets", w.Browser.Content()),
		container.NewTabItem("Train", w.Trainer.Content()),
	)
	return w
}

// Content is the workbench's root object.
func (w *Workbench) Content() fyne.CanvasObject { return w.Tabs }
