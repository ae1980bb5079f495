package ui

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// The workbench's file dialogs are a path field — type or paste a path,
// absolute, ~/…, or relative to the folder shown — with Browse… for Fyne's
// picker beside it. Escape closes them: Fyne's own save dialog keeps the
// focus in its name field, which swallows Escape, and takes a typed path
// as a name inside its folder.

// Kinds of path the dialog asks for.
type pathMode int

const (
	saveFile pathMode = iota // a file to write (asks before replacing one)
	openFile                 // a file that exists
	openDir                  // a folder that exists
	saveDir                  // a folder to write into, made where it does not exist
)

// escEntry is an entry that runs onEscape on Escape: a focused entry gets
// the keys before the window does.
type escEntry struct {
	widget.Entry
	onEscape func()
}

func newEscEntry() *escEntry {
	e := &escEntry{}
	e.ExtendBaseWidget(e)
	return e
}

func (e *escEntry) TypedKey(k *fyne.KeyEvent) {
	if k.Name == fyne.KeyEscape && e.onEscape != nil {
		e.onEscape()
		return
	}
	e.Entry.TypedKey(k)
}

// resolvePath is the path a user typed, made absolute: ~ is the home
// folder, a relative path lies in dir.
func resolvePath(typed, dir string) string {
	p := strings.Trim(strings.TrimSpace(typed), `"'`)
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
	}
	if !filepath.IsAbs(p) && dir != "" {
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p)
}

// checkPath says why p cannot be used as mode asks ("" when it can).
func checkPath(p string, mode pathMode) string {
	st, err := os.Stat(p)
	switch mode {
	case openFile:
		if err != nil || st.IsDir() {
			return p + " is no file"
		}
	case openDir:
		if err != nil || !st.IsDir() {
			return p + " is no folder"
		}
	case saveDir:
		if err == nil && !st.IsDir() {
			return p + " is a file, not a folder"
		}
	case saveFile:
		if err == nil && st.IsDir() {
			return p + " is a folder: add a file name"
		}
		if st, err := os.Stat(filepath.Dir(p)); err != nil || !st.IsDir() {
			return "no folder " + filepath.Dir(p)
		}
	}
	return ""
}

// makeFolder makes the folder p when the folder above it exists — one
// level, so that a typo makes no tree of folders — and says why it cannot
// ("" when it is there). A '$' is refused: variables are not expanded
// here, and a folder named "$HOME" is not what was meant.
func makeFolder(p string) string {
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return ""
	}
	if strings.Contains(p, "$") {
		return fmt.Sprintf("%s does not exist: variables ($…) are not expanded here, type the folder's path", p)
	}
	if st, err := os.Stat(filepath.Dir(p)); err != nil || !st.IsDir() {
		return fmt.Sprintf("%s does not exist, nor does the folder above it (%s)", p, filepath.Dir(p))
	}
	if err := os.Mkdir(p, 0o755); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // "permission denied": the path is said already
		}
		return fmt.Sprintf("%s does not exist and cannot be made: %v", p, err)
	}
	return ""
}

// askPath asks for a path of the kind of file dialog kind (its folder is
// remembered), starting at dir/name, and runs done with it.
func (s *State) askPath(title string, mode pathMode, kind, dir, name string, exts []string, done func(string)) {
	win := s.cfg.Window
	if win == nil {
		return
	}
	field := newEscEntry()
	s.mark("path.entry", field, title)
	start := dir
	if start != "" {
		start += string(filepath.Separator)
	}
	field.SetText(start + name)
	problem := widget.NewLabel("")
	problem.Wrapping = fyne.TextWrapWord
	problem.Importance = widget.DangerImportance
	hint := "a path (absolute, ~/…, or inside " + dir + "), typed or pasted; Browse… to pick one"
	if dir == "" {
		hint = "a path (absolute or ~/…), typed or pasted; Browse… to pick one"
	}
	if mode == saveDir {
		hint += "; a folder that does not exist is made"
	}
	var d *dialog.CustomDialog
	accept := func() {
		p := resolvePath(field.Text, dir)
		if why := checkPath(p, mode); why != "" {
			problem.SetText(why)
			return
		}
		if mode == saveDir {
			if why := makeFolder(p); why != "" {
				problem.SetText(why)
				return
			}
		}
		d.Hide()
		s.usedFolder(kind, p)
		if _, err := os.Stat(p); mode == saveFile && err == nil {
			dialog.ShowConfirm("Replace "+filepath.Base(p)+"?", p+" exists. Replace it?", func(ok bool) {
				if ok {
					done(p)
				}
			}, win)
			return
		}
		done(p)
	}
	browse := widget.NewButtonWithIcon("Browse…", theme.FolderOpenIcon(), func() {
		s.browse(mode, resolvePath(field.Text, dir), exts, func(p string) {
			field.SetText(p)
			if mode != saveFile {
				accept()
			}
		})
	})
	help := widget.NewLabel(hint)
	help.Wrapping = fyne.TextWrapWord
	help.SizeName = theme.SizeNameCaptionText
	content := container.NewVBox(container.NewBorder(nil, nil, nil, browse, field), help, problem)
	verb := map[pathMode]string{saveFile: "Save", openFile: "Open", openDir: "Choose", saveDir: "Choose"}[mode]
	// Its own buttons: a path that will not do keeps the dialog open,
	// saying why.
	d = dialog.NewCustomWithoutButtons(title, content, win)
	ok := widget.NewButton(verb, accept)
	ok.Importance = widget.HighImportance
	d.SetButtons([]fyne.CanvasObject{widget.NewButton("Cancel", d.Hide), ok})
	field.onEscape = d.Hide
	field.OnSubmitted = func(string) { accept() }
	field.OnChanged = func(string) { problem.SetText("") }
	d.Resize(fyne.NewSize(760, 0))
	d.Show()
	win.Canvas().Focus(field)
	// The name selected, ready to be replaced by a typed one.
	field.TypedShortcut(&fyne.ShortcutSelectAll{})
}

// browse shows Fyne's picker for mode at the folder of near (a folder for
// saveFile too: the name stays the typed one) and runs picked with the
// chosen path.
func (s *State) browse(mode pathMode, near string, exts []string, picked func(string)) {
	win := s.cfg.Window
	dir := near
	if st, err := os.Stat(near); err != nil || !st.IsDir() {
		dir = filepath.Dir(near)
	}
	var d interface {
		SetLocation(fyne.ListableURI)
		Resize(fyne.Size)
		Show()
	}
	fail := func(err error) { s.status.Error(fmt.Errorf("browsing: %w", err)) }
	if mode == openFile {
		fd := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
			if err != nil {
				fail(err)
				return
			}
			if r != nil {
				r.Close()
				picked(r.URI().Path())
			}
		}, win)
		if len(exts) > 0 {
			fd.SetFilter(storage.NewExtensionFileFilter(exts))
		}
		d = fd
	} else {
		d = dialog.NewFolderOpen(func(u fyne.ListableURI, err error) {
			if err != nil {
				fail(err)
				return
			}
			if u == nil {
				return
			}
			if mode == saveFile {
				picked(filepath.Join(u.Path(), filepath.Base(near)))
			} else {
				picked(u.Path())
			}
		}, win)
	}
	locate(d, dir)
	d.Resize(fyne.NewSize(900, 600))
	d.Show()
}
