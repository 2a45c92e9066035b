package engine_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/engine/standin"
)

// recordEnv, set, has TestPackageUpgradeFromTheRecordedRelease record the previous release's stack anew: it builds
// that release's provider from its commit, deploys the program with it and writes what it recorded into testdata.
// Run once per release, after CHANGELOG.md names the new one (docs/contributing.md, "Cutting a release").
const recordEnv = "KIB_RECORD_UPGRADE"

// upgradeProgram is the recorded Pulumi YAML program: a Bus, and clusters joined to it in the three ways a
// component package user joins one (Karpenter installed with Pod Identity, an existing controller role, IRSA).
const upgradeProgram = `name: kib-package-upgrade
runtime: yaml
resources:
  hub:
    type: karpenter-interruption-bus:index:Bus
    properties:
      namePrefix: kib-prod
      heartbeat:
        rate: 5m
      clusterNames: [blue, green, red]
  blue:
    type: karpenter-interruption-bus:index:ClusterInterruption
    properties:
      busName: kib-prod
      clusterName: blue
      heartbeatRate: 5m
      ensureSpotServiceLinkedRole: true
    options:
      dependsOn:
        - ${hub}
  green:
    type: karpenter-interruption-bus:index:ClusterInterruption
    properties:
      busName: kib-prod
      clusterName: green
      mode: existing-role
      controllerRoleName: KarpenterController-green
    options:
      dependsOn:
        - ${hub}
  red:
    type: karpenter-interruption-bus:index:ClusterInterruption
    properties:
      busName: kib-prod
      clusterName: red
      identity: irsa
      oidcProviderArn: arn:aws:iam::111111111111:oidc-provider/oidc.eks.REGION.amazonaws.com/id/RED
    options:
      dependsOn:
        - ${hub}
outputs:
  busName: ${hub.busName}
  blueQueue: ${blue.queueName}
`

// TestPackageUpgradeFromTheRecordedRelease is the component package's upgrade test, in the manner of Pulumi's
// provider boilerplate (providertest's PreviewProviderUpgrade and its testdata/recorded): the stack of a Pulumi YAML
// program deployed with the previous release's provider (CHANGELOG.md's second release, recorded under
// testdata/recorded/TestPackageUpgrade/<version>, see recordEnv) is imported and previewed with this checkout's:
// no component and nothing stateful is replaced or deleted, and every kind of step the preview shows is one the
// changelog's "Upgrading from" notes list. What the recorded state cannot stand for: resources the stand-ins hold
// (a preview reads none of them: it diffs the recorded inputs and outputs).
func TestPackageUpgradeFromTheRecordedRelease(t *testing.T) {
	t.Parallel()
	releases := changelog(t)
	cur, prev := releases[0], releases[1]
	recorded := filepath.Join("testdata", "recorded", "TestPackageUpgrade", prev.Version)
	world := standin.World{Region: region, Account: hub, Existing: []string{"blue", "green", "red"}, SpotServiceLinkedRole: []string{hub},
		Roles: []string{hub + " KarpenterController-green"}, Versions: versions(t)}
	e := newEnv(t, world)
	if os.Getenv(recordEnv) != "" {
		recordPackageStack(t, e, prev, recorded)
		e = newEnv(t, world) // the recording's plugins and stack gone: the test runs as from what it recorded
	}
	stack, err := os.ReadFile(filepath.Join(recorded, "stack.json"))
	if err != nil {
		t.Fatalf("no recorded stack of release %s (%s=1 records it): %v", prev.Version, recordEnv, err)
	}

	installProvider(t, e, cur.Version)
	dir := yamlProject(t, strings.ReplaceAll(upgradeProgram, "REGION", region))
	importRecorded(t, e, dir, stack)
	listed := cur.listedSteps()
	components := []string{packageName + ":index:Bus", packageName + ":index:ClusterInterruption"}
	for _, st := range planned(t, e, dir) {
		typ := urnType(st.URN)
		if st.Op == "same" {
			continue
		}
		t.Logf("package upgrade preview from %s: %s %s", prev.Version, st.Op, st.URN)
		switch st.Op {
		case "delete", "replace", "create-replacement", "delete-replaced", "discard-replaced", "import-replacement":
			if slices.Contains(stateful, typ) || slices.Contains(components, typ) {
				t.Errorf("the package's upgrade from %s would %s %s: it holds what a user keeps", prev.Version, st.Op, st.URN)
			}
		}
		if kind := fmt.Sprintf("%s `%s`", st.Op, typ); !listed[kind] {
			t.Errorf("the package's upgrade from %s shows %s %s: CHANGELOG.md's \"Upgrading from %s\" does not list it (a line \"- %s\")", prev.Version, st.Op, st.URN, prev.Version, kind)
		}
	}
}

// recordPackageStack deploys upgradeProgram with the provider of the release prev, built from its commit as
// Pulumi's Go language host builds a package, and writes the stack's state to dir.
func recordPackageStack(t *testing.T, e *env, prev changelogRelease, dir string) {
	t.Helper()
	tree := previousTree(t, prev)
	bin := filepath.Join(e.Home, "plugins", "resource-"+packageName+"-v"+prev.Version, "pulumi-resource-"+packageName)
	build := exec.Command("go", "build", "-buildvcs=false", "-trimpath", "-o", bin, ".")
	build.Dir, build.Env = filepath.Join(tree, "provider"), append(os.Environ(), withModMod(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building release %s's provider: %v\n%s", prev.Version, err, out)
	}
	project := yamlProject(t, strings.ReplaceAll(upgradeProgram, "REGION", region))
	pulumi(t, e, project, "stack", "init", "dev", "--non-interactive")
	pulumi(t, e, project, "config", "set", "aws:region", region)
	pulumi(t, e, project, "up", "--yes", "--non-interactive", "--skip-preview")
	state := pulumi(t, e, project, "stack", "export")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stack.json"), []byte(state), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded release %s's stack in %s", prev.Version, dir)
}

// importRecorded makes stack dev of the project in dir, in the stack's region, from a recorded stack's state.
func importRecorded(t *testing.T, e *env, dir string, stack []byte) {
	t.Helper()
	state := filepath.Join(t.TempDir(), "stack.json")
	if err := os.WriteFile(state, stack, 0o644); err != nil {
		t.Fatal(err)
	}
	pulumi(t, e, dir, "stack", "init", "dev", "--non-interactive")
	pulumi(t, e, dir, "config", "set", "aws:region", region)
	pulumi(t, e, dir, "stack", "import", "--file", state)
}
