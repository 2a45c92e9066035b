package bump_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/modfile"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/karpenter"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/karpenter/bump"
)

// The fixture tree is a copy of this repository's own files the bump edits (so the test follows their real
// shape), in a temporary directory; Karpenter's repository and the go command are fixtures too.

const commit = "0123456789abcdef0123456789abcdef01234567"

const template = `AWSTemplateFormatVersion: "2010-09-09"
Resources:
  KarpenterNodeRole:
    Type: AWS::IAM::Role
  NodeLifecyclePolicy:
    Type: AWS::IAM::ManagedPolicy
    Properties:
      PolicyDocument: !Sub |
        {"Version":"2012-10-17","Statement":[{"Sid":"AllowScopedDeletion","Effect":"Allow","Action":["ec2:TerminateInstances"],"Resource":"arn:${AWS::Partition}:ec2:${AWS::Region}:*:instance/*"}]}
`

// repoRoot is this repository's root, two directories above the package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// fixtureTree copies the files the bump reads and edits into a temporary root.
func fixtureTree(t *testing.T) string {
	t.Helper()
	src, dst := repoRoot(t), t.TempDir()
	files := []string{bump.VersionsFile, bump.SupportFile, bump.TestsModule}
	modules, err := filepath.Glob(filepath.Join(src, bump.ContractDir, "v*", "go.mod"))
	if err != nil || len(modules) == 0 {
		t.Fatalf("no version modules: %v", err)
	}
	for _, m := range modules {
		dir, _ := filepath.Rel(src, filepath.Dir(m))
		files = append(files, filepath.Join(dir, "go.mod"), filepath.Join(dir, "go.sum"), filepath.Join(dir, "contract_test.go"),
			filepath.Join(dir, "interruption_test.go"), filepath.Join(dir, "interruption", "interruption.go"),
			filepath.Join(dir, "testdata", "controller-policy.json"))
		if _, err := os.Stat(filepath.Join(src, dir, "cmd", "storm", "main.go")); err == nil {
			files = append(files, filepath.Join(dir, "cmd", "storm", "main.go"))
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// karpenterSource is a fixture of Karpenter's module source: the file with its Kubernetes bounds.
func karpenterSource(t *testing.T, lo, hi string) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "pkg", "providers", "version")
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	code := "package version\n\nconst (\n\tMinK8sVersion = \"" + lo + "\"\n\tMaxK8sVersion = \"" + hi + "\"\n)\n"
	if err := os.WriteFile(filepath.Join(path, "version.go"), []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

type world struct {
	fetched []string
	tidied  []string
	source  string
	// noTemplate: Karpenter's repository has the version's template neither at the tag nor on main.
	noTemplate bool
}

// released is the day the fixture's releases were tagged.
var released = time.Date(2026, time.December, 1, 17, 0, 0, 0, time.UTC)

func (w *world) options(root, version string) bump.Options {
	return bump.Options{
		Root: root, Version: version,
		Fetch: func(_ context.Context, v karpenter.Version) (bump.Release, error) {
			w.fetched = append(w.fetched, v.String())
			rel := bump.Release{Commit: commit, Released: released, Template: []byte(template), TemplatePath: bump.TemplatePath(v)}
			if w.noTemplate {
				rel.Template = nil
			}
			return rel, nil
		},
		Tidy: func(_ context.Context, dir string) error {
			rel, _ := filepath.Rel(root, dir)
			w.tidied = append(w.tidied, rel)
			return nil
		},
		Source: func(context.Context, string) (string, error) { return w.source, nil },
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func requires(t *testing.T, gomod string) map[string]string {
	t.Helper()
	f, err := modfile.Parse("go.mod", []byte(gomod), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range f.Require {
		out[r.Mod.Path] = r.Mod.Version
	}
	for _, r := range f.Replace {
		out["replace "+r.Old.Path] = r.New.Version
	}
	return out
}

// TestBumpToANewMinorVersion: a release of a minor version the bus does not support yet becomes the default and
// the newest supported; it gets a contract module of its own (the previous ones stay), pinned, with its
// template's policies and their commit; the end-to-end tests pin it; the previous release's pins for missing
// proxy versions are dropped; its Kubernetes range, read from its source, joins the compatibility table.
func TestBumpToANewMinorVersion(t *testing.T) {
	root := fixtureTree(t)
	before, _ := filepath.Glob(filepath.Join(root, bump.ContractDir, "v*"))
	w := &world{source: karpenterSource(t, "1.28", "1.38")}
	if err := bump.Run(context.Background(), w.options(root, "1.16.0")); err != nil {
		t.Fatal(err)
	}
	versions := read(t, filepath.Join(root, bump.VersionsFile))
	for _, want := range []string{`const Default = "1.16.0"`, "Newest = Version{Major: 1, Minor: 16}",
		"{Version{Major: 1, Minor: 16, Patch: 0}, KubernetesRange{28, 38}},\n}"} {
		if !strings.Contains(versions, want) {
			t.Errorf("%s does not say %s", bump.VersionsFile, want)
		}
	}
	// The new line joins the support table, last, released on the tag's day, a regular release until marked LTS.
	if support := read(t, filepath.Join(root, bump.SupportFile)); !strings.Contains(support,
		"\t{Major: 1, Minor: 16, Released: day(2026, time.December, 1), Tested: Version{Major: 1, Minor: 16, Patch: 0}},\n}") {
		t.Errorf("%s has no line 1.16 after the others:\n%s", bump.SupportFile, support)
	}
	mod := filepath.Join(root, bump.ContractDir, "v1.16")
	gomod := read(t, filepath.Join(mod, "go.mod"))
	f, _ := modfile.Parse("go.mod", []byte(gomod), nil)
	if f.Module.Mod.Path != "github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/karpenter/v1.16" ||
		!strings.Contains(gomod, "The contract tests against Karpenter v1.16.0:") {
		t.Errorf("the new module is %s:\n%s", f.Module.Mod.Path, gomod)
	}
	for _, m := range []string{gomod, read(t, filepath.Join(root, bump.TestsModule))} {
		req := requires(t, m)
		if req[bump.Module] != "v1.16.0" {
			t.Errorf("pins %s %s, want v1.16.0", bump.Module, req[bump.Module])
		}
		for _, w := range []string{"replace sigs.k8s.io/karpenter", "replace github.com/aws/aws-sdk-go-v2/service/timestreamwrite"} {
			if _, ok := req[w]; ok {
				t.Errorf("the previous release's %s was kept", w)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(mod, "contract_test.go")); err != nil {
		t.Error("the new module has no contract test")
	}
	// The judge of the controller is copied, importing the new module's own adapter.
	for _, f := range []string{"interruption_test.go", filepath.Join("cmd", "storm", "main.go")} {
		if src := read(t, filepath.Join(mod, f)); !strings.Contains(src, "/tests/karpenter/v1.16/interruption\"") || strings.Contains(src, "/v1.15/") {
			t.Errorf("the new module's %s does not import its own adapter:\n%s", f, src)
		}
	}
	if _, err := os.Stat(filepath.Join(mod, "interruption", "interruption.go")); err != nil {
		t.Error("the new module has no controller adapter")
	}
	var extract struct {
		Source   string
		Derived  string
		Policies map[string]json.RawMessage
	}
	if err := json.Unmarshal([]byte(read(t, filepath.Join(mod, "testdata", "controller-policy.json"))), &extract); err != nil {
		t.Fatal(err)
	}
	wantSource := bump.Repository + "/blob/" + commit + "/website/content/en/v1.16/getting-started/getting-started-with-karpenter/cloudformation.yaml"
	if extract.Source != wantSource || extract.Derived != "" || len(extract.Policies) != 1 || extract.Policies["NodeLifecyclePolicy"] == nil {
		t.Errorf("template extract = %+v, want NodeLifecyclePolicy from %s", extract, wantSource)
	}
	after, _ := filepath.Glob(filepath.Join(root, bump.ContractDir, "v*"))
	if len(after) != len(before)+1 {
		t.Errorf("version modules %v, want %v and v1.16", after, before)
	}
	if !slices.Equal(w.tidied, []string{"tests/karpenter/v1.16", "tests"}) || !slices.Equal(w.fetched, []string{"1.16.0"}) {
		t.Errorf("tidied %v, fetched %v", w.tidied, w.fetched)
	}
}

// TestBumpToAPatch: a patch of the newest minor version re-pins its module and takes its template; the newest
// supported and the module set stay; a Kubernetes range the table already has adds no entry.
func TestBumpToAPatch(t *testing.T) {
	root := fixtureTree(t)
	current := karpenter.Newest
	next := karpenter.Version{Major: current.Major, Minor: current.Minor, Patch: 99}
	table := read(t, filepath.Join(root, bump.VersionsFile))
	r, _ := next.Kubernetes()
	w := &world{source: karpenterSource(t, "1."+strconv.Itoa(r.Min), "1."+strconv.Itoa(r.Max))}
	before, _ := filepath.Glob(filepath.Join(root, bump.ContractDir, "v*"))
	if err := bump.Run(context.Background(), w.options(root, next.String())); err != nil {
		t.Fatal(err)
	}
	versions := read(t, filepath.Join(root, bump.VersionsFile))
	if !strings.Contains(versions, `const Default = "`+next.String()+`"`) {
		t.Errorf("default not moved to %s", next)
	}
	if strings.Count(versions, "KubernetesRange{") != strings.Count(table, "KubernetesRange{") {
		t.Error("an entry was added to the Kubernetes table though the range is unchanged")
	}
	after, _ := filepath.Glob(filepath.Join(root, bump.ContractDir, "v*"))
	if !slices.Equal(before, after) {
		t.Errorf("modules %v, want %v", after, before)
	}
	mod := filepath.Join(root, bump.ContractDir, "v"+strconv.Itoa(current.Major)+"."+strconv.Itoa(current.Minor), "go.mod")
	if got := requires(t, read(t, mod))[bump.Module]; got != "v"+next.String() {
		t.Errorf("%s pins %s", mod, got)
	}
	if support := read(t, filepath.Join(root, bump.SupportFile)); !strings.Contains(support, fmt.Sprintf("Minor: %d, Patch: 99}},", current.Minor)) {
		t.Errorf("%s does not name %s as its line's tested patch", bump.SupportFile, next)
	}
}

// TestBumpAnLTSLine: a patch of an older line the bus tests (the newer LTS line) moves that line's module and its
// tested patch, and nothing of the default: not the default, not the end-to-end tests' pin, not the newest
// supported; a Kubernetes range it raises goes into the table after the row in effect for it, in release order;
// where Karpenter's repository has no template for it, the module's template policies are kept.
func TestBumpAnLTSLine(t *testing.T) {
	root := fixtureTree(t)
	versionsBefore, testsBefore := read(t, filepath.Join(root, bump.VersionsFile)), read(t, filepath.Join(root, bump.TestsModule))
	policy := filepath.Join(root, bump.ContractDir, "v1.14", "testdata", "controller-policy.json")
	policyBefore := read(t, policy)
	w := &world{source: karpenterSource(t, "1.26", "1.37"), noTemplate: true}
	if err := bump.Run(context.Background(), w.options(root, "1.14.4")); err != nil {
		t.Fatal(err)
	}
	versions := read(t, filepath.Join(root, bump.VersionsFile))
	if strings.Replace(versions, "\t{Version{Major: 1, Minor: 14, Patch: 4}, KubernetesRange{26, 37}},\n", "", 1) != versionsBefore {
		t.Errorf("%s: want only a Kubernetes row for 1.14.4; now:\n%s", bump.VersionsFile, versions)
	}
	if i, j := strings.Index(versions, "Minor: 14, Patch: 4}"), strings.Index(versions, "{Version{Major: 1, Minor: 15}"); i < 0 || j < i {
		t.Errorf("the row for 1.14.4 is not before 1.15's:\n%s", versions)
	}
	if read(t, filepath.Join(root, bump.TestsModule)) != testsBefore {
		t.Errorf("%s changed: the end-to-end tests pin the default", bump.TestsModule)
	}
	if got := requires(t, read(t, filepath.Join(root, bump.ContractDir, "v1.14", "go.mod")))[bump.Module]; got != "v1.14.4" {
		t.Errorf("v1.14 pins %s", got)
	}
	if support := read(t, filepath.Join(root, bump.SupportFile)); !strings.Contains(support, "LTS: true, Tested: Version{Major: 1, Minor: 14, Patch: 4}},") {
		t.Errorf("%s does not name 1.14.4 as the 1.14 line's tested patch", bump.SupportFile)
	}
	if read(t, policy) != policyBefore {
		t.Error("the template policies changed though Karpenter's repository has no template for 1.14.4")
	}
	if !slices.Equal(w.tidied, []string{"tests/karpenter/v1.14"}) {
		t.Errorf("tidied %v, want only the line's module", w.tidied)
	}
}

// TestModulesAreTheTestedLines: the support table's tested patch of each line is exactly what a module under
// tests/karpenter pins, and every module is a line's tested patch: what a warning tells users to move to is proven.
func TestModulesAreTheTestedLines(t *testing.T) {
	modules, err := filepath.Glob(filepath.Join(repoRoot(t), bump.ContractDir, "v*", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	pinned := map[string]bool{}
	for _, m := range modules {
		pinned[strings.TrimPrefix(requires(t, read(t, m))[bump.Module], "v")] = true
	}
	tested := map[string]bool{}
	for _, l := range karpenter.Lines() {
		if l.Tested != (karpenter.Version{}) {
			tested[l.Tested.String()] = true
		}
	}
	if !maps.Equal(pinned, tested) {
		t.Errorf("modules pin %v; the support table's tested patches are %v", slices.Sorted(maps.Keys(pinned)), slices.Sorted(maps.Keys(tested)))
	}
}

// TestBumpRefuses: a version older than the default, a pre-release, or a failing fetch changes nothing.
func TestBumpRefuses(t *testing.T) {
	// Older than the oldest line's tested patch; a pre-release; not a version; a line the bus tests no release of;
	// an LTS line's tested patch itself; the default itself.
	for _, v := range []string{"1.6.0", "1.16.0-rc.1", "latest", "1.12.3", "1.14.3", karpenter.Default} {
		root := fixtureTree(t)
		was := read(t, filepath.Join(root, bump.VersionsFile))
		w := &world{source: karpenterSource(t, "1.26", "1.37")}
		if err := bump.Run(context.Background(), w.options(root, v)); err == nil {
			t.Errorf("%s: bumped", v)
		}
		if read(t, filepath.Join(root, bump.VersionsFile)) != was {
			t.Errorf("%s: %s changed", v, bump.VersionsFile)
		}
	}
	root := fixtureTree(t)
	was := read(t, filepath.Join(root, bump.VersionsFile))
	o := (&world{}).options(root, "1.16.0")
	o.Fetch = func(context.Context, karpenter.Version) (bump.Release, error) {
		return bump.Release{}, errors.New("404 Not Found")
	}
	if err := bump.Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("a failing fetch: %v", err)
	}
	if read(t, filepath.Join(root, bump.VersionsFile)) != was {
		t.Errorf("a failing fetch changed %s", bump.VersionsFile)
	}
}
