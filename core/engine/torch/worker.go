package torch

import (
	"bufio"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"faithlab/core/engine"
)

// script is the worker, sent to the interpreter on its stdin.
//
//go:embed worker.py
var script []byte

// hello is what a worker says when it starts.
type hello struct {
	OK            bool   `json:"ok"`
	Missing       string `json:"missing"` // the module that failed to import
	Error         string `json:"error"`
	Torch         string `json:"torch"`
	Python        string `json:"python"`
	Executable    string `json:"executable"`
	Device        string `json:"device"`
	DeviceName    string `json:"device_name"`
	CUDA          string `json:"cuda"`
	Threads       int    `json:"threads"`
	Deterministic bool   `json:"deterministic"`
	PID           int    `json:"pid"`
}

// RemoteError is a request the worker refused or failed: the worker goes on.
type RemoteError struct {
	Where, Op, Msg, Trace string
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("torch worker on %s: %s: %s", e.Where, e.Op, e.Msg)
}

// worker is one running worker process and its connection.
type worker struct {
	t      Target
	opt    Options
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	w      *bufio.Writer
	frames chan *frame
	exited chan struct{} // closed once the process has been waited for
	errOut tail          // the last of its stderr
	hello  hello

	readErr error // why the frames channel closed; read after it closes
	waitErr error // the process's exit; read after exited closes

	mu     sync.Mutex // one request at a time
	wmu    sync.Mutex // whole frames
	nextID int64
	broken error // once set, every request fails with it
}

// bootstrap is the interpreter's -c program: it reads the worker script
// of n bytes from stdin and runs it; the protocol follows on stdin.
func bootstrap(n int) string {
	return `import sys;exec(compile(sys.stdin.buffer.read(` + strconv.Itoa(n) + `),"faithlab_worker.py","exec"))`
}

// shellQuote quotes s for a POSIX shell (the remote end of ssh).
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// command is the process that runs a worker for t: the interpreter here,
// or ssh running it on t.Host.
func command(t Target, opt Options) *exec.Cmd {
	det := "1"
	if opt.NonDeterministic {
		det = "0"
	}
	dev := t.Device
	if dev == "" {
		dev = "auto"
	}
	args := []string{"-u", "-c", bootstrap(len(script)), "--device", dev, "--threads", strconv.Itoa(t.Threads),
		"--deterministic", det, "--heartbeat", fmt.Sprint(opt.heartbeat().Seconds())}
	if t.Host == "" {
		cmd := exec.Command(t.python(), args...)
		ownProcessGroup(cmd)
		return cmd
	}
	remote := []string{shellQuote(t.python())}
	for _, a := range args {
		remote = append(remote, shellQuote(a))
	}
	ssh := []string{"-T", "-o", "BatchMode=yes", "-o", "ServerAliveInterval=10", "-o", "ServerAliveCountMax=3"}
	if t.Port != 0 {
		ssh = append(ssh, "-p", strconv.Itoa(t.Port))
	}
	ssh = append(ssh, t.Host, strings.Join(remote, " "))
	cmd := exec.Command(opt.sshProgram(), ssh...)
	ownProcessGroup(cmd)
	return cmd
}

// startWorker starts a worker and waits for its hello.
func startWorker(ctx context.Context, t Target, opt Options) (*worker, error) {
	w := &worker{t: t, opt: opt, frames: make(chan *frame, 16), exited: make(chan struct{})}
	w.cmd = command(t, opt)
	w.cmd.Stderr = &w.errOut
	if opt.Stderr != nil {
		w.cmd.Stderr = io.MultiWriter(&w.errOut, opt.Stderr)
	}
	var err error
	if w.stdin, err = w.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := w.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := w.cmd.Start(); err != nil {
		if t.Host != "" {
			return nil, fmt.Errorf("torch worker on %s: cannot run ssh (%s): %w: install an OpenSSH client", t.Host, opt.sshProgram(), err)
		}
		return nil, fmt.Errorf("torch worker on this machine: cannot run %s: %w: install Python 3 with PyTorch (Debian: apt-get install python3-torch), or name the interpreter with torch?python=PATH", t.python(), err)
	}
	w.w = bufio.NewWriterSize(w.stdin, 1<<20)
	go w.read(bufio.NewReaderSize(stdout, 1<<20))
	// The script first; the worker runs it and answers with its hello.
	go func() {
		w.wmu.Lock()
		defer w.wmu.Unlock()
		w.w.Write(script)
		w.w.Flush()
	}()
	timeout := time.NewTimer(opt.startTimeout())
	defer timeout.Stop()
	select {
	case f, ok := <-w.frames:
		if !ok {
			return nil, w.startError()
		}
		if f.Event != "hello" || f.decode(&w.hello) != nil {
			w.kill()
			return nil, fmt.Errorf("torch worker on %s: %s did not start the worker: it said %.200q", t.where(), t.python(), f.raw)
		}
		if !w.hello.OK {
			w.kill()
			return nil, w.missingError()
		}
		return w, nil
	case <-timeout.C:
		w.kill()
		return nil, fmt.Errorf("torch worker on %s: no answer within %s of starting %s (importing torch takes a few seconds; a stalled ssh login takes forever)%s",
			t.where(), opt.startTimeout(), t.python(), w.lastWords())
	case <-ctx.Done():
		w.kill()
		return nil, ctx.Err()
	}
}

// read turns stdout into frames until it ends, then waits for the process.
func (w *worker) read(r *bufio.Reader) {
	for {
		f, err := readFrame(r)
		if err != nil {
			w.readErr = err
			close(w.frames)
			break
		}
		w.frames <- f
	}
	w.waitErr = w.cmd.Wait()
	close(w.exited)
}

// waitExit waits a little for the process to end, for its exit status.
func (w *worker) waitExit() error {
	select {
	case <-w.exited:
		return w.waitErr
	case <-time.After(3 * time.Second):
		return errors.New("still running")
	}
}

// exitCode is the process's exit status, −1 when it was signalled or
// did not exit.
func (w *worker) exitCode() int {
	var ee *exec.ExitError
	if err := w.waitExit(); errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// lastWords is the end of the worker's stderr, for an error message.
func (w *worker) lastWords() string {
	s := strings.TrimSpace(w.errOut.String())
	if s == "" {
		return ""
	}
	return "; its last output:\n" + s
}

// startError says why a worker ended before its hello.
func (w *worker) startError() error {
	t := w.t
	code := w.exitCode()
	switch {
	case t.Host != "" && code == 255:
		return fmt.Errorf("torch worker on %s: ssh failed (exit 255: no connection, or the login was refused; BatchMode needs key authentication)%s", t.Host, w.lastWords())
	case code == 127:
		return fmt.Errorf("torch worker on %s: %s not found there (exit 127): install Python 3 with PyTorch (Debian: apt-get install python3-torch; elsewhere: pip install torch numpy), or name the interpreter with torch?python=PATH%s",
			t.where(), t.python(), w.lastWords())
	}
	return fmt.Errorf("torch worker on %s: %s ended before the worker started (%v)%s", t.where(), t.python(), w.waitExit(), w.lastWords())
}

// missingError says which module the interpreter lacks and what to install.
func (w *worker) missingError() error {
	h := w.hello
	what := "PyTorch (Debian: apt-get install python3-torch; elsewhere: pip install torch)"
	if h.Missing == "numpy" {
		what = "NumPy (Debian: apt-get install python3-numpy; elsewhere: pip install numpy)"
	}
	return fmt.Errorf("torch worker on %s: Python %s (%s) cannot import %s (%s): install %s there, or name an interpreter that has it with torch?python=PATH",
		w.t.where(), h.Python, h.Executable, h.Missing, h.Error, what)
}

// kill stops the worker: its process group here, or the ssh connection,
// whose end ends the remote worker (end of its stdin).
func (w *worker) kill() {
	if w.cmd.Process != nil {
		killProcessGroup(w.cmd)
	}
}

// close ends the worker politely (end of stdin), then by force.
func (w *worker) close() {
	w.stdin.Close()
	select {
	case <-w.exited:
	case <-time.After(5 * time.Second):
		w.kill()
		<-w.exited
	}
}

// fail marks the worker unusable with err and stops it.
func (w *worker) fail(err error) error {
	if w.broken == nil {
		w.broken = err
	}
	w.kill()
	return err
}

// deathError says why the worker's output ended during op.
func (w *worker) deathError(op string) error {
	exit := w.waitExit()
	if w.t.Host != "" && w.exitCode() == 255 {
		return lostError{fmt.Sprintf("torch worker on %s: the SSH connection dropped during %s (ssh exit 255)%s", w.t.Host, op, w.lastWords())}
	}
	what := fmt.Sprint(exit)
	if exit == nil {
		what = "exited"
	}
	if w.readErr != nil && !errors.Is(w.readErr, io.EOF) && !errors.Is(w.readErr, io.ErrUnexpectedEOF) {
		what += "; " + w.readErr.Error()
	}
	return lostError{fmt.Sprintf("torch worker on %s (pid %d) died during %s (%s)%s", w.t.where(), w.hello.PID, op, what, w.lastWords())}
}

// lostError says why a worker was lost; it is engine.ErrWorkerLost.
type lostError struct{ msg string }

func (e lostError) Error() string        { return e.msg }
func (e lostError) Is(target error) bool { return target == engine.ErrWorkerLost }

// write sends a frame; progress (nil: none) hears of every MiB that
// leaves, so that a long upload over a slow link does not look like a hang.
func (w *worker) write(header map[string]any, arrays []array, progress chan<- struct{}) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	if progress != nil {
		w.w.Reset(&ticking{w: w.stdin, tick: progress})
		defer w.w.Reset(w.stdin)
	}
	return writeFrame(w.w, header, arrays)
}

// ticking is a writer that ticks (without blocking) every MiB it writes.
type ticking struct {
	w    io.Writer
	n    int
	tick chan<- struct{}
}

func (t *ticking) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	if t.n += n; t.n >= 1<<20 {
		t.n = 0
		select {
		case t.tick <- struct{}{}:
		default:
		}
	}
	return n, err
}

// call sends one request and waits for its reply, handing the request's
// events to event (nil: ignored). A worker that goes silent — it neither
// takes the request in nor replies nor sends a heartbeat — for the hang
// timeout is stopped; when ctx is done the request is cancelled and the
// call returns ctx's error once the worker has stopped it (a worker that
// does not within the grace period is stopped). After any such failure
// the worker is broken for good. The arrays are read until call returns.
func (w *worker) call(ctx context.Context, header map[string]any, arrays []array, event func(*frame)) (*frame, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	op, _ := header["op"].(string)
	if w.broken != nil {
		return nil, w.broken
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w.nextID++
	id := w.nextID
	header["id"] = id
	// The request goes out while we watch for replies, a hang and ctx: a
	// stopped worker stops reading, and the write would block.
	wrote, ticks := make(chan error, 1), make(chan struct{}, 1)
	go func() { wrote <- w.write(header, arrays, ticks) }()
	writing := wrote
	stop := func(err error) (*frame, error) { // the worker is killed: the write ends
		w.fail(err)
		if writing != nil {
			<-writing
		}
		return nil, err
	}
	hang := time.NewTimer(w.opt.hangTimeout())
	defer hang.Stop()
	done := ctx.Done()
	var grace <-chan time.Time
	cancelled := false
	for {
		select {
		case err := <-writing:
			writing = nil
			if err != nil {
				return stop(w.deathError(op))
			}
		case <-ticks:
			hang.Reset(w.opt.hangTimeout())
		case f, ok := <-w.frames:
			if !ok {
				return stop(w.deathError(op))
			}
			hang.Reset(w.opt.hangTimeout())
			switch {
			case f.Event != "":
				if f.Event != "alive" && f.ID == id && event != nil && !cancelled {
					event(f)
				}
				continue
			case f.ID != id:
				continue // the reply to a request given up earlier
			case cancelled:
				return nil, ctx.Err()
			case !f.OK:
				return nil, &RemoteError{Where: w.t.where(), Op: op, Msg: f.Error, Trace: f.Trace}
			}
			return f, nil
		case <-hang.C:
			return stop(fmt.Errorf("torch worker on %s (pid %d): no reply to %s and no heartbeat for %s: stopped it (hung, or the connection stalled)%s",
				w.t.where(), w.hello.PID, op, w.opt.hangTimeout(), w.lastWords()))
		case <-done:
			done, cancelled = nil, true
			go w.write(map[string]any{"op": "cancel", "id": id}, nil, nil) // after the request: wmu orders them
			grace = time.After(w.opt.cancelGrace())
		case <-grace:
			stop(fmt.Errorf("torch worker on %s: %s did not stop within %s of a cancel: stopped it", w.t.where(), op, w.opt.cancelGrace()))
			return nil, ctx.Err()
		}
	}
}

// tail keeps the last 8 KiB written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - 8<<10; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
