package data

import (
	"fmt"
	"image"
	"image/color"
	"strings"
)

// Conversion is how an image folder's files became a dataset's samples:
// the sizes and colours the files had, and the side, channels and resize
// they were read with. Open sets it on every split it reads from an image
// folder (Dataset.Conversion; nil for any other format, whose samples are
// the file's values). Its String says all of it in one line, for every
// front end that shows or uses the samples.
type Conversion struct {
	Files             int         // images read
	Sizes             int         // distinct file sizes among them
	Smallest, Largest image.Point // the smallest and largest file by area
	Grey, Colour      int         // files stored in grey, and in colour
	Side, Channels    int         // the samples' side and channels
	Resize            Resize      // how the files were brought to Side
	// Defaulted says that Side and Channels are Open's defaults for a
	// folder (28×28 grey), asked for by no one: no model sized the read.
	Defaulted bool
	seen      map[image.Point]bool
}

// newConversion is a count of no files yet, for samples read as rd says.
func newConversion(rd folderRead) *Conversion {
	return &Conversion{Side: rd.size, Channels: rd.channels, Resize: rd.resize, seen: map[image.Point]bool{}}
}

// add counts one file read as img.
func (c *Conversion) add(img image.Image) {
	sz := img.Bounds().Size()
	if !c.seen[sz] {
		c.seen[sz] = true
		c.Sizes++
	}
	area := func(p image.Point) int { return p.X * p.Y }
	if c.Files == 0 || area(sz) < area(c.Smallest) {
		c.Smallest = sz
	}
	if c.Files == 0 || area(sz) > area(c.Largest) {
		c.Largest = sz
	}
	c.Files++
	if isGreyModel(img.ColorModel()) {
		c.Grey++
	} else {
		c.Colour++
	}
}

// isGreyModel says whether images of colour model m are grey: 8- or
// 16-bit grey, or a palette of grey colours alone.
func isGreyModel(m color.Model) bool {
	switch m {
	case color.GrayModel, color.Gray16Model:
		return true
	}
	p, ok := m.(color.Palette)
	if !ok {
		return false
	}
	for _, c := range p {
		r, g, b, _ := c.RGBA()
		if r != g || g != b {
			return false
		}
	}
	return true
}

// String says what was done to the files, step by step: the resize (from
// what size, to what, how), the channels, and the scale of the values.
func (c *Conversion) String() string {
	if c == nil {
		return ""
	}
	text := strings.Join([]string{c.ResizeText(), c.ChannelsText(), "pixel values scaled to [0, 1]"}, "; ")
	if c.Defaulted {
		text += fmt.Sprintf(" (%d×%d %s: the default for a folder no model sized)", c.Side, c.Side, map[int]string{1: "grey", 3: "RGB"}[c.Channels])
	}
	return text
}

// ResizeText says how the files were brought to the samples' side.
func (c *Conversion) ResizeText() string {
	from := fmt.Sprintf("%d×%d", c.Smallest.X, c.Smallest.Y)
	if c.Sizes > 1 {
		from = fmt.Sprintf("%d sizes, from %d×%d to %d×%d", c.Sizes, c.Smallest.X, c.Smallest.Y, c.Largest.X, c.Largest.Y)
	}
	if c.Sizes == 1 && c.Smallest.X == c.Side && c.Smallest.Y == c.Side && c.Resize.Mode != ResizeShortSideCrop {
		return fmt.Sprintf("images of %s, the samples' size: not resized", from)
	}
	return fmt.Sprintf("images of %s → %d×%d: %s", from, c.Side, c.Side, c.Resize.String(c.Side))
}

// ChannelsText says what was done to the files' colours.
func (c *Conversion) ChannelsText() string {
	var parts []string
	switch {
	case c.Channels == 1 && c.Colour > 0:
		parts = append(parts, fmt.Sprintf("%s in colour made grey (0.299 R + 0.587 G + 0.114 B)", filesText(c.Colour, c.Files)))
	case c.Channels == 3 && c.Grey > 0:
		parts = append(parts, fmt.Sprintf("%s in grey copied to R, G and B", filesText(c.Grey, c.Files)))
	}
	kept := map[int]string{1: "grey", 3: "RGB"}[c.Channels]
	switch {
	case len(parts) == 0:
		return kept + " kept"
	case c.Channels == 1 && c.Grey > 0, c.Channels == 3 && c.Colour > 0:
		return parts[0] + "; the others " + kept + " as stored"
	}
	return parts[0]
}

// filesText counts n of all files: "all 12 files", "3 of 12 files".
func filesText(n, all int) string {
	if n == all {
		if n == 1 {
			return "the file"
		}
		return fmt.Sprintf("all %d files", n)
	}
	return fmt.Sprintf("%d of %d files", n, all)
}
