package workflows_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/workflows"
)

const root = "../.."

// historyTarget is the make target that runs TestUpgradeFromThePreviousRelease (tests/engine/upgrade_test.go), which
// reads the previous release's commit with git archive: a checkout of one commit does not have it.
const historyTarget = "test-engine"

// ciScript is the CI entry point; a step that runs it runs the make targets it names.
const ciScript = ".ci/run"

func load(t *testing.T) ([]workflows.Workflow, workflows.Makefile) {
	t.Helper()
	ws, err := workflows.Load(filepath.Join(root, ".github", "workflows"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) == 0 {
		t.Fatal("no workflow read")
	}
	m, err := workflows.LoadMakefile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	return ws, m
}

// targets is what a job's steps run of the Makefile, .ci/run's targets included when a step runs it.
func targets(t *testing.T, j workflows.Job) []string {
	t.Helper()
	script := j.Script()
	out := workflows.Invoked(script)
	if strings.Contains(script, ciScript) {
		b, err := os.ReadFile(filepath.Join(root, ciScript))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, workflows.Invoked(string(b))...)
	}
	return out
}

// needsHistory reports whether the job runs the upgrade test: a make target that reaches historyTarget, or go test in
// tests/engine itself.
func needsHistory(t *testing.T, m workflows.Makefile, j workflows.Job) bool {
	t.Helper()
	if strings.Contains(j.Script(), "tests/engine") {
		return true
	}
	return slices.ContainsFunc(targets(t, j), func(target string) bool { return m.Reaches(target, historyTarget) })
}

// historyProblems names each job of ws that runs the upgrade test from a checkout without the history it reads.
func historyProblems(t *testing.T, ws []workflows.Workflow, m workflows.Makefile) []string {
	t.Helper()
	var out []string
	for _, w := range ws {
		for id, j := range w.Jobs {
			if needsHistory(t, m, j) && !j.FullHistory() {
				out = append(out, w.File+": job "+id+" runs "+historyTarget+" (TestUpgradeFromThePreviousRelease reads the previous "+
					"release's commit) from a checkout of one commit: give its actions/checkout fetch-depth: 0")
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestEveryJobThatProvesAnUpgradeHasTheHistory: a job of any workflow that runs the upgrade test (make test, make
// all, .ci/run, make test-engine, or go test in tests/engine) checks out every commit (fetch-depth: 0).
func TestEveryJobThatProvesAnUpgradeHasTheHistory(t *testing.T) {
	ws, m := load(t)
	for _, p := range historyProblems(t, ws, m) {
		t.Error(p)
	}
	// The pull request's tests are among them: what the test reads is not vacuous.
	found := false
	for _, w := range ws {
		if w.File == "pull-request.yml" {
			for _, j := range w.Jobs {
				found = found || needsHistory(t, m, j)
			}
		}
	}
	if !found {
		t.Error("no job of pull-request.yml runs the upgrade test")
	}
}

// TestTheHistoryCheckRefusesADepthOneCheckout: the check itself, on workflows as a pull request could change them.
func TestTheHistoryCheckRefusesADepthOneCheckout(t *testing.T) {
	_, m := load(t)
	for _, tc := range []struct {
		name, jobs string
		refused    bool
	}{
		{"make test, depth 1", "t:\n  steps:\n    - uses: actions/checkout@v4\n    - run: make test\n", true},
		{"make test, depth 0", "t:\n  steps:\n    - uses: actions/checkout@v4\n      with:\n        fetch-depth: 0\n    - run: make test\n", false},
		{"depth 2 is not the history", "t:\n  steps:\n    - uses: actions/checkout@v4\n      with:\n        fetch-depth: 2\n    - run: make test-engine\n", true},
		{"make, the default target", "t:\n  steps:\n    - uses: actions/checkout@v4\n    - run: make -j2\n", true},
		{".ci/run", "t:\n  steps:\n    - uses: actions/checkout@v4\n    - run: bash .ci/run\n", true},
		{"go test in tests/engine", "t:\n  steps:\n    - uses: actions/checkout@v4\n    - run: cd tests/engine && go test ./...\n", true},
		{"a target through another", "t:\n  steps:\n    - uses: actions/checkout@v4\n    - run: make test-pulumi STACK=dev\n", true},
		{"lint needs none", "t:\n  steps:\n    - uses: actions/checkout@v4\n    - run: make lint\n", false},
		{"the race detector needs none", "t:\n  steps:\n    - uses: actions/checkout@v4\n    - run: make race\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var jobs map[string]workflows.Job
			if err := yaml.Unmarshal([]byte(tc.jobs), &jobs); err != nil {
				t.Fatal(err)
			}
			got := historyProblems(t, []workflows.Workflow{{File: "pr.yml", Jobs: jobs}}, m)
			if (len(got) > 0) != tc.refused {
				t.Errorf("refused %v, want %v", got, tc.refused)
			}
		})
	}
}

// TestMakeInvocations: what a line of shell runs of the Makefile.
func TestMakeInvocations(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"make test", []string{"test"}},
		{"make -s version", []string{"version"}},
		{"make", []string{"all"}},
		{"make render STACK=\"$STACK\" | tee x", []string{"render"}},
		{"@$(MAKE) --no-print-directory -j2 -Oline test-pulumi test-events", []string{"test-pulumi", "test-events"}},
		{"make lint && make race", []string{"lint", "race"}},
		{"echo \"all=$(make -s stacks)\"", []string{"stacks"}},
		{"cmake --build .", nil},
		{"go test ./...", nil},
	} {
		if got := workflows.Invoked(tc.line); !slices.Equal(got, tc.want) {
			t.Errorf("%q runs %v, want %v", tc.line, got, tc.want)
		}
	}
}

// publishing is what the job publishes, by kind, each once: the release's binaries, the npm package, the Python one.
func publishing(j workflows.Job) []string {
	var kinds []string
	script := j.Script()
	if strings.Contains(script, "release-publish") {
		kinds = append(kinds, "binaries")
	}
	if strings.Contains(script, "npm publish") {
		kinds = append(kinds, "npm")
	}
	for _, s := range j.Steps {
		if strings.Contains(s.Uses, "gh-action-pypi-publish") || strings.Contains(s.Run, "twine upload") {
			kinds = append(kinds, "python")
			break
		}
	}
	return kinds
}

// TestTheReleaseIsGatedByEverythingAndRunsInOrder: release.yml publishes only after the whole CI (make test and make
// lint, with the history the upgrade test reads) passed on the tagged commit and the tag was found to be the
// checkout's version; the binaries first, then each SDK in its own job after them; each publishing job idempotent
// (re-run, it skips what exists) and the schema it attaches carrying the version.
func TestTheReleaseIsGatedByEverythingAndRunsInOrder(t *testing.T) {
	ws, m := load(t)
	var w workflows.Workflow
	for _, x := range ws {
		if x.File == "release.yml" {
			w = x
		}
	}
	if w.Jobs == nil {
		t.Fatal("no release.yml")
	}
	var gates, versionChecks []string
	jobsOf := map[string]string{}
	for id, j := range w.Jobs {
		ts := targets(t, j)
		if slices.ContainsFunc(ts, func(x string) bool { return m.Reaches(x, "test") }) && slices.ContainsFunc(ts, func(x string) bool { return m.Reaches(x, "lint") }) {
			gates = append(gates, id)
			if !j.FullHistory() {
				t.Errorf("job %s runs make test without the history the upgrade test reads", id)
			}
		}
		if strings.Contains(j.Script(), "make -s version") {
			versionChecks = append(versionChecks, id)
		}
		kinds := publishing(j)
		if len(kinds) > 1 {
			t.Errorf("job %s publishes %v: each in its own job, so that one failed can be run again alone", id, kinds)
		}
		for _, k := range kinds {
			if jobsOf[k] != "" {
				t.Errorf("%s published by jobs %s and %s", k, jobsOf[k], id)
			}
			jobsOf[k] = id
		}
	}
	if len(gates) == 0 || len(versionChecks) == 0 {
		t.Fatalf("release.yml has no job running make test and make lint (%v) or checking the tag (%v)", gates, versionChecks)
	}
	for _, k := range []string{"binaries", "npm", "python"} {
		id := jobsOf[k]
		if id == "" {
			t.Errorf("release.yml publishes no %s", k)
			continue
		}
		for _, gate := range append(slices.Clone(gates), versionChecks...) {
			if !w.Before(id, gate) {
				t.Errorf("job %s publishes %s without waiting for %s", id, k, gate)
			}
		}
		if k != "binaries" && jobsOf["binaries"] != "" && !w.Before(id, jobsOf["binaries"]) {
			t.Errorf("job %s publishes the %s SDK before the binaries it downloads (job %s)", id, k, jobsOf["binaries"])
		}
	}
	// Idempotent: npm publish refuses a version it has, so the job asks first; PyPI's action skips what exists;
	// GoReleaser replaces the release's files.
	if id := jobsOf["npm"]; id != "" && !strings.Contains(w.Jobs[id].Script(), "npm view") {
		t.Errorf("job %s publishes to npm without asking whether the version is there: a re-run fails", id)
	}
	if id := jobsOf["python"]; id != "" {
		skips := false
		for _, s := range w.Jobs[id].Steps {
			skips = skips || s.With["skip-existing"] == "true" || strings.Contains(s.Run, "--skip-existing")
		}
		if !skips {
			t.Errorf("job %s publishes to PyPI without skipping what exists: a re-run fails", id)
		}
	}
	goreleaser, err := os.ReadFile(filepath.Join(root, ".goreleaser.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(goreleaser), "replace_existing_artifacts: true") {
		t.Error(".goreleaser.yml does not replace the release's files: a re-run of the binaries fails on the first one")
	}
	if strings.Contains(string(goreleaser), "provider/schema.json") {
		t.Error(".goreleaser.yml attaches provider/schema.json, whose version is 0.0.0-dev: attach the release's (build/release-sdk)")
	}
}
