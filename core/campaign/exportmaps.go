package campaign

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"faithlab/core/data"
	"faithlab/core/report"
)

// UnitsHeader is the columns WriteUnits writes (report.UnitsHeader).
var UnitsHeader = report.UnitsHeader

// WriteUnits writes the run's per-input values as CSV to path
// (report.UnitsHeader's columns).
func (r *Results) WriteUnits(path string) error {
	var buf bytes.Buffer
	if err := report.WriteUnitsCSV(&buf, r.ID(), r.Status().Done); err != nil {
		return err
	}
	return data.WriteFileAtomic(path, buf.Bytes())
}

// MapsHeader is the columns of maps.csv, which WriteMaps writes beside the
// maps: file (an .npy of shape (n_inputs, H, W) for images, their
// channels reduced as the campaign reduced them, or (n_inputs, D) for
// tables; map i is the split's input i), then what made it.
var MapsHeader = []string{"file", "dataset", "model", "method", "post", "seed", "split", "n_inputs"}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._=-]+`)

// WriteMaps writes the maps the run's finished tasks evaluated, from the
// run's caches, into dir as .npy files in dataset order (what the file
// method reads back), one per dataset, seed, method and split, with
// maps.csv listing them. It returns how many it wrote and how many maps
// sets its records name that no cache holds any more; a run from before
// records kept their maps' keys names none, and is an error.
func (r *Results) WriteMaps(dir string) (written, missing int, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, 0, err
	}
	var list bytes.Buffer
	cw := csv.NewWriter(&list)
	cw.Write(MapsHeader)
	seen, names := map[string]bool{}, map[string]bool{}
	named := 0
	for _, rec := range r.Status().Done {
		for _, split := range []string{"test", "train"} {
			key := rec.Maps[split]
			if key == "" || seen[key] {
				continue
			}
			seen[key] = true
			named++
			var got *data.Array
			for _, c := range r.Caches() {
				a, ok, err := c.GetNPY(key)
				if err == nil && ok {
					got = a
					break
				}
			}
			if got == nil {
				missing++
				continue
			}
			method := rec.Method
			if rec.Post != "" {
				method += "+" + rec.Post
			}
			base := unsafeName.ReplaceAllString(fmt.Sprintf("%s_seed%d_%s_%s", rec.Dataset, rec.Seed, method, split), "_")
			name := base + ".npy"
			if names[name] {
				name = base + "_" + key[:8] + ".npy"
			}
			names[name] = true
			shape := got.Shape
			if len(shape) == 3 && shape[1] == 1 { // a table's maps, kept as (n, 1, D)
				shape = []int{shape[0], shape[2]}
			}
			if err := data.SaveNPY(filepath.Join(dir, name), shape, got.Data); err != nil {
				return written, missing, err
			}
			written++
			cw.Write([]string{name, rec.Dataset, rec.Model, rec.Method, rec.Post, strconv.FormatUint(rec.Seed, 10), split, strconv.Itoa(got.Shape[0])})
		}
	}
	if named == 0 {
		return 0, 0, errors.New("the run's records name no maps (a run from before records kept them, or no task finished): run the campaign again to have them")
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return written, missing, err
	}
	return written, missing, data.WriteFileAtomic(filepath.Join(dir, "maps.csv"), list.Bytes())
}
