package ui

import (
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
)

// The case: an ONNX model without a description numbers its
// classes; Inspect, like the Data screen, names them by the folder's
// class names ("stripes", not "3"). With a description, every screen
// names them as it does, the folder opened before the model or after.
func TestEveryScreenNamesAnONNXModelsClassesFromItsDescriptionOrTheDataset(t *testing.T) {
	described := []string{"Round", "Spotted", "Blank", "Striped", "Jagged"} // no folder's name: the folders are matched in order
	for _, tc := range []struct {
		name        string
		description string
		dataFirst   bool
		want        []string
	}{
		{"no description", "", false, folderClasses},
		{"no description, the folder opened first", "", true, folderClasses},
		{"a description", `{"input_shape": [3, 12, 12], "classes": ["Round", "Spotted", "Blank", "Striped", "Jagged"]}`, true, described},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := test.NewTempApp(t)
			loop := newUILoop(t)
			path := smallONNX(t, tc.description)
			folder := photoFolder(t)
			wb := newWorkbenchWithPrefs(t, a, loop, t.TempDir())
			open := []func(){func() { wb.State.OpenModel(path) }, func() { wb.State.OpenData(folder) }}
			if tc.dataFirst {
				open[0], open[1] = open[1], open[0]
			}
			loop.run(open[0])
			loop.waitFor(t, "the first to open", func() bool { return wb.State.Model != nil || wb.State.Data != nil })
			loop.run(open[1])
			var failed string
			loop.waitFor(t, "the model's predictions", func() bool {
				if wb.Status().IsError() {
					failed = wb.Status().Text()
					return true
				}
				return wb.State.Model != nil && wb.State.Data != nil && wb.State.Fits() && wb.State.Predictions("test") != nil
			})
			if failed != "" {
				t.Fatal(failed)
			}
			loop.run(func() { wb.State.Inspect("test", 0) })
			loop.waitFor(t, "the sample's panels", func() bool { return len(wb.Inspect.panels.Objects) >= 4 })
			isName := func(s string) bool { return slices.Contains(tc.want, s) }
			loop.run(func() {
				ds := wb.State.Data.Test
				if got := wb.Data.class.Options[1:]; !slices.Equal(got, tc.want) {
					t.Errorf("Data's class filter offers %v, want %v", got, tc.want)
				}
				if got := wb.Data.label(0); !isName(strings.Fields(got)[0]) {
					t.Errorf("Data's caption of a sample is %q, want one of %v", got, tc.want)
				}
				caption := wb.Inspect.caption.Text
				if !strings.Contains(caption, ": "+tc.want[ds.Y[0]]+".") {
					t.Errorf("Inspect's caption %q does not name the sample's class %q", caption, tc.want[ds.Y[0]])
				}
				explaining := strings.SplitN(strings.SplitN(caption, "Explaining ", 2)[1], ";", 2)[0]
				if !isName(explaining) {
					t.Errorf("Inspect explains class %q, want one of %v (caption %q)", explaining, tc.want, caption)
				}
				text := shownText(wb.Inspect.panels)
				predicted := strings.Fields(strings.SplitN(text, "→ ", 2)[1])[0]
				if !isName(predicted) {
					t.Errorf("Inspect's panel says the model predicts %q, want one of %v:\n%s", predicted, tc.want, text)
				}
			})
		})
	}
}
