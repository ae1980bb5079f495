package torch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"faithlab/core/data"
	"faithlab/core/train"
)

// goarOn builds goar-cnn on e with a native network's seeded weights.
func goarOn(t *testing.T, e *Engine) *Net {
	t.Helper()
	return onTorch(t, e, nativeNet(t, "goar-cnn", []int{1, 28, 28}))
}

// randomSet is n random 28×28 images with labels, for training that
// takes a while.
func randomSet(n int) *data.Dataset {
	ds := &data.Dataset{Name: "random", Shape: []int{1, 28, 28}, Classes: []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"},
		X: uniform(3, n*784, 0, 1), Y: make([]int, n)}
	for i := range ds.Y {
		ds.Y[i] = i % 10
	}
	return ds
}

func gone(pid int) bool {
	return syscall.Kill(pid, 0) != nil
}

func waitGone(t *testing.T, pid int, within time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if gone(pid) {
			return
		}
	}
	t.Errorf("worker %d still runs %s later", pid, within)
}

// A worker killed in the middle of a request fails that request with an
// error that names the machine, the process and the request; the next
// request starts a new worker, where the network is rebuilt from the
// weights the Go side holds.
func TestKilledWorkerFailsTheRequestAndIsReplaced(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("kills by pid")
	}
	e := testEngine(t)
	ctx := context.Background()
	m := goarOn(t, e)
	x := uniform(1, 4*784, 0, 1)
	before, err := m.Forward(x, 4)
	if err != nil {
		t.Fatal(err)
	}
	before = slices.Clone(before)
	info, err := e.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	killed := false
	_, err = train.Train(ctx, m, randomSet(8192), train.Config{Epochs: 1, BatchSize: 64, ValFraction: -1, Patience: -1}, func(train.Progress) {
		if !killed {
			killed = true
			syscall.Kill(info.PID, syscall.SIGKILL)
		}
	})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("(pid %d) died during train_epoch", info.PID)) || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("training when its worker was killed: %v", err)
	}
	t.Log(err)
	after, err := m.Forward(x, 4)
	if err != nil {
		t.Fatalf("the request after the kill: %v", err)
	}
	near(t, "logits on the new worker", after, before, 0)
	if now, _ := e.Info(ctx); now.PID == info.PID {
		t.Errorf("still worker %d", now.PID)
	}
}

// A cancelled context stops training in the worker within a batch, and
// the worker goes on serving.
func TestCancelStopsTrainingInTheWorker(t *testing.T) {
	e := testEngine(t)
	m := goarOn(t, e)
	info, _ := e.Info(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var at time.Time
	_, err := train.Train(ctx, m, randomSet(8192), train.Config{Epochs: 1, BatchSize: 64, ValFraction: -1, Patience: -1}, func(train.Progress) {
		if at.IsZero() {
			at = time.Now()
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled training: %v", err)
	}
	if d := time.Since(at); d > 5*time.Second {
		t.Errorf("training stopped %s after the cancel", d)
	}
	if _, err := m.Forward(uniform(1, 784, 0, 1), 1); err != nil {
		t.Fatal(err)
	}
	if now, _ := e.Info(context.Background()); now.PID != info.PID {
		t.Errorf("the cancel replaced worker %d by %d", info.PID, now.PID)
	}
}

// A worker that goes silent (stopped: no reply, no heartbeat) is taken
// for hung after the hang timeout and replaced at the next request.
func TestSilentWorkerIsStoppedAsHung(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("stops by pid")
	}
	requireTorch(t)
	ctx := context.Background()
	e, err := Open(ctx, "torch?python=/usr/bin/python3", Options{HangTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	m := goarOn(t, e)
	info, _ := e.Info(ctx)
	syscall.Kill(info.PID, syscall.SIGSTOP)
	t0 := time.Now()
	_, err = m.Forward(uniform(1, 784, 0, 1), 1)
	if err == nil || !strings.Contains(err.Error(), "no heartbeat for 2s") {
		t.Fatalf("forward on a stopped worker: %v", err)
	}
	t.Logf("after %.1f s: %v", time.Since(t0).Seconds(), err)
	waitGone(t, info.PID, 5*time.Second)
	if _, err := m.Forward(uniform(1, 784, 0, 1), 1); err != nil {
		t.Fatalf("the request after the hang: %v", err)
	}
}

// An interpreter without torch: the error names the machine and the
// interpreter and says what to install. The interpreter here is Debian's
// Python behind a wrapper whose torch fails to import.
func TestInterpreterWithoutTorchSaysWhatToInstall(t *testing.T) {
	requireTorch(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "torch"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "torch", "__init__.py"), []byte("raise ImportError(\"No module named 'torch'\")\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	python := filepath.Join(dir, "python3")
	wrapper := fmt.Sprintf("#!/bin/sh\nPYTHONPATH=%s exec /usr/bin/python3 \"$@\"\n", dir)
	if err := os.WriteFile(python, []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), "torch?python="+python, Options{})
	for _, want := range []string{"this machine", "cannot import torch", "apt-get install python3-torch", "pip install torch"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
	_, err = Open(context.Background(), "torch?python="+filepath.Join(dir, "no-python3"), Options{})
	if err == nil || !strings.Contains(err.Error(), "install Python 3 with PyTorch") {
		t.Errorf("a missing interpreter: %v", err)
	}
}

// fakeSSH puts an ssh on PATH that runs the remote command on this
// machine, logs its arguments, and, on SIGUSR1, kills the command and
// exits 255 as ssh does when the connection drops.
func fakeSSH(t *testing.T) (log string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "ssh.log")
	script := `#!/bin/sh
echo "$@" > "` + log + `"
while [ $# -gt 0 ]; do
	case "$1" in
	-T) shift ;;
	-o|-p) shift 2 ;;
	*) break ;;
	esac
done
shift # the host
exec 3<&0 # a background command's stdin would be /dev/null
sh -c "exec $*" <&3 3<&- &
child=$!
trap 'kill -9 $child; exit 255' USR1
wait $child
`
	if err := os.WriteFile(filepath.Join(dir, "ssh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return log
}

// A worker on a remote host runs through ssh (here a stand-in that runs
// the command locally): the same results as on this machine; a dropped
// connection fails the request under way with an error naming the host.
func TestWorkerOverSSH(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs sh")
	}
	requireTorch(t)
	log := fakeSSH(t)
	ctx := context.Background()
	e, err := Open(ctx, "torch@ssh://ada@gpu-host:2222?python=/usr/bin/python3&device=cpu", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	args, _ := os.ReadFile(log)
	if s := string(args); !strings.Contains(s, "-p 2222 ada@gpu-host") || !strings.Contains(s, "'/usr/bin/python3' '-u' '-c'") {
		t.Errorf("ssh ran with %s", s)
	}
	nat := nativeNet(t, "goar-cnn", []int{1, 28, 28})
	m := onTorch(t, e, nat)
	x := uniform(2, 4*784, 0, 1)
	want, _ := nat.Forward(x, 4)
	got, err := m.Forward(x, 4)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "logits through ssh", got, want, 1e-5)

	e.mu.Lock()
	ssh := e.w.cmd.Process.Pid
	e.mu.Unlock()
	syscall.Kill(ssh, syscall.SIGUSR1)
	time.Sleep(200 * time.Millisecond)
	_, err = m.Forward(x, 4)
	if err == nil || !strings.Contains(err.Error(), "gpu-host: the SSH connection dropped during forward") {
		t.Fatalf("forward after the connection dropped: %v", err)
	}
	t.Log(err)
}

// A worker never outlives the process that started it: a process that
// opened an engine is killed with SIGKILL (no chance to clean up), and
// its worker ends within seconds.
func TestWorkerEndsWithTheProcessThatStartedIt(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks /proc")
	}
	requireTorch(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcessHoldsAWorker$")
	cmd.Env = append(os.Environ(), "FAITHLAB_TORCH_HELPER=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := 0
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "worker pid "); ok {
			pid, _ = strconv.Atoi(v)
			break
		}
	}
	if pid == 0 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the helper process started no worker")
	}
	cmd.Process.Kill()
	cmd.Wait()
	waitGone(t, pid, 10*time.Second)
}

// TestHelperProcessHoldsAWorker is the process TestWorkerEndsWithTheProcessThatStartedIt kills.
func TestHelperProcessHoldsAWorker(t *testing.T) {
	if os.Getenv("FAITHLAB_TORCH_HELPER") != "1" {
		t.Skip("run by TestWorkerEndsWithTheProcessThatStartedIt")
	}
	e, err := Open(context.Background(), "torch?python=/usr/bin/python3", Options{})
	if err != nil {
		t.Fatal(err)
	}
	info, _ := e.Info(context.Background())
	fmt.Printf("worker pid %d\n", info.PID)
	time.Sleep(time.Minute)
}

// A released network is freed in the worker by the engine's next request
// — a build among them, before it builds: a campaign's task releases its
// network so that the next task's module is not loaded beside it. The
// released one is then unknown to the worker, which says so.
func TestReleasedNetworkIsFreedByTheNextBuild(t *testing.T) {
	e := testEngine(t)
	ctx := context.Background()
	shape := []int{1, 8, 8}
	a, err := e.New(ctx, "mlp", shape, 3)
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, 2*64)
	if _, err := a.Forward(x, 2); err != nil {
		t.Fatal(err)
	}
	a.Release()
	b, err := e.New(ctx, "mlp", shape, 3)
	if err != nil {
		t.Fatal(err)
	}
	if free := e.takeFree(); len(free) != 0 {
		t.Errorf("ids %v still queued after the build", free)
	}
	if _, err := b.Forward(x, 2); err != nil {
		t.Errorf("the new network: %v", err)
	}
	if _, err := a.Forward(x, 2); err == nil || !strings.Contains(err.Error(), "not held here") {
		t.Errorf("the released network's request: %v, want the worker to say it holds it no more", err)
	}
}
