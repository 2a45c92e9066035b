package engine_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/release"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/engine/standin"
)

var nodehostBinary = builtOnce("./cmd/nodehost")

// nodeLanguageHost is a directory holding pulumi-language-nodejs: the real host when PULUMI_LANGUAGE_NODEJS names it
// (built from Pulumi's source at the CLI's version), or else the stand-in (cmd/nodehost), as the module proxy does
// not serve the real one.
func nodeLanguageHost(t *testing.T) string {
	t.Helper()
	return languageHost(t, "nodejs", nodehostBinary)
}

// npmOffline is npm's environment for the TypeScript programs: every package from npm's cache, where make's npm ci
// of each example's own lockfile put them (make ts-examples), nothing from the registry.
var npmOffline = map[string]string{
	"npm_config_offline": "true", "npm_config_audit": "false", "npm_config_fund": "false", "npm_config_update_notifier": "false",
}

// tsExample copies the TypeScript example examples/<name> (what a user copies: Pulumi.yaml, package.json, its lock,
// index.ts and its tsconfig.json if it has one) into a directory outside the repository, and installs its packages with npm ci, as pinned by its
// lockfile.
func tsExample(t *testing.T, e *env, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"Pulumi.yaml", "package.json", "package-lock.json", "index.ts", "tsconfig.json"} {
		b, err := os.ReadFile(filepath.Join(repoRoot, "examples", name, f))
		if f == "tsconfig.json" && errors.Is(err, fs.ErrNotExist) {
			continue // ts-node's defaults, which @pulumi/pulumi runs the program with
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	npm := exec.Command("npm", "ci")
	npm.Dir, npm.Env = dir, os.Environ()
	for k, v := range e.Vars() {
		npm.Env = append(npm.Env, k+"="+v)
	}
	if out, err := npm.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in a copy of examples/%s: %v\n%s\n(make ts-examples puts its packages in npm's cache)", name, err, out)
	}
	return dir
}

// TestTypeScriptExamples runs the TypeScript examples as written, each from a copy outside the repository, through
// the real CLI and the real @pulumi/pulumi (3.270.0, each example's lockfile), with the Node.js language host (the
// stand-in, or PULUMI_LANGUAGE_NODEJS's): `pulumi install` of each Pulumi.yaml's packages entry from the stand-in
// GitHub at the tag (the CLI clones it, the Go host builds the provider, the Node.js host generates the SDK into
// sdks/, links it into package.json and runs npm install, whose postinstall compiles it), then the life cycle. The
// hub of examples/hub-typescript, for an organization, is deployed; examples/cluster-typescript joins its cluster to
// it from a team's own account; a wrong input and a type error each fail a preview, naming them; each stack previews
// no change after up; each destroy leaves in the stand-ins exactly what the stack retains on delete.
func TestTypeScriptExamples(t *testing.T) {
	t.Parallel()
	const team, busName = "444444444444", "kib-prod"
	principal := "arn:aws:iam::" + hub + ":role/platform-oncall"
	world := func(account string) standin.World {
		w := standin.World{Region: region, Account: account, Existing: []string{"blue", "green"},
			SpotServiceLinkedRole: []string{account}, Roles: []string{hub + " KarpenterController-green"}, Versions: versions(t)}
		w.Versions["eks"] = lockedVersion(t, "cluster-typescript", "@pulumi/eks") // the eks plugin the team's SDK asks for
		return w
	}
	e := newEnv(t, world(hub))
	e.Path = []string{nodeLanguageHost(t), goLanguageHost(t)}
	e.Extra = gitHub(t, "v"+release.Version) // the tag the examples' Pulumi.yaml name: pulumi install fails on another
	for k, v := range npmOffline {
		e.Extra[k] = v
	}
	hubDir := tsExample(t, e, "hub-typescript")

	t.Run("pulumi install generates, links and installs the package's SDK", func(t *testing.T) {
		pulumi(t, e, hubDir, "install")
		var manifest struct{ Dependencies map[string]string }
		b, err := os.ReadFile(filepath.Join(hubDir, "package.json"))
		if err != nil || json.Unmarshal(b, &manifest) != nil {
			t.Fatalf("package.json: %v\n%s", err, b)
		}
		sdk, ok := strings.CutPrefix(manifest.Dependencies["@karpenter-interruption-bus/pulumi"], "file:sdks/")
		if !ok {
			t.Fatalf("package.json does not link the SDK from sdks/:\n%s", b)
		}
		// The SDK's postinstall compiled it: what the program imports.
		if _, err := os.Stat(filepath.Join(hubDir, "sdks", sdk, "bin", "index.js")); err != nil {
			t.Errorf("the SDK was not compiled: %v", err)
		}
	})

	t.Run("the hub: preview, up, a preview with no change", func(t *testing.T) {
		pulumi(t, e, hubDir, "stack", "init", "dev", "--non-interactive")
		for _, kv := range [][]string{
			{"aws:region", region}, {"organizationId", "o-a1b2c3d4e5"}, {"--path", "memberOUs[0]", "ou-ab12-cd34ef56"},
			{"--path", "redrivePrincipals[0]", principal},
		} {
			pulumi(t, e, hubDir, append([]string{"config", "set"}, kv...)...)
		}
		preview := pulumi(t, e, hubDir, "preview", "--non-interactive")
		for _, want := range []string{packageName + ":index:Bus", packageName + ":index:ClusterInterruption", "aws:cloudformation:StackSet", "kubernetes:helm.sh/v3:Release"} {
			if !strings.Contains(preview, want) {
				t.Errorf("the preview does not show %s:\n%s", want, preview)
			}
		}
		pulumi(t, e, hubDir, "up", "--yes", "--non-interactive", "--skip-preview")
		outputs := stackOutputs(t, e, hubDir)
		if outputs["blueQueue"] != busName+"_blue" || outputs["routerRoleArn"] != "arn:aws:iam::"+hub+":role/"+busName+"-router-"+region ||
			outputs["greenChartValue"] != "settings.interruptionQueue="+busName+"_green" {
			t.Errorf("outputs = %v", outputs)
		}
		checkOneBus(t, e, hubDir)
		pulumi(t, e, hubDir, "preview", "--non-interactive", "--expect-no-changes")
	})

	// Outputs as arguments (docs/package.md): the Bus's busName output given for a cluster's busName type-checks and
	// changes nothing; a plain argument (identity decides resources) refuses an output at compile time, naming the type.
	t.Run("an output for an input is taken; for a plain argument, tsc refuses it", func(t *testing.T) {
		restore := edited(t, filepath.Join(hubDir, "index.ts"), "    busName,\n    clusterName: \"blue\",", "    busName: bus.busName,\n    clusterName: \"blue\",")
		pulumi(t, e, hubDir, "preview", "--non-interactive", "--expect-no-changes")
		restore()
		restore = edited(t, filepath.Join(hubDir, "index.ts"), "    identity: kib.Identity.PodIdentity,", "    identity: bus.busName,")
		out, err := pulumiErr(e, hubDir, "preview", "--non-interactive")
		if err == nil || !strings.Contains(err.Error(), "error TS2322: Type 'Output<string>' is not assignable to type") {
			t.Errorf("the preview with identity: bus.busName: %v\n%s", err, out)
		}
		restore()
	})

	// The team's stack runs in its own account, from one copy of examples/cluster-typescript installed once: it
	// creates its EKS cluster with pulumi-eks (@pulumi/eks from its lock, against the stand-in eks provider at that
	// version) and its alarm topic, and reads the hub's outputs through a StackReference to the hub's stack. The wrong
	// input and the type error are each its index.ts edited for one stack's preview, then restored.
	const hubStack = "organization/kib-hub-typescript/dev"
	teamWorld := world(team)
	teamWorld.Existing = nil // the program creates its cluster
	teamWorld.Clusters = map[string]mocks.EKSCluster{"payments": {Status: "CREATING"}}
	e.SetWorld(t, teamWorld)
	dir := tsExample(t, e, "cluster-typescript")
	pulumi(t, e, dir, "install")

	t.Run("a wrong input fails the preview with the provider's message", func(t *testing.T) {
		defer edited(t, filepath.Join(dir, "index.ts"), `hubAccountId: hub.requireOutput("account"),`, `hubAccountId: 1.5 as any,`)()
		clusterExampleStack(t, e, dir, "wrong-input", hubStack)
		// The alarm topic is created by the update: the component's other checks wait for it; this one does not.
		out, err := pulumiErr(e, dir, "preview", "--non-interactive")
		if err == nil || !strings.Contains(err.Error(), `hubAccountId: "1.5" is not an AWS account ID (12 digits)`) {
			t.Errorf("the preview with hubAccountId 1.5: %v\n%s", err, out)
		}
	})

	t.Run("a type error fails the preview with TypeScript's message", func(t *testing.T) {
		defer edited(t, filepath.Join(dir, "index.ts"), `clusterName: cluster.eksCluster.name,`, `clusterName: cluster.eksCluster,`)()
		clusterExampleStack(t, e, dir, "type-error", hubStack)
		out, err := pulumiErr(e, dir, "preview", "--non-interactive")
		if err == nil || !strings.Contains(err.Error(), "error TS2322: Type 'Output<Cluster>' is not assignable to type 'Input<string>'") {
			t.Errorf("the preview with clusterName: cluster.eksCluster: %v\n%s", err, out)
		}
		// @pulumi/pulumi exits 32 once it has told the user: the host bails, adding nothing of its own.
		if err != nil && strings.Contains(err.Error(), "Program exited with non-zero exit code") {
			t.Errorf("the host did not bail on the program's exit code 32: %v", err)
		}
	})

	t.Run("a team's cluster created and joined in one up: preview, not ACTIVE, up, no change, destroy", func(t *testing.T) {
		clusterExampleStack(t, e, dir, "dev", hubStack)
		preview := pulumi(t, e, dir, "preview", "--non-interactive")
		if n := strings.Count(diagnostics(preview), "ClusterInterruption payments: checks deferred to the update"); n != 1 ||
			!strings.Contains(preview, "heartbeatAlarmActions (SNS topic ARNs)") || !strings.Contains(preview, "eks:index:Cluster") {
			t.Errorf("the preview: %d deferrals of the component's checks\n%s", n, preview)
		}
		// EKS has the cluster CREATING when the update reaches the component: its check fails it, nothing of the
		// cluster's declared.
		out, err := pulumiErr(e, dir, "up", "--yes", "--non-interactive", "--skip-preview")
		if err == nil || !strings.Contains(err.Error(), "the cluster is CREATING, not ACTIVE") {
			t.Errorf("up with the cluster CREATING: %v\n%s", err, out)
		}
		for _, r := range stackResources(t, e, dir) {
			if strings.HasPrefix(r, "payments-") && !strings.HasPrefix(r, "payments-eks") {
				t.Errorf("%s was declared though the cluster's check failed", r)
			}
		}
		teamWorld.Clusters = nil
		e.SetWorld(t, teamWorld)
		pulumi(t, e, dir, "up", "--yes", "--non-interactive", "--skip-preview")
		outputs := stackOutputs(t, e, dir)
		if outputs["queueName"] != busName+"_payments" || outputs["nodeRoleName"] != "KarpenterNode-payments-"+region || outputs["clusterName"] != "payments" {
			t.Errorf("outputs = %v", outputs)
		}
		var admitted bool
		for _, r := range e.Records(t) {
			if r.Type == "aws:sqs/queuePolicy:QueuePolicy" && r.Account == team {
				admitted = admitted || bytes.Contains(r.Inputs, []byte("arn:aws:iam::"+hub+":role/"+busName+"-router-"+region))
			}
		}
		if !admitted {
			t.Errorf("no queue policy of %s admits the hub's router", team)
		}
		pulumi(t, e, dir, "preview", "--non-interactive", "--expect-no-changes")
		destroyed(t, e, dir, "kib-cluster-typescript")
	})

	e.SetWorld(t, world(hub))
	t.Run("the hub destroyed", func(t *testing.T) {
		destroyed(t, e, hubDir, "kib-hub-typescript")
	})
}

// clusterExampleStack creates the stack of examples/cluster-typescript in dir, joining the bus of the hub's stack
// hubStack (<organization>/<project>/<stack>, deployed first; its outputs busName, account, heartbeatRate) through a
// StackReference.
func clusterExampleStack(t *testing.T, e *env, dir, stack, hubStack string) {
	t.Helper()
	pulumi(t, e, dir, "stack", "init", stack, "--non-interactive")
	for _, kv := range [][]string{
		{"aws:region", region}, {"hubStack", hubStack}, {"vpcId", "vpc-0a1b2c3d"},
		{"--path", "privateSubnetIds[0]", "subnet-0a1b2c3d"}, {"--path", "privateSubnetIds[1]", "subnet-4e5f6a7b"},
	} {
		pulumi(t, e, dir, append([]string{"config", "set"}, kv...)...)
	}
}

// lockedVersion is the version of the package pkg that examples/<example>'s package-lock.json installs.
func lockedVersion(t *testing.T, example, pkg string) string {
	t.Helper()
	var lock struct {
		Packages map[string]struct{ Version string } `json:"packages"`
	}
	b, err := os.ReadFile(filepath.Join(repoRoot, "examples", example, "package-lock.json"))
	if err != nil || json.Unmarshal(b, &lock) != nil || lock.Packages["node_modules/"+pkg].Version == "" {
		t.Fatalf("examples/%s/package-lock.json locks no %s: %v", example, pkg, err)
	}
	return lock.Packages["node_modules/"+pkg].Version
}

// edited replaces the first old in file by new, and returns what restores the file. A test fails when file no
// longer holds old: the example changed under the test.
func edited(t *testing.T, file, old, new string) (restore func()) {
	t.Helper()
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(text), old, new, 1)
	if changed == string(text) {
		t.Fatalf("%s no longer holds %q, which the test edits", file, old)
	}
	if err := os.WriteFile(file, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := os.WriteFile(file, text, 0o644); err != nil {
			t.Error(err)
		}
	}
}

// destroyed runs pulumi destroy in dir, the project proj's stack, and checks that the stand-ins then hold, of the
// project's resources, exactly what the stack's updates marked retained on delete.
func destroyed(t *testing.T, e *env, dir, proj string) {
	t.Helper()
	retained := retainedIn(t, e, proj)
	pulumi(t, e, dir, "destroy", "--yes", "--non-interactive", "--skip-preview")
	if len(retained) == 0 {
		t.Fatalf("nothing of %s retained on delete in its history: is the history read?", proj)
	}
	left := map[string]bool{}
	for _, r := range e.Records(t) {
		if !strings.Contains(r.URN, "::"+proj+"::") {
			continue
		}
		left[r.URN] = true
		if !retained[r.URN] {
			t.Errorf("left after destroy: %s %s (%s)", r.Type, r.ID, r.URN)
		}
	}
	for urn := range retained {
		if !left[urn] {
			t.Errorf("retained on delete, but deleted: %s", urn)
		}
	}
}
