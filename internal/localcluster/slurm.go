package localcluster

import (
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Slurm is a one-node Slurm cluster on 127.0.0.1: munged with its own key
// and socket, slurmctld and slurmd on free ports, a partition "main" of
// one node with this machine's cores and 1 GiB of memory. Its commands
// (sbatch, squeue, scontrol …) reach it through SLURM_CONF, which Env
// sets; jobs inherit it, which is how the cleanup finds what they left.
type Slurm struct {
	Dir  string // configuration, state, logs
	Conf string // slurm.conf
}

// Env is what the cluster's commands need in their environment.
func (s *Slurm) Env() []string { return []string{"SLURM_CONF=" + s.Conf} }

// Command is a Slurm command (or a script that runs them) for this cluster.
func (s *Slurm) Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), s.Env()...)
	return cmd
}

// Run runs a Slurm command and returns its output; failing, it fails the test.
func (s *Slurm) Run(t testing.TB, name string, args ...string) string {
	t.Helper()
	return run(t, s.Env(), name, args...)
}

// StartSlurm starts the cluster and waits (at most a minute) for its node
// to be idle. At the test's end it cancels every job, stops the daemons
// and kills whatever the jobs left running.
func StartSlurm(t testing.TB) *Slurm {
	t.Helper()
	need(t, "munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "scancel", "sinfo")
	dir := shortTempDir(t)
	s := &Slurm{Dir: dir, Conf: filepath.Join(dir, "slurm.conf")}
	marker := "SLURM_CONF=" + s.Conf
	t.Cleanup(func() { killMarked(t, marker) }) // runs last: after the daemons stop

	key := make([]byte, 1024)
	rand.Read(key)
	write(t, filepath.Join(dir, "munge.key"), string(key), 0o600)
	sock := filepath.Join(dir, "munge.socket")
	start(t, dir, nil, "munged", "--foreground", "--force", "--key-file="+filepath.Join(dir, "munge.key"), "--socket="+sock,
		"--pid-file="+filepath.Join(dir, "munged.pid"), "--seed-file="+filepath.Join(dir, "munged.seed"), "--num-threads=2")
	WaitFor(t, "munged's socket", 10*time.Second, func() bool { _, err := os.Stat(sock); return err == nil })

	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"state", "spool"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	ports := freePorts(t, 2)
	write(t, s.Conf, fmt.Sprintf(`# A one-node cluster for a test, on 127.0.0.1 only.
ClusterName=faithlab-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=%d
SlurmdPort=%d
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
SlurmUser=%[3]s
SlurmdUser=%[3]s
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=%[4]s
StateSaveLocation=%[5]s/state
SlurmdSpoolDir=%[5]s/spool
SlurmctldPidFile=%[5]s/slurmctld.pid
SlurmdPidFile=%[5]s/slurmd.pid
# slurmd's log file is also where each job's slurmstepd logs.
SlurmdLogFile=%[5]s/slurmd.log
SlurmdDebug=verbose
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
KillWait=5
NodeName=node0 NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=%[6]d RealMemory=1024 State=UNKNOWN
PartitionName=main Nodes=node0 Default=YES MaxTime=INFINITE State=UP
`, ports[0], ports[1], u.Username, sock, dir, runtime.NumCPU()), 0o644)

	t.Cleanup(func() {
		if t.Failed() {
			for _, d := range []string{"slurmctld", "slurmd", "munged"} {
				t.Logf("%s's log:\n%s", d, tail(logOf(dir, d), 3000))
			}
		}
	})
	env := s.Env()
	start(t, dir, env, "slurmctld", "-D", "-f", s.Conf)
	start(t, dir, env, "slurmd", "-D", "-N", "node0", "-f", s.Conf)
	// Before the daemons stop (cleanups run last first): no job left.
	t.Cleanup(func() {
		s.Command("scancel", "--user="+u.Username).Run()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if out, err := s.Command("squeue", "--noheader").Output(); err != nil || len(strings.TrimSpace(string(out))) == 0 {
				break
			}
		}
	})
	WaitFor(t, "the Slurm node to be idle", time.Minute, func() bool {
		out, _ := s.Command("sinfo", "--noheader", "--format=%T").Output()
		return strings.TrimSpace(string(out)) == "idle"
	})
	return s
}

// JobStates maps each task of job id (ID, or ID_I for an array's task) to
// its state (PENDING, RUNNING, COMPLETED, FAILED, CANCELLED …), from
// scontrol, which keeps ended jobs for MinJobAge (5 minutes).
func (s *Slurm) JobStates(t testing.TB, id string) map[string]string {
	t.Helper()
	out, err := s.Command("scontrol", "--oneliner", "show", "job", id).CombinedOutput()
	if err != nil {
		t.Fatalf("scontrol show job %s: %v\n%s", id, err, out)
	}
	states := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := map[string]string{}
		for _, kv := range strings.Fields(line) {
			if k, v, ok := strings.Cut(kv, "="); ok {
				f[k] = v
			}
		}
		name := f["JobId"]
		if task := f["ArrayTaskId"]; task != "" {
			name = f["ArrayJobId"] + "_" + task
		}
		states[name] = f["JobState"]
		if strings.HasPrefix(f["Reason"], "launch_failed") {
			t.Fatalf("Slurm could not launch job %s (%s): see slurmd's log", name, f["Reason"])
		}
	}
	return states
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
