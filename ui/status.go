package ui

import (
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// StatusBar is the window's bottom line: what runs in the background (with
// an indicator and the seconds it has run, redrawn once a second), and the
// last message or error. Messages are cut to one line with an ellipsis, so
// that a long error never widens the window nor moves the screen; the
// whole text shows under the pointer and is one click away.
//
// The indicator does not spin: Fyne redraws the whole window for every
// frame of an animation, and a spinner's sixty frames a second took about
// one and a half of a two-core machine's cores under a software renderer
// (Xvfb, a VM without a GPU) — beside the campaign's sizing, whose speeds
// then measured the window's drawing (estimates five times the run), and
// beside the campaign itself.
type StatusBar struct {
	window   fyne.Window
	activity *widget.Icon
	since    time.Time     // when the oldest work still running began
	tick     chan struct{} // closed to stop redrawing the seconds (nil: no work runs)
	working  *hint         // what runs, cut to its room and whole under the pointer
	message  *hint         // one line, whole under the pointer and behind details
	icon     *widget.Icon
	details  *widget.Button
	action   *widget.Button // what the message offers to do ("Open results")
	running  []string
	full     string
	isError  bool
	isWarn   bool         // a warning: kept, like an error, when the screen changes
	cause    string       // what the error shown came from ("": unknown); Resolved clears it
	fresh    bool         // the message was shown in the UI's current turn (ScreenChanged keeps it)
	later    func(func()) // runs a function after the UI's current turn (fyne.Do; nil: never)
	content  fyne.CanvasObject
}

// The causes of errors that the screens clear once the user fixed them
// (StatusBar.ErrorFrom, Resolved).
const (
	causeCampaign = "the campaign form"
	causeExplain  = "the maps' form"
	causeInspect  = "the sample of Inspect"
	causeTraining = "the training form"
)

func newStatusBar(w fyne.Window) *StatusBar {
	b := &StatusBar{window: w, activity: widget.NewIcon(theme.HistoryIcon()), working: newHint(""), message: newHint("ready"),
		icon: widget.NewIcon(theme.InfoIcon())}
	b.message.SizeName = theme.SizeNameText
	b.working.SizeName = theme.SizeNameText
	b.details = widget.NewButtonWithIcon("", theme.MoreHorizontalIcon(), b.showDetails)
	b.details.Importance = widget.LowImportance
	b.details.Hide()
	b.action = widget.NewButton("", nil)
	b.action.Hide()
	b.activity.Hide()
	left := container.NewHBox(b.activity, container.NewGridWrap(fyne.NewSize(320, b.working.MinSize().Height), b.working))
	b.content = container.NewBorder(nil, nil, left, container.NewHBox(b.action, b.details), container.NewBorder(nil, nil, b.icon, nil, b.message))
	return b
}

// Content is the bar.
func (b *StatusBar) Content() fyne.CanvasObject { return b.content }

// Info shows a message.
func (b *StatusBar) Info(msg string) { b.show(msg, false) }

// Warn shows a warning ("warning: msg"), which stays when the user goes to
// another screen, as an error does, until the next message: what it warns
// of (a model, a campaign, a run) matters on the screens that follow.
func (b *StatusBar) Warn(msg string) {
	b.show("warning: "+msg, false)
	b.isWarn = true
}

// Error shows an error, saying what went wrong (the full text behind the
// details button).
func (b *StatusBar) Error(err error) { b.show(err.Error(), true) }

// ErrorFrom shows an error of cause (a form, a piece of background work),
// which Resolved(cause) clears once the cause is gone: a fixed error does
// not stay red on every screen.
func (b *StatusBar) ErrorFrom(cause string, err error) {
	b.show(err.Error(), true)
	b.cause = cause
}

// Resolved clears the error shown when it came from cause.
func (b *StatusBar) Resolved(cause string) {
	if b.isError && b.cause == cause {
		b.show("ready", false)
	}
}

// Offer puts a button that runs do beside the message shown, until the
// next message replaces it.
func (b *StatusBar) Offer(label string, do func()) {
	b.action.SetText(label)
	b.action.OnTapped = func() {
		b.action.Hide()
		do()
	}
	b.action.Show()
}

// Offered is the label of the button beside the message ("": none; tests).
func (b *StatusBar) Offered() string {
	if !b.action.Visible() {
		return ""
	}
	return b.action.Text
}

// TapOffer taps the button beside the message (tests).
func (b *StatusBar) TapOffer() {
	if b.action.Visible() && b.action.OnTapped != nil {
		b.action.OnTapped()
	}
}

// Working is what the bar says runs ("": nothing; tests).
func (b *StatusBar) Working() string { return b.working.Text }

// Text is the message shown, whole (tests).
func (b *StatusBar) Text() string { return b.full }

// IsError says whether the message shown is an error.
func (b *StatusBar) IsError() bool { return b.isError }

// ScreenChanged clears a plain message when the user goes to another
// screen: it spoke of the screen left ("maps of 7 methods…" under Results).
// An error stays until resolved, a warning until the next message, a
// message with an offer until taken, and one shown by the action that
// changed the screen (a run opened and shown) belongs to the new screen.
func (b *StatusBar) ScreenChanged() {
	if b.isError || b.isWarn || b.action.Visible() || b.fresh {
		return
	}
	b.show("ready", false)
}

func (b *StatusBar) show(msg string, isErr bool) {
	b.full, b.isError, b.isWarn, b.cause = msg, isErr, false, ""
	b.fresh = true
	if b.later != nil {
		b.later(func() { b.fresh = false })
	}
	b.action.Hide()
	b.message.SetText(oneLine(msg))
	if isErr {
		b.icon.SetResource(theme.NewErrorThemedResource(theme.ErrorIcon()))
		b.message.Importance = widget.DangerImportance
	} else {
		b.icon.SetResource(theme.InfoIcon())
		b.message.Importance = widget.MediumImportance
	}
	b.message.Refresh()
	// The whole text is one click away wherever the line cuts it.
	cut := fyne.MeasureText(msg, theme.TextSize(), fyne.TextStyle{}).Width+2*theme.InnerPadding() > b.message.Size().Width
	if isErr || strings.Contains(msg, "\n") || cut {
		b.details.Show()
	} else {
		b.details.Hide()
	}
}

func (b *StatusBar) showDetails() {
	if b.window == nil {
		return
	}
	text := widget.NewLabel(b.full)
	text.Wrapping = fyne.TextWrapWord
	title := "Message"
	if b.isError {
		title = "Error"
	}
	d := dialog.NewCustom(title, "Close", container.NewVScroll(text), b.window)
	d.Resize(fyne.NewSize(640, 320))
	d.Show()
}

// busy adds a piece of background work to what the bar says runs.
func (b *StatusBar) busy(what string) {
	b.running = append(b.running, what)
	b.update()
}

// idle removes it.
func (b *StatusBar) idle(what string) {
	for i, w := range b.running {
		if w == what {
			b.running = append(b.running[:i], b.running[i+1:]...)
			break
		}
	}
	b.update()
}

func (b *StatusBar) update() {
	if len(b.running) == 0 {
		b.working.SetText("")
		b.activity.Hide()
		if b.tick != nil {
			close(b.tick)
			b.tick = nil
		}
		return
	}
	if b.tick == nil {
		b.since = time.Now()
		if b.later != nil {
			stop := make(chan struct{})
			b.tick = stop
			go func() {
				t := time.NewTicker(time.Second)
				defer t.Stop()
				for {
					select {
					case <-t.C:
						b.later(func() {
							if b.tick == stop {
								b.showWorking()
							}
						})
					case <-stop:
						return
					}
				}
			}()
		}
	}
	b.showWorking()
	b.activity.Show()
}

// showWorking says what runs, and for how long: "sizing the campaign… 4 s".
func (b *StatusBar) showWorking() {
	text := b.running[0] + "…"
	if n := len(b.running); n > 1 {
		text = fmt.Sprintf("%s… (+%d)", b.running[n-1], n-1)
	}
	if d := time.Since(b.since); d >= time.Second {
		text += fmt.Sprintf(" %d s", int(d.Seconds()))
	}
	b.working.SetText(text)
}
