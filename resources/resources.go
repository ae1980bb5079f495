// Package resources embeds Faithlab's static assets.
package resources

import (
	_ "embed"

	"fyne.io/fyne/v2"
)

//go:embed icon.png
var icon []byte

// Icon returns the application icon.
func Icon() fyne.Resource { return fyne.NewStaticResource("icon.png", icon) }
