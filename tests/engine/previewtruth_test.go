package engine_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/engine/standin"
)

// truthProgram is a Pulumi YAML project: a Bus, the topic ops of the name given in configuration, and the cluster
// blue whose heartbeat alarm notifies it (protected when protect), and, when amber is not "", the cluster amber whose
// alarm notifies the topic amber (a YAML expression).
func truthProgram(protect bool, amber string) string {
	p := `name: kib-truth
runtime: yaml
config:
  topicName:
    type: string
resources:
  hub:
    type: karpenter-interruption-bus:index:Bus
    properties:
      namePrefix: kib-truth
      heartbeat:
        rate: 5m
  ops:
    type: aws:sns/topic:Topic
    properties:
      name: ${topicName}
  blue:
    type: karpenter-interruption-bus:index:ClusterInterruption
    properties:
      busName: ${hub.busName}
      hubAccountId: ${hub.account}
      clusterName: blue
      heartbeatRate: 5m
      ensureSpotServiceLinkedRole: true
      heartbeatAlarmActions: [ "${ops.arn}" ]
`
	if protect {
		p += "    options:\n      protect: true\n"
	}
	if amber != "" {
		p += `  amberTopic:
    type: aws:sns/topic:Topic
    properties:
      name: amber
  amber:
    type: karpenter-interruption-bus:index:ClusterInterruption
    properties:
      busName: ${hub.busName}
      hubAccountId: ${hub.account}
      clusterName: amber
      heartbeatRate: 5m
      heartbeatAlarmActions:
        - ` + amber + "\n"
	}
	return p
}

// plannedStep is a step a preview plans.
type plannedStep struct {
	Op  string `json:"op"`
	URN string `json:"urn"`
}

// planned are the steps `pulumi preview --json` plans in dir (args besides), in its order.
func planned(t *testing.T, e *env, dir string, args ...string) []plannedStep {
	t.Helper()
	var preview struct {
		Steps []plannedStep `json:"steps"`
	}
	args = append([]string{"preview", "--json", "--non-interactive"}, args...)
	out := pulumi(t, e, dir, args...)
	if err := json.Unmarshal([]byte(out), &preview); err != nil {
		t.Fatalf("pulumi %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return preview.Steps
}

// previewSteps are the steps `pulumi preview --json --show-sames` plans, by URN.
func previewSteps(t *testing.T, e *env, dir string) map[string]string {
	t.Helper()
	steps := map[string]string{}
	for _, s := range planned(t, e, dir, "--show-sames") {
		steps[s.URN] = s.Op
	}
	return steps
}

// TestAComponentsPreviewTellsTheTruth: through the real CLI, a ClusterInterruption whose alarm topic is replaced
// in the same update previews its children as sames and updates, none deleted (protected or not), deploys, and
// previews no change after; update plans (preview --save-plan, up --plan) hold for a new component whose input is
// unknown at the preview and for the existing one; a topic of another account is refused at the preview when
// known, and by the update, before the component's first resource, when it is an output.
func TestAComponentsPreviewTellsTheTruth(t *testing.T) {
	t.Parallel()
	world := standin.World{Region: region, Account: hub, Existing: []string{"blue", "amber"}, SpotServiceLinkedRole: []string{hub}, Versions: versions(t)}
	e := newEnv(t, world)
	e.Extra = maps.Clone(e.Extra)
	if e.Extra == nil {
		e.Extra = map[string]string{}
	}
	e.Extra["PULUMI_EXPERIMENTAL"] = "true" // update plans
	installProvider(t, e, "0.1.0")
	dir := yamlProject(t, truthProgram(false, ""))
	write := func(program string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "Pulumi.yaml"), []byte(program), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pulumi(t, e, dir, "stack", "init", "dev", "--non-interactive")
	pulumi(t, e, dir, "config", "set", "aws:region", region)
	pulumi(t, e, dir, "config", "set", "topicName", "ops-1")
	plan := filepath.Join(t.TempDir(), "plan.json")

	// A new component, its topic unknown at the preview: the plan holds for the update.
	pulumi(t, e, dir, "preview", "--non-interactive", "--save-plan", plan)
	pulumi(t, e, dir, "up", "--yes", "--non-interactive", "--plan", plan)
	pulumi(t, e, dir, "preview", "--non-interactive", "--expect-no-changes")
	// The input's dependencies reach the child that holds its value: the alarm's actions depend on the topic.
	var state struct {
		Deployment struct {
			Resources []struct {
				URN                  string              `json:"urn"`
				PropertyDependencies map[string][]string `json:"propertyDependencies"`
			} `json:"resources"`
		} `json:"deployment"`
	}
	if err := json.Unmarshal([]byte(pulumi(t, e, dir, "stack", "export")), &state); err != nil {
		t.Fatal(err)
	}
	for _, r := range state.Deployment.Resources {
		if strings.HasSuffix(r.URN, "::blue-karpenter-not-reading") &&
			!slices.Contains(r.PropertyDependencies["alarmActions"], "urn:pulumi:dev::kib-truth::aws:sns/topic:Topic::ops") {
			t.Errorf("blue's alarm: alarmActions depends on %v, want the topic ops", r.PropertyDependencies["alarmActions"])
		}
	}

	replaced := func(name string) {
		t.Helper()
		pulumi(t, e, dir, "config", "set", "topicName", name)
		steps := previewSteps(t, e, dir)
		children := 0
		for urn, op := range steps {
			if !strings.Contains(urn, "ClusterInterruption$") || strings.HasSuffix(urn, "::blue") {
				continue
			}
			children++
			if op != "same" && op != "update" {
				t.Errorf("the topic replaced, the preview plans %s %s", op, urn)
			}
		}
		if children < 5 {
			t.Errorf("the preview shows %d of blue's children:\n%v", children, steps)
		}
		if op := steps["urn:pulumi:dev::kib-truth::karpenter-interruption-bus:index:ClusterInterruption$aws:cloudwatch/metricAlarm:MetricAlarm::blue-karpenter-not-reading"]; op != "update" {
			t.Errorf("blue's alarm, whose topic is replaced: %q, want update", op)
		}
	}
	// The existing component, its topic replaced: no delete; the update plan holds; then no change.
	replaced("ops-2")
	pulumi(t, e, dir, "preview", "--non-interactive", "--save-plan", plan)
	pulumi(t, e, dir, "up", "--yes", "--non-interactive", "--plan", plan)
	pulumi(t, e, dir, "preview", "--non-interactive", "--expect-no-changes")

	// Protected (its children inherit it): the preview succeeds, and so does the update.
	write(truthProgram(true, ""))
	pulumi(t, e, dir, "up", "--yes", "--non-interactive", "--skip-preview")
	replaced("ops-3")
	pulumi(t, e, dir, "up", "--yes", "--non-interactive")
	pulumi(t, e, dir, "preview", "--non-interactive", "--expect-no-changes")

	// A topic of another account, known: refused at the preview, naming the argument.
	write(truthProgram(true, `"arn:aws:sns:`+region+`:999999999999:ops"`))
	out, err := pulumiErr(e, dir, "preview", "--non-interactive")
	if err == nil || !strings.Contains(err.Error(), "heartbeatAlarmActions[0]") || !strings.Contains(err.Error(), "999999999999") {
		t.Errorf("a known topic of another account: %v\n%s", err, out)
	}
	// The same as an output (unknown at the preview): the update refuses it before amber's first resource.
	write(truthProgram(true, `"arn:aws:sns:`+region+`:999999999999:${amberTopic.id}"`))
	pulumi(t, e, dir, "preview", "--non-interactive")
	out, err = pulumiErr(e, dir, "up", "--yes", "--non-interactive", "--skip-preview")
	if err == nil || !strings.Contains(err.Error(), "heartbeatAlarmActions[0]") {
		t.Errorf("a topic of another account, as an output: %v\n%s", err, out)
	}
	for _, r := range stackResources(t, e, dir) {
		if strings.HasPrefix(r, "amber-") {
			t.Errorf("amber's %s was declared though its topic was refused", r)
		}
	}
}

// twoBuses is a Pulumi YAML project with a Bus per region, both of the default namePrefix: one through the
// default provider, one through a provider of another region.
const twoBuses = `name: kib-regions
runtime: yaml
resources:
  east:
    type: pulumi:providers:aws
    properties:
      region: us-east-1
  west:
    type: karpenter-interruption-bus:index:Bus
  eastBus:
    type: karpenter-interruption-bus:index:Bus
    options:
      providers:
        - ${east}
outputs:
  west: ${west.region}
  east: ${eastBus.region}
`

// TestTwoBusesInOneStack: a Bus per region in one stack, the project's own layout, previews and deploys through the
// real CLI: their resources are named after each component, so none collides, and a preview after has no change.
func TestTwoBusesInOneStack(t *testing.T) {
	t.Parallel()
	e := newEnv(t, standin.World{Region: region, Account: hub, SpotServiceLinkedRole: []string{hub}, Versions: versions(t)})
	installProvider(t, e, "0.1.0")
	dir := yamlProject(t, twoBuses)
	pulumi(t, e, dir, "stack", "init", "dev", "--non-interactive")
	pulumi(t, e, dir, "config", "set", "aws:region", region)
	pulumi(t, e, dir, "preview", "--non-interactive")
	pulumi(t, e, dir, "up", "--yes", "--non-interactive", "--skip-preview")
	if out := stackOutputs(t, e, dir); out["west"] != region || out["east"] != "us-east-1" {
		t.Errorf("outputs = %v", out)
	}
	names := stackResources(t, e, dir)
	for _, want := range []string{"west-central", "eastBus-central", "west-router", "eastBus-router"} {
		if !slices.Contains(names, want) {
			t.Errorf("no %s among %v", want, names)
		}
	}
	pulumi(t, e, dir, "preview", "--non-interactive", "--expect-no-changes")
}
