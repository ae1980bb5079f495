// Package ui holds Faithlab's Fyne screens. It never imports
// fyne.io/fyne/v2/app, so every screen can be built and driven in headless
// tests with fyne.io/fyne/v2/test.
//
// Threading: loading, thumbnail decoding and training run on their own
// goroutines with a context.Context; they reach widgets only through fyne.Do,
// and progress is redrawn at most ~30 times a second.
package ui
