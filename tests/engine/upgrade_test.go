package engine_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/engine/standin"
)

// changelogRelease is one version of CHANGELOG.md: its heading, the commit it was cut from (the "Commit `…`" line under
// the heading, which every release but one just cut has: a clone without tags finds it) and its "Upgrading from …"
// notes.
type changelogRelease struct {
	Version, Commit string
	// Upgrading is the text of its "### Upgrading from <previous>" section.
	Upgrading string
}

var (
	releaseHeading = regexp.MustCompile(`^## \[(\d+\.\d+\.\d+|Unreleased)\]`)
	releaseCommit  = regexp.MustCompile("^Commit `([0-9a-f]{7,40})`")
)

// changelog reads CHANGELOG.md's releases, newest first: the current one (this checkout's version, with the notes
// of [Unreleased], if any, added to its own), then the previous ones.
func changelog(t *testing.T) []changelogRelease {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []changelogRelease
	var upgrading *strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m := releaseHeading.FindStringSubmatch(line); m != nil {
			if upgrading != nil {
				out[len(out)-1].Upgrading = upgrading.String()
			}
			out = append(out, changelogRelease{Version: m[1]})
			upgrading = nil
			continue
		}
		if len(out) == 0 {
			continue
		}
		cur := &out[len(out)-1]
		switch {
		case releaseCommit.MatchString(line) && cur.Commit == "":
			cur.Commit = releaseCommit.FindStringSubmatch(line)[1]
		case strings.HasPrefix(line, "### Upgrading from "):
			upgrading = &strings.Builder{}
		case strings.HasPrefix(line, "## ") || strings.HasPrefix(line, "### "):
			if upgrading != nil {
				cur.Upgrading = upgrading.String()
			}
			upgrading = nil
		case upgrading != nil:
			upgrading.WriteString(line + "\n")
		}
	}
	if upgrading != nil {
		out[len(out)-1].Upgrading = upgrading.String()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	// A checkout past the newest release upgrades through its notes and [Unreleased]'s "Upgrading from" it: both
	// lists hold for what its preview shows.
	if len(out) > 0 && out[0].Version == "Unreleased" {
		unreleased := out[0].Upgrading
		out = out[1:]
		if len(out) > 0 {
			out[0].Upgrading += unreleased
		}
	}
	if len(out) < 2 {
		t.Fatalf("CHANGELOG.md: %d releases, want this one and a previous one", len(out))
	}
	return out
}

// previousProgram builds the previous release's program (CHANGELOG.md's second release) from this repository's
// history: its tree at the release's commit, with testdata/previous/main.go as cmd/kib-previous, built there against
// that release's own packages. It returns the binary.
func previousProgram(t *testing.T, prev changelogRelease) string {
	t.Helper()
	tree := previousTree(t, prev)
	main, err := os.ReadFile(filepath.Join("testdata", "previous", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tree, "cmd", "kib-previous")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), main, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "kib-previous")
	build := exec.Command("go", "build", "-o", bin, "./cmd/kib-previous")
	// -mod=mod: the Automation API's packages are in the SDK module the release requires, not all in its go.sum.
	build.Dir, build.Env = tree, append(os.Environ(), withModMod(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building release %s's program (%s): %v\n%s", prev.Version, prev.Commit, err, out)
	}
	return bin
}

// withModMod is GOFLAGS with -mod=mod added to the caller's: the flags make test sets (-trimpath above all, as Pulumi's
// Go host builds) kept, so that a build of the previous release reuses every package the tests compiled alike (the
// Pulumi, AWS and Kubernetes SDKs) instead of compiling them all again, minutes on a cold cache.
func withModMod() string {
	return "GOFLAGS=" + strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod")
}

// previousTree is the tree of the release prev (its commit, or its tag v<version>), from this repository's history.
func previousTree(t *testing.T, prev changelogRelease) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(repoRoot, ".git")); err != nil {
		t.Fatalf("the upgrade test builds the previous release from this repository's history: %s is not a git checkout (%v)", repoRoot, err)
	}
	if prev.Commit == "" {
		prev.Commit = "v" + prev.Version
	}
	tree := filepath.Join(t.TempDir(), "previous")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	archive := exec.Command("git", "-C", repoRoot, "archive", "--format=tar", prev.Commit)
	untar := exec.Command("tar", "-x", "-C", tree)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	untar.Stdin = pipe
	var stderr bytes.Buffer
	archive.Stderr, untar.Stderr = &stderr, &stderr
	if err := untar.Start(); err != nil {
		t.Fatal(err)
	}
	if err := archive.Run(); err != nil {
		t.Fatalf("git archive %s (release %s): %v\n%s", prev.Commit, prev.Version, err, stderr.String())
	}
	if err := untar.Wait(); err != nil {
		t.Fatalf("tar: %v\n%s", err, stderr.String())
	}
	return tree
}

// stateful are the types whose replacement or deletion loses what a user keeps: messages (the queues), the
// identities other accounts and Karpenter trust (roles, Pod Identity associations), the releases Karpenter runs,
// the clusters, the evidence (the seal key, the archive).
var stateful = []string{
	"aws:sqs/queue:Queue", "aws:iam/role:Role", "aws:eks/podIdentityAssociation:PodIdentityAssociation",
	"kubernetes:helm.sh/v3:Release", "aws:eks/cluster:Cluster", "aws:kms/key:Key", "aws:s3/bucket:Bucket",
	"aws:s3/bucketV2:BucketV2", "aws:iam/openIdConnectProvider:OpenIdConnectProvider",
}

// urnType is the type of the resource a URN names (the last type of its parent chain).
func urnType(urn string) string {
	parts := strings.Split(urn, "::")
	if len(parts) < 4 {
		return ""
	}
	chain := strings.Split(parts[2], "$")
	return chain[len(chain)-1]
}

// TestUpgradeFromThePreviousRelease deploys a stack with the previous release's program (CHANGELOG.md's second
// release, built from its commit), then previews and updates it with this checkout's: nothing stateful is replaced
// or deleted, and every kind of step the preview shows (an operation on a type) is one the changelog's "Upgrading
// from" notes list, in a line "- <op> `<type>`", and each such line is shown. The steps are in the test's output.
func TestUpgradeFromThePreviousRelease(t *testing.T) {
	t.Parallel()
	releases := changelog(t)
	cur, prev := releases[0], releases[1]
	if cur.Upgrading == "" {
		t.Fatalf("CHANGELOG.md: release %s has no \"### Upgrading from %s\" section", cur.Version, prev.Version)
	}
	bin := previousProgram(t, prev)

	alpha := cluster("alpha", nil)
	beta := cluster("beta", map[string]any{"mode": "existing-role", "controllerRoleName": "KarpenterController-beta", "account": member})
	delta := cluster("delta", map[string]any{"identity": "irsa", "oidcProviderArn": "arn:aws:iam::" + hub + ":oidc-provider/oidc.eks." + region + ".amazonaws.com/id/DELTA"})
	clusters := []any{alpha, beta, delta}
	b, _ := json.Marshal(clusters)
	world := standin.World{Region: region, Account: hub, SpotServiceLinkedRole: []string{hub},
		Config: map[string]string{config.Namespace + ":clusters": string(b)}, Versions: versions(t)}
	e := newEnv(t, world)
	s := newStack(t, e, "upgrade")
	s.configure(map[string]any{"namePrefix": "kib-prod", "clusters": clusters,
		"accounts":  map[string]any{member: map[string]any{"deployRoleArn": "arn:aws:iam::" + member + ":role/kib-deploy"}},
		"heartbeat": map[string]any{"rate": "5m"}})

	root, err := filepath.Abs(filepath.Join(repoRoot, "build"))
	if err != nil {
		t.Fatal(err)
	}
	up := exec.Command(bin, root, s.stack.Workspace().WorkDir(), "upgrade", project, "up")
	up.Env = os.Environ()
	for k, v := range e.Vars() {
		up.Env = append(up.Env, k+"="+v)
	}
	if out, err := up.CombinedOutput(); err != nil {
		t.Fatalf("release %s's pulumi up: %v\n%s", prev.Version, err, out)
	}
	before := len(e.Records(t))

	steps, err := s.preview()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, st := range steps {
		t.Logf("upgrade preview from %s: %s", prev.Version, st)
		typ := urnType(st.URN)
		switch st.Op {
		case apitype.OpDelete, apitype.OpReplace, apitype.OpCreateReplacement, apitype.OpDeleteReplaced,
			apitype.OpDiscardReplaced, apitype.OpImportReplacement:
			if slices.Contains(stateful, typ) {
				t.Errorf("the upgrade from %s would %s %s: it holds what a user keeps", prev.Version, st.Op, st.URN)
			}
		}
		kinds[fmt.Sprintf("%s `%s`", st.Op, typ)]++
	}
	listed := cur.listedSteps()
	for k, n := range kinds {
		if !listed[k] {
			t.Errorf("the upgrade from %s's preview shows %d × %s: CHANGELOG.md's \"Upgrading from %s\" does not list it (a line \"- %s\")", prev.Version, n, k, prev.Version, k)
		}
	}
	for k := range listed {
		if kinds[k] == 0 {
			t.Errorf("CHANGELOG.md's \"Upgrading from %s\" lists %s: the upgrade's preview does not show it", prev.Version, k)
		}
	}

	s.up()
	after, err := s.preview()
	if err != nil {
		t.Fatal(err)
	}
	none(t, "the preview after the upgrade", after)
	if n := len(e.Records(t)); n < before {
		t.Errorf("the upgrade left %d resources of the %d release %s made", n, before, prev.Version)
	}
}

// listedSteps are the kinds of step ("<op> `<type>`") r's "Upgrading from" notes list.
func (r changelogRelease) listedSteps() map[string]bool {
	listed := map[string]bool{}
	for _, line := range strings.Split(r.Upgrading, "\n") {
		if m := upgradeStep.FindStringSubmatch(line); m != nil {
			listed[m[1]] = true
		}
	}
	return listed
}

// upgradeStep is a line of an "Upgrading from" section that lists a kind of step its preview shows: "- <op>
// `<type>`", then what it is and why.
var upgradeStep = regexp.MustCompile("^\\s*- ((?:create|update|delete|replace|create-replacement|delete-replaced|discard-replaced|import|import-replacement|read) `[^`]+`)")
