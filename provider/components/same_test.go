package components_test

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/bus"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/render"
)

// TestSameAsTheProgram: a ClusterInterruption declares, under it, exactly what the program declares under the
// same cluster's component (types, names, parents, inputs), in every mode: one implementation. The program runs
// with the cluster in its configuration; the component joins the program's bus by name.
func TestSameAsTheProgram(t *testing.T) {
	const oidc = "arn:aws:iam::" + hub + ":oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/BLUE"
	tests := []struct {
		name  string
		entry map[string]any
	}{
		{"install, pod identity", map[string]any{"name": "blue", "karpenter": map[string]any{"namespace": "karpenter", "values": map[string]any{"replicas": 1}}}},
		{"install, irsa, fis", map[string]any{"name": "blue", "identity": "irsa", "oidcProviderArn": oidc, "fis": map[string]any{"enabled": true}}},
		{"existing role", map[string]any{"name": "blue", "mode": "existing-role", "controllerRoleName": "KarpenterController"}},
		{"create", map[string]any{"name": "blue", "mode": "create", "create": map[string]any{
			"vpcId": "vpc-0123456789abcdef0", "subnetIds": []any{"subnet-0123456789abcdef0", "subnet-0123456789abcdef1"},
			"systemNodes": map[string]any{"instanceType": "m7g.xlarge", "min": 3, "max": 5, "desired": 3},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entry, _ := json.Marshal([]any{tt.entry})
			t.Setenv(pulumi.EnvConfig, mustJSON(t, map[string]string{
				config.Namespace + ":namePrefix": "kib-prod", config.Namespace + ":clusters": string(entry),
			}))
			program, err := (&mocks.Mocks{SpotServiceLinkedRole: []string{hub}}).Run("platform", "prod", infra.Program(testOptions()))
			if err != nil {
				t.Fatal(err)
			}
			inputs := map[string]any{"busName": "kib-prod", "clusterName": "blue", "heartbeatRate": "5m"}
			for k, v := range tt.entry {
				if k != "name" {
					inputs[k] = v
				}
			}
			t.Setenv(pulumi.EnvConfig, "{}")
			_, pkg, err := construct(t, &mocks.Mocks{SpotServiceLinkedRole: []string{hub}, Existing: []string{"blue"}}, "ClusterInterruption", "blue", inputs)
			if err != nil {
				t.Fatal(err)
			}
			want, got := under(program.Resources(), "blue"), under(pkg, "blue")
			for k, v := range got {
				// pulumi-go-provider's fake engine names every stack "stack" of project "project" in the URNs it
				// gives out (a resource reference, as the node group's cluster): the program's is prod of platform.
				got[k] = strings.ReplaceAll(v, "urn:pulumi:stack::project::", "urn:pulumi:prod::platform::")
			}
			if len(want) < 3 {
				t.Fatalf("the program declared %d resources under blue", len(want))
			}
			compare(t, want, got)
		})
	}
}

// under is what rs declares below the component named root, by "type name (parent)", each with its inputs.
func under(rs []mocks.Resource, root string) map[string]string {
	below := map[string]bool{root: true}
	out := map[string]string{}
	for changed := true; changed; {
		changed = false
		for _, r := range rs {
			if below[r.Parent] && !below[r.Name] {
				below[r.Name], changed = true, true
			}
		}
	}
	for _, r := range rs {
		if below[r.Parent] {
			inputs := render.Plain(r.Inputs)
			// An input unknown in a preview: the SDK's mocks leave it out, pulumi-go-provider's fake engine passes
			// it as unknown. Either way the engine will know it only when it creates what it comes from.
			maps.DeleteFunc(inputs, func(_ string, v any) bool { return v == "[unknown]" })
			b, _ := json.Marshal(inputs)
			out[r.Type+" "+r.Name+" ("+r.Parent+")"] = string(b)
		}
	}
	return out
}

// compare fails t for each resource the program (want) and the package (got) declare differently, or only one
// of them declares.
func compare(t *testing.T, want, got map[string]string) {
	t.Helper()
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if got[k] != want[k] {
			t.Errorf("%s\n program: %s\n package: %s", k, want[k], got[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: declared by the package only", k)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBusSameAsTheProgram: a Bus declares, under it, exactly what the program declares besides its clusters
// (types, names, inputs; the program's top level is the Bus's), whatever the accounts.
func TestBusSameAsTheProgram(t *testing.T) {
	deploy := "arn:aws:iam::" + member + ":role/deploy"
	tests := []struct {
		name    string
		program map[string]string // the stack configuration, besides namePrefix and clusters
		account string            // the cluster's
		bus     map[string]any
	}{
		{"one account, a dashboard, an alarm topic", map[string]string{"dashboard": "true", "alarms": `{"topicArn":"arn:aws:sns:us-east-1:123456789012:ops"}`}, "",
			map[string]any{"dashboard": true, "clusterNames": []any{"blue"}, "alarms": map[string]any{"topicArn": "arn:aws:sns:us-east-1:123456789012:ops"}}},
		{"organization by units", map[string]string{"organization": `{"id":"o-abc123defg","memberOUs":["ou-ab12-cdef3456"]}`, "heartbeat": `{"rate":"1m"}`}, "",
			map[string]any{"organization": map[string]any{"id": "o-abc123defg", "memberOUs": []any{"ou-ab12-cdef3456"}}, "heartbeat": map[string]any{"rate": "1m"}}},
		{"a member account by its deploy role", map[string]string{"accounts": `{"` + member + `":{"deployRoleArn":"` + deploy + `"}}`, "router": `{"memoryMb":512,"logLevel":"debug"}`}, member,
			map[string]any{"accounts": map[string]any{member: map[string]any{"deployRoleArn": deploy}}, "router": map[string]any{"memoryMb": 512, "logLevel": "debug"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := map[string]any{"name": "blue", "mode": "existing-role", "controllerRoleName": "KarpenterController"}
			if tt.account != "" {
				cl["account"] = tt.account
			}
			cfg := map[string]string{config.Namespace + ":namePrefix": "kib-prod", config.Namespace + ":clusters": mustJSON(t, []any{cl})}
			for k, v := range tt.program {
				cfg[config.Namespace+":"+k] = v
			}
			t.Setenv(pulumi.EnvConfig, mustJSON(t, cfg))
			program, err := (&mocks.Mocks{}).Run("platform", "prod", infra.Program(testOptions()))
			if err != nil {
				t.Fatal(err)
			}
			inputs := map[string]any{"namePrefix": "kib-prod"}
			maps.Copy(inputs, tt.bus)
			t.Setenv(pulumi.EnvConfig, "{}")
			_, pkg, err := construct(t, &mocks.Mocks{}, "Bus", "hub", inputs)
			if err != nil {
				t.Fatal(err)
			}
			cluster := under(program.Resources(), "blue")
			want := map[string]string{}
			for k, v := range shared(program.Resources()) {
				if _, ok := cluster[k]; !ok && !strings.HasPrefix(k, "pulumi:pulumi:StackReference ") &&
					!strings.HasPrefix(k, "karpenter-interruption-bus:index:ClusterInterruption ") {
					want[k] = v
				}
			}
			// The Bus's resources are named after it, each aliased to the name the program gives it.
			got := shared(formerNamesOf(pkg, "hub", "kib-prod"))
			// The mocks make a key's ID of its logical name: the package's seal key's stands for the program's.
			if w, g := targetKey(t, want), targetKey(t, got); w != g {
				for k, v := range got {
					got[k] = strings.ReplaceAll(v, g, w)
				}
			}
			// One component per concept: the package's Bus is the bus, the program's bus component has no twin
			// inside it; the program's queues and rules hang under its bus component, the package's under the Bus.
			if n := countType(pkg, bus.Type); n != 1 {
				t.Errorf("the package declared %d components of type %s, want the Bus alone", n, bus.Type)
			}
			delete(got, "karpenter-interruption-bus:index:Bus hub ()")
			delete(want, "karpenter-interruption-bus:index:Bus kib-prod ()")
			if len(want) < 20 {
				t.Fatalf("the program declared %d shared resources", len(want))
			}
			compare(t, want, got)
		})
	}
}

// shared is every resource of rs by "type name (parent)" with its inputs, the Bus named hub standing for the
// program's top level and for its bus component (kib-prod).
func shared(rs []mocks.Resource) map[string]string {
	out := map[string]string{}
	for _, r := range rs {
		parent := r.Parent
		if parent == "hub" || parent == "kib-prod" {
			parent = ""
		}
		b, _ := json.Marshal(render.Plain(r.Inputs))
		out[r.Type+" "+r.Name+" ("+parent+")"] = string(b)
	}
	return out
}

// formerNamesOf is rs with each resource named, and parented, as its alias names it (infra.FormerBusName) when
// the Bus named name, of namePrefix prefix, declares it.
func formerNamesOf(rs []mocks.Resource, name, prefix string) []mocks.Resource {
	out := slices.Clone(rs)
	for i, r := range out {
		if former, ok := infra.FormerBusName(name, prefix, r.Name); ok {
			out[i].Name = former
		}
		if former, ok := infra.FormerBusName(name, prefix, r.Parent); ok {
			out[i].Parent = former
		}
	}
	return out
}

// targetKey is the ID of the key the seal key's alias of shared names.
func targetKey(t *testing.T, shared map[string]string) string {
	t.Helper()
	var alias struct {
		TargetKeyID string `json:"targetKeyId"`
	}
	if err := json.Unmarshal([]byte(shared["aws:kms/alias:Alias kib-prod-seal ()"]), &alias); err != nil || alias.TargetKeyID == "" {
		t.Fatalf("no seal key's alias: %v", err)
	}
	return alias.TargetKeyID
}

func countType(rs []mocks.Resource, typ string) int {
	n := 0
	for _, r := range rs {
		if r.Type == typ {
			n++
		}
	}
	return n
}
