package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"faithlab/core/job"
	"faithlab/core/report"
	"faithlab/core/reproduce"
)

// runReproduce is `faithlab-cli reproduce NAME [--size quick] [--out DIR]`
// and `faithlab-cli reproduce --list`.
func runReproduce(ctx context.Context, args []string) error {
	fs := newFlags("reproduce", "NAME", "run a seed paper's central experiment and write a report that sets our results beside the paper's, claim by claim (holds, holds in part, does not hold, inconclusive, not evaluated); --list names them")
	list := fs.Bool("list", false, "list the reproductions, their papers and sizes, and run nothing")
	size := fs.String("size", "quick", "size: smoke (seconds), quick (minutes on 2 cores) or paper (the paper's scale where the data is here)")
	out := fs.String("out", "", "report folder (default reproduce-NAME-SIZE); the same command again resumes it")
	figures := fs.String("figures", "png", "figure formats drawn into OUT/figures (png, svg, pdf; \"\": none)")
	quiet := fs.Bool("quiet", false, "print only task ends, not progress")
	var data dataFlag
	fs.Var(&data, "data", "NAME=PATH: a dataset of the paper's that this machine lacks, read in place of the one it stands for (reproduce --list names them: cifar10=PATH/cifar-10-batches-bin); again for another")
	prior := fs.String("prior", "", "a diffusion prior trained on the --data given, where the reproduction's GOAR or FUD needs one (faithlab-cli train-prior)")
	var pos []string
	for rest := args; len(rest) > 0; {
		if err := fs.Parse(rest); err != nil {
			return err
		}
		if rest = fs.Args(); len(rest) > 0 {
			pos, rest = append(pos, rest[0]), rest[1:]
		}
	}
	if *list {
		all, err := reproduce.List()
		if err != nil {
			return err
		}
		for _, r := range all {
			fmt.Printf("%s — %s\n  %s\n", r.Name, r.Title, r.Paper)
			for _, s := range reproduce.Sizes {
				fmt.Printf("  %-6s %s\n", s, r.Sizes[s].Scaled)
			}
			for _, k := range slices.Sorted(maps.Keys(r.Alternatives)) {
				fmt.Printf("  --data %s=PATH: %s, in place of %s\n", k, r.Alternatives[k].Name, r.Alternatives[k].Replaces)
			}
		}
		return nil
	}
	if len(pos) != 1 {
		return usageError(fs, fmt.Sprintf("want one reproduction's name (faithlab-cli reproduce --list names them), got %d arguments", len(pos)))
	}
	name := pos[0]
	r, err := reproduce.Get(name)
	if err != nil {
		return err
	}
	if *out == "" {
		*out = fmt.Sprintf("reproduce-%s-%s", name, *size)
	}
	var formats []string
	if *figures != "" {
		formats = strings.Split(*figures, ",")
		if err := report.CheckFormats(formats...); err != nil {
			return fmt.Errorf("--figures: %w", err)
		}
	}
	events := make(chan job.Event)
	printed := make(chan struct{})
	go func() {
		newProgress(os.Stderr, *quiet).show(events)
		close(printed)
	}()
	ran, err := reproduce.Run(ctx, r, reproduce.Options{Size: *size, Out: *out, Kernel: kernel(), Events: events, Figures: formats, Data: data.m, Prior: *prior})
	<-printed
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(os.Stderr, "stopped; finished tasks are kept in %s: run the same command again to resume\n", *out)
		}
		return err
	}
	for _, v := range ran.Verdicts {
		fmt.Println(v.Line())
	}
	fmt.Fprintf(os.Stderr, "reproduction %s (%s): %.0f s; report in %s\n", name, *size, ran.Elapsed.Seconds(), ran.Report)
	if ran.Failed > 0 {
		return fmt.Errorf("%s failed: see faithlab-cli status %s/run", report.Count(ran.Failed, "task"), *out)
	}
	return nil
}

// dataFlag is --data NAME=PATH, given once a dataset.
type dataFlag struct{ m map[string]string }

func (d *dataFlag) String() string { return "" }

func (d *dataFlag) Set(v string) error {
	name, path, ok := strings.Cut(v, "=")
	if !ok || name == "" || path == "" {
		return fmt.Errorf("%q: want NAME=PATH, e.g. cifar10=/data/cifar-10-batches-bin", v)
	}
	if d.m == nil {
		d.m = map[string]string{}
	}
	if _, dup := d.m[name]; dup {
		return fmt.Errorf("%s given twice", name)
	}
	d.m[name] = path
	return nil
}
