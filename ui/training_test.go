package ui

import (
	"fmt"
	"image/color"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/train"
)

// A burst of finished epochs is drawn a few times, not once each: only
// the latest state is drawn, and every epoch reaches the chart.
func TestEpochBurstIsDrawnCoalesced(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	v := wb.Model
	feed := &trainFeed{}
	var before int
	loop.run(func() { v.feed, before = feed, v.draws })
	const n = 1000
	for i := 1; i <= n; i++ {
		v.progress(feed, train.Progress{Epoch: i, Epochs: n, Batch: 1, Batches: 1, Loss: 1 / float64(i), Accuracy: 0.5,
			EpochDone: true, Last: &train.Epoch{Epoch: i, Loss: 1 / float64(i), Accuracy: 0.5}})
	}
	wb.State.Wait()
	loop.run(func() {
		if len(v.history) != n {
			t.Errorf("%d epochs on the chart, want %d", len(v.history), n)
		}
		if d := v.draws - before; d > 10 {
			t.Errorf("a burst of %d epochs drawn %d times", n, d)
		}
		if want := fmt.Sprintf("epoch %d/%d", n, n); !regexp.MustCompile("^" + want + ",").MatchString(v.readout.Text) {
			t.Errorf("readout %q, want the last epoch's %q", v.readout.Text, want)
		}
	})
}

// Cancel acts at once, not after the redraws queued before it: on a table
// of 200 rows, whose epochs take a millisecond, the click is handled
// promptly and training stops within a few epochs of it (it once waited
// behind hundreds of charts while training ran on, the epoch counter
// trailing).
func TestCancelStopsTrainingWithinAFewEpochs(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	var csv strings.Builder
	csv.WriteString("f1,f2,f3,f4,f5,f6,label\n")
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		var sum float64
		for j := range 6 {
			x := r.NormFloat64()
			sum += x
			fmt.Fprintf(&csv, "%.4f,", x+float64(j%2))
		}
		csv.WriteString(map[bool]string{true: "yes\n", false: "no\n"}[sum > 3])
	}
	path := filepath.Join(t.TempDir(), "table.csv")
	if err := os.WriteFile(path, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	loop.run(func() { wb.State.OpenData(path) })
	loop.waitFor(t, "the table", func() bool { return wb.State.Data != nil && wb.State.Data.Ref == path })
	loop.waitFor(t, "the architectures", func() bool { return slices.Contains(wb.Model.arch.Options, "mlp") })
	loop.run(func() {
		wb.Tabs.SelectIndex(TabModel) // the chart drawn at its size on the screen
		wb.Model.Configure("mlp", 2000, 1)
		wb.Model.patience.SetText("0")
		wb.Model.batch.SetText("256")
		wb.Model.Start()
	})
	loop.waitFor(t, "some epochs", func() bool { return len(wb.Model.history) >= 5 })
	time.Sleep(2 * time.Second) // as the user waited: redraws pile up meanwhile if they can
	trained, shown := -1, 0
	asked := time.Now()
	loop.run(func() {
		shown = len(wb.Model.history)
		if f := wb.Model.feed; f != nil {
			f.mu.Lock()
			trained = len(wb.Model.history) + len(f.epochs) // the epochs the trainer finished
			f.mu.Unlock()
		}
		wb.Model.Cancel()
	})
	if d := time.Since(asked); d > time.Second {
		t.Errorf("the click on Cancel waited %v", d)
	}
	loop.waitFor(t, "the training to stop", func() bool { return !wb.Model.Training() })
	loop.run(func() {
		m := regexp.MustCompile(`^cancelled after (\d+) epochs`).FindStringSubmatch(wb.Model.readout.Text)
		if m == nil {
			t.Fatalf("readout %q after Cancel", wb.Model.readout.Text)
		}
		done, _ := strconv.Atoi(m[1])
		if done != len(wb.Model.history) || trained >= 0 && done-trained > 3 || done-shown > 30 {
			t.Errorf("cancelled with %d epochs trained, %d on the chart: stopped after %d (chart %d)", trained, shown, done, len(wb.Model.history))
		}
	})
}

// The confusion matrix's counts stand out from their cells on either
// theme: the light theme's diagonal once showed grey counts on saturated
// blue.
func TestConfusionCountsReadOnTheirCells(t *testing.T) {
	if raceEnabled {
		t.Skip("layout only: the first pass runs it (raceEnabled)")
	}
	wb, loop, _ := newTestWorkbench(t)
	contrast := func(a, b color.Color) float64 {
		lum := func(c color.Color) float64 {
			n := color.NRGBAModel.Convert(c).(color.NRGBA)
			return relativeLuminance(float64(n.R)/255, float64(n.G)/255, float64(n.B)/255)
		}
		x, y := lum(a), lum(b)
		return (max(x, y) + 0.05) / (min(x, y) + 0.05)
	}
	loop.run(func() {
		defer fyne.CurrentApp().Settings().SetTheme(test.Theme())
		v := wb.Model
		v.matrix = [][]int{{97, 3, 0}, {10, 60, 30}, {1, 0, 99}}
		for _, variant := range []string{"light", "dark"} {
			fyne.CurrentApp().Settings().SetTheme(variantTheme(variant))
			bg := color.NRGBAModel.Convert(theme.Color(theme.ColorNameBackground)).(color.NRGBA)
			for r := range v.matrix {
				for c := range v.matrix {
					cell := v.confusion.CreateCell()
					v.confusionCell(widget.TableCellID{Row: r, Col: c}, cell)
					text := find(cell, func(o fyne.CanvasObject) bool { t, ok := o.(*canvas.Text); return ok && t.Text != "" }).(*canvas.Text)
					fill := color.NRGBAModel.Convert(find(cell, func(o fyne.CanvasObject) bool { _, ok := o.(*canvas.Rectangle); return ok }).(*canvas.Rectangle).FillColor).(color.NRGBA)
					a := float64(fill.A) / 255
					over := func(x, y uint8) uint8 { return uint8(a*float64(x) + (1-a)*float64(y) + 0.5) }
					shown := color.NRGBA{over(fill.R, bg.R), over(fill.G, bg.G), over(fill.B, bg.B), 255}
					if k := contrast(text.Color, shown); k < 4.5 {
						t.Errorf("%s theme, cell %d,%d: %q in %v on %v, contrast %.2f", variant, r, c, text.Text, text.Color, shown, k)
					}
				}
			}
		}
	})
}
