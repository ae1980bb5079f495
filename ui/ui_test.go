package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/campaign"
	"faithlab/core/data"
	"faithlab/core/engine/gemm"
	"faithlab/core/job"
	"faithlab/core/model"
	"faithlab/core/store"
)

// TestMain runs a campaign worker (campaign.Serve) or measures a
// campaign's speeds (campaign.ServeSpeeds) when asked to: the
// workbench's campaigns run, and their speeds are measured, in a child
// process, here this test binary.
func TestMain(m *testing.M) {
	if spec := os.Getenv("FAITHLAB_SERVE_SPEC"); spec != "" {
		var trust campaign.Trust
		json.Unmarshal([]byte(os.Getenv("FAITHLAB_SERVE_TRUST")), &trust)
		estimate, _ := strconv.ParseFloat(os.Getenv("FAITHLAB_SERVE_ESTIMATE"), 64)
		if err := campaign.Serve(context.Background(), spec, campaign.Options{Kernel: gemm.Gonum{}, Trust: trust, Estimate: estimate}, os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv("FAITHLAB_SERVE_SPEEDS") != "" {
		if err := campaign.ServeSpeeds(context.Background(), gemm.Gonum{}, os.Stdin, os.Stdout, true); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testWorker runs a campaign in this test binary, as the app runs one in
// itself.
func testWorker(spec string, trust campaign.Trust, estimate float64) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	b, _ := json.Marshal(trust)
	cmd.Env = append(os.Environ(), "FAITHLAB_SERVE_SPEC="+spec, "FAITHLAB_SERVE_TRUST="+string(b), fmt.Sprintf("FAITHLAB_SERVE_ESTIMATE=%g", estimate))
	return cmd
}

// testSpeeds measures a campaign's speeds in this test binary, as the app
// measures them in itself.
func testSpeeds() *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FAITHLAB_SERVE_SPEEDS=1")
	return cmd
}

// uiLoop stands in for the app's main thread: one goroutine runs every UI
// function in order, so widgets are only ever touched from it, as under the
// real driver. (Fyne's test driver runs fyne.Do on the caller's goroutine.)
type uiLoop chan func()

func newUILoop(t *testing.T) uiLoop {
	l := make(uiLoop, 256)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for fn := range l {
			fn()
		}
	}()
	t.Cleanup(func() { close(l); <-done })
	return l
}

// do queues fn (the workbench's dispatcher, as fyne.Do).
func (l uiLoop) do(fn func()) { l <- fn }

// run runs fn on the loop and waits for it.
func (l uiLoop) run(fn func()) {
	done := make(chan struct{})
	l <- func() { fn(); close(done) }
	<-done
}

// waitFor polls cond on the loop until it holds or a deadline passes.
func (l uiLoop) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	l.waitWithin(t, 90*time.Second, what, cond)
}

// waitWithin is waitFor with a deadline of its own, for work that takes
// longer than the screens' usual work.
func (l uiLoop) waitWithin(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		var ok bool
		l.run(func() { ok = cond() })
		if ok {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

// newTestWorkbench is the workbench in a test window on a temporary root,
// with the Gaussian-mixture dataset open.
func newTestWorkbench(t *testing.T) (*Workbench, uiLoop, string) {
	test.NewTempApp(t)
	loop := newUILoop(t)
	root := t.TempDir()
	var wb *Workbench
	loop.run(func() {
		wb = NewWorkbench(Config{Kernel: gemm.Gonum{}, Root: root, Do: loop.do, Worker: testWorker, Speeds: testSpeeds})
		w := test.NewTempWindow(t, wb.Content())
		w.Resize(fyne.NewSize(1280, 800))
		wb.State.OpenData("gmm")
	})
	t.Cleanup(wb.State.Wait) // before the loop closes: background work reports to it
	loop.waitFor(t, "gmm to load", func() bool { return wb.State.Data != nil })
	return wb, loop, root
}

// trainMLP trains an mlp on the open dataset from the Model screen.
func trainMLP(t *testing.T, wb *Workbench, loop uiLoop, epochs int) {
	t.Helper()
	loop.waitFor(t, "the architectures", func() bool { return len(wb.Model.arch.Options) > 0 })
	loop.run(func() {
		if slices.Contains(wb.Model.arch.Options, "goar-cnn") {
			t.Errorf("goar-cnn offered for tabular data: %v", wb.Model.arch.Options)
		}
		wb.Model.Configure("mlp", epochs, 1)
		test.Tap(wb.Model.start)
	})
	loop.waitFor(t, "training", func() bool { return !wb.Model.Training() && wb.State.Model != nil })
}

// The whole workflow, headless: open data, train, pick two methods and
// two protocols, launch, cancel, resume, read the results, export the CSV.
func TestWorkflowOpenTrainLaunchCancelResumeExport(t *testing.T) {
	wb, loop, root := newTestWorkbench(t)
	trainMLP(t, wb, loop, 2)
	loop.run(func() {
		if !strings.Contains(wb.Model.info.Text, "mlp") || len(wb.Model.matrix) != 2 {
			t.Errorf("model screen: %q, confusion %v", wb.Model.info.Text, wb.Model.matrix)
		}
		if len(wb.Model.history) != 2 {
			t.Errorf("chart of %d epochs, want 2", len(wb.Model.history))
		}
		e := wb.Evaluate
		wb.Tabs.SelectIndex(TabEvaluate) // the form is checked and sized while shown
		e.Quick("flow", 600, 120, 1)
		e.methods.Clear()
		e.methods.Set("gradient", nil)
		e.methods.Set("random", nil)
		e.protocols.Clear()
		e.protocols.Set("roar", map[string]any{"rates": []float64{0.3, 0.7}})
		e.protocols.Set("deletion", map[string]any{"samples": 40})
		e.Launch()
	})
	loop.waitFor(t, "a task to finish", func() bool {
		for _, r := range wb.Evaluate.rows {
			if r.state == "done" {
				return true
			}
		}
		return !wb.Evaluate.Running()
	})
	loop.run(func() { wb.Evaluate.Cancel() })
	loop.waitFor(t, "the cancel", func() bool { return !wb.Evaluate.Running() })
	spec := filepath.Join(root, "campaigns", "flow", "campaign.yaml")
	if _, err := os.Stat(spec); err != nil {
		t.Fatalf("the campaign's spec was not saved for the CLI: %v", err)
	}
	loop.waitFor(t, "the size to say what is left", func() bool {
		return strings.Contains(wb.Evaluate.size.Text, ": Resume runs the other ")
	})
	// In the CLI's words, and the task the cancel cut short (if one ran)
	// cancelled by the user: not "stopped", not interrupted.
	if r, err := campaign.Open(filepath.Join(root, "runs", "flow")); err != nil {
		t.Fatal(err)
	} else {
		words := r.Status().Words()
		loop.run(func() {
			if !strings.HasPrefix(wb.Evaluate.size.Text, words+": ") || strings.Contains(words, "interrupted") {
				t.Errorf("the form says %q, the CLI's status %q", wb.Evaluate.size.Text, words)
			}
			for _, row := range wb.Evaluate.rows {
				if row.state != string(r.Status().State(row.key)) {
					t.Errorf("task %s reads %q in the list, %q in the status", row.label, row.state, r.Status().State(row.key))
				}
			}
		})
	}
	loop.run(func() { wb.Evaluate.Launch() }) // resumes
	loop.waitFor(t, "the campaign to end", func() bool { return !wb.Evaluate.Running() })
	wb.State.Wait()
	loop.run(func() { wb.Tabs.SelectIndex(TabEvaluate) }) // back from the results it opened
	loop.waitFor(t, "the size to say all is done", func() bool {
		return strings.HasPrefix(wb.Evaluate.size.Text, "4 tasks done, all of the campaign")
	})
	loop.waitFor(t, "the whole run's results", func() bool {
		return wb.Results.run != nil && len(wb.Results.run.Status().Missing) == 0 && len(wb.Results.Rows()) > 0
	})
	var rows [][]string
	loop.run(func() {
		for _, r := range wb.Evaluate.rows {
			if r.state != "done" {
				t.Errorf("task %s: %s %s", r.label, r.state, r.stage)
			}
		}
		rows = wb.Results.Rows()
		// ROAR's four (method, rate) points make a TV fit (DPI paper).
		// as a table: a row of ROAR's accuracy on gmm under an R² column.
		if d := diagnosticsText(wb.Results.diagTabs); !strings.Contains(d, "gmm | ROAR | accuracy | ") || !strings.Contains(d, "| R² |") {
			t.Errorf("diagnostics tab: %q", d)
		}
		// Wide tables scroll inside their tab: Results fits a 1280-pixel
		// screen (the diagnostics' tables once widened it to 1464).
		if w := wb.Results.content.MinSize().Width; w > 1280 {
			t.Errorf("Results needs %.0f pixels of width", w)
		}
		// The report card: a card per protocol with its verdict and its
		// ranking with intervals.
		var titles []string
		for _, o := range wb.Results.cards.Objects {
			if c, ok := o.(*widget.Card); ok {
				titles = append(titles, c.Title)
			}
		}
		if !slices.Contains(titles, "ROAR on gmm") || !slices.Contains(titles, "Deletion on gmm") {
			t.Errorf("report card titles %q", titles)
		}
		// Its lines wrap in the tab's width (55 % of the window): nothing
		// to scroll sideways for.
		if w := wb.Results.cards.MinSize().Width; w > 0.55*1280 {
			t.Errorf("the report card needs %.0f pixels of width", w)
		}
		// Results opens on the answer: its headline above everything else
		// and the Which method to trust tab selected, with a card per
		// dataset; the tab wraps in its width too.
		if !wb.Results.answer.Visible() || wb.Results.answer.Text == "" || wb.Results.tabs.SelectedIndex() != tabTrust {
			t.Errorf("Results opens on tab %d, answer %q", wb.Results.tabs.SelectedIndex(), wb.Results.answer.Text)
		}
		if len(wb.Results.trust.Objects) != 1 || labelTexts(wb.Results.trust.Objects[0]) == "" || !strings.Contains(labelTexts(wb.Results.trust.Objects[0]), "Which protocols are admitted") {
			t.Errorf("the answer tab: %d objects", len(wb.Results.trust.Objects))
		}
		if w := wb.Results.trust.MinSize().Width; w > 0.55*1280 {
			t.Errorf("the answer needs %.0f pixels of width", w)
		}
	})
	seen := map[string]bool{}
	for _, r := range rows {
		seen[r[3]+"/"+r[5]] = true // method / protocol
	}
	for _, want := range []string{"gradient/ROAR", "gradient/Deletion", "random/ROAR", "random/Deletion"} {
		if !seen[want] {
			t.Errorf("results table lacks %s rows (has %v)", want, seen)
		}
	}
	out := filepath.Join(t.TempDir(), "export.csv")
	if err := wb.Results.WriteCSV(out); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	want, _ := os.ReadFile(filepath.Join(root, "runs", "flow", "results.csv"))
	if len(got) == 0 || string(got) != string(want) {
		t.Errorf("exported CSV (%d bytes) differs from the run's results.csv (%d bytes)", len(got), len(want))
	}
	if lines := strings.Count(string(got), "\n"); lines != len(rows)+1 {
		t.Errorf("CSV of %d lines for a table of %d rows", lines, len(rows))
	}
	// Compared with itself, the run differs nowhere; sorting by value
	// orders the rows; a filter keeps only the rows that match.
	loop.run(func() { wb.Results.compare.SetSelected(filepath.Join(root, "runs", "flow")) })
	loop.waitFor(t, "the comparison", func() bool { return wb.Results.other != nil })
	loop.run(func() {
		for _, r := range wb.Results.Rows() {
			if d := r[len(r)-1]; d != "0" {
				t.Fatalf("a run compared with itself differs by %s in %v", d, r)
			}
		}
		wb.Results.diffOnly.SetChecked(true)
		if n := len(wb.Results.Rows()); n != 0 {
			t.Errorf("differences only: %d rows of a run compared with itself", n)
		}
		wb.Results.diffOnly.SetChecked(false)
		wb.Results.compare.SetSelected("(none)")
		wb.Results.filter.SetText("mlp") // only in the model column, which the table does not show
		if n := len(wb.Results.Rows()); n != 0 {
			t.Errorf("filter mlp kept %d rows by a column not shown", n)
		}
		wb.Results.filter.SetText("random roar")
		for _, r := range wb.Results.Rows() {
			if r[3] != "random" || r[5] != "ROAR" {
				t.Fatalf("filter random roar kept %v", r)
			}
		}
		col := slices.Index(wb.Results.shown(), len(wb.Results.header)-1) // the value
		wb.Results.SortBy(col)
		rows := wb.Results.Rows()
		for i := 1; i < len(rows); i++ {
			a, _ := strconv.ParseFloat(rows[i-1][len(rows[i-1])-1], 64)
			b, _ := strconv.ParseFloat(rows[i][len(rows[i])-1], 64)
			if a > b {
				t.Fatalf("sorted by value, row %d (%g) after %g", i, b, a)
			}
		}
	})
	// A run opened from a folder outside the workbench's stays offered
	// after another run is opened (and so in the next session).
	flow, away := filepath.Join(root, "runs", "flow"), filepath.Join(t.TempDir(), "flow-copy")
	if err := os.CopyFS(away, os.DirFS(flow)); err != nil {
		t.Fatal(err)
	}
	opened := func(dir string) func() bool {
		return func() bool { return wb.Results.run != nil && wb.Results.run.Dir == dir }
	}
	loop.run(func() {
		wb.State.cfg.Prefs = fyne.CurrentApp().Preferences()
		wb.Results.Open(away, false)
	})
	loop.waitFor(t, "the run from elsewhere", opened(away))
	loop.run(func() { wb.Results.Open(flow, false) })
	loop.waitFor(t, "the workbench's run again", opened(flow))
	loop.run(func() {
		if !slices.ContainsFunc(wb.Results.runs.Options, func(o string) bool { return samePlace(o) == samePlace(away) }) {
			t.Errorf("runs offered %v: the one opened from %s is gone", wb.Results.runs.Options, away)
		}
		// The report card's verdict icons take the new theme's colours.
		before := firstIcon(wb.Results.cards)
		wb.Settings.SetTheme("light")
		after := firstIcon(wb.Results.cards)
		if before == nil || after == nil || before.Resource.Name() == after.Resource.Name() {
			t.Errorf("the report card's icon after a theme switch: %v, then %v", before, after)
		}
	})
}

// firstIcon is the first icon in o's tree (nil: none).
func firstIcon(o fyne.CanvasObject) *widget.Icon {
	switch o := o.(type) {
	case *widget.Icon:
		return o
	case *widget.Card:
		return firstIcon(o.Content)
	case *fyne.Container:
		for _, c := range o.Objects {
			if i := firstIcon(c); i != nil {
				return i
			}
		}
	}
	return nil
}

// Maps of two methods for four samples make a gallery of a header and
// four rows; Inspect shows a sample, its map, its mask and the five
// references' versions with the model's predictions.
func TestExplainGalleryAndInspect(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	trainMLP(t, wb, loop, 1)
	loop.run(func() {
		wb.Explain.Select("gradient", "smoothgrad")
		wb.Explain.count.SetText("4")
		wb.Explain.Compute()
	})
	loop.waitFor(t, "the maps", func() bool { return len(wb.Explain.results) == 2 })
	loop.run(func() {
		rows := wb.Explain.gallery.Objects
		if len(rows) != 5 {
			t.Fatalf("gallery of %d rows, want a header and 4 samples", len(rows))
		}
		for i, r := range rows {
			if n := len(r.(*fyne.Container).Objects); n != 3 {
				t.Errorf("gallery row %d has %d cells, want the sample and 2 maps", i, n)
			}
		}
		wb.State.Inspect("test", 3)
	})
	var failed string
	loop.waitFor(t, "the sample's panels", func() bool {
		if wb.Status().IsError() {
			failed = wb.Status().Text()
			return true
		}
		return len(wb.Inspect.panels.Objects) == 8
	})
	if failed != "" {
		t.Fatal(failed)
	}
	loop.run(func() {
		if wb.Inspect.cur != 3 {
			t.Errorf("Inspect shows sample %d, want 3", wb.Inspect.cur)
		}
		// The next sample and another rate at once: the rate's removal
		// must not drop the new sample's map (it once did).
		wb.Inspect.Key(fyne.KeyRight)
		wb.Inspect.SetRate(0.7)
	})
	// GOAR and FUD need an image prior: on tabular data the view says so.
	loop.run(func() { wb.Inspect.manifold.on.SetChecked(true) })
	loop.waitFor(t, "the on-manifold view's message", func() bool {
		objs := wb.Inspect.manifold.box.Objects
		if len(objs) != 1 {
			return false
		}
		l, ok := objs[0].(*widget.Label)
		return ok && strings.Contains(l.Text, "tabular")
	})
	loop.waitFor(t, "the next sample", func() bool {
		return wb.Inspect.cur == 4 && wb.Inspect.explained != nil && wb.Inspect.explained.Request.Offset == 4 &&
			len(wb.Inspect.panels.Objects) == 8 && strings.Contains(wb.Inspect.caption.Text, "Sample 4 ")
	})
	// MPRT's cascade: the trained model's map and one per layer of the
	// MLP randomised from the top (f4, then f3, f2, f1).
	loop.run(func() { wb.Inspect.cascade.on.SetChecked(true) })
	loop.waitFor(t, "the cascade's maps", func() bool {
		objs := wb.Inspect.cascade.box.Objects
		if len(objs) != 1 {
			return false
		}
		g, ok := objs[0].(*fyne.Container)
		return ok && len(g.Objects) == 5
	})
	// Maps computed elsewhere: Inspect shows the sample's own row of the
	// file (row i holds i, i + 0.01, …).
	var n, d int
	loop.run(func() { n, d = wb.State.Data.Test.Len(), wb.State.Data.Test.Dim() })
	rows := make([]float32, n*d)
	for i := range n {
		for j := range d {
			rows[i*d+j] = float32(i) + float32(j)/100
		}
	}
	path := filepath.Join(t.TempDir(), "maps.npy")
	if err := data.SaveNPY(path, []int{n, d}, rows); err != nil {
		t.Fatal(err)
	}
	loop.run(func() {
		wb.Inspect.cascade.on.SetChecked(false)
		wb.Inspect.method.SetSelected("file")
		wb.Inspect.mapsFile.SetText(path)
		wb.Inspect.refresh()
	})
	loop.waitFor(t, "the file's map of sample 4", func() bool {
		ex := wb.Inspect.explained
		return ex != nil && ex.Request.Method == "file" && slices.Equal(ex.Maps.Data, rows[4*d:5*d])
	})
}

// Filters by class and by outcome under the model count what they show.
func TestDataFilters(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	loop.run(func() {
		ds := wb.State.Data.Test
		if len(wb.Data.shown) != ds.Len() {
			t.Errorf("%d samples shown of %d", len(wb.Data.shown), ds.Len())
		}
		wb.Data.SetFilter("plus", allOutcomes)
		if want := ds.ClassCounts()[1]; len(wb.Data.shown) != want {
			t.Errorf("class plus: %d shown, want %d", len(wb.Data.shown), want)
		}
		if !wb.Data.outcome.Disabled() {
			t.Error("outcome filter enabled without a model")
		}
	})
	trainMLP(t, wb, loop, 1)
	loop.waitFor(t, "the predictions", func() bool { return wb.State.Predictions("test") != nil && !wb.Data.outcome.Disabled() })
	loop.run(func() {
		wb.Data.SetFilter(allClasses, correct)
		right := len(wb.Data.shown)
		wb.Data.SetFilter(allClasses, incorrect)
		wrong := len(wb.Data.shown)
		acc := wb.State.Model.Test.Accuracy
		if right+wrong != wb.State.Data.Test.Len() || float64(right)/float64(right+wrong) != acc {
			t.Errorf("%d correct and %d misclassified; the model's test accuracy is %g", right, wrong, acc)
		}
	})
}

// A failure is said in the status bar on one line, and the layout stays:
// a long error does not widen the window.
func TestErrorsShownWithoutChangingTheLayout(t *testing.T) {
	wb, loop, root := newTestWorkbench(t)
	var before fyne.Size
	loop.run(func() {
		before = wb.Content().MinSize()
		wb.State.OpenData(filepath.Join(root, strings.Repeat("very-long-missing-folder-name/", 20), "data.csv"))
	})
	loop.waitFor(t, "the error", func() bool { return wb.Status().IsError() })
	loop.run(func() {
		if after := wb.Content().MinSize(); after.Width > before.Width {
			t.Errorf("an error widened the content from %g to %g", before.Width, after.Width)
		}
		if !strings.Contains(wb.Status().Text(), "data.csv") {
			t.Errorf("status %q does not name the file", wb.Status().Text())
		}
		if wb.State.Data == nil || wb.State.Data.Ref != "gmm" {
			t.Error("a failed open replaced the open dataset")
		}
		wb.Model.epochs.SetText("many")
		wb.Model.Start()
		if !strings.Contains(wb.Status().Text(), "epochs") {
			t.Errorf("bad epochs: status %q", wb.Status().Text())
		}
	})
}

// A trained model is saved in the root's models folder and listed in the
// Library with what it is.
func TestTrainedModelSavedAndListed(t *testing.T) {
	wb, loop, root := newTestWorkbench(t)
	trainMLP(t, wb, loop, 2)
	files, _ := filepath.Glob(filepath.Join(root, "models", "mlp-gmm-*.flm"))
	if len(files) != 1 {
		t.Fatalf("saved models %v, want one", files)
	}
	m, err := model.Load(files[0], gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Source == nil || m.Source.Ref != "gmm" || m.Test == nil || len(m.Training.History) != 2 {
		t.Errorf("saved model records source %+v, test %v, %d epochs", m.Source, m.Test, len(m.Training.History))
	}
	loop.waitFor(t, "the library's description", func() bool {
		return slices.Contains(wb.Library.models, files[0]) && strings.Contains(wb.Library.mdInfo[files[0]], "test accuracy")
	})
}

// Every screen fits a 1280×800 window: no screen's content is wider than
// 1280 or taller than 800 minus the window's chrome, so nothing is cut off.
func TestEveryScreenFits1280By800(t *testing.T) {
	if raceEnabled {
		t.Skip("layout only: the first pass runs it (raceEnabled)")
	}
	wb, loop, _ := newTestWorkbench(t)
	trainMLP(t, wb, loop, 1)
	loop.run(func() {
		fyne.CurrentApp().Settings().SetTheme(theme.DefaultTheme()) // the app's fonts, not the test theme's
		wb.State.OpenData("fashion-mnist")
	})
	loop.waitFor(t, "Fashion-MNIST", func() bool { return wb.State.Data.Ref == "fashion-mnist" })
	loop.run(func() {
		for _, tab := range wb.Tabs.Items {
			if sz := tab.Content.MinSize(); sz.Width > 1280 || sz.Height > 700 {
				t.Errorf("%s needs %g×%g", tab.Text, sz.Width, sz.Height)
			}
		}
		if sz := wb.Content().MinSize(); sz.Width > 1280 || sz.Height > 760 {
			t.Errorf("the window's content needs %g×%g", sz.Width, sz.Height)
		}
	})
}

// A TorchScript classifier opened in the workbench becomes the model of
// the campaign, which then runs on the torch engine.
func TestTorchScriptModelGoesToACampaignOnTheTorchEngine(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	fixture, _ := filepath.Abs(filepath.Join("..", "testdata", "torch", "scripted-cnn.pt"))
	loop.run(func() {
		wb.OpenPath(fixture)
		if wb.Tabs.SelectedIndex() != TabEvaluate {
			t.Errorf("opening a TorchScript file showed screen %d, want Evaluate", wb.Tabs.SelectedIndex())
		}
		s, err := wb.Evaluate.build()
		if err != nil {
			t.Fatal(err)
		}
		if s.Model.File != fixture || s.Engine != "torch" {
			t.Errorf("campaign of model %q on engine %q, want %q on torch", s.Model.File, s.Engine, fixture)
		}
	})
}

// Explain and Inspect offer the methods that explain the open data: on
// the Gaussian mixture (a table whose truth is known) no image-only
// method and v_λ; on breast-cancer (a table) no v_λ either.
func TestMethodsOfferedFitTheData(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	names := func() (explain, inspect []string) {
		for _, l := range wb.Explain.methods.Options {
			name, _, _ := strings.Cut(l, " — ")
			explain = append(explain, name)
		}
		return explain, wb.Inspect.method.Options
	}
	loop.run(func() {
		explain, inspect := names()
		for _, list := range [][]string{explain, inspect} {
			if slices.Contains(list, "gradcam") || slices.Contains(list, "sobel") || !slices.Contains(list, "vlambda") || !slices.Contains(list, "ig") {
				t.Errorf("on gmm: %v", list)
			}
		}
		wb.State.OpenData("breast-cancer")
	})
	loop.waitFor(t, "breast-cancer", func() bool { return wb.State.Data != nil && wb.State.Data.Ref == "breast-cancer" })
	loop.run(func() {
		explain, inspect := names()
		for _, list := range [][]string{explain, inspect} {
			if slices.Contains(list, "vlambda") || slices.Contains(list, "gradcam") || !slices.Contains(list, "gradient") {
				t.Errorf("on breast-cancer: %v", list)
			}
		}
	})
}

// Evaluate offers the architectures that fit the open data, and names a
// model that does not fit it (the open one, or an architecture chosen
// anyway) as the reason the campaign is not ready, before sizing it.
func TestEvaluateNamesAModelThatDoesNotFitTheData(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	loop.waitFor(t, "gmm's architectures", func() bool {
		return !slices.Contains(wb.Evaluate.arch.Options, "goar-cnn") && slices.Contains(wb.Evaluate.arch.Options, wb.Evaluate.arch.Selected)
	})
	trainMLP(t, wb, loop, 1)
	loop.run(func() {
		if _, err := wb.Evaluate.build(); err != nil {
			t.Errorf("the mlp trained on gmm, on gmm: %v", err)
		}
		wb.State.OpenData("breast-cancer")
	})
	loop.waitFor(t, "breast-cancer's architectures", func() bool {
		return wb.State.Data != nil && wb.State.Data.Ref == "breast-cancer"
	})
	loop.run(func() {
		if _, err := wb.Evaluate.build(); err == nil || !strings.Contains(err.Error(), "the open model (mlp") || !strings.Contains(err.Error(), "does not fit breast-cancer") {
			t.Errorf("the mlp trained on gmm, on breast-cancer: %v", err)
		}
		wb.Evaluate.modelKind.SetSelected("train one")
		wb.Evaluate.arch.Selected = "goar-cnn" // as an opened spec may have it: the list offers only what fits
		if _, err := wb.Evaluate.build(); err == nil || !strings.Contains(err.Error(), "goar-cnn does not fit breast-cancer") || !strings.Contains(err.Error(), "choose one of mlp") || strings.Contains(err.Error(), ", goar-cnn") {
			t.Errorf("goar-cnn on breast-cancer: %v", err)
		}
	})
}

// The form's default of 500 test images becomes "all" on a dataset that
// holds fewer (more than a split holds is refused when the campaign runs)
// and 500 again on one that holds more; a cap the data can honour is kept.
func TestEvaluateCapsBecomeAllOnSmallerData(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	loop.waitFor(t, "gmm opened", func() bool { return wb.State.Data != nil })
	loop.run(func() {
		if got := wb.Evaluate.testCap.Text; got != "500" {
			t.Errorf("test cap on gmm (%d test samples): %q, want the default 500", wb.State.Data.Test.Len(), got)
		}
		wb.State.OpenData("breast-cancer")
	})
	loop.waitFor(t, "breast-cancer opened", func() bool { return wb.State.Data.Ref == "breast-cancer" })
	loop.run(func() {
		if n, got := wb.State.Data.Test.Len(), wb.Evaluate.testCap.Text; n >= 500 || got != "" {
			t.Errorf("test cap on breast-cancer (%d test samples): %q, want all", n, got)
		}
		wb.State.OpenData("gmm")
	})
	loop.waitFor(t, "gmm opened again", func() bool { return wb.State.Data.Ref == "gmm" })
	loop.run(func() {
		if got := wb.Evaluate.testCap.Text; got != "500" {
			t.Errorf("back on gmm, the cap breast-cancer made all is %q, want 500 again", got)
		}
		wb.Evaluate.testCap.SetText("7")
		wb.State.OpenData("breast-cancer")
	})
	loop.waitFor(t, "breast-cancer opened again", func() bool { return wb.State.Data.Ref == "breast-cancer" })
	loop.run(func() {
		if got := wb.Evaluate.testCap.Text; got != "7" {
			t.Errorf("a cap of 7 on breast-cancer became %q", got)
		}
	})
}

// A select the driver finds no canvas for (Fyne 2.7 crashed opening its
// list then) drops a tap or an opening key and stays usable; on its
// canvas, a tap opens the list.
func TestSelectWithoutACanvasDropsTheTap(t *testing.T) {
	test.NewTempApp(t)
	s := newSelect([]string{"a", "b"}, nil)
	w := test.NewTempWindow(t, s)
	found := canvasFor
	t.Cleanup(func() { canvasFor = found })
	canvasFor = func(fyne.CanvasObject) fyne.Canvas { return nil }
	test.Tap(s)
	s.TypedKey(&fyne.KeyEvent{Name: fyne.KeySpace})
	if len(w.Canvas().Overlays().List()) != 0 {
		t.Fatal("a list opened without a canvas")
	}
	s.TypedKey(&fyne.KeyEvent{Name: fyne.KeyRight})
	if s.Selected != "a" {
		t.Errorf("right arrow selected %q, want a", s.Selected)
	}
	canvasFor = found
	test.Tap(s)
	if len(w.Canvas().Overlays().List()) != 1 {
		t.Error("a tap on its canvas opened no list")
	}
}

// The same for an entry's right-click menu.
func TestEntryWithoutACanvasOpensNoMenu(t *testing.T) {
	test.NewTempApp(t)
	e := newEntry()
	w := test.NewTempWindow(t, e)
	found := canvasFor
	t.Cleanup(func() { canvasFor = found })
	canvasFor = func(fyne.CanvasObject) fyne.Canvas { return nil }
	test.TapSecondary(e)
	if len(w.Canvas().Overlays().List()) != 0 {
		t.Fatal("a menu opened without a canvas")
	}
	canvasFor = found
	test.TapSecondary(e)
	if len(w.Canvas().Overlays().List()) != 1 {
		t.Error("a right-click on its canvas opened no menu")
	}
}

// A spec that runs a method or a protocol in several settings (the
// synthetic GOAR campaign: v_λ at five λ, GOAR with and without
// projection) opens into the form with every setting, and the form makes
// the same entries again; Clear leaves one setting of each.
func TestSpecWithSeveralSettingsOpensWhole(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	loop.run(func() {
		e := wb.Evaluate
		e.OpenSpec(filepath.Join("..", "testdata", "campaigns", "goar-synthetic.yaml"))
		s, err := e.build()
		if err != nil {
			t.Fatal(err)
		}
		var lambdas []float64
		for _, m := range s.Methods {
			if m.Name != "vlambda" {
				t.Errorf("method %s", m.Name)
			}
			lambdas = append(lambdas, m.Params["lambda"].(float64))
		}
		if !slices.Equal(lambdas, []float64{0, 0.25, 0.5, 0.75, 1}) {
			t.Errorf("v_λ settings %v", lambdas)
		}
		var protos []string
		for _, p := range s.Protocols {
			protos = append(protos, fmt.Sprintf("%s:%v", p.Name, p.Params["no_projection"]))
		}
		if got := strings.Join(protos, " "); got != "roar:<nil> road:<nil> goar:<nil> goar:true" {
			t.Errorf("protocols %s", got)
		}
		e.methods.Clear()
		e.methods.Set("vlambda", map[string]any{"lambda": 0.5})
		if s, _ := e.build(); len(s.Methods) != 1 {
			t.Errorf("after Clear and one Set: %d methods", len(s.Methods))
		}
	})
}

// The campaign's time left counts down between the runner's estimates,
// which come only when a task ends, and a new estimate starts it again.
func TestCountdownBetweenEstimates(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var c countdown
	if got := c.text(t0); got != "" {
		t.Errorf("before any event: %q", got)
	}
	c.set(0, 12, 0, t0)
	if got := c.text(t0); got != "0/12" {
		t.Errorf("before an estimate: %q", got)
	}
	c.set(1, 12, 40*time.Second, t0)
	c.set(1, 12, 40*time.Second, t0.Add(10*time.Second)) // a progress event: the same estimate
	for _, tc := range []struct {
		after time.Duration
		want  string
	}{
		{0, "1/12 · about 40s left"},
		{15 * time.Second, "1/12 · about 25s left"},
		{45 * time.Second, "1/12 · finishing the tasks under way"},
	} {
		if got := c.text(t0.Add(tc.after)); got != tc.want {
			t.Errorf("after %v: %q, want %q", tc.after, got, tc.want)
		}
	}
	c.set(2, 12, 30*time.Second, t0.Add(50*time.Second))
	if got := c.text(t0.Add(55 * time.Second)); got != "2/12 · about 25s left" {
		t.Errorf("a new estimate: %q", got)
	}
}

// The Library's "Reproduce a paper…" runs a reproduction in the
// background into the workbench's folder and shows its report.
func TestReproduceAPaperShowsItsReport(t *testing.T) {
	wb, loop, root := newTestWorkbench(t)
	var r *Reproduce
	loop.run(func() {
		wb.Library.showReproduce()
		r = wb.Library.repro
		if len(r.pick.Options) < 3 || !slices.Contains(r.pick.Options, "goar-synthetic") {
			t.Errorf("reproductions offered: %v", r.pick.Options)
		}
		r.pick.SetSelected("goar-synthetic")
		r.size.SetSelected("smoke")
		if !strings.Contains(r.about.Text, "GOAR Fig. 5") || !strings.Contains(r.report.String(), "No report yet") {
			t.Errorf("before the run: %q, %q", r.about.Text, r.report.String())
		}
		r.Run()
	})
	// A whole reproduction, though at its smoke size: 88–90 s on 2 cores
	// under the race detector.
	loop.waitWithin(t, 5*time.Minute, "the reproduction", func() bool { return !r.running })
	loop.run(func() {
		if md := r.report.String(); !strings.Contains(md, "goar-orders-lambda") || !strings.Contains(md, "holds") {
			t.Errorf("report shown: %.300q", md)
		}
		st := wb.Status()
		if !strings.Contains(st.Text(), "reproduction goar-synthetic at size smoke done") || st.Offered() != "Open report" {
			t.Errorf("status %q offering %q, want it done with Open report", st.Text(), st.Offered())
		}
	})
	if _, err := os.Stat(filepath.Join(root, "reproduce", "goar-synthetic-smoke", "REPORT.md")); err != nil {
		t.Error(err)
	}
}

// REPORT.md's tables become lists Fyne's markdown draws: the header a line
// of its own, each row an item with its cells (an escaped pipe kept).
func TestReportTablesBecomeLists(t *testing.T) {
	md := "## Verdicts\n\n| claim | verdict | ours |\n|---|---|---|\n| a | **holds** | 1 \\| 2 |\n| b | | 3 |\n\nafter"
	want := "## Verdicts\n\n*claim · verdict · ours*\n\n- a · **holds** · 1 | 2\n- b · 3\n\nafter"
	if got := tablesAsLists(md); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// The size line's start counts tasks in the words of the CLI's status —
// failed, cancelled by you, interrupted and to run apart —, and a launch
// runs all but the done ones.
func TestRunNoteNamesEachStateAndCountsTheRestToRun(t *testing.T) {
	status := func(done, failed int, why ...job.State) campaign.Status {
		var st campaign.Status
		st.Why = map[string]job.State{}
		for range done {
			st.Done = append(st.Done, store.Record{})
		}
		for range failed {
			st.Failed = append(st.Failed, store.Record{})
		}
		for i, w := range why {
			key := fmt.Sprint(i)
			st.Missing = append(st.Missing, job.Task{Key: key})
			if w != job.StateToRun {
				st.Why[key] = w
			}
		}
		return st
	}
	for _, c := range []struct {
		st   campaign.Status
		want string
	}{
		{status(4, 0), "4 tasks done, all of the campaign"},
		{status(1, 0), "1 task done, all of the campaign"},
		{status(3, 1, job.StateToRun, job.StateToRun), "3 of 6 tasks done, 1 failed, 2 to run: Resume runs the other 3."},
		{status(2, 0, job.StateCancelled), "2 of 3 tasks done, 1 cancelled by you: Resume runs the other 1."},
		{status(0, 0, job.StateInterrupted, job.StateToRun), "0 of 2 tasks done, 1 interrupted, 1 to run: Launch runs the other 2."},
	} {
		if got := runNote(c.st); !strings.HasPrefix(got, c.want) {
			t.Errorf("runNote = %q, want %q…", got, c.want)
		}
	}
}
