package campaign

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"faithlab/core/job"
)

// The cluster scripts run a campaign's shards, each `faithlab-cli run SPEC
// --shard /N` with the shard's index from the scheduler's environment
// (SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX), and join them with
// `faithlab-cli merge`. Every path and name from the spec reaches them
// quoted: a spec someone sent must not be able to put a command in a
// script the user submits.

// ClusterOptions size a campaign's shards on a cluster.
type ClusterOptions struct {
	Shards int    // shards: array size, or completions of an indexed Job
	CPUs   int    // per shard
	MemGB  int    // per shard
	Time   string // limit per shard, HH:MM:SS (Slurm)
	CLI    string // the faithlab-cli binary the shards run, as the cluster sees it
	Spec   string // the spec file, absolute, as the cluster sees it
	Script string // the script's or manifest's own file name, for its comments
	Image  string // the container image holding CLI (Kubernetes)
	Claim  string // the PersistentVolumeClaim holding the spec's folder (Kubernetes)
}

// shardDirs are the run folders of the campaign's n shards.
func (c *Campaign) shardDirs(n int) []string {
	var dirs []string
	for i := range n {
		dirs = append(dirs, c.Dir(job.Shard{I: i, Of: n}))
	}
	return dirs
}

// mergeDir is where the cluster scripts merge the shards.
func (c *Campaign) mergeDir() string { return filepath.Join(c.Spec.Output, "merged") }

// mergeArgs are the arguments of the cluster scripts' merge of the
// shards: with the spec's own cache, when it names one (the shards'
// manifests name it too, but a merge reads a cache outside the runs only
// where its user names it).
func (c *Campaign) mergeArgs(cli string, shards int) []string {
	args := []string{cli, "merge", "--out", c.mergeDir()}
	if c.Spec.Cache != "" {
		if cache, err := c.CacheDir(); err == nil {
			args = append(args, "--cache", cache)
		}
	}
	return append(args, c.shardDirs(shards)...)
}

// jobName is the scheduler's name for the campaign's jobs: "faithlab-"
// and the campaign's name, in letters, digits, '.', '_' and '-' only.
func (c *Campaign) jobName() string {
	name := regexp.MustCompile(`[^A-Za-z0-9._-]+`).ReplaceAllString(c.Spec.Name, "-")
	return "faithlab-" + strings.Trim(name, "-")
}

// Slurm writes a bash script that submits the campaign to Slurm: run
// under bash, it submits itself as an array job whose task i runs shard i,
// and the merge as a job that starts once every shard has succeeded
// (--dependency=afterok; --kill-on-invalid-dep, so that a failed shard
// cancels it); `bash SCRIPT I` submits shard I again, and a merge after
// it. Under sbatch it runs the shard its array index names.
func (c *Campaign) Slurm(o ClusterOptions) ([]byte, error) {
	if o.Shards < 1 {
		return nil, fmt.Errorf("%d shards: want at least 1", o.Shards)
	}
	if !regexp.MustCompile(`^[0-9][0-9:-]*$`).MatchString(o.Time) {
		return nil, fmt.Errorf("time limit %q: want [D-]HH:MM:SS", o.Time)
	}
	s := c.Spec
	logs := filepath.Join(s.Output, "shards")
	if err := sbatchSafe(logs); err != nil {
		return nil, err
	}
	if err := oneLine(o.CLI, o.Spec, o.Script); err != nil {
		return nil, err
	}
	name := c.jobName()
	merge := append([]string{"exec"}, c.mergeArgs(o.CLI, o.Shards)...)
	q := shellQuote
	var b strings.Builder
	fmt.Fprintf(&b, `#!/bin/bash
# Faithlab campaign %[1]q: %[2]d tasks in %[3]d shards (written by faithlab-cli slurm).
#
# Submit the shards (an array job) and their merge (a job that starts once
# every shard has succeeded, into %[5]s):
#   bash %[4]s
# Submit shards I, J … again (one that failed resumes, keeping its finished
# tasks) and the merge after them:
#   bash %[4]s I[,J…]
# Merge by hand:
#   bash %[4]s --merge
# Under sbatch the script runs the shard its SLURM_ARRAY_TASK_ID names. Logs:
# %[6]s/slurm-JOB_TASK.out, the merge's slurm-merge-JOB.out beside them.
#SBATCH --job-name=%[7]s
#SBATCH --array=0-%[8]d
#SBATCH --cpus-per-task=%[9]d
#SBATCH --mem=%[10]dG
#SBATCH --time=%[11]s
#SBATCH --output=%[12]s
set -euo pipefail
if [ "${1:-}" = --merge ]; then
	%[13]s
fi
if [ -n "${SLURM_ARRAY_TASK_ID:-}" ]; then
	exec %[14]s run %[15]s --shard /%[3]d --quiet
fi
if [ $# -gt 1 ] || { [ $# = 1 ] && ! [[ $1 =~ ^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$ ]]; }; then
	echo "usage: bash $0 [SHARDS | --merge]   (SHARDS: shards to submit again, e.g. 2 or 1,3)" >&2
	exit 2
fi
name=%[16]s
user=$(id -un)
busy=$(squeue --noheader --user="$user" --name="$name" --format=%%i)
if [ -n "$busy" ]; then
	echo "shards of $name are still queued or running ($(echo $busy)): submit once they have ended (squeue --name=$name)" >&2
	exit 1
fi
# A merge still waiting on a shard that failed can never start.
for id in $(squeue --noheader --user="$user" --name="$name-merge" --states=PENDING --format='%%i %%r' | awk '$2 == "DependencyNeverSatisfied" {print $1}'); do
	scancel "$id"
done
mkdir -p %[17]s
self=$(readlink -f "$0")
shards=$(sbatch --parsable ${1:+"--array=$1"} "$self")
shards=${shards%%%%;*}
merged=$(sbatch --parsable --dependency=afterok:"$shards" --kill-on-invalid-dep=yes --job-name="$name-merge" \
	--cpus-per-task=1 --mem=%[10]dG --time=%[11]s --output=%[18]s --wrap="bash $(printf %%q "$self") --merge")
echo "submitted shards ${1:-0-%[8]d} as job $shards, and their merge as job ${merged%%%%;*}"
`, s.Name, len(job.Plan(s)), o.Shards, o.Script, c.mergeDir(), logs,
		name, o.Shards-1, o.CPUs, o.MemGB, o.Time, sbatchQuote(filepath.Join(logs, "slurm-%A_%a.out")),
		quoteWords(merge), q(o.CLI), q(o.Spec), q(name), q(logs), q(filepath.Join(logs, "slurm-merge-%j.out")))
	return []byte(b.String()), nil
}

// shellQuote quotes s for a POSIX shell, unless it is a plain word.
func shellQuote(s string) string {
	if regexp.MustCompile(`^[A-Za-z0-9@%+=:,./_-]+$`).MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// quoteWords joins words into a shell command line, each quoted.
func quoteWords(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = shellQuote(w)
	}
	return strings.Join(q, " ")
}

// sbatchSafe refuses a path that an #SBATCH line cannot carry: sbatch
// reads those lines itself, without a shell, and takes '%' for its
// file-name patterns.
func sbatchSafe(p string) error {
	for _, r := range p {
		if r < ' ' || r == 0x7f || strings.ContainsRune("\"\\%$`", r) {
			return fmt.Errorf("run folder %q: an #SBATCH line cannot carry %q: choose an output path without it", p, r)
		}
	}
	return nil
}

// oneLine refuses a path or name with a control character (a line break
// would end a script's comment and start a command).
func oneLine(ss ...string) error {
	for _, s := range ss {
		if strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }) {
			return fmt.Errorf("%q holds a control character: a cluster script cannot carry it", s)
		}
	}
	return nil
}

// sbatchQuote puts a path checked by sbatchSafe in double quotes when it
// holds what sbatch's reading of an #SBATCH line would take otherwise: a
// space ends the argument, '#' starts a comment, a quote starts a quoted part.
func sbatchQuote(p string) string {
	if strings.ContainsAny(p, " #'") {
		return `"` + p + `"`
	}
	return p
}

// K8s writes a Kubernetes indexed Job (batch/v1, completionMode Indexed)
// whose pod i runs shard i of the campaign: the index comes from the
// JOB_COMPLETION_INDEX Kubernetes sets in each pod. The pods mount the
// PersistentVolumeClaim o.Claim at the spec's folder, so that the spec,
// its run folder and its cache have the same paths there as here: both
// must lie in that folder.
func (c *Campaign) K8s(o ClusterOptions) ([]byte, error) {
	if o.Shards < 1 {
		return nil, fmt.Errorf("%d shards: want at least 1", o.Shards)
	}
	if o.Image == "" || o.Claim == "" {
		return nil, fmt.Errorf("a Kubernetes Job needs the image that holds faithlab-cli and the claim that holds the campaign's folder")
	}
	if err := oneLine(o.CLI, o.Spec, o.Script, c.Spec.Output); err != nil {
		return nil, err
	}
	dir := filepath.Dir(o.Spec)
	cache, err := c.CacheDir()
	if err != nil {
		return nil, err
	}
	for _, p := range []string{c.Spec.Output, cache} {
		if rel, err := filepath.Rel(dir, p); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return nil, fmt.Errorf("%s lies outside the spec's folder %s, which is all the pods mount: keep the run folder and the cache in it", p, dir)
		}
	}
	name := strings.ToLower(c.jobName())
	name = strings.Trim(regexp.MustCompile(`[^a-z0-9-]+`).ReplaceAllString(name, "-"), "-")
	if len(name) > 52 { // the pods' hostnames add the index to it, within 63
		name = strings.TrimRight(name[:52], "-")
	}
	labels := map[string]string{"app.kubernetes.io/name": "faithlab", "faithlab.org/campaign": c.ID()}
	mem := fmt.Sprintf("%dGi", o.MemGB)
	j := k8sJob{APIVersion: "batch/v1", Kind: "Job", Metadata: k8sMeta{Name: name, Labels: labels}}
	j.Spec.CompletionMode = "Indexed"
	j.Spec.Completions, j.Spec.Parallelism, j.Spec.BackoffLimit = o.Shards, o.Shards, o.Shards
	j.Spec.Template.Metadata.Labels = labels
	j.Spec.Template.Spec = k8sPodSpec{RestartPolicy: "Never",
		Containers: []k8sContainer{{Name: "shard", Image: o.Image,
			Command:      []string{o.CLI, "run", o.Spec, "--shard", fmt.Sprintf("/%d", o.Shards), "--quiet"},
			Resources:    k8sResources{Requests: map[string]string{"cpu": fmt.Sprint(o.CPUs), "memory": mem}, Limits: map[string]string{"memory": mem}},
			VolumeMounts: []k8sMount{{Name: "campaign", MountPath: dir}}}},
		Volumes: []k8sVolume{{Name: "campaign", PersistentVolumeClaim: k8sClaim{ClaimName: o.Claim}}}}
	var body bytes.Buffer
	enc := yaml.NewEncoder(&body)
	enc.SetIndent(2)
	if err := enc.Encode(j); err != nil {
		return nil, err
	}
	var b strings.Builder
	merge := c.mergeArgs(o.CLI, o.Shards)
	fmt.Fprintf(&b, `# Faithlab campaign %[1]q: %[2]d tasks in %[3]d shards (written by faithlab-cli k8s).
# Pod i runs shard i (its index from JOB_COMPLETION_INDEX); the claim %[6]s
# holds the campaign's folder, mounted where it is here.
#
#   kubectl apply -f %[8]s
#   kubectl wait --for=condition=complete --timeout=24h job/%[4]s
# then merge the shards where the claim is mounted:
#   %[5]s
# A shard that failed (kubectl get pods -l faithlab.org/campaign=%[7]s): run
# the Job again; shards that ended skip their finished tasks:
#   kubectl replace --force -f %[8]s
`, c.Spec.Name, len(job.Plan(c.Spec)), o.Shards, name, quoteWords(merge), o.Claim, c.ID(), o.Script)
	b.Write(body.Bytes())
	return []byte(b.String()), nil
}

// The parts of a Kubernetes batch/v1 Job that K8s writes, with the API's
// field names.
type (
	k8sJob struct {
		APIVersion string  `yaml:"apiVersion"`
		Kind       string  `yaml:"kind"`
		Metadata   k8sMeta `yaml:"metadata"`
		Spec       struct {
			CompletionMode string `yaml:"completionMode"`
			Completions    int    `yaml:"completions"`
			Parallelism    int    `yaml:"parallelism"`
			BackoffLimit   int    `yaml:"backoffLimit"`
			Template       struct {
				Metadata k8sMeta    `yaml:"metadata"`
				Spec     k8sPodSpec `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	k8sMeta struct {
		Name   string            `yaml:"name,omitempty"`
		Labels map[string]string `yaml:"labels,omitempty"`
	}
	k8sPodSpec struct {
		RestartPolicy string         `yaml:"restartPolicy"`
		Containers    []k8sContainer `yaml:"containers"`
		Volumes       []k8sVolume    `yaml:"volumes"`
	}
	k8sContainer struct {
		Name         string       `yaml:"name"`
		Image        string       `yaml:"image"`
		Command      []string     `yaml:"command"`
		Resources    k8sResources `yaml:"resources"`
		VolumeMounts []k8sMount   `yaml:"volumeMounts"`
	}
	k8sResources struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	}
	k8sMount struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	}
	k8sVolume struct {
		Name                  string   `yaml:"name"`
		PersistentVolumeClaim k8sClaim `yaml:"persistentVolumeClaim"`
	}
	k8sClaim struct {
		ClaimName string `yaml:"claimName"`
	}
)
