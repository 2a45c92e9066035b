package providerrules_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/fleet"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/providerrules"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/render"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/stackconfig"
)

var update = flag.Bool("update", false, "rewrite testdata/set.txt")

// shapes are the stacks the coverage is taken over: the documented example (every cluster mode and identity), the
// sized stacks (member accounts declared through their providers, and as a StackSet), and the switches the
// example leaves at their defaults.
func shapes(t *testing.T) map[string]map[string]string {
	t.Helper()
	dev, err := stackconfig.Load(filepath.Join("..", "..", "Pulumi.dev.yaml"), config.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	with := func(base map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[config.Namespace+":"+kv[i]] = kv[i+1]
		}
		return out
	}
	out := map[string]map[string]string{"dev": dev}
	for _, s := range fleet.Stacks() {
		if s.Name != "300-clusters" { // the same resources as one-cluster, more of them
			out[s.Name] = s.Config
		}
	}
	out["dev-provisioned"] = with(dev, "router", `{"provisionedPollers":{"minimum":2,"maximum":10}}`)
	out["dev-queue-policy"] = with(dev, "centralQueue", `{"hubDelivery":"queuePolicy"}`, "archive", `{"mode":"compliance","retentionDays":30}`)
	out["members-alarms"] = with(fleet.Members(2, false), "accounts",
		`{"`+fleet.Account(0)+`":{"deployRoleArn":"arn:aws:iam::`+fleet.Account(0)+`:role/pulumi-deploy","alarmTopicArn":"arn:aws:sns:eu-west-1:`+fleet.Account(0)+`:oncall"},`+
			`"`+fleet.Account(1)+`":{"deployRoleArn":"arn:aws:iam::`+fleet.Account(1)+`:role/pulumi-deploy"}}`)
	return out
}

// TestEveryPropertySetHasARule: every property the program sets on a resource of pulumi-aws or pulumi-eks, in every
// stack shape, has a rule transcribed from its provider's source (a rule may be that the provider checks nothing,
// cited); the list of them is testdata/set.txt, which a change of what the program sets changes (go test -update).
func TestEveryPropertySetHasARule(t *testing.T) {
	set := map[string]bool{}
	for name, cfg := range shapes(t) {
		rs, err := render.Config(cfg, name, render.Offline(), render.Target{Account: fleet.Hub})
		if err != nil {
			t.Fatalf("%s: %v", name, err) // the mocks refuse what a rule refuses, and a property no rule covers
		}
		for _, r := range rs {
			if !providerrules.Checked(r.Type) {
				continue
			}
			inputs := resource.NewPropertyMapFromMap(r.Inputs)
			for _, p := range providerrules.Uncovered(r.Type, inputs) {
				t.Errorf("%s: %s %s sets %s, which no rule covers", name, r.Type, r.Name, p)
			}
			for _, p := range providerrules.Paths(inputs) {
				set[r.Type+" "+p] = true
			}
		}
	}
	list := slices.Sorted(func(yield func(string) bool) {
		for k := range set {
			if !yield(k) {
				return
			}
		}
	})
	got := strings.Join(list, "\n") + "\n"
	golden := filepath.Join("testdata", "set.txt")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("the properties the program sets changed (go test ./offline/providerrules -run %s -update, and review the rules of each new one):\n%s",
			t.Name(), diff(string(want), got))
	}
	t.Logf("%d properties of %d types", len(list), types(list))
}

func types(list []string) int {
	seen := map[string]bool{}
	for _, l := range list {
		typ, _, _ := strings.Cut(l, " ")
		seen[typ] = true
	}
	return len(seen)
}

func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var out []string
	for _, l := range g {
		if !slices.Contains(w, l) {
			out = append(out, "+ "+l)
		}
	}
	for _, l := range w {
		if !slices.Contains(g, l) {
			out = append(out, "- "+l)
		}
	}
	return fmt.Sprint(strings.Join(out, "\n"))
}

// TestAPropertyWithoutARuleIsRefused: a property of a checked type that no rule names is refused by name, at the
// mocks as at the stand-ins (Refuse), and one a rule names is not.
func TestAPropertyWithoutARuleIsRefused(t *testing.T) {
	in := resource.NewPropertyMapFromMap(map[string]any{"name": "q", "fifoThroughputLimit": "perQueue"})
	if _, ok := ruleOf("aws:sqs/queue:Queue", "fifoThroughputLimit"); ok {
		t.Skip("a rule names it now: pick another property the program does not set")
	}
	err := providerrules.Refuse("aws:sqs/queue:Queue", "q", in)
	if err == nil || !strings.Contains(err.Error(), "sets fifoThroughputLimit, which no rule") || strings.Contains(err.Error(), "sets name") {
		t.Errorf("Refuse = %v; want fifoThroughputLimit named, and name not", err)
	}
	if err := providerrules.Refuse("kubernetes:helm.sh/v3:Release", "r", in); err != nil {
		t.Errorf("a type of a provider without rules: %v", err)
	}
}

func ruleOf(typ, property string) (providerrules.Rule, bool) {
	for _, r := range providerrules.Rules[typ] {
		if r.Property == property {
			return r, true
		}
	}
	return providerrules.Rule{}, false
}
