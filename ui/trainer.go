package ui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/engine/gemm"
	"faithlab/core/engine/native"
	"faithlab/core/model"
	"faithlab/core/train"
)

// Trainer trains a built-in model on the browsed dataset in the background,
// with a live loss and accuracy readout, a progress bar and a cancel button,
// and saves the trained model.
type Trainer struct {
	arch     *widget.Select
	epochs   *widget.Entry
	patience *widget.Entry
	seed     *widget.Entry
	start    *widget.Button
	stop     *widget.Button
	bar      *widget.ProgressBar
	readout  *widget.Label
	history  *widget.Label
	result   *widget.Label
	content  fyne.CanvasObject
	modelDir string
	kern     gemm.Kernel
	do       func(func()) // runs UI updates from other goroutines (fyne.Do)

	ds     *Loaded
	cancel context.CancelFunc
	done   sync.WaitGroup
}

// NewTrainer builds the training screen; models are saved under modelDir.
// Background work reaches the widgets through do (fyne.Do in the app).
func NewTrainer(kern gemm.Kernel, modelDir string, do func(func())) *Trainer {
	t := &Trainer{modelDir: modelDir, kern: kern, do: do,
		arch: widget.NewSelect(native.Architectures(), nil), epochs: widget.NewEntry(), patience: widget.NewEntry(), seed: widget.NewEntry(),
		bar: widget.NewProgressBar(), readout: widget.NewLabel("no dataset loaded"),
		history: widget.NewLabel(""), result: widget.NewLabel("")}
	t.arch.SetSelected("goar-cnn")
	t.epochs.SetText("5")
	t.patience.SetText("5")
	t.seed.SetText("0")
	t.history.TextStyle = fyne.TextStyle{Monospace: true}
	t.result.Wrapping = fyne.TextWrapWord
	t.start = widget.NewButton("Train", t.Start)
	t.start.Importance = widget.HighImportance
	t.stop = widget.NewButton("Cancel", t.Cancel)
	t.stop.Disable()
	t.start.Disable()
	form := widget.NewForm(
		widget.NewFormItem("Architecture", t.arch),
		widget.NewFormItem("Epochs (max)", t.epochs),
		widget.NewFormItem("Early-stopping patience (0: off)", t.patience),
		widget.NewFormItem("Seed", t.seed),
	)
	top := container.NewVBox(form, container.NewHBox(t.start, t.stop), t.bar, t.readout, t.result)
	t.content = container.NewBorder(top, nil, nil, nil, container.NewVScroll(t.history))
	return t
}

// Content is the trainer's screen.
func (t *Trainer) Content() fyne.CanvasObject { return t.content }

// SetDataset makes l the dataset to train on (UI goroutine).
func (t *Trainer) SetDataset(l *Loaded) {
	t.ds = l
	t.readout.SetText(fmt.Sprintf("ready to train on %s (%d samples, %d classes)", l.ID, l.Train.Len(), len(l.Train.Classes)))
	if t.cancel == nil {
		t.start.Enable()
	}
}

// Wait blocks until a running training has finished (tests, screenshots).
func (t *Trainer) Wait() { t.done.Wait() }

// Cancel stops a running training after its current batch.
func (t *Trainer) Cancel() {
	if t.cancel != nil {
		t.cancel()
		t.readout.SetText("cancelling…")
	}
}

// Start launches training in the background (UI goroutine).
func (t *Trainer) Start() {
	if t.ds == nil || t.cancel != nil {
		return
	}
	epochs, err1 := strconv.Atoi(t.epochs.Text)
	seed, err2 := strconv.ParseUint(t.seed.Text, 10, 64)
	patience, err3 := strconv.Atoi(t.patience.Text)
	if err := errors.Join(err1, err2, err3); err != nil || epochs <= 0 || patience < 0 {
		t.result.SetText("epochs must be a positive integer, patience and seed non-negative integers")
		return
	}
	if patience == 0 {
		patience = -1 // train.Config: negative means never stop early
	}
	l, arch := t.ds, t.arch.Selected
	m, err := model.New(arch, l.Train, t.kern, seed)
	if err != nil {
		t.result.SetText("error: " + err.Error())
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	t.start.Disable()
	t.stop.Enable()
	t.bar.SetValue(0)
	t.history.SetText(fmt.Sprintf("%5s %8s %8s %8s %8s %8s\n", "epoch", "loss", "acc", "val_loss", "val_acc", "img/s"))
	t.result.SetText("")
	t.readout.SetText(fmt.Sprintf("training %s on %s with %s…", arch, l.ID, t.kern.Name()))
	cfg := train.Config{Epochs: epochs, Seed: seed, Patience: patience}
	t.done.Add(1)
	go func() {
		defer t.done.Done()
		var last time.Time
		rec, err := train.Train(ctx, m.Net, l.Train, cfg, func(p train.Progress) {
			if !p.EpochDone && time.Since(last) < 33*time.Millisecond {
				return // redraw at most ~30 times a second
			}
			last = time.Now()
			frac := (float64(p.Epoch-1) + float64(p.Batch)/float64(p.Batches)) / float64(p.Epochs)
			line := fmt.Sprintf("epoch %d/%d  batch %d/%d  loss %.4f  accuracy %.4f", p.Epoch, p.Epochs, p.Batch, p.Batches, p.Loss, p.Accuracy)
			var row string
			if p.EpochDone {
				e := p.Last
				vl, va := "-", "-"
				if e.ValLoss != 0 {
					vl, va = fmt.Sprintf("%.4f", e.ValLoss), fmt.Sprintf("%.4f", e.ValAcc)
				}
				row = fmt.Sprintf("%5d %8.4f %8.4f %8s %8s %8.0f\n", e.Epoch, e.Loss, e.Accuracy, vl, va, e.ImagesSec)
			}
			t.do(func() {
				t.bar.SetValue(frac)
				t.readout.SetText(line)
				if row != "" {
					t.history.SetText(t.history.Text + row)
				}
			})
		})
		msg := t.finish(ctx, m, &rec, l, err)
		t.do(func() {
			t.cancel = nil
			t.stop.Disable()
			t.start.Enable()
			if err == nil {
				t.bar.SetValue(1)
			}
			t.result.SetText(msg)
		})
	}()
}

// finish evaluates and saves a trained model and says what happened.
func (t *Trainer) finish(ctx context.Context, m *model.Model, rec *train.Record, l *Loaded, err error) string {
	if errors.Is(err, context.Canceled) {
		return fmt.Sprintf("cancelled after %d epochs; nothing saved", len(rec.History))
	}
	if err != nil {
		return "error: " + err.Error()
	}
	m.Training = rec
	ev, err := train.Evaluate(ctx, m.Net, l.Test, 512)
	if err != nil {
		return "error: " + err.Error()
	}
	if err := os.MkdirAll(t.modelDir, 0o755); err != nil {
		return "error: " + err.Error()
	}
	path := filepath.Join(t.modelDir, fmt.Sprintf("%s-%s-%s.flm", m.Arch, filepath.Base(l.ID), time.Now().Format("20060102-150405")))
	if err := m.Save(path); err != nil {
		return "error: " + err.Error()
	}
	return fmt.Sprintf("test accuracy %.4f after %d epochs (%s, %.1f s); saved %s", ev.Accuracy, len(rec.History), rec.Stopped, rec.Seconds, path)
}

// Configure fills the form (UI goroutine).
func (t *Trainer) Configure(arch string, epochs int, seed uint64) {
	t.arch.SetSelected(arch)
	t.epochs.SetText(strconv.Itoa(epochs))
	t.seed.SetText(strconv.FormatUint(seed, 10))
}
