package infra_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/cluster"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/fleet"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/render"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/stacktest"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
)

// The program-level behaviour of clusters: what the stack wires between a cluster and the shared bus, and the
// invariants of adding, reordering and scaling clusters. The component's own resources are tested beside it.

const oidcARN = "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ABC"

func clusters(entries ...string) map[string]string {
	return map[string]string{"clusters": "[" + strings.Join(entries, ",") + "]"}
}

func TestClusterQueueIsTheRoutersDestination(t *testing.T) {
	r := mustRun(t, "dev", clusters(`{"name":"payments"}`))
	q := r.resources.Under("payments").One(t, "aws:sqs/queue:Queue")
	if stacktest.Str(t, q, "name") != queuename.For("kib-dev_", "payments") {
		t.Errorf("queue = %v, want the router's name for payments", q.Inputs["name"])
	}
	send := stacktest.Statement(t, stacktest.Doc(t, r.resources.Under("payments").One(t, "aws:sqs/queuePolicy:QueuePolicy"), "policy"), "RouterForwards")
	if fmt.Sprint(send.Principal) != "map[AWS:arn:aws:iam::123456789012:root]" || fmt.Sprint(send.Condition) != "map[ArnEquals:map[aws:PrincipalArn:arn:aws:iam::123456789012:role/kib-dev-router-us-east-1]]" {
		t.Errorf("send statement = %+v, want the stack's router role", send)
	}
	queues, _ := r.outputs["clusterQueueNames"].(map[string]string)
	if queues["payments"] != "kib-dev_payments" {
		t.Errorf("clusterQueueNames = %v", r.outputs["clusterQueueNames"])
	}
}

// TestLongClusterNames: a 100-character cluster name works, and the queue the component creates is the queue the
// router derives (both call queuename.For).
func TestLongClusterNames(t *testing.T) {
	name := strings.Repeat("c", 99) + "x"
	r := mustRun(t, "dev", clusters(`{"name":"`+name+`"}`))
	created := stacktest.Str(t, r.resources.Under(name).One(t, "aws:sqs/queue:Queue"), "name")
	derived := queuename.For("kib-dev_", name) // what the router computes from the instance's tag
	if created != derived || len(created) > queuename.MaxLen {
		t.Fatalf("component queue %q, router queue %q: want the same name of at most 80 characters", created, derived)
	}
	for _, role := range r.resources.Under(name).OfType("aws:iam/role:Role") {
		if n := stacktest.Str(t, role, "name"); len(n) > 64 {
			t.Errorf("role name %q is %d characters, IAM allows 64", n, len(n))
		}
	}
	pol := stacktest.Str(t, r.resources.Under(name).One(t, "aws:iam/rolePolicy:RolePolicy"), "policy")
	if len(pol) > 10240 {
		t.Errorf("controller policy is %d characters, over IAM's 10240 for inline role policies", len(pol))
	}
}

func TestExistingRoleOutputs(t *testing.T) {
	r := mustRun(t, "dev", clusters(`{"name":"a","mode":"existing-role","controllerRoleName":"karpenter-a"}`))
	p := r.resources.Under("a").One(t, "aws:iam/rolePolicy:RolePolicy")
	if stacktest.Str(t, p, "name") != "kib-dev-interruption-queue" {
		t.Errorf("policy name = %v, want the stack's", p.Inputs["name"])
	}
	c := r.outputs["clusters"].(map[string]any)["a"].(map[string]any)
	if c["chartValue"] != "settings.interruptionQueue=kib-dev_a" || c["controllerRoleArn"] != "arn:aws:iam::123456789012:role/karpenter-a" ||
		c["nodeRoleName"] != "" || c["mode"] != "existing-role" {
		t.Errorf("cluster outputs = %v", c)
	}
}

// identity of a resource for comparisons across runs: its type, name and parent (what its URN is made of).
func identity(x mocks.Resource) string { return x.Type + "::" + x.Parent + "::" + x.Name }

// TestAddingAClusterChangesNoSharedResource: the second cluster adds only its own resources; every shared
// resource keeps its inputs, and the first cluster's too. The one exception is the dashboard's body, which
// gains b's row and nothing else.
func TestAddingAClusterChangesNoSharedResource(t *testing.T) {
	withDashboard := func(cfg map[string]string) map[string]string { cfg["dashboard"] = "true"; return cfg }
	one := mustRun(t, "dev", withDashboard(clusters(`{"name":"a"}`)))
	two := mustRun(t, "dev", withDashboard(clusters(`{"name":"a"}`, `{"name":"b","identity":"irsa","oidcProviderArn":"`+oidcARN+`"}`)))
	before := map[string]mocks.Resource{}
	for _, x := range one.resources {
		before[identity(x)] = x
	}
	for _, x := range two.resources {
		id := identity(x)
		was, existed := before[id]
		switch {
		case !existed && x.Parent != "b" && (x.Type != cluster.Type || x.Name != "b") && x.Name != cluster.KubernetesProviderName("b"):
			t.Errorf("adding b added %s outside b's component", id)
		case existed && x.Type == "aws:cloudwatch/dashboard:Dashboard":
			if added := addedWidgets(t, was, x); len(added) != 1 || !strings.Contains(added[0], `"title":"Cluster b"`) {
				t.Errorf("adding b changed the dashboard by %v, want b's row only", added)
			}
		case existed && stacktest.InputsJSON(was) != stacktest.InputsJSON(x):
			t.Errorf("adding b changed the inputs of %s", id)
		}
	}
}

// addedWidgets are the widgets of after's dashboard body that before's has not, and fails if after lost any;
// positions are left out, rows being ordered by cluster name.
func addedWidgets(t *testing.T, before, after mocks.Resource) []string {
	t.Helper()
	widgets := func(r mocks.Resource) map[string]bool {
		var body struct{ Widgets []map[string]any }
		if err := json.Unmarshal([]byte(stacktest.Str(t, r, "dashboardBody")), &body); err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, w := range body.Widgets {
			delete(w, "x")
			delete(w, "y")
			b, _ := json.Marshal(w)
			out[string(b)] = true
		}
		return out
	}
	old, added := widgets(before), []string{}
	for w := range widgets(after) {
		if !old[w] {
			added = append(added, w)
		}
		delete(old, w)
	}
	if len(old) > 0 {
		t.Errorf("the dashboard lost widgets %v", old)
	}
	return added
}

func TestReorderingClustersChangesNoURN(t *testing.T) {
	entries := []string{`{"name":"a"}`, `{"name":"b","mode":"existing-role","controllerRoleName":"k"}`, `{"name":"c","fis":{"enabled":true}}`}
	set := func(r result) []string {
		var ids []string
		for _, x := range r.resources {
			ids = append(ids, identity(x)+" "+stacktest.InputsJSON(x))
		}
		slices.Sort(ids)
		return ids
	}
	first := set(mustRun(t, "dev", clusters(entries...)))
	second := set(mustRun(t, "dev", clusters(entries[2], entries[0], entries[1])))
	if !slices.Equal(first, second) {
		t.Fatal("reordering clusters changed the declared resources")
	}
}

// TestSharedResourcesIndependentOfClusterCount: at 1, 10 and 200 clusters the shared resources are the same
// set with the same inputs.
func TestSharedResourcesIndependentOfClusterCount(t *testing.T) {
	shared := func(n int) []string {
		var entries []string
		for i := range n {
			entries = append(entries, fmt.Sprintf(`{"name":"cluster-%03d"}`, i))
		}
		// As one stack, on a machine with the memory for its providers (TestAStackPastItsBudgetComesBeforeAnyResource).
		r := mustRun(t, "dev", with(clusters(entries...), "providerBudgetMB", fleet.OneStackBudgetMB))
		if got := len(r.resources.OfType(cluster.Type)); got != n {
			t.Fatalf("%d cluster components for %d clusters", got, n)
		}
		var ids []string
		for _, x := range r.shared() {
			ids = append(ids, identity(x)+" "+stacktest.InputsJSON(x))
		}
		slices.Sort(ids)
		return ids
	}
	base := shared(1)
	for _, n := range []int{10, 200} {
		if got := shared(n); !slices.Equal(got, base) {
			t.Errorf("shared resources at %d clusters differ from those at 1", n)
		}
	}
}

// TestClustersNamedAsSharedQueues: clusters called central and dlq get queues of their own, apart from the bus's,
// and the router's grant covers theirs and no shared queue.
func TestClustersNamedAsSharedQueues(t *testing.T) {
	r := mustRun(t, "dev", clusters(`{"name":"central"}`, `{"name":"dlq"}`))
	names := map[string]int{}
	for _, q := range r.resources.OfType("aws:sqs/queue:Queue") {
		names[stacktest.Str(t, q, "name")]++
	}
	want := map[string]int{"kib-dev-central": 1, "kib-dev-dlq": 1, "kib-dev-quarantine": 1, "kib-dev_central": 1, "kib-dev_dlq": 1}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Errorf("queues = %v, want %v", names, want)
	}
}

// TestReleaseChangesAgainstTheLastUpdate: moving a release to another namespace, or installing over a release
// managed elsewhere, is refused before any cluster resource is declared, unless acknowledged.
func TestReleaseChangesAgainstTheLastUpdate(t *testing.T) {
	deployed := func(mode, namespace string) map[string]any {
		return map[string]any{"clusters": map[string]any{"a": map[string]any{"mode": mode, "karpenterNamespace": namespace}}}
	}
	tests := []struct {
		name     string
		previous map[string]any
		entry    string
		want     string // a part of the error; "" when the update may proceed
	}{
		{"first update", nil, `{"name":"a","karpenter":{"namespace":"karpenter"}}`, ""},
		{"same namespace", deployed("install", "karpenter"), `{"name":"a","karpenter":{"namespace":"karpenter"}}`, ""},
		{"namespace moved", deployed("install", "kube-system"), `{"name":"a","karpenter":{"namespace":"karpenter"}}`,
			`clusters[0].karpenter.namespace: "karpenter" would replace the Karpenter release this stack deployed in "kube-system"`},
		{"namespace moved, acknowledged", deployed("install", "kube-system"), `{"name":"a","karpenter":{"namespace":"karpenter","replaceRelease":true}}`, ""},
		{"take over a release managed elsewhere", deployed("existing-role", ""), `{"name":"a"}`,
			`clusters[0].mode: "install" would install Karpenter over the release managed elsewhere`},
		{"take over, acknowledged", deployed("existing-role", ""), `{"name":"a","karpenter":{"replaceRelease":true}}`, ""},
		{"back to existing-role", deployed("install", "kube-system"), `{"name":"a","mode":"existing-role","controllerRoleName":"k"}`, ""},
		{"create mode moved", deployed("create", "kube-system"), `{"name":"a","mode":"create","karpenter":{"namespace":"karpenter"},"create":{"vpcId":"vpc-0123456789abcdef0","subnetIds":["subnet-0aaaaaaaaaaaaaaa1","subnet-0aaaaaaaaaaaaaaa2"]}}`,
			`clusters[0].karpenter.namespace`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := runWith(t, &mocks.Mocks{Previous: tt.previous}, render.AnyCommand, "dev", clusters(tt.entry))
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want it to say %q", err, tt.want)
			case tt.want != "" && len(r.resources.OfType(cluster.Type)) != 0:
				t.Errorf("cluster resources were declared before the change was refused")
			}
		})
	}
}

// TestMissingCommandsComeBeforeAnyResource: installing Karpenter needs the AWS CLI where pulumi runs, creating
// a cluster kubectl too; a missing one is named, with the entries needing it, before anything is declared.
func TestMissingCommandsComeBeforeAnyResource(t *testing.T) {
	only := func(present ...string) func(string) (string, error) {
		return func(file string) (string, error) {
			if slices.Contains(present, file) {
				return "/usr/bin/" + file, nil
			}
			return "", exec.ErrNotFound
		}
	}
	create := `{"name":"new","mode":"create","create":{"vpcId":"vpc-0123456789abcdef0","subnetIds":["subnet-0aaaaaaaaaaaaaaa1","subnet-0aaaaaaaaaaaaaaa2"]}}`
	tests := []struct {
		name    string
		present []string
		entries []string
		want    []string
	}{
		{"kubectl for create mode", []string{"aws"}, []string{`{"name":"a"}`, create},
			[]string{"kubectl: not found", "clusters[1] (new, mode create)"}},
		{"aws for install mode", []string{"kubectl"}, []string{`{"name":"a"}`},
			[]string{"aws: not found", "clusters[0] (a, mode install)", "aws eks get-token"}},
		{"nothing for existing-role", nil, []string{`{"name":"a","mode":"existing-role","controllerRoleName":"k"}`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := runWith(t, &mocks.Mocks{}, only(tt.present...), "dev", clusters(tt.entries...))
			refusedBeforeDeclaring(t, r, err, tt.want)
		})
	}
}

// TestAStackPastItsBudgetComesBeforeAnyResource: at the default providerBudgetMB, 77 clusters with Karpenter
// installed fit one stack and 78 do not (shardplan's figures); the refusal names the size, the limit, the split's
// command and the key, and a raised key lets the stack through.
func TestAStackPastItsBudgetComesBeforeAnyResource(t *testing.T) {
	entries := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf(`{"name":"c%03d"}`, i))
		}
		return out
	}
	tests := []struct {
		name string
		kv   map[string]string
		want []string
	}{
		{"77 clusters fit", clusters(entries(77)...), nil},
		{"78 clusters do not", clusters(entries(78)...), []string{"clusters: this stack starts 79 provider processes", "78 clusters with Karpenter installed",
			"past providerBudgetMB, 14336 MB (the default", "make shards STACK=dev", "raise providerBudgetMB"}},
		{"78 clusters within a raised budget", with(clusters(entries(78)...), "providerBudgetMB", "16384"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := run(t, "dev", tt.kv)
			refusedBeforeDeclaring(t, r, err, tt.want)
		})
	}
}

func with(kv map[string]string, key, value string) map[string]string {
	kv[key] = value
	return kv
}

// TestTheLastUpdatesSecretOutputsAreRead: a secret output of the last update (a stack whose clusters output a
// secret made secret) is read as any other: the release it records is still checked against.
func TestTheLastUpdatesSecretOutputsAreRead(t *testing.T) {
	previous := map[string]any{"clusters": map[string]any{"a": map[string]any{"mode": "install", "karpenterNamespace": "kube-system"}}}
	_, err := runWith(t, &mocks.Mocks{Previous: previous, SecretOutputs: []string{"clusters"}}, render.AnyCommand, "dev",
		clusters(`{"name":"a","karpenter":{"namespace":"karpenter"}}`))
	if want := `would replace the Karpenter release this stack deployed in "kube-system"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want it to say %q", err, want)
	}
}
