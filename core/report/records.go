package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"faithlab/core/data"
	"faithlab/core/protocol"
	"faithlab/core/store"
)

// campaign is the successful records a report draws, sorted for figures
// and tables: datasets and methods in first-seen order (a method keeps its
// colour in every figure), and the records grouped by dataset and
// protocol setting.
type campaign struct {
	datasets []string
	methods  map[string]int // method label → colour index
	groups   []*group
	byKey    map[string]*group // by settingKey
	files    map[string]bool   // figure names taken
	conf     Confidence        // the records' intervals, for figures
}

// group is the records of one protocol, configured alike, on one dataset,
// with the protocol's description for that configuration.
type group struct {
	dataset string
	info    protocol.Info
	known   bool   // this build describes the protocol
	kind    string // the data's kind info was made for ("": not known yet)
	title   string // the protocol's name, then what sets it apart where a dataset has several settings of it
	file    string // the same for file names
	recs    []store.Record
}

func newCampaign(recs []store.Record) *campaign {
	c := &campaign{methods: map[string]int{}, files: map[string]bool{}, byKey: map[string]*group{}}
	byKey := c.byKey
	settings := map[string]int{}
	first := map[string]map[string]any{} // the first setting of a protocol on a dataset
	for _, r := range recs {
		if r.Result == nil {
			continue
		}
		if !slices.Contains(c.datasets, r.Dataset) {
			c.datasets = append(c.datasets, r.Dataset)
		}
		if _, ok := c.methods[methodName(r)]; !ok {
			c.methods[methodName(r)] = len(c.methods)
		}
		key := settingKey(r)
		g := byKey[key]
		if g == nil {
			g = &group{dataset: r.Dataset, title: r.Protocol, file: fileName(strings.ToLower(r.Protocol))}
			g.info, g.known = describe(r)
			g.kind = dataKind(*r.Result)
			dp := r.Dataset + "\x00" + r.Protocol
			settings[dp]++
			if n := settings[dp]; n > 1 {
				g.title += " (" + settingDiff(first[dp], r.Result.Config) + ")"
				g.file += fmt.Sprintf("-%d", n)
			} else {
				first[dp] = r.Result.Config
				if on := switchedOn(g.info, r.Result.Config); on != "" {
					g.title += " (" + on + ")" // a GOAR without projection is never taken for one with
				}
			}
			byKey[key] = g
			c.groups = append(c.groups, g)
		}
		if g.kind == "" { // an old run's first record may show no samples: the next that does tells the kind
			if g.kind = dataKind(*r.Result); g.kind != "" {
				g.info, g.known = describe(r)
			}
		}
		g.recs = append(g.recs, r)
	}
	return c
}

// settingKey names a record's dataset, protocol and the protocol's
// configuration.
func settingKey(r store.Record) string {
	cfg, _ := json.Marshal(r.Result.Config)
	return r.Dataset + "\x00" + r.Protocol + "\x00" + string(cfg)
}

// setting is the title of a record's protocol setting: the protocol's
// name, then, for a dataset's later settings of it, what sets each apart
// ("GOAR (no_projection, prior=auto)"); the protocol's name for a record
// without a result.
func (c *campaign) setting(r store.Record) string {
	if r.Result == nil {
		return r.Protocol
	}
	if g := c.byKey[settingKey(r)]; g != nil {
		return g.title
	}
	return r.Protocol
}

// curveRange is the natural range of a curve's values under a record's
// protocol setting (nil for none, or a curve this build does not
// describe).
func (c *campaign) curveRange(r store.Record, curve string) []float64 {
	if g := c.byKey[settingKey(r)]; g != nil && g.known {
		if m, ok := g.info.Curve(curve); ok {
			return m.Value.Range
		}
	}
	return nil
}

// SettingOf returns what names a record's protocol setting in recs the
// way the report's tables, rankings and intervals do ("GOAR",
// "GOAR (no_projection, prior=auto)"): reproductions find their settings
// by it.
func SettingOf(recs []store.Record) func(store.Record) string { return newCampaign(recs).setting }

// switchedOn names the parameters the protocol draws side by side
// (Metric.Beside) that a configuration turns on.
func switchedOn(info protocol.Info, cfg map[string]any) string {
	var on []string
	for _, m := range info.Curves {
		if m.Beside != "" && cfg[m.Beside] == true && !slices.Contains(on, m.Beside) {
			on = append(on, m.Beside)
		}
	}
	return strings.Join(on, ", ")
}

// settingDiff names what sets a protocol's configuration apart from its
// first setting on the same dataset: "no_projection" for a switch turned
// on, "name=value" otherwise, in the keys' order.
func settingDiff(first, cfg map[string]any) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		v := cfg[k]
		a, _ := json.Marshal(first[k])
		b, _ := json.Marshal(v)
		if string(a) == string(b) {
			continue
		}
		if v == true {
			parts = append(parts, k)
		} else {
			parts = append(parts, k+"="+strings.Trim(string(b), `"`))
		}
	}
	if len(parts) == 0 {
		return "again"
	}
	return strings.Join(parts, ", ")
}

// describe returns the description of the record's protocol as it was
// configured (its Result.Config), or with its defaults where this build no
// longer takes that configuration, worded for the record's data (a
// table's features, not pixels); false for a protocol it does not know.
func describe(r store.Record) (protocol.Info, bool) {
	p, err := protocol.New(r.Protocol, r.Result.Config)
	if err != nil {
		if p, err = protocol.New(r.Protocol, nil); err != nil {
			return protocol.Info{}, false
		}
	}
	return p.Info().For(dataKind(*r.Result)), true
}

// dataKind is the kind of data a result evaluated (data.Kind): as the
// result says, or, in runs from before results said, as the shape of the
// original inputs it shows; "" where neither tells.
func dataKind(res protocol.Result) string {
	if res.Data != "" {
		return res.Data
	}
	for _, s := range res.Samples {
		if s.Kind == protocol.Original && len(s.Shape) == 4 {
			return data.Kind(s.Shape[1:])
		}
	}
	return ""
}

// name returns a figure's file name, unique in the campaign: the parts
// joined by "_", then "-2", "-3" where the name is taken.
func (c *campaign) name(parts ...string) string {
	base := strings.Join(parts, "_")
	name := base
	for i := 2; c.files[name]; i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	c.files[name] = true
	return name
}

// methodsOf returns the method labels of recs in the campaign's order,
// with each method's records.
func (c *campaign) methodsOf(recs []store.Record) ([]string, map[string][]store.Record) {
	by := map[string][]store.Record{}
	var labels []string
	for _, r := range recs {
		m := methodName(r)
		if by[m] == nil {
			labels = append(labels, m)
		}
		by[m] = append(by[m], r)
	}
	slices.SortStableFunc(labels, func(a, b string) int { return c.methods[a] - c.methods[b] })
	return labels, by
}

// seeds is how many seeds the records hold.
func seeds(recs []store.Record) int {
	var s []uint64
	for _, r := range recs {
		if !slices.Contains(s, r.Seed) {
			s = append(s, r.Seed)
		}
	}
	return len(s)
}

// seedNote says what a figure's values are where there are several seeds.
func seedNote(n int) string {
	if n < 2 {
		return ""
	}
	return fmt.Sprintf("mean over %d seeds, 95%% intervals", n)
}

// meanSD is the mean of v and its sample standard deviation (0 for one
// value), undefined values left out; NaN and 0 when nothing is left.
func meanSD(v []float64) (mean, sd float64) {
	var s, ss float64
	n := 0
	for _, x := range v {
		if defined(x) {
			s += x
			n++
		}
	}
	if n == 0 {
		return math.NaN(), 0
	}
	mean = s / float64(n)
	if n < 2 {
		return mean, 0
	}
	for _, x := range v {
		if defined(x) {
			ss += (x - mean) * (x - mean)
		}
	}
	return mean, math.Sqrt(ss / float64(n-1))
}

// defined says whether x is a value to draw: not NaN, and not infinite
// (which results store as ±MaxFloat64: the PSNR of an unchanged image).
func defined(x float64) bool {
	return !math.IsNaN(x) && math.Abs(x) < math.MaxFloat64
}

// scalars returns each record's value of the named scalar (NaN where it has
// none).
func scalars(recs []store.Record, name string) []float64 {
	v := make([]float64, len(recs))
	for i, r := range recs {
		v[i] = math.NaN()
		if x, ok := r.Result.Scalar(name); ok {
			v[i] = x
		}
	}
	return v
}

func methodName(r store.Record) string {
	if r.Post != "" {
		return r.Method + "+" + r.Post
	}
	return r.Method
}

// splitLabel splits a method label, e.g.
// "smoothgrad{samples=15,noise_frac=0.15}+abs", into the method, its
// parameters and its post-processing.
func splitLabel(label string) (name string, params []string, post string) {
	name, post, _ = strings.Cut(label, "+")
	if i := strings.Index(label, "{"); i >= 0 {
		if j := strings.LastIndex(label, "}"); j > i {
			name = label[:i]
			params = strings.Split(label[i+1:j], ",")
			post = strings.TrimPrefix(label[j+1:], "+")
		}
	}
	return name, params, post
}

// display breaks a method label for a key: the method and its
// post-processing on the first line, its parameters a few to a line below
// ("smoothgrad + abs\nsamples=15, noise_frac=0.15").
func display(label string) string { return wrap(label, 28) }

// tickLabel breaks a method label for an axis, where it takes width from
// the plot: a parameter or two to a line.
func tickLabel(label string) string { return wrap(label, 16) }

// wrap is display with lines of parameters up to width characters.
func wrap(label string, width int) string {
	name, params, post := splitLabel(label)
	if post != "" {
		name += " + " + strings.ReplaceAll(post, ",", ", ")
	}
	lines := []string{name}
	line := ""
	for _, p := range params {
		if line != "" && len(line)+len(p) > width {
			lines, line = append(lines, line), ""
		}
		if line != "" {
			line += ", "
		}
		line += p
	}
	if line != "" {
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// inline is display on one line, for titles.
func inline(label string) string {
	head, rest, ok := strings.Cut(display(label), "\n")
	if !ok {
		return head
	}
	return head + " (" + strings.ReplaceAll(rest, "\n", ", ") + ")"
}

// slug is a short, safe file-name part for a method label: the method,
// its parameters abbreviated (samples=15 → s15, noise_frac=0.15 → nf0.15)
// and its post-processing, joined by "-".
func slug(label string) string {
	name, params, post := splitLabel(label)
	parts := []string{name}
	for _, p := range params {
		k, v, _ := strings.Cut(p, "=")
		var abbr string
		for w := range strings.SplitSeq(k, "_") {
			if w != "" {
				abbr += w[:1]
			}
		}
		parts = append(parts, abbr+v)
	}
	if post != "" {
		parts = append(parts, strings.NewReplacer(",", "-", ":", "").Replace(post))
	}
	return safe(strings.Join(parts, "-"))
}

// fileName is the last element of a path, made safe.
func fileName(s string) string { return safe(filepath.Base(s)) }

// safe keeps letters, digits, '-', '_' and '.', and makes anything else '_'.
func safe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}
