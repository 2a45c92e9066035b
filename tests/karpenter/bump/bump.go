// Package bump moves the bus to a new Karpenter release in one step (make karpenter-bump VERSION=x.y.z): the
// version it installs by default, the range it supports, the module each contract test pins, that release's
// template policies (copied with the commit they come from), the Kubernetes versions its source accepts, and the
// support table's tested patch of its line. A patch of an older line the bus tests (an LTS line) moves that
// line's module and tested patch only: the default stays.
// What needs a person is left to the contract tests, which then fail and say what: an AWS call the controller
// policy does not grant, an event the bus does not carry, a chart value that moved (docs/clusters.md, "Karpenter versions").
package bump

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/modfile"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/karpenter"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/karpenter/templatepolicy"
)

// Module is Karpenter's Go module; Repository its source.
const (
	Module     = "github.com/aws/karpenter-provider-aws"
	Repository = "https://github.com/aws/karpenter-provider-aws"
)

// Files of the repository the bump edits, relative to its root.
const (
	VersionsFile = "router/karpenter/karpenter.go"
	SupportFile  = "router/karpenter/support.go"
	TestsModule  = "tests/go.mod"
	ContractDir  = "tests/karpenter"
)

// workarounds are pins a module carries for one Karpenter release only (versions the module proxy lacked): a bump
// drops them, and go mod tidy finds what the new release needs.
var workarounds = []string{"sigs.k8s.io/karpenter", "github.com/aws/aws-sdk-go-v2/service/timestreamwrite"}

// Release is what the bump reads of a Karpenter release in its repository.
type Release struct {
	// Commit is the release tag's commit.
	Commit string
	// Released is the day the tag was made: a new minor version's line starts then.
	Released time.Time
	// Template is its getting-started CloudFormation template, TemplatePath where it is in the repository, and
	// TemplateCommit the commit it was read at (the tag's, or the main branch's when the tag's tree has no
	// website, as on a release branch). A nil Template keeps the module's template policies as they are.
	Template       []byte
	TemplatePath   string
	TemplateCommit string
}

// Options are a bump's inputs: the repository, the version, and how to reach the world (the command uses
// GitHub and the go command; the tests, fixtures).
type Options struct {
	Root    string
	Version string
	// Fetch reads the release from Karpenter's repository.
	Fetch func(ctx context.Context, v karpenter.Version) (Release, error)
	// Tidy runs go mod tidy in a module's directory; nil skips it.
	Tidy func(ctx context.Context, dir string) error
	// Source is where the go command keeps Karpenter's module source for the module in dir, once tidied.
	Source func(ctx context.Context, dir string) (string, error)
	Log    io.Writer
}

// TemplatePath is where version v's getting-started template is in Karpenter's repository.
func TemplatePath(v karpenter.Version) string {
	return fmt.Sprintf("website/content/en/v%d.%d/getting-started/getting-started-with-karpenter/cloudformation.yaml", v.Major, v.Minor)
}

// Run bumps the repository at o.Root to o.Version, which must be a release (no pre-release) no older than the
// current default.
func Run(ctx context.Context, o Options) error {
	v, err := karpenter.Parse(o.Version)
	if err != nil {
		return err
	}
	if v.Pre != "" {
		return fmt.Errorf("%s is a pre-release: the bus installs releases only", v)
	}
	logf := func(format string, args ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, format+"\n", args...)
		}
	}
	current, err := currentDefault(o.Root)
	if err != nil {
		return err
	}
	// An older line than the default's: one the bus tests (an LTS line), at a patch newer than the tested one.
	older := v.Major < current.Major || v.Major == current.Major && v.Minor < current.Minor
	tested, known, err := testedPatch(o.Root, v)
	if err != nil {
		return err
	}
	switch {
	case older && tested == (karpenter.Version{}):
		return fmt.Errorf("%s: the bus tests no %d.%d release (its support table names none): only the lines it tests are bumped", v, v.Major, v.Minor)
	case older && v.Compare(tested) <= 0:
		return fmt.Errorf("%s is not newer than the %d.%d line's tested patch, %s", v, v.Major, v.Minor, tested)
	case !older && v.Compare(current) <= 0:
		return fmt.Errorf("%s is not newer than the current default, %s", v, current)
	}
	rel, err := o.Fetch(ctx, v)
	if err != nil {
		return fmt.Errorf("reading Karpenter %s: %w", v, err)
	}
	if !older {
		if err := setVersions(o.Root, v); err != nil {
			return err
		}
		logf("%s: default %s, supported to %d.%d.x", VersionsFile, v, v.Major, v.Minor)
	}
	if err := setTested(o.Root, v, known, rel.Released); err != nil {
		return err
	}
	if known {
		logf("%s: the %d.%d line's tested patch is %s", SupportFile, v.Major, v.Minor, v)
	} else {
		logf("%s: a new line, %d.%d, released %s (a regular release: mark it LTS: true if Karpenter designates it so)",
			SupportFile, v.Major, v.Minor, rel.Released.Format(time.DateOnly))
	}

	dir, created, err := versionModule(o.Root, v)
	if err != nil {
		return err
	}
	if created {
		logf("%s: a new module, copied from the newest one", rel2(o.Root, dir))
	}
	modules := []string{filepath.Join(dir, "go.mod"), filepath.Join(o.Root, TestsModule)}
	if older {
		modules = modules[:1] // the end-to-end tests pin the default's version
	}
	for _, mod := range modules {
		dropped, err := pin(mod, v)
		if err != nil {
			return err
		}
		logf("%s: pins %s v%s%s", rel2(o.Root, mod), Module, v, droppedNote(dropped))
	}
	if rel.Template == nil {
		logf("%s: kept: Karpenter's repository has no %s at the tag nor on its main branch", rel2(o.Root, filepath.Join(dir, templatepolicy.File)), rel.TemplatePath)
	} else {
		commit := rel.TemplateCommit
		if commit == "" {
			commit = rel.Commit
		}
		source := fmt.Sprintf("%s/blob/%s/%s", Repository, commit, rel.TemplatePath)
		extract, err := templatepolicy.FromTemplate(rel.Template, source)
		if err != nil {
			return fmt.Errorf("%s: %w", source, err)
		}
		b, err := extract.JSON()
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, templatepolicy.File), b, 0o644); err != nil {
			return err
		}
		logf("%s: the template's policies, from %s", rel2(o.Root, filepath.Join(dir, templatepolicy.File)), source)
	}

	if o.Tidy == nil {
		logf("go mod tidy skipped: run it in %s and tests/, then read Kubernetes's range in the new source", rel2(o.Root, dir))
		return nil
	}
	tidied := []string{dir, filepath.Join(o.Root, "tests")}
	if older {
		tidied = tidied[:1]
	}
	for _, d := range tidied {
		if err := o.Tidy(ctx, d); err != nil {
			return fmt.Errorf("go mod tidy in %s (a module the proxy lacks needs a replace; see the comments in tests/go.mod): %w", rel2(o.Root, d), err)
		}
	}
	src, err := o.Source(ctx, dir)
	if err != nil {
		return err
	}
	k8s, err := KubernetesRange(src)
	if err != nil {
		return err
	}
	added, err := setKubernetes(o.Root, v, k8s)
	if err != nil {
		return err
	}
	if added {
		logf("%s: Karpenter %s runs on Kubernetes %s", VersionsFile, v, k8s)
	}
	return nil
}

func droppedNote(dropped []string) string {
	if len(dropped) == 0 {
		return ""
	}
	return " (dropped the previous release's pins of " + strings.Join(dropped, ", ") + ")"
}

func rel2(root, path string) string {
	r, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	return r
}

var (
	defaultRE = regexp.MustCompile(`(?m)^const Default = "([^"]+)"$`)
	newestRE  = regexp.MustCompile(`(?m)^(\s*Newest = Version\{Major: )(\d+), Minor: (\d+)\}$`)
)

func currentDefault(root string) (karpenter.Version, error) {
	b, err := os.ReadFile(filepath.Join(root, VersionsFile))
	if err != nil {
		return karpenter.Version{}, err
	}
	m := defaultRE.FindSubmatch(b)
	if m == nil {
		return karpenter.Version{}, fmt.Errorf("%s: no const Default", VersionsFile)
	}
	return karpenter.Parse(string(m[1]))
}

// setVersions makes v the default and, if its minor version is newer, the newest supported.
func setVersions(root string, v karpenter.Version) error {
	path := filepath.Join(root, VersionsFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	text := defaultRE.ReplaceAllString(string(b), fmt.Sprintf(`const Default = "%s"`, v))
	m := newestRE.FindStringSubmatch(text)
	if m == nil {
		return fmt.Errorf("%s: no Newest = Version{Major: x, Minor: y}", VersionsFile)
	}
	major, _ := strconv.Atoi(m[2])
	minor, _ := strconv.Atoi(m[3])
	if (karpenter.Version{Major: v.Major, Minor: v.Minor}).Compare(karpenter.Version{Major: major, Minor: minor}) > 0 {
		text = newestRE.ReplaceAllString(text, fmt.Sprintf("${1}%d, Minor: %d}", v.Major, v.Minor))
	}
	return os.WriteFile(path, []byte(text), 0o644)
}

// copied are the files of a version module a new one starts from: its go.mod and go.sum, the contract test, and
// the judge of its interruption controller (the adapter that builds the version's controller, its test, and the
// storm command, run for the default version). An adapter that no longer compiles against the new version is the
// failing check that asks for a person.
var copied = []string{"go.mod", "go.sum", "contract_test.go", "interruption_test.go", "interruption/interruption.go", "cmd/storm/main.go"}

// versionModule is the contract module of v's minor version, made by copying the newest one when there is none.
func versionModule(root string, v karpenter.Version) (dir string, created bool, err error) {
	base := filepath.Join(root, ContractDir)
	name := fmt.Sprintf("v%d.%d", v.Major, v.Minor)
	dir = filepath.Join(base, name)
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
		return dir, false, nil
	}
	entries, err := os.ReadDir(base)
	if err != nil {
		return "", false, err
	}
	var newest string
	var newestV karpenter.Version
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		mv, err := karpenter.Parse(strings.TrimPrefix(e.Name(), "v") + ".0")
		if err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(base, e.Name(), "go.mod")); err == nil && (newest == "" || mv.Compare(newestV) > 0) {
			newest, newestV = e.Name(), mv
		}
	}
	if newest == "" {
		return "", false, fmt.Errorf("%s: no version module to copy", ContractDir)
	}
	from := filepath.Join(base, newest)
	if err := os.MkdirAll(filepath.Join(dir, "testdata"), 0o755); err != nil {
		return "", false, err
	}
	for _, f := range copied {
		b, err := os.ReadFile(filepath.Join(from, f))
		if os.IsNotExist(err) && f != "go.mod" {
			continue
		}
		if err != nil {
			return "", false, err
		}
		if f == "go.mod" {
			b, err = renameModule(b, newest, name)
			if err != nil {
				return "", false, err
			}
		} else {
			// The module's own packages (its controller adapter) are imported by the module path.
			b = bytes.ReplaceAll(b, []byte("/"+ContractDir+"/"+newest+"/"), []byte("/"+ContractDir+"/"+name+"/"))
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			return "", false, err
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			return "", false, err
		}
	}
	return dir, true, nil
}

// renameModule gives a copied version module its own path.
func renameModule(gomod []byte, from, to string) ([]byte, error) {
	f, err := modfile.Parse("go.mod", gomod, nil)
	if err != nil {
		return nil, err
	}
	if err := f.AddModuleStmt(strings.TrimSuffix(f.Module.Mod.Path, from) + to); err != nil {
		return nil, err
	}
	return f.Format()
}

// testedRE finds the version a version module's comment says it tests.
var testedRE = regexp.MustCompile(`(The contract tests against Karpenter v)[0-9]+\.[0-9]+\.[0-9]+`)

// pin makes the go.mod at path require Karpenter v, and drops the previous release's workarounds.
func pin(path string, v karpenter.Version) (dropped []string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	b = testedRE.ReplaceAll(b, []byte("${1}"+v.String()))
	f, err := modfile.Parse(path, b, nil)
	if err != nil {
		return nil, err
	}
	found := false
	for _, r := range f.Require {
		if r.Mod.Path == Module {
			found = true
		}
	}
	if !found {
		return nil, fmt.Errorf("%s does not require %s", path, Module)
	}
	if err := f.AddRequire(Module, "v"+v.String()); err != nil {
		return nil, err
	}
	for _, w := range workarounds {
		for _, r := range slices.Clone(f.Replace) {
			if r.Old.Path == w {
				if err := f.DropReplace(r.Old.Path, r.Old.Version); err != nil {
					return nil, err
				}
				dropped = append(dropped, w)
			}
		}
		for _, r := range f.Require {
			if r.Mod.Path == w && !slices.Contains(dropped, w) {
				dropped = append(dropped, w)
			}
		}
		if err := f.DropRequire(w); err != nil {
			return nil, err
		}
	}
	f.Cleanup()
	out, err := f.Format()
	if err != nil {
		return nil, err
	}
	return dropped, os.WriteFile(path, out, 0o644)
}

// KubernetesRange reads the Kubernetes versions Karpenter's controller accepts from its source at src.
func KubernetesRange(src string) (karpenter.KubernetesRange, error) {
	path := filepath.Join(src, "pkg", "providers", "version", "version.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		return karpenter.KubernetesRange{}, err
	}
	bounds := map[string]int{}
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Names) == 1 && len(vs.Values) == 1 {
			if lit, ok := vs.Values[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				s, _ := strconv.Unquote(lit.Value)
				if m, err := karpenter.KubernetesMinor(s); err == nil {
					bounds[vs.Names[0].Name] = m
				}
			}
		}
		return true
	})
	lo, okLo := bounds["MinK8sVersion"]
	hi, okHi := bounds["MaxK8sVersion"]
	if !okLo || !okHi {
		return karpenter.KubernetesRange{}, fmt.Errorf("%s: no MinK8sVersion and MaxK8sVersion", path)
	}
	return karpenter.KubernetesRange{Min: lo, Max: hi}, nil
}

// kubernetesEntryRE is one row of the compatibility table.
var kubernetesEntryRE = regexp.MustCompile(`(?m)^\t\{Version\{Major: (\d+), Minor: (\d+)(?:, Patch: (\d+))?\}, KubernetesRange\{(\d+), (\d+)\}\},$`)

// setKubernetes adds v's Kubernetes range to the compatibility table when it differs from what the table says
// of v now: the row in effect for v is the last one from a release no newer than v, and the new row goes right
// after it, so a patch of an older line (1.9.4 taking a Kubernetes version) keeps the table in release order.
func setKubernetes(root string, v karpenter.Version, r karpenter.KubernetesRange) (bool, error) {
	path := filepath.Join(root, VersionsFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	text := string(b)
	start := strings.Index(text, "var kubernetes = []struct {")
	if start < 0 {
		return false, fmt.Errorf("%s: no kubernetes table", VersionsFile)
	}
	end := strings.Index(text[start:], "\n}\n")
	if end < 0 {
		return false, fmt.Errorf("%s: the kubernetes table does not end", VersionsFile)
	}
	end += start
	rows := kubernetesEntryRE.FindAllStringSubmatchIndex(text[start:end], -1)
	if len(rows) == 0 {
		return false, fmt.Errorf("%s: the kubernetes table has no rows", VersionsFile)
	}
	n := func(m []int, i int) int {
		if m[2*i] < 0 {
			return 0
		}
		x, _ := strconv.Atoi(text[start+m[2*i] : start+m[2*i+1]])
		return x
	}
	at := -1 // the row in effect for v
	for i, m := range rows {
		from := karpenter.Version{Major: n(m, 1), Minor: n(m, 2), Patch: n(m, 3)}
		if from.Compare(v) <= 0 {
			at = i
		}
	}
	insert := start + rows[0][0] // before the first row, when v is older than every row
	if at >= 0 {
		m := rows[at]
		if n(m, 4) == r.Min && n(m, 5) == r.Max {
			return false, nil // the row in effect already says so
		}
		insert = start + m[1] + 1
	}
	entry := fmt.Sprintf("\t{Version{Major: %d, Minor: %d, Patch: %d}, KubernetesRange{%d, %d}},\n", v.Major, v.Minor, v.Patch, r.Min, r.Max)
	text = text[:insert] + entry + text[insert:]
	return true, os.WriteFile(path, []byte(text), 0o644)
}

// lineRE is one line of the support table (router/karpenter/support.go): its minor version and the rest.
var lineRE = regexp.MustCompile(`(?m)^\t\{Major: (\d+), Minor: (\d+), Released: day\([^)]*\)(.*)\},$`)

// testedRE finds a line's tested patch.
var testedPatchRE = regexp.MustCompile(`, Tested: Version\{Major: (\d+), Minor: (\d+), Patch: (\d+)\}`)

// testedPatch is the support table's tested patch of v's line (zero when it names none), and whether the table
// has the line.
func testedPatch(root string, v karpenter.Version) (karpenter.Version, bool, error) {
	b, err := os.ReadFile(filepath.Join(root, SupportFile))
	if err != nil {
		return karpenter.Version{}, false, err
	}
	for _, m := range lineRE.FindAllStringSubmatch(string(b), -1) {
		if m[1] != strconv.Itoa(v.Major) || m[2] != strconv.Itoa(v.Minor) {
			continue
		}
		t := testedPatchRE.FindStringSubmatch(m[3])
		if t == nil {
			return karpenter.Version{}, true, nil
		}
		p, _ := strconv.Atoi(t[3])
		return karpenter.Version{Major: v.Major, Minor: v.Minor, Patch: p}, true, nil
	}
	return karpenter.Version{}, false, nil
}

// setTested makes v its line's tested patch in the support table, adding the line, released on the given day,
// when the table has none (a new minor version).
func setTested(root string, v karpenter.Version, known bool, released time.Time) error {
	path := filepath.Join(root, SupportFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	text := string(b)
	tested := fmt.Sprintf(", Tested: Version{Major: %d, Minor: %d, Patch: %d}", v.Major, v.Minor, v.Patch)
	all := lineRE.FindAllStringSubmatchIndex(text, -1)
	if len(all) == 0 {
		return fmt.Errorf("%s: no support table", SupportFile)
	}
	if !known {
		if released.IsZero() {
			return fmt.Errorf("%s: the release day of %s is unknown", SupportFile, v)
		}
		last := all[len(all)-1]
		line := fmt.Sprintf("\n\t{Major: %d, Minor: %d, Released: day(%d, time.%s, %d)%s},", v.Major, v.Minor,
			released.Year(), released.Month(), released.Day(), tested)
		text = text[:last[1]] + line + text[last[1]:]
		return os.WriteFile(path, []byte(text), 0o644)
	}
	for _, m := range all {
		if text[m[2]:m[3]] != strconv.Itoa(v.Major) || text[m[4]:m[5]] != strconv.Itoa(v.Minor) {
			continue
		}
		rest := text[m[6]:m[7]]
		if testedPatchRE.MatchString(rest) {
			rest = testedPatchRE.ReplaceAllString(rest, tested)
		} else {
			rest += tested
		}
		text = text[:m[6]] + rest + text[m[7]:]
		return os.WriteFile(path, []byte(text), 0o644)
	}
	return fmt.Errorf("%s: no line %d.%d", SupportFile, v.Major, v.Minor)
}
