package main

import (
	"context"
	"flag"

	"faithlab/core/model"
)

// engineUsage says what --engine takes.
const engineUsage = "where networks compute: native, torch (a PyTorch worker on this machine, /usr/bin/python3) or torch@ssh://HOST; " +
	"options after ?: python=PATH, device=auto|cpu|cuda[:I], threads=N. Results on torch are close to native's, not bit-identical"

// engineFlag adds --engine (default native).
func engineFlag(fs *flag.FlagSet) *string { return fs.String("engine", "native", engineUsage) }

// openEngine opens an engine setting on this machine's GEMM kernel; close it when done.
func openEngine(ctx context.Context, setting string) (*model.Engine, error) {
	return model.OpenEngine(ctx, setting, kernel())
}
