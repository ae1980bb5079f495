package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"

	"faithlab/core/bench"
	"faithlab/core/data"
	"faithlab/core/engine/gemm"
	"faithlab/core/model"
)

func runBench(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object per line, as the peer script does")
	only := fs.String("only", "cnn,unet,road,gemm", "figure groups to run (gemm: the GEMM kernel alone, the ceiling the others are judged against; resnet: ResNet-18 and -50 at 224×224 from --onnx-dir; vit: vit_b_16 at 224×224 from --onnx-dir)")
	quick := fs.Bool("quick", false, "shorter timing windows")
	onnxDir := fs.String("onnx-dir", "", "the resnet and vit groups' models: resnet18.onnx and resnet50.onnx, vit_b_16.onnx, as testdata/onnx/resnet_peer.py and vit_peer.py --export DIR write them")
	engineSetting := engineFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	eng, err := openEngine(ctx, *engineSetting)
	if err != nil {
		return err
	}
	defer eng.Close()
	return benchRun(ctx, *only, *quick, *onnxDir, eng, func(r bench.Result) {
		if *asJSON {
			json.NewEncoder(os.Stdout).Encode(r)
			return
		}
		fmt.Printf("%-24s %10.1f %-12s %s\n", r.Key(), r.Value, r.Unit, r.Kernel)
	})
}

func benchRun(ctx context.Context, only string, quick bool, onnxDir string, eng *model.Engine, emit func(bench.Result)) error {
	opt := bench.Options{MinSeconds: 3, Kernel: kernel(), Engine: eng}
	if quick {
		opt.MinSeconds = 1
	}
	groups := map[string]bool{}
	for _, g := range strings.Split(only, ",") {
		groups[strings.TrimSpace(g)] = true
	}
	if groups["gemm"] {
		if err := bench.GEMM(ctx, opt, emit); err != nil {
			return err
		}
	}
	if groups["resnet"] {
		if onnxDir == "" {
			return errors.New("the resnet group reads its models from --onnx-dir (write them with testdata/onnx/resnet_peer.py --export DIR)")
		}
		if err := bench.ResNet(ctx, onnxDir, opt, emit); err != nil {
			return err
		}
	}
	if groups["vit"] {
		if onnxDir == "" {
			return errors.New("the vit group reads its model from --onnx-dir (write it with testdata/onnx/vit_peer.py --export DIR)")
		}
		if err := bench.ViT(ctx, onnxDir, opt, emit); err != nil {
			return err
		}
	}
	if !groups["cnn"] && !groups["unet"] && !groups["road"] {
		return nil
	}
	ds, _, err := data.Open("fashion-mnist", data.Options{})
	if err != nil {
		return err
	}
	if groups["cnn"] {
		if err := bench.CNN(ctx, ds, opt, emit); err != nil {
			return err
		}
	}
	if groups["unet"] {
		if err := bench.UNet(ctx, ds, opt, emit); err != nil {
			return err
		}
	}
	if groups["road"] {
		if err := bench.Road(ctx, ds, opt, emit); err != nil {
			return err
		}
	}
	return nil
}

// coreType is the OPENBLAS_CORETYPE that reproduces the core our kernel
// runs, for giving the peer the same BLAS kernels.
func coreType() string {
	k, err := gemm.LoadOpenBLAS()
	if err != nil {
		return ""
	}
	name := strings.Fields(k.Name())
	if len(name) < 2 {
		return ""
	}
	return strings.ToUpper(name[1])
}

func runBenchCompare(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench-compare", flag.ContinueOnError)
	peer := fs.String("peer", "../shared/bench/torch_peer.py", "the PyTorch peer script")
	python := fs.String("python", "/usr/bin/python3", "Python with torch (Debian's python3-torch)")
	only := fs.String("only", "cnn", "figure groups to run")
	rounds := fs.Int("rounds", 2, "alternating rounds; the best of each side is compared, and every round's figures are printed")
	quick := fs.Bool("quick", false, "shorter timing windows")
	engineSetting := engineFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	ct := coreType()
	if _, set := os.LookupEnv("OPENBLAS_CORETYPE"); ct != "" && !set {
		// A torch worker's OpenBLAS gets the peer's core type too.
		os.Setenv("OPENBLAS_CORETYPE", ct)
	}
	eng, err := openEngine(ctx, *engineSetting)
	if err != nil {
		return err
	}
	defer eng.Close()
	onnxDir := ""
	if groups := strings.Split(*only, ","); slices.Contains(groups, "resnet") || slices.Contains(groups, "vit") {
		// The peer writes the models it times; Faithlab reads them.
		if onnxDir, err = os.MkdirTemp("", "faithlab-onnx-"); err != nil {
			return err
		}
		defer os.RemoveAll(onnxDir)
		cmd := exec.CommandContext(ctx, *python, *peer, "--export", onnxDir)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("peer %s --export: %w", *peer, err)
		}
	}
	ours, theirs := map[string]float64{}, map[string]float64{}
	kern := ""
	for r := 0; r < *rounds; r++ {
		err := benchRun(ctx, *only, *quick, onnxDir, eng, func(b bench.Result) {
			fmt.Printf("round %d faithlab %-24s %10.1f %s\n", r+1, b.Key(), b.Value, b.Unit)
			ours[b.Key()] = max(ours[b.Key()], b.Value)
			if kern == "" {
				kern = b.Kernel // the first figure's: the network's, GEMM and elementwise kernels
			}
		})
		if err != nil {
			return err
		}
		pargs := []string{*peer, "--threads", "2", "--only", *only}
		if *quick {
			pargs = append(pargs, "--quick")
		}
		cmd := exec.CommandContext(ctx, *python, pargs...)
		cmd.Env = os.Environ()
		if ct != "" {
			cmd.Env = append(cmd.Env, "OPENBLAS_CORETYPE="+ct)
		}
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("peer %s: %w", *peer, err)
		}
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		for sc.Scan() {
			var b bench.Result
			if json.Unmarshal(sc.Bytes(), &b) == nil && b.Bench != "" {
				fmt.Printf("round %d torch    %-24s %10.1f %s\n", r+1, b.Key(), b.Value, b.Unit)
				theirs[b.Key()] = max(theirs[b.Key()], b.Value)
			}
		}
	}
	fmt.Printf("faithlab kernel: %s; peer OPENBLAS_CORETYPE=%s; best of %d alternating rounds\n", kern, ct, *rounds)
	fmt.Printf("%-24s %12s %12s %8s\n", "bench", "faithlab", "torch", "ratio")
	var names []string
	for n := range ours {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if t, ok := theirs[n]; ok && t > 0 {
			fmt.Printf("%-24s %12.1f %12.1f %7.2f×\n", n, ours[n], t, ours[n]/t)
		} else {
			fmt.Printf("%-24s %12.1f %12s %8s\n", n, ours[n], "-", "-")
		}
	}
	return nil
}
