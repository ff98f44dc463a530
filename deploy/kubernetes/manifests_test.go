package kubernetes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/seqgate/seqgate/harness/run"
	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/harness/shard"
)

// kinds is every kind the manifests may hold, as the API server would decode it. An explicit list:
// a manifest of any other kind is an error here, so a new kind is a decision made in this file.
var kinds = map[string]func() any{
	"v1/ConfigMap":                                    func() any { return &corev1.ConfigMap{} },
	"v1/Secret":                                       func() any { return &corev1.Secret{} },
	"v1/PersistentVolumeClaim":                        func() any { return &corev1.PersistentVolumeClaim{} },
	"v1/ServiceAccount":                               func() any { return &corev1.ServiceAccount{} },
	"batch/v1/Job":                                    func() any { return &batchv1.Job{} },
	"rbac.authorization.k8s.io/v1/Role":               func() any { return &rbacv1.Role{} },
	"rbac.authorization.k8s.io/v1/RoleBinding":        func() any { return &rbacv1.RoleBinding{} },
	"rbac.authorization.k8s.io/v1/ClusterRole":        func() any { return &rbacv1.ClusterRole{} },
	"rbac.authorization.k8s.io/v1/ClusterRoleBinding": func() any { return &rbacv1.ClusterRoleBinding{} },
}

// decodeStrict decodes one YAML document into its k8s.io/api type: duplicate keys (YAMLToJSONStrict)
// and fields the type does not have (DisallowUnknownFields) are errors, as kubectl apply --validate=strict
// would make them.
func decodeStrict(doc []byte) (any, error) {
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return nil, err
	}
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(js, &tm); err != nil {
		return nil, err
	}
	mk := kinds[tm.APIVersion+"/"+tm.Kind]
	if mk == nil {
		return nil, fmt.Errorf("apiVersion %q kind %q: not a kind these manifests use", tm.APIVersion, tm.Kind)
	}
	obj := mk()
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(obj); err != nil {
		return nil, fmt.Errorf("%s %s: %w", tm.APIVersion, tm.Kind, err)
	}
	return obj, nil
}

// documents splits a multi-document YAML file, skipping empty documents.
func documents(b []byte) [][]byte {
	var out [][]byte
	for _, d := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1) {
		if strings.TrimSpace(stripComments(d)) != "" {
			out = append(out, []byte(d))
		}
	}
	return out
}

func stripComments(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// TestDecodeStrictRefuses: the decoder has teeth. A misspelt field, a field in the wrong place, a
// duplicate key and an unknown kind are each refused; the same Job spelt right is accepted.
func TestDecodeStrictRefuses(t *testing.T) {
	const good = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  completionMode: Indexed\n  template: {spec: {containers: [{name: a, image: b}]}}\n"
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"valid", good, ""},
		{"misspelt field", strings.Replace(good, "completionMode", "completionsMode", 1), `unknown field "completionsMode"`},
		{"field in the wrong place", strings.Replace(good, "metadata: {name: x}", "metadata: {name: x, completions: 3}", 1), `unknown field "completions"`},
		{"duplicate key", good + "kind: Job\n", `already set in map`},
		{"unknown kind", strings.Replace(good, "kind: Job", "kind: CronJobb", 1), `not a kind these manifests use`},
		{"wrong type", strings.Replace(good, "completionMode: Indexed", "completions: four", 1), `cannot unmarshal`},
	} {
		_, err := decodeStrict([]byte(tc.doc))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want accepted", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// manifests decodes every *.yaml file here, strictly, and indexes the objects by kind and name.
func manifests(t *testing.T) map[string]any {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	objs := map[string]any{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range documents(b) {
			obj, err := decodeStrict(doc)
			if err != nil {
				t.Fatalf("%s document %d: %v", f, i+1, err)
			}
			key := keyOf(obj)
			if _, dup := objs[key]; dup {
				t.Fatalf("%s: %s defined twice", f, key)
			}
			objs[key] = obj
		}
	}
	return objs
}

func keyOf(obj any) string {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		return "ConfigMap/" + o.Name
	case *corev1.Secret:
		return "Secret/" + o.Name
	case *corev1.PersistentVolumeClaim:
		return "PersistentVolumeClaim/" + o.Name
	case *corev1.ServiceAccount:
		return "ServiceAccount/" + o.Name
	case *batchv1.Job:
		return "Job/" + o.Name
	case *rbacv1.Role:
		return "Role/" + o.Name
	case *rbacv1.RoleBinding:
		return "RoleBinding/" + o.Name
	}
	return fmt.Sprintf("%T", obj)
}

func get[T any](t *testing.T, objs map[string]any, key string) T {
	t.Helper()
	o, ok := objs[key].(T)
	if !ok {
		t.Fatalf("no %s among the manifests", key)
	}
	return o
}

// TestManifestsFit: the manifests decode strictly and describe one sharded run that can work: an
// Indexed Job whose completions, parallelism and the run's agents agree, whose agents are shard
// index+1 of N; a scenario that seqgate accepts for that many agents; one volume both Jobs mount; a
// verify Job that waits for the agents Job with exactly the permission it needs, then merges.
func TestManifestsFit(t *testing.T) {
	objs := manifests(t)
	cfg := get[*corev1.ConfigMap](t, objs, "ConfigMap/seqgate-run")
	agents := get[*batchv1.Job](t, objs, "Job/seqgate-agents")
	verify := get[*batchv1.Job](t, objs, "Job/seqgate-verify")

	n, err := strconv.Atoi(cfg.Data["agents"])
	if err != nil {
		t.Fatalf("seqgate-run agents %q: %v", cfg.Data["agents"], err)
	}
	spec := agents.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("agents Job completionMode %v, want Indexed (the completion index is the shard)", spec.CompletionMode)
	}
	if spec.Completions == nil || spec.Parallelism == nil || int(*spec.Completions) != n || int(*spec.Parallelism) != n {
		t.Errorf("agents Job completions %v parallelism %v, want both %d (seqgate-run agents): every agent at once", spec.Completions, spec.Parallelism, n)
	}
	if spec.BackoffLimit == nil || *spec.BackoffLimit != 0 {
		t.Errorf("agents Job backoffLimit %v, want 0 (a retried agent would drive new tenants at another time)", spec.BackoffLimit)
	}
	agentScript := strings.Join(spec.Template.Spec.Containers[0].Args, "\n")
	for _, want := range []string{"$((JOB_COMPLETION_INDEX + 1))", `--shard "$k/$AGENTS"`, `--run-id "$RUN_ID"`, `--target "$TARGET"`, "/ledgers/$RUN_ID/shard-$k"} {
		if !strings.Contains(agentScript, want) {
			t.Errorf("agent script lacks %s:\n%s", want, agentScript)
		}
	}

	// The scenario is the shipped one, and seqgate accepts it for N agents against a target.
	shipped, err := os.ReadFile("../../scenarios/scale-out.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Data["scenario.yaml"] != string(shipped) {
		t.Errorf("seqgate-run scenario.yaml differs from scenarios/scale-out.yaml:\n%s", cfg.Data["scenario.yaml"])
	}
	sc, err := scenario.Parse("seqgate-run scenario.yaml", []byte(cfg.Data["scenario.yaml"]))
	if err != nil {
		t.Fatal(err)
	}
	for k := 1; k <= n; k++ {
		o := run.Options{Scenario: sc, Target: cfg.Data["target"], Shard: shard.Shard{K: k, N: n}}
		if err := run.CheckShard(o); err != nil {
			t.Errorf("agent %d/%d: %v", k, n, err)
		}
	}
	if _, err := shard.Parse(fmt.Sprintf("%d/%d", n, n)); err != nil {
		t.Error(err)
	}
	if !regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`).MatchString(cfg.Data["run-id"]) {
		t.Errorf("run-id %q is not one seqgate run --run-id accepts", cfg.Data["run-id"])
	}

	// Every mount has its volume; both Jobs mount the same claim, which exists and is ReadWriteMany.
	pvc := get[*corev1.PersistentVolumeClaim](t, objs, "PersistentVolumeClaim/seqgate-ledgers")
	if len(pvc.Spec.AccessModes) != 1 || pvc.Spec.AccessModes[0] != corev1.ReadWriteMany {
		t.Errorf("ledgers claim access modes %v, want ReadWriteMany (agents on several nodes write to it)", pvc.Spec.AccessModes)
	}
	for _, job := range []*batchv1.Job{agents, verify} {
		ps := job.Spec.Template.Spec
		vols := map[string]corev1.Volume{}
		for _, v := range ps.Volumes {
			vols[v.Name] = v
		}
		for _, c := range append(append([]corev1.Container{}, ps.InitContainers...), ps.Containers...) {
			for _, m := range c.VolumeMounts {
				if _, ok := vols[m.Name]; !ok {
					t.Errorf("Job %s container %s mounts %q, which is not a volume of the pod", job.Name, c.Name, m.Name)
				}
			}
			for _, e := range c.Env {
				if r := e.ValueFrom; r != nil && r.ConfigMapKeyRef != nil {
					if _, ok := objs["ConfigMap/"+r.ConfigMapKeyRef.Name].(*corev1.ConfigMap).Data[r.ConfigMapKeyRef.Key]; !ok {
						t.Errorf("Job %s env %s: ConfigMap %s has no key %s", job.Name, e.Name, r.ConfigMapKeyRef.Name, r.ConfigMapKeyRef.Key)
					}
				}
			}
		}
		if v, ok := vols["ledgers"]; !ok || v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != pvc.Name {
			t.Errorf("Job %s: volume ledgers is %+v, want claim %s", job.Name, v, pvc.Name)
		}
		if ps.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("Job %s restartPolicy %s, want Never (a restarted agent would drive its tenants twice)", job.Name, ps.RestartPolicy)
		}
	}

	// The verify Job waits for the agents Job by name, may read exactly that Job, and merges every shard.
	ps := verify.Spec.Template.Spec
	if len(ps.InitContainers) != 1 || !strings.Contains(strings.Join(ps.InitContainers[0].Args, "\n"), "kubectl get job "+agents.Name) {
		t.Errorf("verify Job does not wait for job %s first", agents.Name)
	}
	sa := get[*corev1.ServiceAccount](t, objs, "ServiceAccount/"+ps.ServiceAccountName)
	binding := get[*rbacv1.RoleBinding](t, objs, "RoleBinding/seqgate-verify")
	role := get[*rbacv1.Role](t, objs, "Role/"+binding.RoleRef.Name)
	if len(binding.Subjects) != 1 || binding.Subjects[0].Kind != "ServiceAccount" || binding.Subjects[0].Name != sa.Name || binding.RoleRef.Kind != "Role" {
		t.Errorf("role binding %+v does not bind role %s to service account %s", binding, role.Name, sa.Name)
	}
	if len(role.Rules) != 1 || strings.Join(role.Rules[0].Verbs, ",") != "get" || strings.Join(role.Rules[0].Resources, ",") != "jobs" ||
		strings.Join(role.Rules[0].APIGroups, ",") != "batch" || strings.Join(role.Rules[0].ResourceNames, ",") != agents.Name {
		t.Errorf("role rules %+v, want only get on batch jobs/%s", role.Rules, agents.Name)
	}
	verifyScript := strings.Join(ps.Containers[0].Args, "\n")
	for _, want := range []string{`seqgate verify`, `"$dir"/shard-*/ledger.jsonl.gz`, "exit $code"} {
		if !strings.Contains(verifyScript, want) {
			t.Errorf("verify script lacks %s:\n%s", want, verifyScript)
		}
	}
}

// TestAgentScript runs the agents Job's shell script with /bin/sh as the pod would (seqgate replaced
// by a stand-in that prints its arguments): completion index 2 of 4 is shard 3/4, and --dsn is
// passed only when the Secret gives one.
func TestAgentScript(t *testing.T) {
	objs := manifests(t)
	agents := get[*batchv1.Job](t, objs, "Job/seqgate-agents")
	c := agents.Spec.Template.Spec.Containers[0]
	if len(c.Command) != 2 || c.Command[0] != "/bin/sh" || c.Command[1] != "-c" || len(c.Args) != 1 {
		t.Fatalf("agent command %q args %d, want /bin/sh -c SCRIPT", c.Command, len(c.Args))
	}
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "seqgate"), []byte("#!/bin/sh\nfor a; do echo \"$a\"; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dsn  string
		want string
	}{
		{"", "run\n/scenario/scenario.yaml\n--shard\n3/4\n--run-id\nr-1\n--target\nhttp://svc:7070\n--target-profile\neventlogd\n--out\n/ledgers/r-1/shard-3\n"},
		{"app:pw@tcp(db:3306)/", "run\n/scenario/scenario.yaml\n--shard\n3/4\n--run-id\nr-1\n--target\nhttp://svc:7070\n--target-profile\neventlogd\n--dsn\napp:pw@tcp(db:3306)/\n--out\n/ledgers/r-1/shard-3\n"},
	} {
		cmd := exec.Command(c.Command[0], c.Command[1], c.Args[0])
		cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "JOB_COMPLETION_INDEX=2", "AGENTS=4", "RUN_ID=r-1",
			"TARGET=http://svc:7070", "PROFILE=eventlogd", "SEQGATE_DSN=" + tc.dsn}
		out, err := cmd.CombinedOutput()
		if err != nil || string(out) != tc.want {
			t.Errorf("dsn %q: %v\n%s\nwant:\n%s", tc.dsn, err, out, tc.want)
		}
	}
}

// TestWaitScript runs the verify Job's wait with /bin/sh and a stand-in kubectl that answers the
// agents Job's true conditions: it ends on Complete and on Failed (verify then names what is missing).
func TestWaitScript(t *testing.T) {
	objs := manifests(t)
	c := get[*batchv1.Job](t, objs, "Job/seqgate-verify").Spec.Template.Spec.InitContainers[0]
	for _, cond := range []string{"SuccessCriteriaMet Complete", "FailureTarget Failed"} {
		bin := t.TempDir()
		if err := os.WriteFile(filepath.Join(bin, "kubectl"), []byte("#!/bin/sh\necho '"+cond+"'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(c.Command[0], c.Command[1], c.Args[0])
		cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		if err != nil || string(out) != "seqgate-agents: "+cond+"\n" {
			t.Errorf("condition %q: %v %q", cond, err, out)
		}
	}
}
