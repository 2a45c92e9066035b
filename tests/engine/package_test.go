package engine_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/engine/standin"
)

const packageName = "karpenter-interruption-bus"

var (
	providerOnce sync.Once
	providerBin  string
	errProvider  error
)

// providerBinary builds the component package's provider as Pulumi's Go language host builds a source plugin:
// `go build -buildvcs=false -trimpath` in the directory holding PulumiPlugin.yaml (provider/). The host is not
// served by the module proxy here, so the test builds as it would, and installs the binary where the CLI keeps
// the plugins it installed.
func providerBinary(t *testing.T) string {
	t.Helper()
	providerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kib-provider-")
		if err != nil {
			errProvider = err
			return
		}
		providerBin = filepath.Join(dir, "pulumi-resource-"+packageName)
		cmd := exec.Command("go", "build", "-buildvcs=false", "-trimpath", "-o", providerBin, ".")
		cmd.Dir = filepath.Join(repoRoot, "provider")
		if out, err := cmd.CombinedOutput(); err != nil {
			errProvider = &runError{err: err, output: string(out)}
		}
	})
	if errProvider != nil {
		t.Fatal(errProvider)
	}
	return providerBin
}

// installProvider installs the provider as the CLI does a package of that version.
func installProvider(t *testing.T, e *env, version string) {
	t.Helper()
	dir := filepath.Join(e.Home, "plugins", "resource-"+packageName+"-v"+version)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(providerBinary(t), filepath.Join(dir, "pulumi-resource-"+packageName)); err != nil {
		t.Fatal(err)
	}
}

// pulumi runs the CLI in dir with e's environment, as a user types it, and returns its standard output.
// stackOutputs are the stack's outputs in dir, as `pulumi stack output --json` prints them.
func stackOutputs(t *testing.T, e *env, dir string) map[string]any {
	t.Helper()
	var outputs map[string]any
	if err := json.Unmarshal([]byte(pulumi(t, e, dir, "stack", "output", "--json")), &outputs); err != nil {
		t.Fatal(err)
	}
	return outputs
}

func pulumi(t *testing.T, e *env, dir string, args ...string) string {
	t.Helper()
	out, err := pulumiErr(e, dir, args...)
	if err != nil {
		hint := ""
		if strings.Contains(err.Error(), "GOPROXY=off") {
			hint = "\n(a module the Go language host needs is not in the module cache: make engine-modules downloads them)"
		}
		t.Fatalf("pulumi %s: %v%s", strings.Join(args, " "), err, hint)
	}
	return out
}

func pulumiErr(e *env, dir string, args ...string) (string, error) {
	cli, _ := filepath.Abs(filepath.Join(binDir, "pulumi"))
	cmd := exec.Command(cli, args...)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	for k, v := range e.Vars() {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), &runError{err: err, output: stdout.String() + stderr.String()}
	}
	return stdout.String(), nil
}

// TestGetSchemaIsGolden: the schema the real CLI reads off the provider, built as the Go language host builds
// it, is provider/schema.json, byte for byte as JSON (its version is the one a build without a release stamp
// reports; a git install's is replaced by the CLI with the tag it installed).
func TestGetSchemaIsGolden(t *testing.T) {
	t.Parallel()
	e := newEnv(t, standin.World{Region: region, Account: hub, Versions: versions(t)})
	got := pulumi(t, e, t.TempDir(), "package", "get-schema", providerBinary(t))
	want, err := os.ReadFile(filepath.Join(repoRoot, "provider", "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("get-schema printed no JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("pulumi package get-schema differs from provider/schema.json (make schema rewrites it):\n%s", got)
	}
}

// yamlProject writes a Pulumi YAML project to a directory outside the repository.
func yamlProject(t *testing.T, text string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Pulumi.yaml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// busProgram is a Pulumi YAML project named name: a Bus and a ClusterInterruption of the cluster blue, the bus's
// name and the hub's account ID from string configuration, with the given outputs (YAML lines).
func busProgram(name, outputs string) string {
	return "name: " + name + "\n" + `runtime: yaml
config:
  busName:
    type: string
  hubAccountId:
    type: string
resources:
  hub:
    type: karpenter-interruption-bus:index:Bus
    properties:
      namePrefix: ${busName}
      heartbeat:
        rate: 5m
      clusterNames: [blue]
  blue:
    type: karpenter-interruption-bus:index:ClusterInterruption
    properties:
      busName: ${busName}
      hubAccountId: ${hubAccountId}
      clusterName: blue
      heartbeatRate: 5m
      ensureSpotServiceLinkedRole: true
    options:
      dependsOn:
        - ${hub}
outputs:
` + outputs
}

// TestYAMLProgram: a Pulumi YAML program with a Bus and a ClusterInterruption, the hub's account given as string
// configuration (which Pulumi YAML passes as a number), previews and deploys through the real CLI and the real
// YAML language host, from a directory outside the repository, with no environment variable of the package's.
func TestYAMLProgram(t *testing.T) {
	t.Parallel()
	world := standin.World{Region: region, Account: hub, Existing: []string{"blue"}, SpotServiceLinkedRole: []string{hub}, Versions: versions(t)}
	e := newEnv(t, world)
	installProvider(t, e, "0.1.0")
	dir := yamlProject(t, busProgram("kib-yaml", "  account: ${hub.account}\n  queueName: ${blue.queueName}\n"))
	pulumi(t, e, dir, "stack", "init", "dev", "--non-interactive")
	pulumi(t, e, dir, "config", "set", "aws:region", region)
	pulumi(t, e, dir, "config", "set", "busName", "kib-yaml")
	pulumi(t, e, dir, "config", "set", "hubAccountId", hub) // stored as a string, handed over as a number
	preview := pulumi(t, e, dir, "preview", "--non-interactive", "--diff")
	for _, want := range []string{"karpenter-interruption-bus:index:Bus", "aws:sqs/queue:Queue", "kib-yaml-central", "blue-queue"} {
		if !strings.Contains(preview, want) {
			t.Errorf("the preview does not show %s:\n%s", want, preview)
		}
	}
	pulumi(t, e, dir, "up", "--yes", "--non-interactive", "--skip-preview")
	outputs := stackOutputs(t, e, dir)
	if outputs["account"] != hub || outputs["queueName"] != "kib-yaml_blue" {
		t.Errorf("outputs = %v", outputs)
	}
	checkOneBus(t, e, dir)
	if out := pulumi(t, e, dir, "preview", "--non-interactive", "--expect-no-changes"); !strings.Contains(out, "unchanged") {
		t.Errorf("the preview after up:\n%s", out)
	}

	// Outputs as arguments (docs/package.md, "Outputs as arguments"). The Bus's busName, known at the preview,
	// given for blue's changes nothing. A second cluster, green, takes its alarm's topic from a topic the same update
	// creates: the preview defers the topic's checks, naming them, and runs those of the known cluster, which finds
	// green not ACTIVE and fails naming the check, as the update does, before green's first resource; once it is
	// ACTIVE, the preview shows green's resources (none deleted), up declares them, and a preview has no change.
	program := busProgram("kib-yaml", "  account: ${hub.account}\n  queueName: ${blue.queueName}\n  greenQueue: ${green.queueName}\n")
	program = strings.Replace(program, "      busName: ${busName}\n      hubAccountId", "      busName: ${hub.busName}\n      hubAccountId", 1)
	program = strings.Replace(program, "\noutputs:\n", `
  ops:
    type: aws:sns/topic:Topic
    properties:
      name: ops
  green:
    type: karpenter-interruption-bus:index:ClusterInterruption
    properties:
      busName: ${hub.busName}
      hubAccountId: ${hub.account}
      clusterName: green
      heartbeatRate: 5m
      heartbeatAlarmActions: [ "${ops.arn}" ]
outputs:
`, 1)
	if err := os.WriteFile(filepath.Join(dir, "Pulumi.yaml"), []byte(program), 0o644); err != nil {
		t.Fatal(err)
	}
	notActive := world
	notActive.Existing = []string{"blue", "green"}
	notActive.Clusters = map[string]mocks.EKSCluster{"green": {Status: "CREATING"}}
	e.SetWorld(t, notActive)
	preview, err := pulumiErr(e, dir, "preview", "--non-interactive")
	if n := strings.Count(diagnostics(preview), "checks deferred to the update"); n != 1 || !strings.Contains(preview, "ClusterInterruption green") ||
		!strings.Contains(preview, "heartbeatAlarmActions (SNS topic ARNs)") || err == nil || !strings.Contains(err.Error(), "the cluster is CREATING, not ACTIVE") {
		t.Errorf("the preview with green's topic unknown, green CREATING: %d deferrals, %v\n%s", n, err, preview)
	}
	out, err := pulumiErr(e, dir, "up", "--yes", "--non-interactive", "--skip-preview")
	if err == nil || !strings.Contains(err.Error(), "the cluster is CREATING, not ACTIVE") {
		t.Errorf("up with green CREATING: %v\n%s", err, out)
	}
	for _, r := range stackResources(t, e, dir) {
		if strings.HasPrefix(r, "green-") {
			t.Errorf("green's %s was declared though its check failed", r)
		}
	}
	notActive.Clusters = nil
	e.SetWorld(t, notActive)
	preview = pulumi(t, e, dir, "preview", "--non-interactive")
	if !strings.Contains(preview, "green-queue") || strings.Contains(preview, " delete") {
		t.Errorf("the preview with green's topic unknown, green ACTIVE:\n%s", preview)
	}
	pulumi(t, e, dir, "up", "--yes", "--non-interactive", "--skip-preview")
	if outputs := stackOutputs(t, e, dir); outputs["greenQueue"] != "kib-yaml_green" {
		t.Errorf("outputs = %v", outputs)
	}
	pulumi(t, e, dir, "preview", "--non-interactive", "--expect-no-changes")
}

// stackResources are the logical names of the stack's resources.
func stackResources(t *testing.T, e *env, dir string) []string {
	t.Helper()
	var state struct {
		Deployment struct {
			Resources []struct {
				URN string `json:"urn"`
			} `json:"resources"`
		} `json:"deployment"`
	}
	if err := json.Unmarshal([]byte(pulumi(t, e, dir, "stack", "export")), &state); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range state.Deployment.Resources {
		out = append(out, r.URN[strings.LastIndex(r.URN, "::")+2:])
	}
	return out
}

// checkOneBus: one component per concept, a Bus holds no Bus.
func checkOneBus(t *testing.T, e *env, dir string) {
	t.Helper()
	var state struct {
		Deployment struct {
			Resources []struct {
				Type string `json:"type"`
			} `json:"resources"`
		} `json:"deployment"`
	}
	if err := json.Unmarshal([]byte(pulumi(t, e, dir, "stack", "export")), &state); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range state.Deployment.Resources {
		if r.Type == packageName+":index:Bus" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the stack holds %d resources of type %s:index:Bus, want 1", n, packageName)
	}
}

// TestYAMLExampleAsWritten runs examples/cluster-yaml as written, from a copy outside the repository: its
// packages entry names the repository's provider directory at a tag, which the CLI clones (from the stand-in
// GitHub, gitHub) and has the Go language host build, as for a user.
func TestYAMLExampleAsWritten(t *testing.T) {
	t.Parallel()
	text, err := os.ReadFile(filepath.Join(repoRoot, "examples", "cluster-yaml", "Pulumi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var version string
	for line := range strings.Lines(string(text)) {
		if _, v, ok := strings.Cut(strings.TrimSpace(line), "karpenter-interruption-bus.git/provider@v"); ok {
			version = v
		}
	}
	if version == "" {
		t.Fatalf("examples/cluster-yaml names no %s.git/provider@v<version> package", packageName)
	}
	// The team's cluster, in its own account, joins a hub whose account ID starts with a zero, which YAML's
	// number drops: read, as the example does, from the hub's stack through a StackReference (a stack with the
	// outputs a hub's has, deployed first).
	const team, zeroHub = "444444444444", "012345678901"
	world := standin.World{Region: region, Account: team, Existing: []string{"payments"}, SpotServiceLinkedRole: []string{team}, Versions: versions(t)}
	e := newEnv(t, world)
	e.Path, e.Extra = []string{goLanguageHost(t)}, gitHub(t, "v"+version)
	hubDir := yamlProject(t, "name: kib-hub\nruntime: yaml\noutputs:\n  busName: kib-prod\n  account: \""+zeroHub+"\"\n  heartbeatRate: 5m\n")
	pulumi(t, e, hubDir, "stack", "init", "dev", "--non-interactive")
	pulumi(t, e, hubDir, "up", "--yes", "--non-interactive")
	dir := yamlProject(t, string(text))
	// What a user types in a copy of the example: pulumi install installs its packages entry (a pulumi up with
	// automatic plugin acquisition, which the tests turn off, would too).
	pulumi(t, e, dir, "install")
	pulumi(t, e, dir, "stack", "init", "dev", "--non-interactive")
	for k, v := range map[string]string{
		"aws:region": region, "hubStack": "organization/kib-hub/dev", "alarmTopicArn": "arn:aws:sns:" + region + ":" + team + ":ops",
	} {
		pulumi(t, e, dir, "config", "set", k, v)
	}
	pulumi(t, e, dir, "up", "--yes", "--non-interactive")
	outputs := stackOutputs(t, e, dir)
	if outputs["queueName"] != "kib-prod_payments" || outputs["nodeRoleName"] != "KarpenterNode-payments-"+region {
		t.Errorf("outputs = %v", outputs)
	}
	var admitted, imported bool
	for _, r := range e.Records(t) {
		switch r.Type {
		case "aws:sqs/queuePolicy:QueuePolicy":
			admitted = admitted || bytes.Contains(r.Inputs, []byte("arn:aws:iam::"+zeroHub+":role/kib-prod-router-"+region))
		case "aws:iam/serviceLinkedRole:ServiceLinkedRole":
			imported = r.Account == team
		}
	}
	if !admitted {
		t.Errorf("no queue policy admits the router of hub %s", zeroHub)
	}
	if !imported {
		t.Errorf("the Spot service-linked role of %s was not adopted", team)
	}
}
