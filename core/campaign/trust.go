package campaign

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"faithlab/core/data"
	"faithlab/core/model"
)

// A spec, a run folder's stored spec and the campaign.yaml that evaluate
// writes are files someone may have sent: data, never a command. What a
// campaign may do beyond computing — start a program, reach a host, load
// a TorchScript model (which runs code from its file), write outside its
// spec's folder or read maps or a dataset from outside it — comes from its user, not
// from its file: Trust holds what the user allowed, and Run refuses a
// campaign that asks for more (a *ConsentError) before it runs or writes
// anything.

// Trust is what the user has allowed campaigns.
type Trust struct {
	// Engines are engine settings the user named: on the command line
	// (--engine, or --allow-engine for the spec's own), in the
	// workbench's Settings or its confirmation dialog, or in the user's
	// configuration file (UserTrust). A spec whose engine names a program
	// or a host (model.EngineReach) runs only on one of these.
	Engines []string `json:"engines,omitempty"`
	// Folders are folders the user chose (--out, --cache,
	// --allow-folder, a dataset or model named on the command line or
	// opened in the workbench, the workbench's own folders, the
	// configuration file): a spec's output and cache, the datasets it
	// reads and the maps files its `file` methods read lie inside the
	// spec's own folder or inside one of these.
	Folders []string `json:"folders,omitempty"`
	// Scripts are TorchScript model files (or folders holding them) the
	// user allowed campaigns to load (--allow-torchscript, the model the
	// user named or opened by hand, the workbench's dialog, the
	// configuration file): loading one runs code from the file.
	Scripts []string `json:"scripts,omitempty"`
}

// With returns t with more engines or folders allowed.
func (t Trust) With(engines, folders []string) Trust {
	return Trust{Engines: append(slices.Clone(t.Engines), engines...), Folders: append(slices.Clone(t.Folders), folders...), Scripts: slices.Clone(t.Scripts)}
}

// WithScripts returns t with more TorchScript files allowed ("" allows
// none).
func (t Trust) WithScripts(files ...string) Trust {
	u := t.With(nil, nil)
	for _, f := range files {
		if f != "" {
			u.Scripts = append(u.Scripts, f)
		}
	}
	return u
}

func (t Trust) allowsEngine(setting string) bool {
	return slices.ContainsFunc(t.Engines, func(e string) bool { return model.SameEngine(e, setting) })
}

// Ask is one thing a campaign asks for that only its user may allow.
type Ask struct {
	Field string // the spec's key: engine, model, maps, dataset, output or cache
	What  string // in full: the program, the host, the folder
	Why   string // in words, e.g. "runs the program /x/y"
	Allow string // how to allow it from the command line
}

// ConsentError is a campaign that asks for what only its user may allow.
// Nothing has run and nothing has been written.
type ConsentError struct {
	Spec string // the spec file ("" for a campaign built in memory)
	Asks []Ask
}

func (e *ConsentError) Error() string {
	var b strings.Builder
	spec := e.Spec
	if spec == "" {
		spec = "this campaign"
	}
	fmt.Fprintf(&b, "%s asks for what only you may allow; nothing has run:", spec)
	for _, a := range e.Asks {
		fmt.Fprintf(&b, "\n  %s: %s (to allow it: %s)", a.Field, a.Why, a.Allow)
	}
	return b.String()
}

// Allow returns t with what the error's campaign asked for allowed: for a
// front end whose user said yes when shown the asks in full.
func (e *ConsentError) Allow(t Trust) Trust {
	var engines, folders, scripts []string
	for _, a := range e.Asks {
		switch a.Field {
		case "engine":
			engines = append(engines, a.What)
		case "model":
			scripts = append(scripts, a.What)
		default:
			folders = append(folders, a.What)
		}
	}
	return t.With(engines, folders).WithScripts(scripts...)
}

// Check says what the campaign asks for that trust does not allow, as a
// *ConsentError; engine is the user's engine setting replacing the spec's
// ("": the spec's). It reads the file system but writes nothing.
func (c *Campaign) Check(t Trust, engine string) error {
	var asks []Ask
	if engine == "" {
		program, host, err := model.EngineReach(c.Spec.Engine)
		if err != nil {
			return err
		}
		if (program != "" || host != "") && !t.allowsEngine(c.Spec.Engine) {
			var why []string
			if program != "" {
				why = append(why, "runs the program "+program)
			}
			if host != "" {
				why = append(why, "connects to the host "+host+" over SSH and runs a worker there")
			}
			asks = append(asks, Ask{Field: "engine", What: c.Spec.Engine, Why: fmt.Sprintf("%q %s", c.Spec.Engine, strings.Join(why, " and ")),
				Allow: "--allow-engine, or --engine SETTING, or list it under engines: in " + userConfigName()})
		}
	}
	if f := c.Spec.Model.File; f != "" && model.IsTorchScript(f) {
		ok, err := inside(f, t.Scripts)
		if err != nil {
			return err
		}
		if !ok {
			abs, _ := filepath.Abs(f)
			asks = append(asks, Ask{Field: "model", What: abs, Why: "loads the TorchScript model " + abs + ", which runs code from the file with your rights (PyTorch's own warning)",
				Allow: "--allow-torchscript, or list it under torchscript: in " + userConfigName()})
		}
	}
	roots := slices.Clone(t.Folders)
	if c.Path != "" {
		roots = append(roots, filepath.Dir(c.Path))
	}
	where := "outside the spec's folder"
	if c.Path == "" {
		where = "outside the folders you chose"
	}
	reads := []struct {
		field, what string
		files       []string
	}{{"maps", "the maps file", c.mapsFiles()}, {"dataset", "the dataset", c.DatasetPaths()}}
	for _, r := range reads {
		for _, f := range r.files {
			ok, err := inside(f, roots)
			if err != nil {
				return err
			}
			if !ok {
				asks = append(asks, Ask{Field: r.field, What: f, Why: "reads " + r.what + " " + f + ", " + where,
					Allow: "--allow-folder DIR for a folder holding it, or list that folder under folders: in " + userConfigName()})
			}
		}
	}
	folders := []struct{ field, dir, flag string }{{"output", c.Spec.Output, "--out DIR"}}
	if c.Spec.Cache != "" { // the default cache lies in the output
		folders = append(folders, struct{ field, dir, flag string }{"cache", c.Spec.Cache, "--cache DIR"})
	}
	for _, f := range folders {
		ok, err := inside(f.dir, roots)
		if err != nil {
			return err
		}
		if !ok {
			asks = append(asks, Ask{Field: f.field, What: f.dir, Why: "writes to " + f.dir + ", " + where,
				Allow: f.flag + " to choose the folder yourself, or list a folder holding it under folders: in " + userConfigName()})
		}
	}
	if len(asks) > 0 {
		return &ConsentError{Spec: c.Path, Asks: asks}
	}
	return nil
}

// DatasetPaths are the datasets the campaign reads from files or folders
// (not the built-in ids), each as written: a spec's dataset, or, for one
// that names none, the dataset the model file's description names.
func (c *Campaign) DatasetPaths() []string {
	var paths []string
	for _, d := range c.Spec.Datasets {
		ref := d.Ref
		if ref == "" && c.Spec.Model.File != "" {
			if h, err := model.HeaderOf(c.Spec.Model.File); err == nil && h.Source != nil {
				ref = h.Source.Ref
			}
		}
		if ref != "" && !data.IsID(ref) && !slices.Contains(paths, ref) {
			paths = append(paths, ref)
		}
	}
	return paths
}

// mapsFiles are the maps files the spec's `file` methods read, each as
// the method resolves it (a relative path from the spec's folder).
func (c *Campaign) mapsFiles() []string {
	var files []string
	for _, m := range c.Spec.Methods {
		if m.Name != "file" {
			continue
		}
		for _, split := range []string{"test", "train"} {
			p, _ := m.Params[split].(string)
			if p == "" {
				continue
			}
			if !filepath.IsAbs(p) && m.Dir != "" {
				p = filepath.Join(m.Dir, p)
			}
			if !slices.Contains(files, p) {
				files = append(files, p)
			}
		}
	}
	return files
}

// inside reports whether dir, once every symbolic link on its way is
// followed, lies in one of roots (each followed too).
func inside(dir string, roots []string) (bool, error) {
	d, err := resolve(dir)
	if err != nil {
		return false, err
	}
	for _, root := range roots {
		r, err := resolve(root)
		if err != nil {
			return false, err
		}
		if rel, err := filepath.Rel(r, d); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return true, nil
		}
	}
	return false, nil
}

// resolve makes path absolute and follows the links of its longest part
// that exists, and a dangling link's target as written (a folder made
// through it would be made there).
func resolve(path string) (string, error) {
	p, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	var rest []string
	for hops := 0; ; {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if st, lerr := os.Lstat(p); lerr == nil && st.Mode()&os.ModeSymlink != 0 && hops < 40 {
			target, rerr := os.Readlink(p)
			if rerr == nil {
				if !filepath.IsAbs(target) {
					target = filepath.Join(filepath.Dir(p), target)
				}
				p, hops = filepath.Clean(target), hops+1
				continue
			}
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", fmt.Errorf("resolving %s: %w", path, err)
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// RunArgs are the arguments of `faithlab-cli run` that run the campaign
// from its spec file as it is, granting on the command line exactly what
// it asks for beyond its spec's folder (Check with nothing else trusted):
// --allow-engine for an engine that starts a program or reaches a host,
// --allow-torchscript for a TorchScript model, --allow-folder for the
// folder of a maps file outside the spec's, --out and --cache for an
// output or a cache outside the folder (the spec's own, so the run is the
// one the spec describes).
func (c *Campaign) RunArgs() ([]string, error) {
	args := []string{c.Path}
	var consent *ConsentError
	if err := c.Check(Trust{}, ""); errors.As(err, &consent) {
		for _, a := range consent.Asks {
			switch a.Field {
			case "engine":
				args = append(args, "--allow-engine")
			case "model":
				args = append(args, "--allow-torchscript")
			case "maps":
				args = append(args, "--allow-folder", filepath.Dir(a.What))
			case "output":
				args = append(args, "--out", a.What)
			case "cache":
				args = append(args, "--cache", a.What)
			}
		}
	} else if err != nil {
		return nil, err
	}
	return args, nil
}

// RunLine is the shell command line that runs the campaign headless:
// `faithlab-cli run` with RunArgs, each word quoted.
func (c *Campaign) RunLine() (string, error) {
	args, err := c.RunArgs()
	if err != nil {
		return "", err
	}
	return quoteWords(append([]string{"faithlab-cli", "run"}, args...)), nil
}

// Relocate puts the run folder (and the artefact cache, when cache is not
// "") where the user chose instead of where the spec says. Chosen by the
// user, they need no consent: the returned Trust allows them.
func (c *Campaign) Relocate(t Trust, out, cache string) (Trust, error) {
	var chosen []string
	for _, f := range []struct {
		dir string
		dst *string
	}{{out, &c.Spec.Output}, {cache, &c.Spec.Cache}} {
		if f.dir == "" {
			continue
		}
		abs, err := filepath.Abs(f.dir)
		if err != nil {
			return t, err
		}
		*f.dst = abs
		chosen = append(chosen, abs)
	}
	return t.With(nil, chosen), nil
}

// userConfig is the user's own configuration file.
type userConfig struct {
	Engines     []string `yaml:"engines"`
	Folders     []string `yaml:"folders"`
	TorchScript []string `yaml:"torchscript"`
}

// userConfigName is where the user's configuration file lives, for messages.
func userConfigName() string {
	if p, err := UserConfigPath(); err == nil {
		return p
	}
	return "faithlab/config.yaml in your configuration folder"
}

// UserConfigPath is the user's configuration file,
// $XDG_CONFIG_HOME/faithlab/config.yaml (~/.config/faithlab/config.yaml).
func UserConfigPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "faithlab", "config.yaml"), nil
}

// UserTrust reads what the user's configuration file allows: engine
// settings campaigns may name, folders they may write in and read maps
// from, and TorchScript models (files, or folders holding them) they may
// load,
//
//	engines:
//	  - torch@ssh://gpu1?python=/opt/conda/bin/python
//	folders:
//	  - /data/faithlab
//	torchscript:
//	  - /data/models/resnet18.pt
//
// A missing file allows nothing; a malformed one is an error naming it.
func UserTrust() (Trust, error) {
	path, err := UserConfigPath()
	if err != nil {
		return Trust{}, nil
	}
	b, err := data.ReadFileLimit(path, 64<<10)
	if errors.Is(err, fs.ErrNotExist) {
		return Trust{}, nil
	}
	if err != nil {
		return Trust{}, fmt.Errorf("%s: %w", path, err)
	}
	var cfg userConfig
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return Trust{}, fmt.Errorf("%s: %w", path, err)
	}
	for _, e := range cfg.Engines {
		if _, err := model.EngineKind(e); err != nil {
			return Trust{}, fmt.Errorf("%s: engines: %w", path, err)
		}
	}
	for key, list := range map[string][]string{"folders": cfg.Folders, "torchscript": cfg.TorchScript} {
		for i, f := range list {
			if !filepath.IsAbs(f) {
				return Trust{}, fmt.Errorf("%s: %s: %q is not an absolute path", path, key, f)
			}
			list[i] = filepath.Clean(f)
		}
	}
	return Trust{Engines: cfg.Engines, Folders: cfg.Folders, Scripts: cfg.TorchScript}, nil
}
