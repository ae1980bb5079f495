// Command faithlab-cli is Faithlab's headless front end: it trains and
// evaluates built-in models, moves weights to and from PyTorch, and measures
// the engine against the PyTorch peer. It never links the GUI toolkit.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"faithlab/core/campaign"
	"faithlab/core/job"
	"faithlab/core/param"
)

type command struct {
	name, usage string
	run         func(ctx context.Context, args []string) error
}

func commands() []command {
	return []command{
		{"train", "train a built-in model on a dataset and save it", runTrain},
		{"eval", "accuracy and per-class accuracy of a model on a dataset's test split", runEval},
		{"attribute", "compute attribution maps for a model on a dataset and save them as .npy", runAttribute},
		{"evaluate", "evaluate attribution methods of a trained model under any protocols (removal, GOAR, FUD …): a one-command campaign", runEvaluate},
		{"run", "run (or resume) the campaign a spec file describes; --shard I/N runs one part of it", runCampaign},
		{"reproduce", "run a seed paper's central experiment and report, claim by claim, whether its result holds here (--list: which)", runReproduce},
		{"status", "what a campaign's run folder holds: tasks done, failed and to run", runStatus},
		{"export", "write a run's tidy CSV and, with --figures, its figures (PNG, SVG, PDF)", runExportResults},
		{"merge", "join the run folders of a campaign's shards into one", runMerge},
		{"slurm", "write a script that submits a campaign's shards to Slurm as an array job, and their merge after them", runSlurm},
		{"k8s", "write a Kubernetes indexed Job that runs a campaign's shards", runK8s},
		{"impute", "fill the removed pixels of an image (.npy) from a reference, ROAD's noisy linear imputation included", runImpute},
		{"trace-compare", "score attribution methods and TRACE on the deletion metric (TRACE paper, Table 1)", runTraceCompare},
		{"weights-export", "write a model's weights to .npz with PyTorch's state_dict names", runWeightsExport},
		{"weights-import", "build a model file from PyTorch weights in .npz", runWeightsImport},
		{"train-prior", "train a diffusion prior (unet-s, ε-prediction) on a dataset; resumes after a kill", runTrainPrior},
		{"sample", "draw samples from a diffusion prior (DDIM, DDPM) as .npy", runSample},
		{"project", "project images onto a prior's data (SDEdit with DDIM, as GOAR)", runProject},
		{"inpaint", "fill masked pixels of images from a prior, keeping the others exactly (FUD)", runInpaint},
		{"bench", "measure the engine on the PyTorch peer's workloads (JSON lines)", runBench},
		{"bench-compare", "run our benchmarks and the PyTorch peer alternately and print the ratios", runBenchCompare},
		{"datasets", "list the built-in dataset ids and what they hold", runDatasets},
		{"methods", "describe every attribution method: category, data, parameters with types, defaults and ranges", runMethods},
		{"protocols", "describe every evaluation protocol: parameters, scores and their directions", runProtocols},
	}
}

func main() {
	ctx, stopped := stopOnSignal(os.Exit)
	if len(os.Args) < 2 {
		usage(os.Stderr)
		os.Exit(2)
	}
	switch os.Args[1] {
	case "-h", "-help", "--help", "help":
		usage(os.Stdout)
		return
	case measureSpeedsCommand: // run's own child, not a user's command
		if err := campaign.ServeSpeeds(ctx, kernel(), os.Stdin, os.Stdout, false); err != nil {
			fmt.Fprintf(os.Stderr, "faithlab-cli %s: %v\n", measureSpeedsCommand, err)
			os.Exit(1)
		}
		return
	}
	for _, a := range os.Args[2:] {
		if a == "-h" || a == "-help" || a == "--help" {
			helpWanted = true
		}
	}
	for _, c := range commands() {
		if c.name == os.Args[1] {
			if err := c.run(ctx, os.Args[2:]); err != nil {
				if errors.Is(err, flag.ErrHelp) {
					os.Exit(0)
				}
				if sig, ok := stopped(); ok {
					// The user stopped it: a command that said what it kept
					// (errStopped) needs no second line; one cut short says
					// so instead of a raw "context canceled"; any other
					// error (a write that failed on the way out) is shown.
					switch {
					case errors.Is(err, errStopped):
					case errors.Is(err, context.Canceled):
						fmt.Fprintf(os.Stderr, "faithlab-cli %s: stopped (%v)\n", c.name, sig)
					default:
						fmt.Fprintf(os.Stderr, "faithlab-cli %s: stopped (%v): %v\n", c.name, sig, err)
					}
					os.Exit(128 + int(sig)) // as shells report it: 130 for Ctrl-C, 143 for SIGTERM
				}
				fmt.Fprintf(os.Stderr, "faithlab-cli %s: %v\n", c.name, err)
				os.Exit(1)
			}
			return
		}
	}
	fmt.Fprintf(os.Stderr, "faithlab-cli: unknown command %q\n\n", os.Args[1])
	usage(os.Stderr)
	os.Exit(2)
}

// errStopped is a command's error when the user stopped it (Ctrl-C,
// SIGTERM) and it has said what it kept.
var errStopped = errors.New("stopped")

// stopGrace is how long a command may take to stop after SIGINT or
// SIGTERM before the process ends anyway.
const stopGrace = 2 * time.Second

// stopOnSignal returns a context cancelled at the first SIGINT or SIGTERM
// and a function that says which of them came, if one did. After the first,
// the signals' default returns: a second Ctrl-C ends the process at once
// (a run folder keeps every task finished before it). A command still
// running stopGrace after the first — in a phase that does not watch the
// context, such as reading a large file — is ended then, by exit (with
// 128 + the signal, as shells report it): every record and file Faithlab
// writes is whole or absent after any end, so what was finished is kept.
func stopOnSignal(exit func(code int)) (context.Context, func() (syscall.Signal, bool)) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	var got atomic.Value
	go func() {
		s := <-ch
		signal.Stop(ch)
		sig := s.(syscall.Signal)
		got.Store(sig)
		// Ctrl-C is the user's stop: the tasks it cuts short read
		// "cancelled by you"; SIGTERM's (a scheduler, a shutdown) read
		// "interrupted".
		var cause error
		if sig == syscall.SIGINT {
			cause = job.ErrStoppedByUser
		}
		cancel(cause)
		time.AfterFunc(stopGrace, func() {
			fmt.Fprintf(os.Stderr, "faithlab-cli: stopped (%v) in a step that could not stop sooner; what was finished is kept\n", sig)
			exit(128 + int(sig))
		})
	}()
	return ctx, func() (syscall.Signal, bool) {
		s, ok := got.Load().(syscall.Signal)
		return s, ok
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: faithlab-cli COMMAND [flags] [arguments]   (faithlab-cli COMMAND -h: its flags and arguments)")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-14s %s\n", c.name, c.usage)
	}
}

// runMethods is `faithlab-cli methods [--json]`.
func runMethods(_ context.Context, args []string) error {
	fs := newFlags("methods", "", "describe every attribution method: what a spec's methods: list and attribute's flags accept")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ms := campaign.Methods()
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(ms)
	}
	for _, m := range ms {
		fmt.Printf("%s — %s [%s; %s]\n  %s\n", m.Name, m.Title, m.Category, strings.Join(m.Data, ", "), m.Doc)
		if m.NeedsData != "" {
			fmt.Printf("  needs training data: %s\n", m.NeedsData)
		}
		printParams(m.Params)
	}
	return nil
}

// runProtocols is `faithlab-cli protocols [--json]`.
func runProtocols(_ context.Context, args []string) error {
	fs := newFlags("protocols", "", "describe every evaluation protocol: what a spec's protocols: list accepts")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ps := campaign.Protocols()
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(ps)
	}
	for _, p := range ps {
		fmt.Printf("%s [%s, %s; %s]\n  %s\n", strings.ToLower(p.Name), p.Family, p.Category, strings.Join(p.Data, ", "), p.Doc)
		printParams(p.Params)
		for _, m := range p.Curves {
			fmt.Printf("    curve %s %s over %s  %s\n", m.Name, direction(m.Better), m.Over.Title, m.Doc)
		}
		for _, m := range p.Metrics {
			fmt.Printf("    score %s %s  %s\n", m.Name, direction(m.Better), m.Doc)
		}
	}
	return nil
}

func printParams(ps []param.Param) {
	for _, q := range ps {
		extra := ""
		if q.Range != "" {
			extra = " in " + param.Describe(q.Range)
		}
		if len(q.Choices) > 0 {
			extra = " one of " + strings.Join(q.Choices, ", ")
		}
		def := fmt.Sprintf("default %v", q.Default)
		if q.Required {
			def = "required"
		}
		fmt.Printf("    %-12s %-9s %s%s  %s\n", q.Name, q.Kind, def, extra, q.Doc)
	}
}

// direction marks which way a score is better; a measure of the protocol
// rather than of the method (no direction) gets a dot.
func direction[B ~string](b B) string {
	switch b {
	case "higher":
		return "↑"
	case "lower":
		return "↓"
	}
	return "·"
}
