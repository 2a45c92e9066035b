package components_test

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	p "github.com/pulumi/pulumi-go-provider"
	"github.com/pulumi/pulumi-go-provider/integration"
	presource "github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/provider/components"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/provider/unknownmonitor"
)

// What the engine hands a component for an argument given as another resource's output: at a preview, before that
// resource exists, an unknown; once it exists (the update, or a StackReference's output), its value with the
// resource as a dependency; a secret, marked so.
var (
	eksCluster = presource.URN("urn:pulumi:prod::platform::eks:index:Cluster::blue")
	hubStack   = presource.URN("urn:pulumi:prod::platform::pulumi:pulumi:StackReference::hub")
)

func unknown() presource.PropertyValue { return presource.MakeComputed(presource.NewProperty("")) }

func outputOf(v string, of presource.URN) presource.PropertyValue {
	return presource.NewProperty(presource.Output{Element: presource.NewProperty(v), Known: true, Dependencies: []presource.URN{of}})
}

// constructWith runs component typ named "c" with inputs in the world m (a preview unless m.Update).
func constructWith(t *testing.T, m *mocks.Mocks, typ string, inputs presource.PropertyMap) (p.ConstructResponse, map[string]mocks.Resource, error) {
	t.Helper()
	m.Project, m.Stack = "platform", "prod"
	defer components.SetMarks(previewMarks)()
	s := server(t, integration.WithMocks(m))
	resp, err := s.Construct(p.ConstructRequest{
		Urn:    presource.URN("urn:pulumi:prod::platform::" + components.Name + ":index:" + typ + "::c"),
		Inputs: presource.FromResourcePropertyMap(inputs),
		DryRun: !m.Update,
	})
	return resp, declared(m.Resources()), err
}

// TestOutputsAsArguments: an input given as an output is taken: known (another stack's, or a resource's once it
// exists), the component declares what the same plain values declare; unknown at a preview, it declares nothing,
// its outputs unknown, its checks left to the update; a secret keeps its children's inputs and its outputs secret.
func TestOutputsAsArguments(t *testing.T) {
	plainIn := presource.PropertyMap{"busName": presource.NewProperty("kib-prod"), "clusterName": presource.NewProperty("blue")}
	plainResp, plainDeclared, err := constructWith(t, &mocks.Mocks{SpotServiceLinkedRole: []string{hub}, Existing: []string{"blue"}}, "ClusterInterruption", plainIn)
	if err != nil {
		t.Fatal(err)
	}
	if len(plainDeclared) < 5 {
		t.Fatalf("the plain cluster declared %d resources", len(plainDeclared))
	}

	t.Run("known outputs: as their values", func(t *testing.T) {
		resp, got, err := constructWith(t, &mocks.Mocks{SpotServiceLinkedRole: []string{hub}, Existing: []string{"blue"}}, "ClusterInterruption", presource.PropertyMap{
			"busName": outputOf("kib-prod", hubStack), "clusterName": outputOf("blue", eksCluster),
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(plainDeclared))) {
			t.Errorf("declared %v, the plain values %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(plainDeclared)))
		}
		for _, k := range []string{"queueName", "queueArn", "chartValue"} {
			if got, want := str(t, resp, k), str(t, plainResp, k); got != want {
				t.Errorf("%s %q, with plain values %q", k, got, want)
			}
		}
		if output(t, resp, "queueName").Secret() {
			t.Error("queueName secret without a secret argument")
		}
	})

	t.Run("unknown at the preview: the update's children, unknown where they depend on it", func(t *testing.T) {
		for _, world := range []*mocks.Mocks{{SpotServiceLinkedRole: []string{hub}}, {SpotServiceLinkedRole: []string{hub}, Existing: []string{"blue"}}} {
			resp, got, err := constructWith(t, world, "ClusterInterruption", presource.PropertyMap{
				"busName": outputOf("kib-prod", hubStack), "clusterName": unknown(), "oidcProviderArn": unknown(),
				"identity": presource.NewProperty("irsa"),
			})
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if len(got) < 5 {
				t.Errorf("declared %v, want the cluster's children", slices.Sorted(maps.Keys(got)))
			}
			if q := asTheEngineSees(t, got["aws:sqs/queue:Queue c-queue"].Inputs, unknownmonitor.Inputs{Marks: previewMarks})["name"]; !q.IsComputed() {
				t.Errorf("the queue's name %v, want unknown", q)
			}
			for _, k := range []string{"queueName", "queueArn", "controllerRoleArn", "kubeconfig"} {
				if v := output(t, resp, k); !v.IsComputed() {
					t.Errorf("output %s = %v, want unknown", k, v)
				}
			}
			noMarks(t, got)
		}
	})

	// The checks of the known arguments run at the preview all the same: a mistake in one fails it, naming it, and
	// the unknown arguments' checks wait (their zero values are no mistake).
	t.Run("unknown at the preview: the known arguments' checks run", func(t *testing.T) {
		topic := presource.NewProperty([]presource.PropertyValue{unknown()})
		for _, tt := range []struct {
			name  string
			in    presource.PropertyMap
			fails []string
		}{
			{"all known good", presource.PropertyMap{"busName": presource.NewProperty("kib-prod"), "clusterName": unknown(), "heartbeatRate": presource.NewProperty("5m"),
				"hubAccountId": presource.NewProperty("012345678901"), "heartbeatAlarmActions": topic}, nil},
			{"a tag's value unknown", presource.PropertyMap{"busName": presource.NewProperty("kib-prod"), "clusterName": presource.NewProperty("blue"),
				"tags": presource.NewProperty(presource.PropertyMap{"team": unknown()})}, nil},
			{"karpenter's version unknown", presource.PropertyMap{"busName": presource.NewProperty("kib-prod"), "clusterName": presource.NewProperty("blue"),
				"mode": presource.NewProperty("install"), "karpenter": presource.NewProperty(presource.PropertyMap{"version": unknown()})}, nil},
			{"the hub's account unknown, a member baseline", presource.PropertyMap{"busName": presource.NewProperty("kib-prod"), "clusterName": presource.NewProperty("blue"),
				"hubAccountId": unknown(), "memberBaseline": presource.NewProperty(true)}, nil},
			{"the bus unknown, a rate", presource.PropertyMap{"busName": unknown(), "clusterName": presource.NewProperty("blue"), "heartbeatRate": presource.NewProperty("7s")},
				[]string{"heartbeatRate"}},
			{"the bus's name empty", presource.PropertyMap{"busName": presource.NewProperty(""), "clusterName": unknown()}, []string{"busName: required"}},
			{"a tag's key too long, beside one whose value is unknown", presource.PropertyMap{"busName": presource.NewProperty("kib-prod"), "clusterName": presource.NewProperty("blue"),
				"tags": presource.NewProperty(presource.PropertyMap{"team": unknown(), presource.PropertyKey(strings.Repeat("k", 129)): presource.NewProperty("x")})},
				[]string{"tags: key"}},
			{"an alarm action unknown, another not a topic", presource.PropertyMap{"busName": presource.NewProperty("kib-prod"), "clusterName": presource.NewProperty("blue"),
				"heartbeatRate": presource.NewProperty("5m"), "heartbeatAlarmActions": presource.NewProperty([]presource.PropertyValue{unknown(), presource.NewProperty("not-an-arn")})},
				[]string{"heartbeatAlarmActions[1]"}},
			{"a rate", presource.PropertyMap{"busName": presource.NewProperty("kib-prod"), "clusterName": presource.NewProperty("blue"), "heartbeatRate": presource.NewProperty("7s"),
				"heartbeatAlarmActions": topic}, []string{"heartbeatRate"}},
			{"a hub account", presource.PropertyMap{"busName": unknown(), "clusterName": unknown(), "hubAccountId": presource.NewProperty("1.5")},
				[]string{`hubAccountId: "1.5" is not an AWS account ID`}},
			{"a member baseline in the hub's account", presource.PropertyMap{"busName": presource.NewProperty("kib-prod"), "clusterName": unknown(),
				"memberBaseline": presource.NewProperty(true)}, []string{"memberBaseline: the cluster is in the hub's own account"}},
			{"a tag and a namespace", presource.PropertyMap{"busName": presource.NewProperty("kib-prod"), "clusterName": unknown(),
				"tags":      presource.NewProperty(presource.PropertyMap{"aws:team": presource.NewProperty("x")}),
				"karpenter": presource.NewProperty(presource.PropertyMap{"namespace": presource.NewProperty("Not_A_Namespace")})},
				[]string{"tags", "karpenter.namespace"}},
			{"a bus name too long for the names made from it", presource.PropertyMap{"busName": presource.NewProperty(strings.Repeat("k", 70)), "clusterName": unknown()},
				[]string{"busName"}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				_, got, err := constructWith(t, &mocks.Mocks{SpotServiceLinkedRole: []string{hub}, Existing: []string{"blue"}}, "ClusterInterruption", tt.in)
				if tt.fails == nil {
					if err != nil {
						t.Fatalf("refused: %v", err)
					}
					// No stand-in takes the place of a version: the preview shows none of the cluster's resources.
					if none := tt.name == "karpenter's version unknown"; len(got) < 2 != none {
						t.Errorf("declared %v, want the cluster's children: %v", slices.Sorted(maps.Keys(got)), !none)
					}
					noMarks(t, got)
					return
				}
				if len(got) > 1 {
					t.Errorf("declared %v", slices.Sorted(maps.Keys(got)))
				}
				for _, want := range tt.fails {
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Errorf("err = %v, want it to name %s", err, want)
					}
				}
			})
		}
	})

	t.Run("a cluster not found, named by a resource of the program: looked up again by the update", func(t *testing.T) {
		for _, tt := range []struct {
			name   string
			from   presource.URN
			update bool
			waits  bool
		}{
			{"from a cluster of the program, at the preview", eksCluster, false, true},
			{"from a cluster of the program, in the update", eksCluster, true, false},
			{"from another stack, at the preview", hubStack, false, false},
		} {
			t.Run(tt.name, func(t *testing.T) {
				// The cluster does not exist (yet): the update creates it, or the other stack names one that is not there.
				resp, got, err := constructWith(t, &mocks.Mocks{SpotServiceLinkedRole: []string{hub}, Update: tt.update}, "ClusterInterruption", presource.PropertyMap{
					"busName": presource.NewProperty("kib-prod"), "clusterName": outputOf("blue", tt.from),
				})
				if !tt.waits {
					if err == nil || !strings.Contains(err.Error(), "no EKS cluster named blue exists") {
						t.Errorf("err = %v, want the check's failure", err)
					}
					if len(got) > 1 {
						t.Errorf("declared %v", slices.Sorted(maps.Keys(got)))
					}
					return
				}
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				// Its name is known, and what is named after it; what the lookup would have found is not.
				if got, want := str(t, resp, "queueName"), "kib-prod_blue"; got != want {
					t.Errorf("queueName = %q, want %q", got, want)
				}
				if v := output(t, resp, "kubeconfig"); !v.IsComputed() {
					t.Errorf("kubeconfig = %v, want unknown", v)
				}
				noMarks(t, got)
			})
		}
	})

	t.Run("nested in karpenter.values and accounts: outputs taken, unknowns deferred by their path", func(t *testing.T) {
		values := func(leaf presource.PropertyValue) presource.PropertyMap {
			return presource.PropertyMap{
				"busName": presource.NewProperty("kib-prod"), "clusterName": presource.NewProperty("blue"),
				"karpenter": presource.NewProperty(presource.PropertyMap{"values": presource.NewProperty(presource.PropertyMap{
					"tolerations": presource.NewProperty([]presource.PropertyValue{presource.NewProperty(presource.PropertyMap{"key": leaf})}),
				})}),
			}
		}
		_, got, err := constructWith(t, &mocks.Mocks{SpotServiceLinkedRole: []string{hub}, Existing: []string{"blue"}}, "ClusterInterruption", values(outputOf("spot", eksCluster)))
		if err != nil {
			t.Fatal(err)
		}
		release := got["kubernetes:helm.sh/v3:Release c-karpenter"].Inputs["values"]
		if !strings.Contains(release.String(), "spot") {
			t.Errorf("the release's values %v lack the output's value", release)
		}
		_, got, err = constructWith(t, &mocks.Mocks{SpotServiceLinkedRole: []string{hub}, Existing: []string{"blue"}}, "ClusterInterruption", values(unknown()))
		if err != nil || !asTheEngineSees(t, got["kubernetes:helm.sh/v3:Release c-karpenter"].Inputs, unknownmonitor.Inputs{Marks: previewMarks})["values"].ContainsUnknowns() {
			t.Errorf("an unknown toleration: %v, the release's values %v", err, got["kubernetes:helm.sh/v3:Release c-karpenter"].Inputs["values"])
		}
		noMarks(t, got)
		_, got, err = constructWith(t, &mocks.Mocks{}, "Bus", presource.PropertyMap{
			"namePrefix": presource.NewProperty("kib-prod"),
			"accounts": presource.NewProperty(presource.PropertyMap{member: presource.NewProperty(presource.PropertyMap{
				"deployRoleArn": outputOf("arn:aws:iam::"+member+":role/deploy", eksCluster),
			})}),
		})
		if err != nil || len(got) < 10 {
			t.Errorf("a member's role from a resource: %v, declared %d", err, len(got))
		}
		_, _, err = constructWith(t, &mocks.Mocks{}, "Bus", presource.PropertyMap{
			"namePrefix": presource.NewProperty("kib-prod"),
			"accounts":   unknown(),
		})
		if err == nil || !strings.Contains(err.Error(), "accounts is unknown at the preview") {
			t.Errorf("the member accounts unknown: %v, want them refused (one baseline per account)", err)
		}
		// A member's settings unknown, its account known: the baseline it decides on is known; the checks wait.
		resp, got, err := constructWith(t, &mocks.Mocks{}, "Bus", presource.PropertyMap{
			"namePrefix": presource.NewProperty("kib-prod"),
			"accounts":   presource.NewProperty(presource.PropertyMap{member: unknown()}),
		})
		if err != nil || len(got) > 1 || !output(t, resp, "busName").IsComputed() {
			t.Errorf("a member's settings unknown: %v, declared %v", err, slices.Sorted(maps.Keys(got)))
		}
	})

	t.Run("a check failing on a value not from a resource: fails the preview", func(t *testing.T) {
		// The topic comes from a resource of the program; the check that fails is the rate's.
		_, got, err := constructWith(t, &mocks.Mocks{SpotServiceLinkedRole: []string{hub}, Existing: []string{"blue"}}, "ClusterInterruption", presource.PropertyMap{
			"busName": presource.NewProperty("kib-prod"), "clusterName": presource.NewProperty("blue"), "heartbeatRate": presource.NewProperty("90s"),
			"heartbeatAlarmActions": presource.NewProperty([]presource.PropertyValue{outputOf("arn:aws:sns:us-east-1:"+hub+":ops", eksCluster)}),
		})
		if err == nil || !strings.Contains(err.Error(), "90s") {
			t.Errorf("err = %v, want the rate refused at the preview", err)
		}
		if len(got) > 1 {
			t.Errorf("declared %v", slices.Sorted(maps.Keys(got)))
		}
	})

	t.Run("secrets: never in a message, a name or an alias", func(t *testing.T) {
		_, _, err := constructWith(t, &mocks.Mocks{SpotServiceLinkedRole: []string{hub}, Existing: []string{"blue"}}, "ClusterInterruption", presource.PropertyMap{
			"busName": presource.NewProperty("kib-prod"), "clusterName": presource.NewProperty("blue"),
			"hubAccountId": presource.MakeSecret(presource.NewProperty("98765")),
		})
		if err == nil || strings.Contains(err.Error(), "98765") || !strings.Contains(err.Error(), "[secret]") {
			t.Errorf("err = %v, want the account refused, its value withheld", err)
		}
		for _, tt := range []struct {
			typ    string
			inputs presource.PropertyMap
			want   string
		}{
			{"ClusterInterruption", presource.PropertyMap{"busName": presource.NewProperty("kib-prod"), "clusterName": presource.NewProperty("blue"),
				"mode": presource.MakeSecret(presource.NewProperty("install"))}, "mode is a secret"},
		} {
			_, got, err := constructWith(t, &mocks.Mocks{SpotServiceLinkedRole: []string{hub}, Existing: []string{"blue"}}, tt.typ, tt.inputs)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "kib-prod") || strings.Contains(err.Error(), "install") {
				t.Errorf("%s: err = %v, want %q", tt.typ, err, tt.want)
			}
			if len(got) > 0 {
				t.Errorf("%s: declared %v", tt.typ, slices.Sorted(maps.Keys(got)))
			}
		}
		m := &mocks.Mocks{SpotServiceLinkedRole: []string{hub}, Existing: []string{"blue"}}
		if _, _, err := constructWith(t, m, "ClusterInterruption", presource.PropertyMap{
			"busName": presource.NewProperty("kib-prod"), "clusterName": presource.MakeSecret(presource.NewProperty("blue")),
		}); err != nil {
			t.Fatal(err)
		}
		for _, r := range m.Resources() {
			if strings.Contains(r.URN, "blue") || slices.ContainsFunc(r.Aliases, func(a string) bool { return strings.Contains(a, "blue") }) {
				t.Errorf("%s (aliases %q) holds the secret cluster name", r.URN, r.Aliases)
			}
		}
	})

	t.Run("unknown in the update: refused", func(t *testing.T) {
		_, got, err := constructWith(t, &mocks.Mocks{SpotServiceLinkedRole: []string{hub}, Existing: []string{"blue"}, Update: true}, "ClusterInterruption", presource.PropertyMap{
			"busName": presource.NewProperty("kib-prod"), "clusterName": unknown(),
		})
		if err == nil || !strings.Contains(err.Error(), "clusterName unknown in the update") {
			t.Fatalf("err = %v, want clusterName refused", err)
		}
		if len(got) > 1 {
			t.Errorf("declared %v", slices.Sorted(maps.Keys(got)))
		}
	})

	t.Run("a plain argument unknown: refused, named", func(t *testing.T) {
		_, got, err := constructWith(t, &mocks.Mocks{SpotServiceLinkedRole: []string{hub}, Existing: []string{"blue"}}, "ClusterInterruption", presource.PropertyMap{
			"busName": presource.NewProperty("kib-prod"), "clusterName": unknown(), "mode": unknown(),
			"create": presource.NewProperty(presource.PropertyMap{"vpcId": unknown(), "subnetIds": presource.NewProperty([]presource.PropertyValue{presource.NewProperty("subnet-1"), unknown()})}),
		})
		if err == nil {
			t.Fatal("constructed")
		}
		for _, w := range []string{"mode is unknown at the preview", "create.subnetIds[1] is unknown at the preview", `"Plain values"`} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v\nwant it to say %q", err, w)
			}
		}
		for _, n := range []string{"clusterName", "vpcId", "subnetIds[0]"} {
			if strings.Contains(err.Error(), n) {
				t.Errorf("%v: names %s, an input", err, n)
			}
		}
		if len(got) > 0 {
			t.Errorf("declared %v before refusing", slices.Sorted(maps.Keys(got)))
		}
	})

	t.Run("a secret: its children's inputs and the outputs secret", func(t *testing.T) {
		resp, got, err := constructWith(t, &mocks.Mocks{SpotServiceLinkedRole: []string{hub}, Existing: []string{"blue"}}, "ClusterInterruption", presource.PropertyMap{
			"busName": presource.NewProperty("kib-prod"), "clusterName": presource.MakeSecret(presource.NewProperty("blue")),
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"queueName", "queueUrl", "chartValue"} {
			if !output(t, resp, k).Secret() {
				t.Errorf("output %s not secret", k)
			}
		}
		q, ok := got["aws:sqs/queue:Queue c-queue"]
		if !ok {
			t.Fatalf("no queue among %v", slices.Sorted(maps.Keys(got)))
		}
		seen := asTheEngineSees(t, q.Inputs, unknownmonitor.Inputs{Secrets: []string{"blue"}})
		if name := seen["name"]; !name.ContainsSecrets() {
			t.Errorf("the queue's name %v is not secret", name)
		}
		if retention := seen["messageRetentionSeconds"]; retention.ContainsSecrets() {
			t.Errorf("the queue's retention %v is secret, made of no secret", retention)
		}
	})
}

// TestChildrenAreNamedAfterTheComponent: a ClusterInterruption's resources are named after the component, whatever its
// clusterName, each aliased to the name it had after the cluster (0.3.0), so that a stack of then keeps them; none
// when the two names are one.
func TestChildrenAreNamedAfterTheComponent(t *testing.T) {
	m := &mocks.Mocks{SpotServiceLinkedRole: []string{hub}, Existing: []string{"blue"}}
	_, got, err := constructWith(t, m, "ClusterInterruption", presource.PropertyMap{
		"busName": presource.NewProperty("kib-prod"), "clusterName": presource.NewProperty("blue"),
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range m.Resources() {
		if r.Type == "karpenter-interruption-bus:index:ClusterInterruption" {
			if len(r.Aliases) > 0 {
				t.Errorf("the component is aliased to %q: it keeps its name", r.Aliases)
			}
			continue
		}
		n++
		if !strings.HasPrefix(r.Name, "c-") {
			t.Errorf("%s %s is not named after the component c", r.Type, r.Name)
		}
		if former := "blue" + strings.TrimPrefix(r.Name, "c"); !slices.Contains(r.Aliases, former) {
			t.Errorf("%s %s has aliases %q, not its former name %s", r.Type, r.Name, r.Aliases, former)
		}
	}
	if n < 10 || got["kubernetes:helm.sh/v3:Release c-karpenter"].Name == "" {
		t.Errorf("declared %v", slices.Sorted(maps.Keys(got)))
	}

	same := &mocks.Mocks{SpotServiceLinkedRole: []string{hub}, Existing: []string{"blue"}}
	if _, _, err := construct(t, same, "ClusterInterruption", "blue", map[string]any{"busName": "kib-prod", "clusterName": "blue"}); err != nil {
		t.Fatal(err)
	}
	for _, r := range same.Resources() {
		for _, a := range r.Aliases {
			if a != "" { // "": the Kubernetes provider's alias to its parent of before shards
				t.Errorf("%s %s, named after its cluster, is aliased to %s", r.Type, r.Name, a)
			}
		}
	}
}

// TestABusTakesOutputs: the Bus too, its alarm topic from another resource, its namePrefix unknown at a preview.
func TestABusTakesOutputs(t *testing.T) {
	topic := presource.URN("urn:pulumi:prod::platform::aws:sns/topic:Topic::ops")
	_, got, err := constructWith(t, &mocks.Mocks{}, "Bus", presource.PropertyMap{
		"namePrefix": presource.NewProperty("kib-prod"),
		"alarms":     presource.NewProperty(presource.PropertyMap{"topicArn": outputOf("arn:aws:sns:us-east-1:"+hub+":ops", topic)}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 10 {
		t.Errorf("declared %d resources", len(got))
	}
	// A secret tag: what holds it secret (every resource's tags), nothing else (the outputs, made of no secret).
	resp, got, err := constructWith(t, &mocks.Mocks{}, "Bus", presource.PropertyMap{
		"namePrefix": presource.NewProperty("kib-prod"),
		"tags":       presource.NewProperty(presource.PropertyMap{"cost-center": presource.MakeSecret(presource.NewProperty("cc-4711"))}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if output(t, resp, "busName").Secret() || output(t, resp, "centralQueueArn").Secret() {
		t.Error("the Bus's outputs are secret, made of no secret")
	}
	for k, r := range got {
		seen := asTheEngineSees(t, r.Inputs, unknownmonitor.Inputs{Secrets: []string{"cc-4711"}})
		if tags, ok := seen["tags"]; ok && r.Custom && !tags.ContainsSecrets() {
			t.Errorf("%s: tags %v not secret", k, tags)
		}
		if name, ok := seen["name"]; ok && name.ContainsSecrets() {
			t.Errorf("%s: name %v secret, made of no secret", k, name)
		}
	}
	// An unknown namePrefix: the Bus's resources (named after the component) with their names unknown.
	resp, got, err = constructWith(t, &mocks.Mocks{}, "Bus", presource.PropertyMap{"namePrefix": unknown()})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 10 || !output(t, resp, "busName").IsComputed() || !output(t, resp, "ruleArns").HasComputed() ||
		!asTheEngineSees(t, got["aws:sqs/queue:Queue c-central"].Inputs, unknownmonitor.Inputs{Marks: previewMarks})["name"].IsComputed() {
		t.Errorf("an unknown namePrefix: declared %v, busName %v", slices.Sorted(maps.Keys(got)), output(t, resp, "busName"))
	}
	noMarks(t, got)
	// A secret namePrefix names no resource (their names are the component's): taken, its value never in a URN
	// or an alias, the outputs secret.
	m := &mocks.Mocks{}
	resp, _, err = constructWith(t, m, "Bus", presource.PropertyMap{"namePrefix": presource.MakeSecret(presource.NewProperty("kib-secret"))})
	if err != nil {
		t.Fatal(err)
	}
	if !output(t, resp, "busName").Secret() {
		t.Error("a secret namePrefix: busName not secret")
	}
	for _, r := range m.Resources() {
		if strings.Contains(r.URN, "kib-secret") || slices.ContainsFunc(r.Aliases, func(a string) bool { return strings.Contains(a, "kib-secret") }) {
			t.Errorf("%s (aliases %q) holds the secret namePrefix", r.URN, r.Aliases)
		}
	}
	// The known arguments' checks run at the preview all the same: a mistake fails it, naming the argument.
	for _, tt := range []struct {
		in    presource.PropertyMap
		fails string
	}{
		{presource.PropertyMap{"namePrefix": unknown(), "heartbeat": presource.NewProperty(presource.PropertyMap{
			"enabled": presource.NewProperty(true), "rate": presource.NewProperty("7s")})}, "heartbeat.rate"},
		{presource.PropertyMap{"namePrefix": presource.NewProperty("kib-prod"), "clusterNames": presource.NewProperty([]presource.PropertyValue{presource.NewProperty("Not A Cluster")}),
			"alarms": presource.NewProperty(presource.PropertyMap{"topicArn": unknown()})}, "clusterNames[0]"},
		{presource.PropertyMap{"namePrefix": presource.NewProperty("kib-prod"), "alarms": presource.NewProperty(presource.PropertyMap{"topicArn": unknown()}),
			"organization": presource.NewProperty(presource.PropertyMap{"id": presource.NewProperty("not-an-org")})}, "organization.id"},
	} {
		_, got, err := constructWith(t, &mocks.Mocks{}, "Bus", tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.fails) || len(got) > 1 {
			t.Errorf("%v: err %v, declared %d, want %s refused", tt.in, err, len(got), tt.fails)
		}
	}
	_, _, err = constructWith(t, &mocks.Mocks{}, "Bus", presource.PropertyMap{"namePrefix": presource.NewProperty("kib-prod"),
		"alarms": presource.NewProperty(presource.PropertyMap{"topicArn": unknown()})})
	if err != nil {
		t.Errorf("an unknown topic, the rest known and good: %v", err)
	}
}

// previewMarks are the marks of the previews constructWith runs.
var previewMarks = marksA

// markRE matches a stand-in's mark (infra/standin): none may reach the engine.
var markRE = regexp.MustCompile(`\bki[bw][a-z0-9]{7,}\b|\b9[0-9]{11}\b`)

// noMarks fails when an input of a declared resource, as the engine is handed it (asTheEngineSees), holds a
// stand-in's mark.
func noMarks(t *testing.T, declared map[string]mocks.Resource) {
	t.Helper()
	for k, r := range declared {
		if m := markRE.FindString(fmt.Sprint(asTheEngineSees(t, r.Inputs, unknownmonitor.Inputs{Marks: previewMarks}))); m != "" {
			t.Errorf("%s holds the stand-in %s: %v", k, m, r.Inputs)
		}
	}
}
