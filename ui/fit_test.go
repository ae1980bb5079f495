package ui

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/protocol"
	"faithlab/core/report"
	"faithlab/core/store"
	"faithlab/resources"
)

// cutTexts lists the texts under root that their cells cut: each label's
// and canvas text's needed width (what its text measures, as its MinSize
// does, line by line) against the width its layout gave it and the part
// of that inside the window (width wide) and inside the nearest scroll
// that does not scroll sideways; a wrapping label against the height it
// needs. Text a user types (entries) scrolls in its field, and help text
// that shows whole under the pointer (newHint) is whole there: neither
// counts.
func cutTexts(root fyne.CanvasObject, width float32) []string {
	var out []string
	pad := theme.InnerPadding()
	measure := func(text string, size float32, style fyne.TextStyle) float32 {
		w := float32(0)
		for _, line := range strings.Split(text, "\n") {
			w = max(w, fyne.MeasureText(line, size, style).Width)
		}
		return w
	}
	var walk func(o fyne.CanvasObject, at fyne.Position, clip float32)
	walk = func(o fyne.CanvasObject, at fyne.Position, clip float32) {
		if o == nil || !o.Visible() {
			return
		}
		pos := at.Add(o.Position())
		have := func() float32 { return min(o.Size().Width, clip-pos.X) }
		report := func(text string, need, got float32) {
			out = append(out, fmt.Sprintf("%q needs %.0f px, has %.0f (at %.0f,%.0f)", text, need, got, pos.X, pos.Y))
		}
		switch v := o.(type) {
		case *entryWidget, *widget.Entry:
			return
		case *hint:
			return // whole under the pointer
		case *widget.Label:
			if v.Text == "" {
				return
			}
			if v.Wrapping != fyne.TextWrapOff {
				if need := v.MinSize().Height; need > v.Size().Height+1 {
					out = append(out, fmt.Sprintf("%q needs %.0f px of height, has %.0f (at %.0f,%.0f)", v.Text, need, v.Size().Height, pos.X, pos.Y))
				}
				if clip-pos.X < v.Size().Width-1 {
					report(v.Text, v.Size().Width, clip-pos.X)
				}
				return
			}
			size := theme.Size(v.SizeName)
			if v.SizeName == "" {
				size = theme.TextSize()
			}
			if need := measure(v.Text, size, v.TextStyle) + 2*pad; need > have()+1 {
				report(v.Text, need, have())
			}
			return
		case *selectWidget:
			text := v.Selected
			if text == "" {
				text = v.PlaceHolder
			}
			// The text, its padding and the drop-down icon.
			need := fyne.MeasureText(text, theme.TextSize(), fyne.TextStyle{}).Width + 2*pad + theme.IconInlineSize() + theme.Padding()
			if need > have()+1 {
				report(text, need, have())
			}
			return
		case *canvas.Text:
			if v.Text == "" {
				return
			}
			need := measure(v.Text, v.TextSize, v.TextStyle)
			got := have()
			if v.Size().Width == 0 {
				got = clip - pos.X // drawn at its own width (a Form's hint): cut only where it leaves its panel
			}
			if need > got+1 {
				report(v.Text, need, got)
			}
			return
		}
		if sc, ok := o.(*container.Scroll); ok {
			if sc.Direction == container.ScrollVerticalOnly || sc.Direction == container.ScrollNone {
				clip = min(clip, pos.X+sc.Size().Width)
			} else {
				clip = float32(math.Inf(1)) // sideways: the user scrolls to the rest
			}
		} else if _, ok := o.(fyne.Scrollable); ok {
			clip = float32(math.Inf(1)) // a table's or a list's: each cell against its own width
		}
		var kids []fyne.CanvasObject
		switch v := o.(type) {
		case *fyne.Container:
			kids = v.Objects
		case fyne.Widget:
			kids = test.WidgetRenderer(v).Objects()
		}
		for _, k := range kids {
			walk(k, pos, clip)
		}
	}
	relayout(root)
	walk(root, fyne.Position{}, width)
	return out
}

// relayout lays out every container and widget under o again, top down,
// as the app's canvas does before it draws a frame (Fyne's test canvas
// does not): a label whose text grew gets the room its layout gives it.
func relayout(o fyne.CanvasObject) {
	switch v := o.(type) {
	case *fyne.Container:
		if v.Layout != nil {
			v.Layout.Layout(v.Objects, v.Size())
		}
		for _, k := range v.Objects {
			relayout(k)
		}
	case fyne.Widget:
		r := test.WidgetRenderer(v)
		r.Layout(v.Size())
		for _, k := range r.Objects() {
			relayout(k)
		}
	}
}

// fitRecords is a run's records on fashion-mnist: four methods (one with
// its parameters in its label) under Deletion, ROAD and ROAR, each with
// per-input values, so that the summary, the report card and the
// diagnostics hold the longest text a real run's do.
func fitRecords() []store.Record {
	var recs []store.Record
	methods := []string{"gradient", "ig", "smoothgrad{samples=5,noise_frac=0.15}", "random"}
	for _, proto := range []struct {
		name, metric string
		better       protocol.Better
		means        []float64
	}{
		{"Deletion", "lerf_minus_morf", protocol.Higher, []float64{0.24, 0.53, 0.40, 0.02}},
		{"ROAD", "lerf_minus_morf", protocol.Higher, []float64{0.30, 0.10, 0.20, 0.01}},
		{"ROAR", "mean_accuracy", protocol.Lower, []float64{0.61, 0.42, 0.50, 0.86}},
	} {
		rng := rand.New(rand.NewPCG(3, 9))
		base := make([]float64, 300)
		for i := range base {
			base[i] = 0.1 * rng.NormFloat64()
		}
		for k, meth := range methods {
			u := make([]float32, len(base))
			var sum float64
			for i := range u {
				v := proto.means[k] + base[i] + 0.02*rng.NormFloat64()
				u[i], sum = float32(v), sum+v
			}
			res := &protocol.Result{Protocol: proto.name, Method: meth, Config: map[string]any{},
				Scalars: []protocol.Scalar{{Name: proto.metric, Value: sum / float64(len(u)), Better: proto.better}},
				Units:   protocol.Units{N: len(u), Names: []string{proto.metric}, Values: [][]float32{u}}}
			recs = append(recs, store.Record{Dataset: "fashion-mnist", Model: "goar-cnn", Method: meth, Protocol: proto.name, Seed: 1, Result: res})
		}
	}
	return recs
}

// No text is cut at the default window of 1280×800, on any screen in the
// states a first day brings it to: each label measures its text against
// its cell (cutTexts), help text shows whole under the pointer.
func TestNoTextCutAt1280By800(t *testing.T) {
	if raceEnabled {
		t.Skip("layout only: the first pass runs it (raceEnabled)")
	}
	// The light and dark themes differ in colours only: the same fonts and
	// sizes, so one walk of the screens measures both.
	light, dark := variantTheme("light"), variantTheme("dark")
	for _, n := range []fyne.ThemeSizeName{theme.SizeNameText, theme.SizeNamePadding, theme.SizeNameInnerPadding, theme.SizeNameInlineIcon, theme.SizeNameLineSpacing, theme.SizeNameSubHeadingText, theme.SizeNameCaptionText} {
		if light.Size(n) != dark.Size(n) {
			t.Errorf("theme size %s: light %g, dark %g", n, light.Size(n), dark.Size(n))
		}
	}
	for _, st := range []fyne.TextStyle{{}, {Bold: true}, {Monospace: true}} {
		if light.Font(st) != dark.Font(st) {
			t.Errorf("the themes' fonts for %+v differ", st)
		}
	}
	wb, loop, _ := newTestWorkbench(t)
	loop.run(func() { fyne.CurrentApp().Settings().SetTheme(theme.DefaultTheme()) }) // the app's fonts
	trainMLP(t, wb, loop, 1)
	wb.State.Wait()
	check := func(where string) {
		t.Helper()
		wb.State.Wait()
		loop.run(func() {
			for _, c := range cutTexts(wb.Content(), 1280) {
				t.Errorf("%s: %s", where, c)
			}
		})
	}
	for _, tab := range []int{TabLibrary, TabData, TabModel} {
		loop.run(func() { wb.Tabs.SelectIndex(tab) })
		check(wb.Tabs.Items[tab].Text)
	}
	loop.run(func() {
		wb.Model.readout.SetText("epoch 10/100, batch 211/211\nloss 0.4567, accuracy 0.8765")
		wb.Library.mdList.Select(0)
	})
	check("Model, training")
	loop.run(func() {
		wb.Tabs.SelectIndex(TabExplain)
		wb.Explain.Select("gradient", "ig", "smoothgrad")
		wb.Explain.Compute()
	})
	loop.waitFor(t, "the maps", func() bool { return len(wb.Explain.results) > 0 })
	check("Explain")
	loop.run(func() { wb.Tabs.SelectIndex(TabEvaluate) })
	loop.waitFor(t, "the estimate", func() bool { return strings.Contains(wb.Evaluate.size.Text, "About ") })
	check("Evaluate")
	recs := fitRecords()
	d := report.Diagnose(recs)
	for _, c := range []string{"accuracy_morf", "accuracy_lerf"} {
		d.TVFits = append(d.TVFits, report.TVDiagnostic{Dataset: "fashion-mnist", Protocol: "ROAD", Curve: c, Fit: &protocol.Fit{R2: 0.61, N: 12, Slope: -0.52, Intercept: 0.93}})
	}
	d.Weak = append(d.Weak, report.Weak{Dataset: "fashion-mnist", Protocol: "ROAR", Curve: "accuracy", Method: "smoothgrad{samples=5,noise_frac=0.15}", Best: 0.12, Chance: 0.1, Base: 0.89})
	var csvText bytes.Buffer
	if err := report.WriteCSV(&csvText, "222c898df796", recs, d.Confidence); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&csvText).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	figs, err := report.Figures(recs, d.Confidence)
	if err != nil || len(figs) == 0 {
		t.Fatalf("%d figures: %v", len(figs), err)
	}
	loop.run(func() {
		wb.Tabs.SelectIndex(TabResults)
		r := wb.Results
		r.header, r.all = rows[0], rows[1:]
		r.refilter()
		r.showAnalysis(recs, d, report.Left{})
		r.figs = figs
		r.listFigures()
	})
	for _, sub := range []int{tabTrust, tabTable, tabReportCard, tabDiagnostics} {
		loop.run(func() { wb.Results.tabs.SelectIndex(sub) })
		check("Results, " + wb.Results.tabs.Items[sub].Text)
	}
	loop.run(func() { wb.Tabs.SelectIndex(TabInspect) })
	loop.waitFor(t, "the sample's panels", func() bool { return len(wb.Inspect.panels.Objects) > 0 })
	check("Inspect")
	loop.run(func() { wb.Tabs.SelectIndex(TabSettings) })
	check("Settings")
	// Fashion-MNIST under the shipped model: the class names of images.
	shipped := filepath.Join(t.TempDir(), resources.ModelName)
	if err := os.WriteFile(shipped, resources.Model(), 0o644); err != nil {
		t.Fatal(err)
	}
	loop.run(func() {
		wb.State.OpenModel(shipped)
		wb.State.OpenData("fashion-mnist")
		wb.Tabs.SelectIndex(TabData)
	})
	loop.waitFor(t, "Fashion-MNIST and its model", func() bool {
		return wb.State.Data.Ref == "fashion-mnist" && wb.State.ModelPath == shipped && wb.State.Predictions("test") != nil
	})
	loop.run(func() { wb.Data.SetFilter("all classes", "misclassified") }) // each caption names the class predicted too
	check("Data, Fashion-MNIST")
	loop.run(func() {
		wb.Tabs.SelectIndex(TabExplain)
		wb.Explain.Select("gradient", "ig", "smoothgrad")
		wb.Explain.Compute()
	})
	loop.waitFor(t, "the maps", func() bool { return len(wb.Explain.results) > 0 && wb.Explain.mapsOf == wb.State.Model })
	check("Explain, Fashion-MNIST")
	loop.run(func() { wb.State.Inspect("test", 12) })
	loop.waitFor(t, "the sample's panels", func() bool { return wb.Inspect.cur == 12 && len(wb.Inspect.panels.Objects) > 3 })
	check("Inspect, Fashion-MNIST")
	loop.run(func() {
		wb.Status().Info("saved /home/someone/.config/fyne/org.faithlab.workbench/campaigns/my-campaign/campaign.yaml — run it headless with: faithlab-cli run /home/someone/.config/fyne/org.faithlab.workbench/campaigns/my-campaign/campaign.yaml")
	})
	check("the status bar")
}
