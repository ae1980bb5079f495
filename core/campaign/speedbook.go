package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	"faithlab/core/data"
	"faithlab/core/diffusion"
	"faithlab/core/engine/gemm"
	"faithlab/core/job"
)

// SpeedBook keeps the speeds measured on this machine by what they depend
// on — a campaign's by SpeedsKey, a diffusion prior's by its dataset and
// file — so that a front end sizing a campaign after every edit measures
// them once while they stand (Measured.Fresh: measured again when stale,
// and soon when measured beside other work) and every estimate uses the
// same speeds. Safe for concurrent use; the zero value is empty and ready,
// keeps its speeds in memory and measures in this process.
type SpeedBook struct {
	// Measure, when set, measures a campaign's speeds (and its priors')
	// elsewhere than in this process: the workbench measures them in a
	// worker process (MeasureIn), where its campaigns run, away from its
	// window's own threads. Nil: MeasureHere.
	Measure func(ctx context.Context, c *Campaign) (Measured, error)
	// File, when set, keeps the measurements between processes — the
	// CLI's and the workbench's share UserSpeedsPath —, filed by host
	// (a home folder a cluster's nodes share holds each node's own), so
	// that `run` after `run --estimate`, or the workbench after either,
	// estimates from the same speeds without measuring them again while
	// they stand. A file that cannot be read, or an entry no measurement
	// could have written, is measured over.
	File string

	mu     sync.Mutex
	speeds map[string]Measured
	priors map[string]float64
}

// Known says whether the campaign's speeds are measured and still stand.
func (b *SpeedBook) Known(c *Campaign) bool {
	_, ok := b.Measured(c)
	return ok
}

// Measured returns the campaign's speeds as last measured, if they still
// stand (Measured.Fresh).
func (b *SpeedBook) Measured(c *Campaign) (Measured, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m, ok := b.speeds[c.SpeedsKey()]
	if (!ok || !m.Fresh(time.Now())) && b.File != "" {
		if f, found := readSpeeds(b.File)[fileKey(c)]; found && f.Fresh(time.Now()) {
			b.keep(c, f)
			m, ok = f, true
		}
	}
	return m, ok && m.Fresh(time.Now())
}

// Keep files a measurement of the campaign's speeds, its priors' too.
func (b *SpeedBook) Keep(c *Campaign, m Measured) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.keep(c, m)
	if b.File != "" {
		f := readSpeeds(b.File)
		f[fileKey(c)] = m
		writeSpeeds(b.File, f) // a cache: an unwritable one measures again next time
	}
}

// keep is Keep in memory, b.mu held.
func (b *SpeedBook) keep(c *Campaign, m Measured) {
	if b.speeds == nil {
		b.speeds, b.priors = map[string]Measured{}, map[string]float64{}
	}
	b.speeds[c.SpeedsKey()] = m
	for k, v := range m.Priors {
		b.priors[k] = v
	}
}

// measure measures the campaign's speeds (Measure, else here) and keeps
// them.
func (b *SpeedBook) measure(ctx context.Context, c *Campaign, kernel gemm.Kernel) (Measured, error) {
	measure := b.Measure
	if measure == nil {
		measure = func(ctx context.Context, c *Campaign) (Measured, error) { return MeasureHere(ctx, c, kernel) }
	}
	m, err := measure(ctx, c)
	if err != nil {
		return m, err
	}
	b.Keep(c, m)
	return m, nil
}

// errPriorUnmeasured says a prior's speed is not in the book.
var errPriorUnmeasured = errors.New("a prior's speed is not measured")

// Estimate is Campaign.Estimate with the book's speeds, measured where
// the book measures (Measure) when they are missing or no longer stand;
// the size says how they were measured (Size.Measured).
func (b *SpeedBook) Estimate(ctx context.Context, c *Campaign, kernel gemm.Kernel) (Size, error) {
	return b.estimate(ctx, c, kernel, true)
}

// Time is Estimate without the memory plan — for a launch, which plans
// its memory itself: planned here as well, on a copy of the network, the
// plan's garbage doubled a 224×224 run's peak.
func (b *SpeedBook) Time(ctx context.Context, c *Campaign, kernel gemm.Kernel) (Size, error) {
	return b.estimate(ctx, c, kernel, false)
}

// estimate is Estimate, with the memory plan where plan is set. A
// campaign whose run folder holds every task done is counted without
// speeds: nothing is measured for a launch that runs nothing.
func (b *SpeedBook) estimate(ctx context.Context, c *Campaign, kernel gemm.Kernel, plan bool) (Size, error) {
	done, left := c.finished(), false
	for _, t := range c.Tasks(job.Shard{}) {
		left = left || !done[t.Key]
	}
	if !left {
		return c.estimate(ctx, Speeds{}, kernel, plan, nil)
	}
	m, ok := b.Measured(c)
	for try := 0; ; try++ {
		if !ok {
			var err error
			if m, err = b.measure(ctx, c, kernel); err != nil {
				return Size{}, err
			}
		}
		z, err := c.estimate(ctx, m.Speeds, kernel, plan, func(_ context.Context, key string, _ diffusion.Prior) (float64, error) {
			b.mu.Lock()
			defer b.mu.Unlock()
			v, ok := b.priors[key]
			if !ok {
				return 0, errPriorUnmeasured
			}
			return v, nil
		})
		if errors.Is(err, errPriorUnmeasured) && try == 0 {
			ok = false // the campaign's priors are measured with its speeds
			continue
		}
		z.Measured = m
		return z, err
	}
}

// UserSpeedsPath is where the CLI and the workbench keep the speeds they
// measure (SpeedBook.File): $XDG_CACHE_HOME/faithlab/speeds.json
// (~/.cache/faithlab/speeds.json).
func UserSpeedsPath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "faithlab", "speeds.json"), nil
}

// UserSpeedBook is the book the CLI and the workbench estimate from: its
// File the user's (UserSpeedsPath), in memory alone where the system
// names no cache folder.
func UserSpeedBook() *SpeedBook {
	b := &SpeedBook{}
	if p, err := UserSpeedsPath(); err == nil {
		b.File = p
	}
	return b
}

// speedsFile is a SpeedBook's file: each measurement by host and
// SpeedsKey (fileKey).
type speedsFile struct {
	Speeds map[string]Measured `json:"speeds"`
}

// maxSpeedsFile bounds what a speeds file may hold: far more than the
// entries of every model, dataset and engine a user sizes.
const maxSpeedsFile = 1 << 20

// fileKey files the campaign's speeds by host and SpeedsKey.
func fileKey(c *Campaign) string {
	host, _ := os.Hostname()
	return host + "|" + c.SpeedsKey()
}

// readSpeeds reads a speeds file's measurements, leaving out every entry
// no measurement could have written (a speed negative, infinite or NaN,
// no time); a missing or unreadable file reads as empty.
func readSpeeds(path string) map[string]Measured {
	out := map[string]Measured{}
	b, err := data.ReadFileLimit(path, maxSpeedsFile)
	if err != nil {
		return out
	}
	var f speedsFile
	if json.Unmarshal(b, &f) != nil {
		return out
	}
	for k, m := range f.Speeds {
		if m.valid() {
			out[k] = m
		}
	}
	return out
}

// valid says whether a measurement read from a file could have been
// written by one: every speed finite and not negative, a share of the
// machine at most 1 (negative: not known), a time of measurement not in
// the future.
func (m Measured) valid() bool {
	sp := m.Speeds
	vals := []float64{sp.Train, sp.Base, sp.Gradient, sp.Forward, sp.Fill, sp.Impute, sp.Quality, sp.Compare, sp.Open}
	for _, v := range m.Priors {
		vals = append(vals, v)
	}
	for _, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return false
		}
	}
	return !math.IsNaN(m.Busy) && m.Busy <= 1 && !m.At.IsZero() && !m.At.After(time.Now().Add(time.Minute))
}

// writeSpeeds writes a speeds file whole, through a file beside it
// renamed over it, so that a reader never sees half of one.
func writeSpeeds(path string, speeds map[string]Measured) error {
	b, err := json.MarshalIndent(speedsFile{Speeds: speeds}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".speeds-*.json")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(append(b, '\n'))
	if err := errors.Join(werr, tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
