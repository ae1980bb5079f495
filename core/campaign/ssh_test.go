//go:build cluster

package campaign

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"faithlab/core/job"
	"faithlab/internal/localcluster"
)

// loadTorchSpec is loadTorch's campaign with the spec naming only the
// engine's kind: the host comes from the command line (Options.Engine,
// what `faithlab-cli run --engine` sets), as a spec someone sent may not
// pick a host.
func loadTorchSpec(t *testing.T, dir string) *Campaign {
	t.Helper()
	c := loadTorch(t, dir)
	raw := bytes.Replace(c.Raw, []byte("engine: torch?python=/usr/bin/python3"), []byte("engine: torch"), 1)
	return loadSpec(t, dir, string(raw))
}

// The torch engine's worker on a real SSH host: Debian's sshd on
// 127.0.0.1 at a free port, a host key and a user key made for the test,
// key authentication in BatchMode (internal/localcluster).
//   - A host key other than the one known_hosts trusts is refused: the
//     campaign fails before any task, saying so.
//   - The campaign's results.csv over SSH equals the local torch engine's,
//     byte for byte.
//   - The connection dropped in the middle of a task (sshd's side killed)
//     fails that task, saying the SSH connection dropped; the other tasks
//     run over a new connection, the worker at the far end ends with its
//     connection, and the resumed run ends with the same results.csv.
func TestRealSSHTorchCampaignRefusesAWrongHostKeyMatchesLocalAndResumesADroppedConnection(t *testing.T) {
	local := loadTorchSpec(t, t.TempDir())
	sshd := localcluster.StartSSHD(t)
	t.Setenv("PATH", sshd.Bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	engine := "torch@ssh://" + sshd.Host() + "?python=/usr/bin/python3"
	ctx := context.Background()
	// The test is the user: it names the engine and allows the spec's
	// TorchScript model, as --engine and --allow-torchscript do.
	trust := func(c *Campaign) Trust { return Trust{Engines: []string{engine}}.WithScripts(c.Spec.Model.File) }

	restore := sshd.TrustOtherHostKey(t)
	c := loadTorchSpec(t, t.TempDir())
	_, err := c.Run(ctx, Options{Kernel: best(), Engine: engine, Trust: trust(c)})
	if err == nil || !strings.Contains(err.Error(), "Host key verification failed") {
		t.Fatalf("a campaign on a host whose key is not the one trusted: %v", err)
	}
	t.Logf("wrong host key: %v", err)
	if r, err := Open(c.Spec.Output); err == nil && len(r.Records) > 0 {
		t.Errorf("%d tasks ran on a host with the wrong key", len(r.Records))
	}
	restore()

	t0 := time.Now()
	want := readCSV(t, run(t, local, job.Shard{}).Dir)
	t.Logf("local torch engine: %.1f s", time.Since(t0).Seconds())
	t0 = time.Now()
	out, err := c.Run(ctx, Options{Kernel: best(), Engine: engine, Trust: trust(c)})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("over SSH: %.1f s", time.Since(t0).Seconds())
	r, err := Open(out.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Manifest.Engine != engine {
		t.Errorf("the manifest records engine %q, want %q", r.Manifest.Engine, engine)
	}
	if diff := csvDiff(readCSV(t, out.Dir), want); diff != "" {
		t.Errorf("results.csv over SSH differs from the local torch engine's:\n%s", diff)
	}

	c = loadTorchSpec(t, t.TempDir())
	events := make(chan job.Event)
	dropped := make(chan string, 1)
	go func() {
		for e := range events {
			if e.Kind == job.Progress && strings.Contains(e.Stage, "train samples") && len(dropped) == 0 && sshd.DropConnections() > 0 {
				dropped <- e.Task
			}
		}
	}()
	out, err = c.Run(ctx, Options{Kernel: best(), Engine: engine, Events: events, Trust: trust(c)})
	if err != nil {
		t.Fatal(err)
	}
	if len(dropped) == 0 {
		t.Fatal("no connection to drop while a task ran")
	}
	task := <-dropped
	if r, err = Open(out.Dir); err != nil {
		t.Fatal(err)
	}
	st := r.Status()
	if len(st.Failed) != 1 || st.Failed[0].Label != task || !strings.Contains(st.Failed[0].Error, "SSH connection dropped") {
		t.Fatalf("after the connection dropped during %q: failed %+v", task, st.Failed)
	}
	t.Logf("%s: %s", task, st.Failed[0].Error)
	localcluster.WaitFor(t, "the workers at the far end to end with their connections", 10*time.Second, func() bool { return len(sshd.Running()) == 0 })
	out, err = c.Run(ctx, Options{Kernel: best(), Engine: engine, Trust: trust(c)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := csvDiff(readCSV(t, out.Dir), want); diff != "" {
		t.Errorf("resumed results.csv differs from an uninterrupted run's:\n%s", diff)
	}
	localcluster.WaitFor(t, "the campaign's SSH connections to close", 10*time.Second, func() bool { return sshd.Sessions() == 0 && len(sshd.Running()) == 0 })
}

// csvDiff lists the rows of got that differ from want's, byte for byte.
func csvDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	if len(g) != len(w) {
		return fmt.Sprintf("%d rows, want %d", len(g), len(w))
	}
	var b strings.Builder
	for i := range g {
		if g[i] != w[i] {
			fmt.Fprintf(&b, "got  %s\nwant %s\n", g[i], w[i])
		}
	}
	return b.String()
}
