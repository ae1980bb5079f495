package attr

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sync"

	"faithlab/core/data"
	"faithlab/core/engine"
)

// File serves maps computed elsewhere (Captum, Quantus, one's own code)
// from files, one per split:
//
//   - .npy: one map per input of the split, in the dataset's order from its
//     first input: shape (N, H, W), (N, 1, H, W) or (N, C, H, W) for images
//     of C×H×W, (N, D) or (N, D, 1, 1) for tables of D features. Where
//     Faithlab split the dataset's file itself (Input.Rows), N equal to the
//     file's samples means one map per sample of the file in its order,
//     and each split takes its own;
//   - .npz: an array "maps" as above and, optionally, an integer array
//     "index" of N distinct dataset positions naming the input of each map
//     (what `attribute --out MAPS.npz` writes); other arrays are ignored.
//
// Every map served is checked: its shape against the data, its values
// finite (a NaN or Inf is reported with the file and the input's index).
// Maps of C channels are reduced to one as a campaign reduces its own. A
// file holding more maps than a split has inputs is accepted (a spec's
// test_samples takes the split's first inputs); one missing an input asked
// for is refused, naming it. The files are only read, never written; a
// relative path is taken from Dir (a spec's folder).
type File struct {
	Test  string `json:"test" doc:"maps of the test inputs: .npy in dataset order, or .npz with arrays maps and index" required:"true"`
	Train string `json:"train" doc:"maps of the training inputs: what the protocols that retrain (ROAR, KAR, ROAD with retraining, GOAR) explain"`
	Dir   string `json:"-"`
}

// Name implements Method.
func (File) Name() string { return "File" }

// Settings implements Method.
func (f File) Settings() map[string]any {
	s := map[string]any{"test": f.Test}
	if f.Train != "" {
		s["train"] = f.Train
	}
	return s
}

// Path is the file serving a split's maps, resolved against Dir; "" when
// none was given.
func (f File) Path(split string) string {
	p := f.Test
	if split == "train" {
		p = f.Train
	}
	if p == "" || filepath.IsAbs(p) || f.Dir == "" {
		return p
	}
	return filepath.Join(f.Dir, p)
}

// Digest is the SHA-256 of the files' contents (test, then train): what
// decides whether maps already made from them are still theirs.
func (f File) Digest() (string, error) {
	h := sha256.New()
	for _, split := range []string{"test", "train"} {
		path := f.Path(split)
		if path == "" {
			continue
		}
		d, err := fileDigest(path)
		if err != nil {
			return "", fmt.Errorf("maps file %s: %w", path, err)
		}
		fmt.Fprintf(h, "%s\x00%s\x00", split, d)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// digests remembers files' SHA-256 by path, size and modification time: a
// campaign's plan names a maps file once per task, and a training set's
// maps run to hundreds of MB.
var digests sync.Map

func fileDigest(path string) (string, error) {
	r, _, err := data.OpenRegular(path, math.MaxInt64)
	if err != nil {
		return "", err
	}
	defer r.Close()
	st, err := r.Stat()
	if err != nil {
		return "", err
	}
	key := fmt.Sprintf("%s\x00%d\x00%d", path, st.Size(), st.ModTime().UnixNano())
	if d, ok := digests.Load(key); ok {
		return d.(string), nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	d := hex.EncodeToString(h.Sum(nil))
	digests.Store(key, d)
	return d, nil
}

// Attribute implements Method: the maps of in's inputs, looked up by
// in.Split and in.Index. The targets are not looked at: the file's maps
// explain whatever their maker explained.
func (f File) Attribute(ctx context.Context, _ engine.Network, in Input) (Maps, error) {
	split := in.Split
	switch split {
	case "test", "train":
	case "":
		return Maps{}, errors.New("maps from a file need the inputs' split and positions, and this call names none")
	default:
		return Maps{}, fmt.Errorf("split %q: train or test", split)
	}
	path := f.Path(split)
	if path == "" {
		return Maps{}, errors.New("no training-set maps: the protocols that retrain (ROAR, KAR, ROAD with retraining, GOAR) explain the training inputs too; give params.train, a file of their maps")
	}
	st, err := loadMaps(path, in.Shape)
	if err != nil {
		return Maps{}, err
	}
	return st.serve(ctx, split, in)
}

// storedMaps is a maps file read and checked.
type storedMaps struct {
	path string
	per  []int // one map: c, H, W
	data []float32
	n    int
	row  map[int]int // dataset position → map; nil: map i is input i
}

// loadMaps reads and checks the maps file at path for inputs of shape
// (C, H, W): a regular file, a .npy (at most 1 GiB) or a .npz whose
// arrays are checked against their declared sizes before being read.
func loadMaps(path string, shape []int) (*storedMaps, error) {
	f, _, err := data.OpenRegular(path, math.MaxInt64)
	if err != nil {
		return nil, fmt.Errorf("maps file %s: %w", path, err)
	}
	magic := make([]byte, 6)
	_, err = io.ReadFull(f, magic)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("maps file %s: too short for a .npy or .npz file", path)
	}
	var maps, index *data.Array
	switch {
	case bytes.HasPrefix(magic, []byte("PK")):
		z, err := data.OpenNPZ(path)
		if err != nil {
			return nil, fmt.Errorf("maps file %s: %w", path, err)
		}
		defer z.Close()
		maps, index, err = npzMaps(z, shape)
		if err != nil {
			return nil, fmt.Errorf("maps file %s: %w", path, err)
		}
	case bytes.Equal(magic, []byte("\x93NUMPY")):
		s, err := data.NPYShape(path)
		if err == nil {
			_, err = mapShape(s, shape)
		}
		if err == nil {
			maps, err = data.LoadNPY(path)
		}
		if err != nil {
			return nil, fmt.Errorf("maps file %s: %w", path, err)
		}
	default:
		// Its bytes are not quoted: a file of someone else's is never
		// echoed into an error that lands in a results file.
		return nil, fmt.Errorf("maps file %s: neither .npy nor .npz (it starts with neither the .npy magic \\x93NUMPY nor a zip archive's PK)", path)
	}
	st, err := checkMaps(maps, index, shape)
	if err != nil {
		return nil, fmt.Errorf("maps file %s: %w", path, err)
	}
	st.path = path
	return st, nil
}

// npzMaps reads an archive's maps and index, checking their shapes from
// the headers before reading their values.
func npzMaps(z *data.NPZ, shape []int) (maps, index *data.Array, err error) {
	if !z.Has("maps") {
		return nil, nil, fmt.Errorf("no array \"maps\" (it holds %v)", z.Names())
	}
	s, err := z.Shape("maps")
	if err != nil {
		return nil, nil, err
	}
	if _, err := mapShape(s, shape); err != nil {
		return nil, nil, err
	}
	if z.Has("index") {
		is, err := z.Shape("index")
		if err != nil {
			return nil, nil, err
		}
		if len(is) != 1 || is[0] != s[0] {
			return nil, nil, fmt.Errorf("index of shape %v for %d maps: want (%d,)", is, s[0], s[0])
		}
		if index, err = z.Array("index"); err != nil {
			return nil, nil, err
		}
	}
	maps, err = z.Array("maps")
	return maps, index, err
}

// mapShape checks the shape of a maps array against inputs of shape
// (C, H, W) and returns one map's (c, H, W), c being C or 1.
func mapShape(s, in []int) ([]int, error) {
	C, H, W := in[0], in[1], in[2]
	want := fmt.Sprintf("(N, %d, %d), (N, 1, %d, %d) or (N, %d, %d, %d)", H, W, H, W, C, H, W)
	switch {
	case H == 1 && W == 1:
		want = fmt.Sprintf("(N, %d) or (N, %d, 1, 1)", C, C)
	case C == 1:
		want = fmt.Sprintf("(N, %d, %d) or (N, 1, %d, %d)", H, W, H, W)
	}
	bad := func() ([]int, error) {
		msg := fmt.Sprintf("maps of shape %v: want %s for inputs of shape %v", s, want, in)
		if len(s) == 4 && s[1] == H && s[2] == W && (s[3] == C || s[3] == 1) && !(H == 1 && W == 1) {
			msg += " (channels last? transpose them to (N, C, H, W))"
		}
		return nil, errors.New(msg)
	}
	if len(s) == 0 || s[0] == 0 {
		return nil, fmt.Errorf("maps of shape %v: no maps", s)
	}
	switch {
	case H == 1 && W == 1 && len(s) == 2 && s[1] == C:
		return []int{C, 1, 1}, nil
	case len(s) == 3 && s[1] == H && s[2] == W && !(H == 1 && W == 1):
		return []int{1, H, W}, nil
	case len(s) == 4 && s[2] == H && s[3] == W && (s[1] == C || s[1] == 1 && !(H == 1 && W == 1)):
		return []int{s[1], H, W}, nil
	}
	return bad()
}

// checkMaps checks a maps array (and its index, if any) against inputs of
// shape (C, H, W): shape, finite values, index positions.
func checkMaps(maps, index *data.Array, shape []int) (*storedMaps, error) {
	per, err := mapShape(maps.Shape, shape)
	if err != nil {
		return nil, err
	}
	st := &storedMaps{per: per, data: maps.Data, n: maps.Shape[0]}
	if index != nil {
		if len(index.Shape) != 1 || len(index.Data) != st.n {
			return nil, fmt.Errorf("index of shape %v for %d maps: want (%d,)", index.Shape, st.n, st.n)
		}
		st.row = make(map[int]int, st.n)
		for r, v := range index.Data {
			i := int(v)
			if float32(i) != v || i < 0 || i >= 1<<24 {
				return nil, fmt.Errorf("index[%d] = %g: want a dataset position, a whole number in [0, %d)", r, v, 1<<24)
			}
			if prev, dup := st.row[i]; dup {
				return nil, fmt.Errorf("index[%d] and index[%d] both name input %d", prev, r, i)
			}
			st.row[i] = r
		}
	}
	size := engine.Size(per)
	for k, v := range st.data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			r := k / size
			return nil, fmt.Errorf("the map of input %d holds %g at offset %d", st.input(r), v, k%size)
		}
	}
	return st, nil
}

// input is the dataset position of map r.
func (st *storedMaps) input(r int) int {
	for i, rr := range st.row {
		if rr == r {
			return i
		}
	}
	return r
}

// serve returns the maps of in's inputs (in.Index, or 0…N−1), shaped
// (N, c, H, W).
func (st *storedMaps) serve(ctx context.Context, split string, in Input) (Maps, error) {
	if in.Index != nil && len(in.Index) != in.N {
		return Maps{}, fmt.Errorf("%d positions for %d inputs", len(in.Index), in.N)
	}
	size := engine.Size(st.per)
	out := Maps{Data: make([]float32, in.N*size), Shape: append([]int{in.N}, st.per...)}
	for j := range in.N {
		if j%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return Maps{}, err
			}
		}
		i := j
		if in.Index != nil {
			i = in.Index[j]
		}
		r, ok := i, i >= 0 && i < st.n
		switch {
		case st.row != nil:
			r, ok = st.row[i]
		case in.Rows != nil && st.n == in.SourceLen && i >= 0 && i < len(in.Rows):
			r = in.Rows[i] // maps of every sample of the file, in its order
		}
		if !ok {
			what := fmt.Sprintf("maps of the first %d inputs", st.n)
			if st.row != nil {
				lo, hi := math.MaxInt, -1
				for i := range st.row {
					lo, hi = min(lo, i), max(hi, i)
				}
				what = fmt.Sprintf("an index of %d inputs, from %d to %d", st.n, lo, hi)
				if hi >= in.N && in.Index == nil {
					what += fmt.Sprintf(", beyond the %d inputs asked for", in.N)
				}
			}
			return Maps{}, fmt.Errorf("maps file %s: no map of %s input %d (it holds %s)", st.path, split, i, what)
		}
		copy(out.Data[j*size:(j+1)*size], st.data[r*size:(r+1)*size])
	}
	return out, nil
}

// CheckFile reads and checks a maps file for inputs of shape (C, H, W) as
// the file method will, so that a front end can refuse it before a run.
func CheckFile(path string, shape []int) error {
	_, err := loadMaps(path, shape)
	return err
}
