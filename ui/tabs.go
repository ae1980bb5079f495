package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
)

// lightTabs is Fyne's AppTabs whose change of tab costs the UI goroutine
// next to nothing. AppTabs refreshes its whole tree at each change:
// every tab's content, widget by widget (its renderer applies the theme
// to each), after which the driver frees the textures of every object
// under it, so that the next frame rasterises every text of the screen
// shown anew; and it hides and shows the contents, which, for a widget,
// refreshes it and frees its textures again. That took 50–150 ms of the
// UI goroutine per switch here, and the window up to 0.4 s to show
// another screen while a campaign took the cores (scripts/tour).
//
// So the tabs hold a slot each, an empty widget that needs its content's
// room, and the contents lie in a layer over the tabs, each in a
// container of its own that follows its slot's place, size and
// visibility (a container hidden or shown is only drawn again): a change
// of tab refreshes the tab bar and the slots alone. A tab's Content is its
// slot. The second value goes into the layout in place of the tabs.
func lightTabs(items ...*container.TabItem) (*container.AppTabs, fyne.CanvasObject) {
	layer := container.NewWithoutLayout()
	slots := make([]*container.TabItem, len(items))
	for i, it := range items {
		holder := container.NewStack(it.Content)
		layer.Add(holder)
		s := &tabSlot{content: it.Content, holder: holder}
		s.ExtendBaseWidget(s)
		if i > 0 {
			holder.Hide() // until the tabs lay their slot out
		}
		slots[i] = container.NewTabItemWithIcon(it.Text, it.Icon, s)
	}
	tabs := container.NewAppTabs(slots...)
	return tabs, container.NewStack(tabs, layer)
}

// tabSlot holds the place of a tab's content in the tabs; the content's
// holder, in the layer over them (which lies where the tabs do), follows
// its place, size and visibility.
type tabSlot struct {
	widget.BaseWidget
	content fyne.CanvasObject
	holder  *fyne.Container
}

func (s *tabSlot) CreateRenderer() fyne.WidgetRenderer { return &slotRenderer{s} }

// MinSize is the content's: the tabs make room for it.
func (s *tabSlot) MinSize() fyne.Size { return s.content.MinSize() }

func (s *tabSlot) Move(p fyne.Position) {
	s.BaseWidget.Move(p)
	s.holder.Move(p)
}

func (s *tabSlot) Resize(size fyne.Size) {
	s.BaseWidget.Resize(size)
	s.holder.Resize(size)
}

func (s *tabSlot) Show() {
	s.BaseWidget.Show()
	s.holder.Show()
}

func (s *tabSlot) Hide() {
	s.BaseWidget.Hide()
	s.holder.Hide()
}

type slotRenderer struct{ s *tabSlot }

func (r *slotRenderer) Layout(fyne.Size)             {}
func (r *slotRenderer) MinSize() fyne.Size           { return r.s.content.MinSize() }
func (r *slotRenderer) Refresh()                     {}
func (r *slotRenderer) Objects() []fyne.CanvasObject { return nil }
func (r *slotRenderer) Destroy()                     {}
