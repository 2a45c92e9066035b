package stackconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "Pulumi.x.yaml")
	err := os.WriteFile(path, []byte(`config:
  aws:region: eu-west-1
  karpenter-interruption-bus:clusters:
    - name: alpha
    - name: beta
      mode: existing-role
  karpenter-interruption-bus:router:
    batchSize: 50
  karpenter-interruption-bus:dashboard: true
  karpenter-interruption-bus:token:
    secure: AAABAxyz
  queuePrefix: q-
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Load(path, "karpenter-interruption-bus")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"aws:region":                             "eu-west-1",
		"karpenter-interruption-bus:clusters":    `[{"name":"alpha"},{"mode":"existing-role","name":"beta"}]`,
		"karpenter-interruption-bus:router":      `{"batchSize":50}`,
		"karpenter-interruption-bus:dashboard":   "true",
		"karpenter-interruption-bus:token":       Secret,
		"karpenter-interruption-bus:queuePrefix": "q-",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d keys, want %d: %v", len(got), len(want), got)
	}
}

func TestLoadMissingFile(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "nope.yaml"), "p"); err == nil {
		t.Fatal("want an error for a missing file")
	}
}

func TestStacksAndDeployable(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"Pulumi.dev.yaml":     "config:\n  proj:example: true\n  proj:clusters: [{name: a}]\n",
		"Pulumi.a-shard.yaml": "config:\n  proj:hub: prod\n  proj:clusters: [{name: c}]\n", // sorts first, deploys after its hub
		"Pulumi.prod.yaml":    "config:\n  proj:clusters: [{name: b}]\n",
		"Pulumi.staging.yaml": "config:\n  example: false\n",
		"Pulumi.yaml":         "name: proj\n", // the project file, not a stack
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stacks, err := Stacks(dir, "proj")
	if err != nil {
		t.Fatal(err)
	}
	want := []Stack{{Name: "a-shard", Hub: "prod"}, {Name: "dev", Example: true}, {Name: "prod"}, {Name: "staging"}}
	if fmt.Sprint(stacks) != fmt.Sprint(want) {
		t.Errorf("stacks = %+v, want %+v", stacks, want)
	}
	if got := Deployable(stacks); !slices.Equal(got, []string{"prod", "staging", "a-shard"}) {
		t.Errorf("deployable = %v, want prod and staging, then the shard", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "Pulumi.odd.yaml"), []byte("config:\n  proj:example: maybe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Stacks(dir, "proj"); err == nil || !strings.Contains(err.Error(), `proj:example: "maybe" is not true or false`) {
		t.Errorf("error = %v, want the bad example key named", err)
	}
}

// TestWorkflowsSkipTheExample: the repository's example stack is marked, so neither the pull request's preview
// nor the deployment takes it, while the offline render still does; and the workflows take their matrices from
// those lists.
func TestWorkflowsSkipTheExample(t *testing.T) {
	root := filepath.Join("..", "..")
	stacks, err := Stacks(root, "karpenter-interruption-bus")
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(Deployable(stacks), "dev") || !slices.ContainsFunc(stacks, func(s Stack) bool { return s.Name == "dev" }) {
		t.Errorf("stacks %+v: the example dev must be listed, and not deployable", stacks)
	}
	type job struct {
		If       string `yaml:"if"`
		Strategy struct {
			Matrix map[string]string `yaml:"matrix"`
		} `yaml:"strategy"`
		Steps []struct {
			ID   string            `yaml:"id"`
			Run  string            `yaml:"run"`
			Uses string            `yaml:"uses"`
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	}
	read := func(name string) map[string]job {
		b, err := os.ReadFile(filepath.Join(root, ".github", "workflows", name))
		if err != nil {
			t.Fatal(err)
		}
		var w struct{ Jobs map[string]job }
		if err := yaml.Unmarshal(b, &w); err != nil {
			t.Fatal(err)
		}
		return w.Jobs
	}
	listed := func(j job, id string) string {
		for _, s := range j.Steps {
			if s.ID == "list" {
				for _, line := range strings.Split(s.Run, "\n") {
					if strings.Contains(line, id+"=") {
						return line
					}
				}
			}
		}
		return ""
	}
	pr, deploy := read("pull-request.yml"), read("deploy.yml")
	for _, c := range []struct {
		what, matrix, wantList, list string
	}{
		{"the pull request's render", pr["render"].Strategy.Matrix["stack"], "${{ fromJSON(needs.stacks.outputs.all) }}", listed(pr["stacks"], "all")},
		{"the pull request's preview", pr["preview"].Strategy.Matrix["stack"], "${{ fromJSON(needs.stacks.outputs.deployable) }}", listed(pr["stacks"], "deployable")},
		{"the deployment", deploy["up"].Strategy.Matrix["stack"], "${{ fromJSON(needs.stacks.outputs.list) }}", listed(deploy["stacks"], "list")},
	} {
		if c.matrix != c.wantList {
			t.Errorf("%s takes its stacks from %q, want %q", c.what, c.matrix, c.wantList)
		}
		deployable := strings.Contains(c.list, "DEPLOYABLE=1")
		if want := c.what != "the pull request's render"; deployable != want || !strings.Contains(c.list, "make -s stacks") {
			t.Errorf("%s lists its stacks with %q: deployable only %t, want %t", c.what, c.list, deployable, want)
		}
	}
	for _, j := range []job{pr["preview"], deploy["up"]} {
		if !strings.Contains(j.If, "!= '[]'") {
			t.Errorf("a job over deployable stacks runs without any (if: %q): GitHub refuses an empty matrix", j.If)
		}
	}
	// The deployment tries every change that does not depend on one that failed, so that each release out of reach
	// is named (docs/deploying.md, "Clusters out of reach").
	ups := 0
	for _, st := range deploy["up"].Steps {
		if strings.HasPrefix(st.Uses, "pulumi/actions@") && st.With["command"] == "up" {
			ups++
			if st.With["continue-on-error"] != "true" {
				t.Errorf("the deployment's pulumi up has continue-on-error %q, want true", st.With["continue-on-error"])
			}
		}
	}
	if ups != 1 {
		t.Errorf("the deployment has %d pulumi up steps, want 1", ups)
	}
}
