package ui

import (
	"errors"
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/campaign"
	"faithlab/core/data"
	"faithlab/core/model"
)

// trust is what the user has allowed campaigns launched here: the engine
// in Settings, the workbench's own folders (runs, campaigns, the cache),
// the datasets the user opened and what the user's configuration file
// lists (campaign.UserTrust).
func (s *State) trust() (campaign.Trust, error) {
	t, err := campaign.UserTrust()
	if err != nil {
		return t, err
	}
	var engines []string
	if e := s.engine(); e != "" {
		engines = append(engines, e)
	}
	folders := []string{s.cfg.Root, s.cacheDir()}
	// The datasets the user opened here are the user's to read.
	for _, ref := range s.Recent(prefRecentData) {
		if !data.IsID(ref) {
			folders = append(folders, ref)
		}
	}
	if d := s.Data; d != nil && !data.IsID(d.Ref) {
		folders = append(folders, d.Ref)
	}
	return t.With(engines, folders), nil
}

// withConsent calls launch with what the user allows the campaign: at
// once when its file asks for nothing more than the workbench's own
// settings allow, else after a dialog that shows in full each program,
// host, TorchScript model or folder it asks for and the user allows them
// (for this launch). scripts are TorchScript files the user opened by
// hand: allowed, as a model opened by hand is (with its one-time
// warning, modelNotice).
func (s *State) withConsent(c *campaign.Campaign, scripts []string, launch func(campaign.Trust)) {
	t, err := s.trust()
	if err != nil {
		s.status.Error(err)
		return
	}
	t = t.WithScripts(scripts...)
	err = c.Check(t, "")
	var consent *campaign.ConsentError
	switch {
	case errors.As(err, &consent):
	case err != nil:
		s.status.Error(err)
		return
	default:
		launch(t)
		return
	}
	var lines []string
	for _, a := range consent.Asks {
		lines = append(lines, "• "+a.Field+": "+a.Why)
	}
	text := widget.NewLabel(fmt.Sprintf("The campaign %s asks for what only you may allow:\n\n%s\n\nA campaign file is data from whoever wrote it: allow this only if you trust it. Nothing has run yet.",
		c.Spec.Name, strings.Join(lines, "\n")))
	text.Wrapping = fyne.TextWrapWord
	s.confirm("Allow this campaign?", "Allow and launch", container.NewVScroll(text), func() { launch(consent.Allow(t)) })
}

// confirm asks the user to confirm an action in a dialog over the window.
func (s *State) confirm(title, ok string, content fyne.CanvasObject, yes func()) {
	if s.cfg.Window == nil {
		return
	}
	d := dialog.NewCustomConfirm(title, ok, "Cancel", content, func(b bool) {
		if b {
			yes()
		}
	}, s.cfg.Window)
	d.Resize(fyne.NewSize(640, 320))
	d.Show()
}

// modelNotice is what the user should know of a model file when it is
// opened (model.FileNotice), once per file and session; "" for nothing.
func (s *State) modelNotice(path string) string {
	notice := model.FileNotice(path)
	if notice == "" || s.noticed[notice] {
		return ""
	}
	if s.noticed == nil {
		s.noticed = map[string]bool{}
	}
	s.noticed[notice] = true
	return notice
}
