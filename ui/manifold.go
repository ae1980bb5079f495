package ui

import (
	"context"
	"fmt"
	"image"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/campaign"
	"faithlab/core/diffusion"
	"faithlab/core/job"
)

// manifoldView is Inspect's part for the on-manifold protocols: the sample
// shifted against its map and projected onto the data by the diffusion
// prior, as GOAR retrains on it (a strength slider), and FUD's in-painting
// of the features a removal rate takes away, with a step slider over the
// in-painting's x_t and predicted x̂₀. It needs the dataset's shipped
// prior (Fashion-MNIST's); the work runs in the background.
type manifoldView struct {
	s        *State
	on       *widget.Check
	strength *widget.Slider
	strText  *widget.Label
	panels   *fyne.Container
	step     *widget.Slider
	stepText *widget.Label
	xt, x0   *canvas.Image
	box      *fyne.Container
	prior    diffusion.Prior
	priorRef string
	fud      *campaign.Inpainted
	gen      int
	content  fyne.CanvasObject
}

func newManifoldView(s *State) *manifoldView {
	v := &manifoldView{s: s, strText: widget.NewLabel(""), panels: container.NewGridWithColumns(4), stepText: widget.NewLabel(""),
		step: widget.NewSlider(0, 1), box: container.NewVBox()}
	v.strength = widget.NewSlider(0, 12)
	v.strength.Step = 1
	v.strength.SetValue(4)
	v.strength.OnChanged = func(f float64) { v.strText.SetText(fmt.Sprintf("GOAR strength %g", f)) }
	v.strength.OnChanged(v.strength.Value)
	v.step.Step = 1
	v.step.OnChanged = func(float64) { v.drawStep() }
	v.xt, v.x0 = pixelImage(), pixelImage()
	v.on = widget.NewCheck("GOAR and FUD: project and in-paint with the diffusion prior", nil)
	controls := container.NewBorder(nil, nil, container.NewHBox(v.on, v.strText), nil, v.strength)
	v.content = container.NewVBox(widget.NewSeparator(), controls, v.box)
	return v
}

func pixelImage() *canvas.Image {
	ci := canvas.NewImageFromImage(image.NewRGBA(image.Rect(0, 0, 1, 1)))
	ci.ScaleMode, ci.FillMode = canvas.ImageScalePixels, canvas.ImageFillContain
	ci.SetMinSize(fyne.NewSize(110, 110))
	return ci
}

// update recomputes GOAR's projection and FUD's in-painting of the sample
// Inspect shows (its map, the removal rate), when the view is on.
func (v *manifoldView) update(ex *campaign.Explained, rate float64) {
	v.gen++ // an answer under way is for another sample, or none
	if !v.on.Checked || ex == nil || !v.s.Fits() {
		v.box.Objects = nil
		v.box.Refresh()
		return
	}
	l := v.s.Data
	if l.Tabular() {
		v.message("GOAR and FUD on tabular data run in campaigns (a fitted mixture or the empirical denoiser); here they need an image prior.")
		return
	}
	gen := v.gen
	m := v.s.Model.Copy()
	ds := l.Split(ex.Request.Split)
	i, target, saliency := ex.Request.Offset, ex.Targets[0], ex.Maps.Map(0)
	strength := v.strength.Value
	prior, priorRef := v.prior, v.priorRef
	var goar campaign.Projected
	var fud campaign.Inpainted
	v.s.Go("projecting and in-painting", func(ctx context.Context) error {
		if prior == nil || priorRef != l.Ref {
			p, _, err := job.OpenPrior(l.Ref, "", v.s.cfg.Kernel)
			if err != nil {
				return err
			}
			prior, priorRef = p, l.Ref
		}
		var err error
		if goar, err = campaign.GOARProject(ctx, m, prior, ds, i, saliency, strength, target, 10, 1); err != nil {
			return err
		}
		fud, err = campaign.FUDInpaint(ctx, m, prior, ds, i, saliency, 1-rate, target, 25, false, 1)
		return err
	}, func(err error) {
		if err != nil {
			v.message("no projection: " + oneLine(err.Error()))
			return
		}
		if gen != v.gen {
			return
		}
		v.prior, v.priorRef = prior, priorRef
		v.show(ds.Shape, goar, fud, strength, rate)
	})
}

func (v *manifoldView) message(text string) {
	l := widget.NewLabel(text)
	l.Wrapping = fyne.TextWrapWord
	v.box.Objects = []fyne.CanvasObject{l}
	v.box.Refresh()
}

func (v *manifoldView) show(shape []int, goar campaign.Projected, fud campaign.Inpainted, strength, rate float64) {
	pred := func(s campaign.Scored) string {
		return fmt.Sprintf("→ %s %.2f\np(target) %.2f", v.s.modelClass(s.Predicted), s.Confidence, s.TargetProb)
	}
	v.panels.Objects = []fyne.CanvasObject{
		panel(sampleImage(goar.Shifted.Image, shape), fmt.Sprintf("GOAR shift s=%g", strength), pred(goar.Shifted)),
		panel(sampleImage(goar.Projected.Image, shape), "GOAR projected", pred(goar.Projected)),
		panel(maskImage(fud.Keep, shape[1], shape[2]), "FUD keeps", fmt.Sprintf("top %.0f %% kept (white)\nred: in-painted", 100*(1-rate))),
		panel(sampleImage(fud.Inpainted.Image, shape), "FUD in-painted", pred(fud.Inpainted)),
	}
	v.fud = &fud
	v.step.Max = float64(max(len(fud.Steps)-1, 0))
	v.step.SetValue(v.step.Max)
	// The in-painting's steps beside the four panels, so that both fit
	// the window without scrolling (captions in the caption size).
	v.stepText.Wrapping, v.stepText.SizeName = fyne.TextWrapWord, theme.SizeNameCaptionText
	traj := container.NewVBox(widget.NewLabelWithStyle("FUD's in-painting, step by step", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		container.NewHBox(container.NewVBox(captionLabel("x_t"), v.xt), container.NewVBox(captionLabel("predicted x̂₀"), v.x0)),
		v.step, v.stepText)
	v.box.Objects = []fyne.CanvasObject{container.NewBorder(nil, nil, v.panels, nil, traj)}
	v.box.Refresh()
	v.drawStep()
}

func (v *manifoldView) drawStep() {
	f := v.fud
	if f == nil || len(f.Steps) == 0 || v.s.Data == nil {
		return
	}
	k := min(int(v.step.Value), len(f.Steps)-1)
	st := f.Steps[k]
	shape := v.s.Data.Train.Shape
	v.xt.Image, v.x0.Image = sampleImage(st.X.Image, shape), sampleImage(st.X0.Image, shape)
	v.xt.Refresh()
	v.x0.Refresh()
	v.stepText.SetText(fmt.Sprintf("step %d of %d (t = %d): the model on x̂₀ → %s %.2f, p(target) %.2f", k+1, len(f.Steps), st.T,
		v.s.modelClass(st.X0.Predicted), st.X0.Confidence, st.X0.TargetProb))
}
