# Faithlab: `make run` opens the app on Fashion-MNIST; `make test` runs the tests.
# Both install what they need first (Debian packages through `make deps`).

GO      ?= go
BIN     := bin
PKGS_APT := libopenblas0-pthread dataset-fashion-mnist python3-sklearn python3-torch python3-torchvision python3-scipy \
            xvfb xauth libgl1-mesa-dev libx11-dev libxcursor-dev libxrandr-dev libxinerama-dev libxi-dev \
            libxxf86vm-dev pkg-config gcc x11-apps netpbm xdotool
# What make test-cluster needs besides: the daemons of a real cluster.
PKGS_CLUSTER := slurm-wlm munge openssh-server
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps deps-cluster build run test test-cluster reproduce readme-verdicts bench bench-compare bench-resnet bench-vit bench-campaigns screenshots tour shipped-model package fuzz lint clean prior

# deps installs the Debian packages the build and the tests need; it does
# nothing when they are all present.
deps:
	@missing=$$(for p in $(PKGS_APT); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# deps-cluster installs what test-cluster needs without starting the
# services the packages bring (a policy-rc.d that says no, for the install
# only, where none is in place), and on a systemd machine disables those
# it installed, so that no sshd or slurmd starts at the next boot either.
deps-cluster: deps
	@missing=$$(for p in $(PKGS_CLUSTER); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing "(their services stay stopped)"; \
		guard=; if [ ! -e /usr/sbin/policy-rc.d ]; then guard=1; printf '#!/bin/sh\nexit 101\n' | $(SUDO) tee /usr/sbin/policy-rc.d >/dev/null && $(SUDO) chmod 755 /usr/sbin/policy-rc.d; fi; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; status=$$?; \
		if [ -n "$$guard" ]; then $(SUDO) rm -f /usr/sbin/policy-rc.d; fi; \
		if [ -d /run/systemd/system ]; then for p in $$missing; do case $$p in \
			openssh-server) $(SUDO) systemctl disable --now --quiet ssh.service ssh.socket || true;; \
			munge) $(SUDO) systemctl disable --now --quiet munge.service || true;; \
			slurm-wlm) $(SUDO) systemctl disable --now --quiet slurmctld.service slurmd.service || true;; \
			esac; done; fi; \
		exit $$status; \
	fi

build: deps
	$(GO) build -o $(BIN)/faithlab-cli ./cmd/faithlab-cli
	$(GO) build -o $(BIN)/faithlab ./cmd/faithlab

run: build
	$(BIN)/faithlab

test: deps
	$(GO) vet ./...
	CGO_ENABLED=0 $(GO) build ./core/... ./cmd/faithlab-cli
	$(GO) test -timeout 20m ./...
	$(GO) test -race -timeout 25m ./core/engine/... ./core/train/... ./core/job/... ./core/store/... ./ui/...
	$(GO) test -tags purego ./core/engine/native # the scalar kernels

# test-cluster runs the tests that need real daemons (tagged cluster): a
# one-node Slurm cluster (munged, slurmctld, slurmd) running a campaign's
# shards, a killed one resubmitted and the merge, and an OpenSSH server
# serving the torch engine. Each daemon listens on 127.0.0.1 only, from a
# temporary folder, and is stopped by pid at the end (internal/localcluster).
test-cluster: deps-cluster build
	$(GO) vet -tags cluster ./cmd/faithlab-cli ./core/campaign ./internal/...
	FAITHLAB_CLI=$(abspath $(BIN)/faithlab-cli) $(GO) test -tags cluster -count=1 -p 1 -timeout 20m -run '^TestReal' -v ./cmd/faithlab-cli ./core/campaign

# reproduce runs every seed paper's reproduction at its quick size into
# reproduce/NAME (a killed one resumes), each REPORT.md setting our numbers
# beside the paper's, and compares each claim's verdict with the one
# recorded in core/reproduce/testdata/NAME-quick.verdicts: a difference is
# a change in the science (or in the GEMM kernel's rounding, on a
# borderline claim), for a person to look at, and fails the target once
# every reproduction has run.
reproduce: build
	@status=0; for r in $$($(BIN)/faithlab-cli reproduce --list | grep -v '^ ' | cut -d' ' -f1); do \
		$(BIN)/faithlab-cli reproduce $$r --size quick --out reproduce/$$r --quiet > reproduce-$$r.verdicts || exit 1; \
		mv reproduce-$$r.verdicts reproduce/$$r/verdicts; cat reproduce/$$r/verdicts; \
		diff core/reproduce/testdata/$$r-quick.verdicts reproduce/$$r/verdicts || { echo "$$r: verdicts differ from the recorded ones"; status=1; }; done; \
	exit $$status

# readme-verdicts writes README.md's table of the quick verdicts from the
# recorded ones (core/reproduce/testdata/NAME-quick.verdicts); a test fails
# while the two differ.
readme-verdicts:
	$(GO) test ./core/reproduce -run '^TestREADMEVerdictsAreTheGoldens$$' -count=1 -args -update-readme

bench: build
	$(GO) test -run '^$$' -bench . -benchtime 2s ./core/...
	$(BIN)/faithlab-cli bench

# bench-campaigns runs the shipped campaigns from a clean folder and prints
# wall time, peak RSS and time by stage, with the machine (scripts/bench-campaigns).
# make bench-campaigns NAME…: the names after it are campaigns
# (testdata/campaigns/NAME.yaml), not targets of their own.
bench-campaigns: build
	scripts/bench-campaigns $(filter-out bench-campaigns,$(MAKECMDGOALS))
ifneq ($(filter bench-campaigns,$(MAKECMDGOALS)),)
$(filter-out bench-campaigns,$(MAKECMDGOALS)):
	@:
endif

bench-compare: build
	$(BIN)/faithlab-cli bench-compare --peer ../shared/bench/torch_peer.py --only cnn,unet,road --rounds 2

# bench-resnet compares ResNet-18 and ResNet-50 at 224×224 (ONNX, native engine) with PyTorch on
# the same weights, three alternating rounds, every round printed.
bench-resnet: build
	$(BIN)/faithlab-cli bench-compare --peer testdata/onnx/resnet_peer.py --only resnet --rounds 3

# bench-vit compares torchvision's vit_b_16 at 224×224 (ONNX at opset 14, native engine) with PyTorch
# on the same threads, batches of 16: logits, and logits with input gradients (testdata/onnx/vit_peer.py).
bench-vit: build
	$(BIN)/faithlab-cli bench-compare --peer testdata/onnx/vit_peer.py --only vit --rounds 3

# prior trains the Fashion-MNIST unet-s diffusion prior that resources/priors
# embeds (about 1.9 MB; its header holds the training record). A killed run
# resumes from $(BIN)/prior.ckpt when started again.
prior: build
	$(BIN)/faithlab-cli train-prior --dataset fashion-mnist --arch unet-s --epochs 20 --batch 128 --lr 1e-3 \
		--seed 1 --checkpoint $(BIN)/prior.ckpt --out resources/priors/fashion-mnist-unet-s.flm

fuzz: deps
	$(GO) test -run '^$$' -fuzz FuzzParseIDX -fuzztime 30s ./core/data
	$(GO) test -run '^$$' -fuzz FuzzParseNPY -fuzztime 30s ./core/data
	$(GO) test -run '^$$' -fuzz FuzzParseNPZ -fuzztime 30s ./core/data
	$(GO) test -run '^$$' -fuzz FuzzDecodeImage -fuzztime 30s ./core/data
	$(GO) test -run '^$$' -fuzz FuzzDecodeMask -fuzztime 30s ./core/data
	$(GO) test -run '^$$' -fuzz FuzzParseCSV -fuzztime 30s ./core/data
	$(GO) test -run '^$$' -fuzz FuzzParseCIFAR -fuzztime 30s ./core/data
	$(GO) test -run '^$$' -fuzz FuzzDecode -fuzztime 30s ./core/model
	$(GO) test -run '^$$' -fuzz FuzzDescription -fuzztime 30s ./core/model
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 30s ./core/spec
	$(GO) test -run '^$$' -fuzz FuzzParseTarget -fuzztime 30s ./core/engine/torch
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime 30s ./core/engine/onnx
	$(GO) test -run '^$$' -fuzz '^FuzzFold$$' -fuzztime 30s ./core/engine/onnx
	$(GO) test -run '^$$' -fuzz FuzzMapsFile -fuzztime 30s ./core/attr
	$(GO) test -run '^$$' -fuzz FuzzRunFolder -fuzztime 30s ./core/store

# screenshots tours every screen of the real app under Xvfb, after a small
# real campaign, into screenshots/; its settings and files go to a temporary
# folder, never to the user's.
screenshots: build
	rm -rf screenshots && mkdir -p screenshots
	tmp=$$(mktemp -d) && XDG_CONFIG_HOME=$$tmp/config XDG_CACHE_HOME=$$tmp/cache xvfb-run -a -s "-screen 0 1280x800x24" \
		$(BIN)/faithlab -root $$tmp/root -screenshots screenshots; status=$$?; rm -rf $$tmp; exit $$status

# tour drives the app under Xvfb through a new user's first day (13 tasks)
# with xdotool, as a person would — finding what it clicks where the app
# says its widgets are — a screenshot per step into tour/, each task's
# seconds into tour/times.tsv, and a failure when a check of a step does
# not hold (scripts/tour) — among them that the estimate Evaluate showed is
# within ±35 % of the campaign's wall time, both read back from the run's
# manifest (tour/estimate.txt), and that the window answers each of ten
# inputs sent while the campaign runs within 200 ms of their sending and
# draws it within a second (tour/latency.txt); then it breaks steps on purpose and fails
# unless the tour fails there (scripts/tour-selftest). It trains a model
# and runs a campaign: minutes.
tour: build
	xvfb-run -a -s "-screen 0 1280x800x24" scripts/tour tour; status=$$?; \
	if [ $$status -eq 3 ]; then echo "make tour: no display; once more"; \
		xvfb-run -a -s "-screen 0 1280x800x24" scripts/tour tour; status=$$?; fi; exit $$status
	xvfb-run -a -s "-screen 0 1280x800x24" scripts/tour-selftest tour/selftest

# shipped-model trains the Fashion-MNIST goar-cnn that resources/ embeds and
# the workbench opens on its first start (its file records this recipe).
shipped-model: build
	$(BIN)/faithlab-cli train --dataset fashion-mnist --model goar-cnn --epochs 30 --seed 1 --out resources/goar-cnn-fashion-mnist.flm

# package builds Faithlab.tar.xz, an installable Linux bundle of the app
# with its icon and desktop entry (from FyneApp.toml; `make install` inside
# it installs them), with the fyne tool.
# The tool bumps the build number in FyneApp.toml: the file is put back,
# so that packaging leaves the tree as it was.
package: build
	cp FyneApp.toml $(BIN)/FyneApp.toml.kept
	$(GO) run fyne.io/tools/cmd/fyne@v1.7.4 package -os linux --executable $(BIN)/faithlab --name Faithlab --release; \
		status=$$?; mv $(BIN)/FyneApp.toml.kept FyneApp.toml; exit $$status

clean:
	rm -rf $(BIN) screenshots tour Faithlab.tar.xz
