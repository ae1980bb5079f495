package report

import (
	"strings"

	"golang.org/x/text/encoding/charmap"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgpdf"
)

// pdfText is a PDF canvas that writes text in the code page its fonts are
// set in (Windows-1252): vgpdf passes UTF-8 through, which turns "—" into
// "â€"" in every exported PDF. Characters the code page lacks are worded
// (pdfWords) or replaced by their nearest ASCII.
type pdfText struct{ *vgpdf.Canvas }

// pdfWords are the figures' characters outside Windows-1252.
var pdfWords = strings.NewReplacer("↑ better", "higher is better", "↓ better", "lower is better", "↑", "^", "↓", "v",
	"−", "-", "≤", "<=", "≥", ">=", "≈", "~", "⁻", "-")

// FillString implements vg.Canvas.
func (c pdfText) FillString(f font.Face, pt vg.Point, s string) {
	c.Canvas.FillString(f, pt, cp1252(s))
}

// cp1252 encodes s in Windows-1252, as bytes in a Go string (what the PDF
// library writes as they are).
func cp1252(s string) string {
	s = pdfWords.Replace(s)
	enc := charmap.Windows1252.NewEncoder()
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 {
			b.WriteRune(r)
			continue
		}
		out, err := enc.String(string(r))
		if err != nil {
			out = "?"
		}
		b.WriteString(out)
	}
	return b.String()
}
