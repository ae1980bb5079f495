package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"go.yaml.in/yaml/v3"
)

// fields are the keys each object of a batch/v1 Job may hold (of those the
// API defines, the ones a manifest of ours has any use for): a key outside
// them is one the API server would reject or ignore.
var jobFields = map[string][]string{
	"":                             {"apiVersion", "kind", "metadata", "spec"},
	"metadata":                     {"name", "labels", "namespace", "annotations"},
	"spec":                         {"completionMode", "completions", "parallelism", "backoffLimit", "backoffLimitPerIndex", "activeDeadlineSeconds", "ttlSecondsAfterFinished", "template"},
	"spec.template":                {"metadata", "spec"},
	"spec.template.metadata":       {"labels", "annotations"},
	"spec.template.spec":           {"restartPolicy", "containers", "volumes", "nodeSelector", "tolerations"},
	"container":                    {"name", "image", "command", "args", "env", "resources", "volumeMounts", "workingDir"},
	"container.resources":          {"requests", "limits"},
	"container.volumeMounts":       {"name", "mountPath", "readOnly", "subPath"},
	"volume":                       {"name", "persistentVolumeClaim"},
	"volume.persistentVolumeClaim": {"claimName", "readOnly"},
}

var (
	dnsLabel  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	labelKey  = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)
	labelVal  = regexp.MustCompile(`^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$`)
	quantity  = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$`)
	shardFlag = regexp.MustCompile(`^/[1-9][0-9]*$`)
)

// checkIndexedJob checks a manifest against what Kubernetes requires of a
// batch/v1 Job in Indexed completion mode whose pods run faithlab-cli's
// shards, and returns the container's command and the completions.
func checkIndexedJob(t *testing.T, manifest []byte) (command []string, completions int) {
	t.Helper()
	var job map[string]any
	dec := yaml.NewDecoder(bytes.NewReader(manifest))
	if err := dec.Decode(&job); err != nil {
		t.Fatalf("manifest: %v\n%s", err, manifest)
	}
	var extra any
	if dec.Decode(&extra) == nil {
		t.Fatal("manifest holds more than one document")
	}
	obj := func(v any, path string) map[string]any {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s: want an object, got %T", path, v)
		}
		fields := jobFields[path]
		for k := range m {
			if !slices.Contains(fields, k) {
				t.Errorf("%s: field %q is not one of a Job's (%v)", path, k, fields)
			}
		}
		return m
	}
	str := func(m map[string]any, k, path string) string {
		s, ok := m[k].(string)
		if !ok || s == "" {
			t.Errorf("%s.%s: want a string, got %v", path, k, m[k])
		}
		return s
	}
	integer := func(m map[string]any, k, path string, lo int) int {
		n, ok := m[k].(int)
		if !ok || n < lo {
			t.Errorf("%s.%s: want an integer ≥ %d, got %v", path, k, lo, m[k])
		}
		return n
	}
	labels := func(v any, path string) {
		m, ok := v.(map[string]any)
		if !ok {
			t.Errorf("%s: want a map of labels", path)
		}
		for k, v := range m {
			s, _ := v.(string)
			if !labelKey.MatchString(k) || !labelVal.MatchString(s) {
				t.Errorf("%s: label %q: %q is not a valid label", path, k, v)
			}
		}
	}
	list := func(v any, path string) []any {
		l, ok := v.([]any)
		if !ok || len(l) == 0 {
			t.Fatalf("%s: want a non-empty list, got %v", path, v)
		}
		return l
	}

	root := obj(job, "")
	if str(root, "apiVersion", "") != "batch/v1" || str(root, "kind", "") != "Job" {
		t.Errorf("apiVersion %v, kind %v: want batch/v1 Job", root["apiVersion"], root["kind"])
	}
	meta := obj(root["metadata"], "metadata")
	if name := str(meta, "name", "metadata"); len(name) > 63 || !dnsLabel.MatchString(name) {
		t.Errorf("metadata.name %q: want a DNS-1123 label (Indexed Jobs' pod hostnames are NAME-INDEX)", name)
	}
	labels(meta["labels"], "metadata.labels")
	spec := obj(root["spec"], "spec")
	if str(spec, "completionMode", "spec") != "Indexed" {
		t.Errorf("spec.completionMode %v: want Indexed, for JOB_COMPLETION_INDEX", spec["completionMode"])
	}
	completions = integer(spec, "completions", "spec", 1)
	if p := integer(spec, "parallelism", "spec", 1); p > completions {
		t.Errorf("parallelism %d > completions %d", p, completions)
	}
	integer(spec, "backoffLimit", "spec", 0)
	tmpl := obj(spec["template"], "spec.template")
	labels(obj(tmpl["metadata"], "spec.template.metadata")["labels"], "spec.template.metadata.labels")
	pod := obj(tmpl["spec"], "spec.template.spec")
	if rp := str(pod, "restartPolicy", "spec.template.spec"); rp != "Never" && rp != "OnFailure" {
		t.Errorf("restartPolicy %q: a Job's pods want Never or OnFailure", rp)
	}
	volumes := map[string]bool{}
	for i, v := range list(pod["volumes"], "spec.template.spec.volumes") {
		vol := obj(v, "volume")
		volumes[str(vol, "name", "volume")] = true
		str(obj(vol["persistentVolumeClaim"], "volume.persistentVolumeClaim"), "claimName", fmt.Sprintf("volumes[%d].persistentVolumeClaim", i))
	}
	cs := list(pod["containers"], "spec.template.spec.containers")
	if len(cs) != 1 {
		t.Fatalf("%d containers, want the shard's", len(cs))
	}
	c := obj(cs[0], "container")
	if !dnsLabel.MatchString(str(c, "name", "container")) {
		t.Errorf("container name %v: want a DNS-1123 label", c["name"])
	}
	str(c, "image", "container")
	res := obj(c["resources"], "container.resources")
	for _, part := range []string{"requests", "limits"} {
		m, _ := res[part].(map[string]any)
		for k, v := range m {
			if s, ok := v.(string); (k != "cpu" && k != "memory") || !ok || !quantity.MatchString(s) {
				t.Errorf("resources.%s.%s = %#v: want a quantity string of cpu or memory", part, k, v)
			}
		}
	}
	for _, m := range list(c["volumeMounts"], "container.volumeMounts") {
		mount := obj(m, "container.volumeMounts")
		if !volumes[str(mount, "name", "volumeMounts")] || !filepath.IsAbs(str(mount, "mountPath", "volumeMounts")) {
			t.Errorf("volume mount %v: want a volume's name and an absolute path", mount)
		}
	}
	for _, a := range list(c["command"], "container.command") {
		s, ok := a.(string)
		if !ok {
			t.Fatalf("command holds %#v: want strings", a)
		}
		command = append(command, s)
	}
	if len(command) < 6 || command[1] != "run" || !slices.Contains(command, "--shard") || !shardFlag.MatchString(command[slices.Index(command, "--shard")+1]) {
		t.Fatalf("command %q: want faithlab-cli run SPEC --shard /N", command)
	}
	if n := command[slices.Index(command, "--shard")+1]; n != "/"+strconv.Itoa(completions) {
		t.Errorf("command takes %s shards, the Job has %d completions", n, completions)
	}
	return command, completions
}

// The manifest `faithlab-cli k8s` writes is an Indexed batch/v1 Job; its
// pods' command, run as Kubernetes runs it — once per index, with
// JOB_COMPLETION_INDEX set — and merged, gives the single-process run's
// results.csv byte for byte.
func TestK8sIndexedJobRunsTheShardsOfTheCampaign(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a campaign")
	}
	ctx := context.Background()
	dir, ref := t.TempDir(), t.TempDir()
	manifest := filepath.Join(dir, "job.yaml")
	if err := runK8s(ctx, []string{writeSpec(t, dir), "--shards", "3", "--image", "registry.example/faithlab:1", "--claim", "campaigns", "--out", manifest}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	command, n := checkIndexedJob(t, b)
	if n != 3 || command[2] != filepath.Join(dir, "campaign.yaml") {
		t.Fatalf("%d completions running %q", n, command)
	}
	t.Setenv("SLURM_ARRAY_TASK_ID", "") // Kubernetes sets only its own
	var shards []string
	for i := range n {
		t.Setenv("JOB_COMPLETION_INDEX", strconv.Itoa(i))
		if err := runCampaign(ctx, command[2:]); err != nil {
			t.Fatalf("pod %d: %v", i, err)
		}
		shards = append(shards, filepath.Join(dir, "run", "shards", fmt.Sprintf("%d-of-%d", i, n)))
	}
	if err := runMerge(ctx, append([]string{"--out", filepath.Join(dir, "run", "merged")}, shards...)); err != nil {
		t.Fatal(err)
	}
	if err := runCampaign(ctx, []string{writeSpec(t, ref), "--quiet"}); err != nil {
		t.Fatal(err)
	}
	if got, want := readCSV(t, filepath.Join(dir, "run", "merged")), readCSV(t, filepath.Join(ref, "run")); !bytes.Equal(got, want) {
		t.Errorf("merged results.csv differs from the single-process run's:\n%s\nwant\n%s", got, want)
	}
}
