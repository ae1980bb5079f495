// Command faithlab-cli is Faithlab's headless front end: it trains and
// evaluates built-in models, moves weights to and from PyTorch, and measures
// the engine against the PyTorch peer. It never links the GUI toolkit.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
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
		{"evaluate", "evaluate attribution methods with removal protocols (ROAR, KAR, ROAD, Eval-X, deletion, Sensitivity-N, Infidelity)", runEvaluate},
		{"run", "run (or resume) the campaign a spec file describes; --shard I/N runs one part of it", runCampaign},
		{"status", "what a campaign's run folder holds: tasks done, failed and to run", runStatus},
		{"export", "write a run's tidy CSV", runExportResults},
		{"merge", "join the run folders of a campaign's shards into one", runMerge},
		{"slurm", "write a SLURM sbatch array script that runs a campaign's shards", runSlurm},
		{"impute", "fill the removed pixels of an image (.npy) from a reference, ROAD's noisy linear imputation included", runImpute},
		{"trace-compare", "score attribution methods and TRACE on the deletion metric (TRACE paper, Table 1)", runTraceCompare},
		{"weights-export", "write a model's weights to .npz with PyTorch's state_dict names", runWeightsExport},
		{"weights-import", "build a model file from PyTorch weights in .npz", runWeightsImport},
		{"bench", "measure the engine on the PyTorch peer's workloads (JSON lines)", runBench},
		{"bench-compare", "run our benchmarks and the PyTorch peer alternately and print the ratios", runBenchCompare},
		{"datasets", "list the built-in dataset ids and what they hold", runDatasets},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	for _, c := range commands() {
		if c.name == os.Args[1] {
			if err := c.run(ctx, os.Args[2:]); err != nil {
				if errors.Is(err, flag.ErrHelp) {
					os.Exit(0)
				}
				fmt.Fprintf(os.Stderr, "faithlab-cli %s: %v\n", c.name, err)
				os.Exit(1)
			}
			return
		}
	}
	usage()
	os.Exit(2)
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: faithlab-cli COMMAND [flags]   (COMMAND -h for its flags)")
	for _, c := range commands() {
		fmt.Fprintf(os.Stderr, "  %-14s %s\n", c.name, c.usage)
	}
}
