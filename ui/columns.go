package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// columns lays out its objects in that many columns, row by row, each
// column as wide as its widest cell and each row as high as its highest:
// a table whose cells are never cut ("accuracy_morf" and "accuracy_lerf"
// cut to "accurac…" could not be told apart). Width beyond its own goes
// to the last column.
type columns int

func (n columns) sizes(objs []fyne.CanvasObject) (widths, heights []float32) {
	widths = make([]float32, int(n))
	for i, o := range objs {
		if !o.Visible() {
			continue
		}
		m := o.MinSize()
		c, r := i%int(n), i/int(n)
		widths[c] = max(widths[c], m.Width)
		for len(heights) <= r {
			heights = append(heights, 0)
		}
		heights[r] = max(heights[r], m.Height)
	}
	return widths, heights
}

func (n columns) MinSize(objs []fyne.CanvasObject) fyne.Size {
	widths, heights := n.sizes(objs)
	var w, h float32
	for _, x := range widths {
		w += x
	}
	for _, y := range heights {
		h += y
	}
	gap := theme.Padding()
	return fyne.NewSize(w+gap*float32(max(len(widths)-1, 0)), h+gap*float32(max(len(heights)-1, 0)))
}

func (n columns) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	widths, heights := n.sizes(objs)
	if extra := size.Width - n.MinSize(objs).Width; extra > 0 && len(widths) > 0 {
		widths[len(widths)-1] += extra
	}
	gap := theme.Padding()
	var y float32
	for r, h := range heights {
		var x float32
		for c, w := range widths {
			if i := r*int(n) + c; i < len(objs) {
				objs[i].Move(fyne.NewPos(x, y))
				objs[i].Resize(fyne.NewSize(w, h))
			}
			x += w + gap
		}
		y += h + gap
	}
}

// textTable is a table of text under a bold header, its columns as wide
// as their text (columns), scrolling sideways where it is wider than its
// panel: every cell whole, and the window no wider.
func textTable(header []string, rows [][]string) fyne.CanvasObject {
	var cells []fyne.CanvasObject
	for _, h := range header {
		cells = append(cells, bold(h))
	}
	for _, row := range rows {
		for _, c := range row {
			cells = append(cells, widget.NewLabel(c))
		}
	}
	return container.NewHScroll(container.New(columns(len(header)), cells...))
}
