package ui

import (
	"context"
	"fmt"
	"math"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/campaign"
)

// cascadeView is Inspect's part for the model parameter randomisation
// test (Adebayo et al. 2018): the sample's map on the model and after each
// layer is randomised in cascade from the top, side by side, with each
// map's similarity to the first under it. The work runs in the background.
type cascadeView struct {
	s       *State
	on      *widget.Check
	box     *fyne.Container
	gen     int
	content fyne.CanvasObject
}

func newCascadeView(s *State) *cascadeView {
	v := &cascadeView{s: s, box: container.NewVBox()}
	v.on = widget.NewCheck("MPRT: the map as the model's layers are randomised from the top", nil)
	v.content = container.NewVBox(widget.NewSeparator(), v.on, v.box)
	return v
}

// update recomputes the cascade of the sample and method Inspect shows,
// when the view is on.
func (v *cascadeView) update(ex *campaign.Explained) {
	v.gen++
	if !v.on.Checked || ex == nil || !v.s.Fits() {
		v.box.Objects = nil
		v.box.Refresh()
		return
	}
	gen := v.gen
	m, l := v.s.Model.Copy(), v.s.Data
	q := ex.Request
	q.Count, q.Engine = 1, nil
	var steps []campaign.CascadeStep
	v.s.Go("randomising the model's layers", func(ctx context.Context) error {
		var err error
		steps, err = campaign.Cascade(ctx, m, l.Train, l.Test, q)
		return err
	}, func(err error) {
		if gen != v.gen {
			return
		}
		if err != nil {
			l := widget.NewLabel("no cascade: " + oneLine(err.Error()))
			l.Wrapping = fyne.TextWrapWord
			v.box.Objects = []fyne.CanvasObject{l}
			v.box.Refresh()
			return
		}
		shape := l.Split(q.Split).Shape
		H, W := shape[1], shape[2]
		if H == 1 && W == 1 {
			H, W = 1, shape[0]
		}
		panels := container.NewGridWrap(fyne.NewSize(150, 220))
		for _, st := range steps {
			title := st.Random + " random"
			if st.Random == "" {
				title = "trained"
			}
			panels.Add(panel(heatmap(st.Map, H, W, absMax(st.Map)), title, cascadeCaption(st)))
		}
		v.box.Objects = []fyne.CanvasObject{panels}
		v.box.Refresh()
	})
}

// cascadeCaption is what a panel of the cascade says under its map: its
// similarities to the trained model's map, which is their reference. Each
// line fits the 150-pixel panel.
func cascadeCaption(st campaign.CascadeStep) string {
	if st.Random == "" {
		return "the reference of the\nothers' ρ, SSIM, HOG"
	}
	caption := fmt.Sprintf("ρ %.2f", st.Spearman)
	if !math.IsNaN(st.SSIM) {
		caption += fmt.Sprintf(" · SSIM %.2f\nHOG %.2f", st.SSIM, st.HOG)
	}
	return caption
}
