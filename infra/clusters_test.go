package infra_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/cluster"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/offline/stacktest"
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
	if stacktest.Str(t, q, "name") != queuename.For("kib-dev-", "payments") {
		t.Errorf("queue = %v, want the router's name for payments", q.Inputs["name"])
	}
	send := stacktest.Statement(t, stacktest.Doc(t, r.resources.Under("payments").One(t, "aws:sqs/queuePolicy:QueuePolicy"), "policy"), "RouterForwards")
	if fmt.Sprint(send.Principal) != "map[AWS:arn:aws:iam::123456789012:role/kib-dev-router]" {
		t.Errorf("send statement = %+v, want the stack's router role", send)
	}
	queues, _ := r.outputs["clusterQueueNames"].(map[string]string)
	if queues["payments"] != "kib-dev-payments" {
		t.Errorf("clusterQueueNames = %v", r.outputs["clusterQueueNames"])
	}
}

// TestLongClusterNames: a 100-character cluster name works, and the queue the component creates is the queue the
// router derives (both call queuename.For).
func TestLongClusterNames(t *testing.T) {
	name := strings.Repeat("c", 99) + "x"
	r := mustRun(t, "dev", clusters(`{"name":"`+name+`"}`))
	created := stacktest.Str(t, r.resources.Under(name).One(t, "aws:sqs/queue:Queue"), "name")
	derived := queuename.For("kib-dev-", name) // what the router computes from the instance's tag
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
	if c["chartValue"] != "settings.interruptionQueue=kib-dev-a" || c["controllerRoleArn"] != "arn:aws:iam::123456789012:role/karpenter-a" ||
		c["nodeRoleName"] != "" || c["mode"] != "existing-role" {
		t.Errorf("cluster outputs = %v", c)
	}
}

// identity of a resource for comparisons across runs: its type, name and parent (what its URN is made of).
func identity(x mocks.Resource) string { return x.Type + "::" + x.Parent + "::" + x.Name }

// TestAddingAClusterChangesNoSharedResource: the second cluster adds only its own resources; every shared
// resource keeps its inputs, and the first cluster's too.
func TestAddingAClusterChangesNoSharedResource(t *testing.T) {
	one := mustRun(t, "dev", clusters(`{"name":"a"}`))
	two := mustRun(t, "dev", clusters(`{"name":"a"}`, `{"name":"b","identity":"irsa","oidcProviderArn":"`+oidcARN+`"}`))
	before := map[string]string{}
	for _, x := range one.resources {
		before[identity(x)] = stacktest.InputsJSON(x)
	}
	for _, x := range two.resources {
		id := identity(x)
		was, existed := before[id]
		switch {
		case !existed && x.Parent != "b" && (x.Type != cluster.Type || x.Name != "b"):
			t.Errorf("adding b added %s outside b's component", id)
		case existed && was != stacktest.InputsJSON(x):
			t.Errorf("adding b changed the inputs of %s", id)
		}
	}
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
		r := mustRun(t, "dev", clusters(entries...))
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
