// Package stacktest helps tests read what a program or a component declared under the mocks: resources by
// type, parent and name, their inputs, and the policy documents in them. Each helper fails the test, naming the
// resource, when what it reads is not there.
package stacktest

import (
	"encoding/json"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/cluster"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/policy"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/render"
)

// Resources are declared resources, in declaration order.
type Resources []mocks.Resource

// Where returns the resources keep selects.
func (rs Resources) Where(keep func(mocks.Resource) bool) Resources {
	var out Resources
	for _, r := range rs {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// OfType returns the resources of type typ.
func (rs Resources) OfType(typ string) Resources {
	return rs.Where(func(r mocks.Resource) bool { return r.Type == typ })
}

// Under returns the children of the component named parent.
func (rs Resources) Under(parent string) Resources {
	return rs.Where(func(r mocks.Resource) bool { return r.Parent == parent })
}

// OfCluster returns the resources of the cluster named name: its component's children, and its Kubernetes
// provider, which hangs from the stack.
func (rs Resources) OfCluster(name string) Resources {
	return rs.Where(func(r mocks.Resource) bool {
		return r.Parent == name || r.Type == "pulumi:providers:kubernetes" && r.Name == cluster.KubernetesProviderName(name)
	})
}

// Named returns the resource of type typ named name.
func (rs Resources) Named(t testing.TB, typ, name string) mocks.Resource {
	t.Helper()
	for _, r := range rs.OfType(typ) {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no %s named %s was declared", typ, name)
	return mocks.Resource{}
}

// One returns the only resource of type typ.
func (rs Resources) One(t testing.TB, typ string) mocks.Resource {
	t.Helper()
	xs := rs.OfType(typ)
	if len(xs) != 1 {
		t.Fatalf("%d %s declared, want 1", len(xs), typ)
	}
	return xs[0]
}

// Count returns how many resources of each type there are.
func (rs Resources) Count() map[string]int {
	out := map[string]int{}
	for _, r := range rs {
		out[r.Type]++
	}
	return out
}

// Str returns r's string input key.
func Str(t testing.TB, r mocks.Resource, key string) string {
	t.Helper()
	v, ok := r.Inputs[resource.PropertyKey(key)]
	if !ok || !v.IsString() {
		t.Fatalf("%s %s: input %s is %v, want a string", r.Type, r.Name, key, v)
	}
	return v.StringValue()
}

// Secret returns r's input key, which must be a secret string.
func Secret(t testing.TB, r mocks.Resource, key string) string {
	t.Helper()
	v, ok := r.Inputs[resource.PropertyKey(key)]
	if !ok || !v.IsSecret() || !v.SecretValue().Element.IsString() {
		t.Fatalf("%s %s: input %s is %v, want a secret string", r.Type, r.Name, key, v)
	}
	return v.SecretValue().Element.StringValue()
}

// Num returns r's number input key.
func Num(t testing.TB, r mocks.Resource, key string) float64 {
	t.Helper()
	v, ok := r.Inputs[resource.PropertyKey(key)]
	if !ok || !v.IsNumber() {
		t.Fatalf("%s %s: input %s is %v, want a number", r.Type, r.Name, key, v)
	}
	return v.NumberValue()
}

// Plain returns r's inputs as plain JSON values.
func Plain(r mocks.Resource) map[string]any { return render.Plain(r.Inputs) }

// InputsJSON is r's inputs as JSON, for comparing declarations.
func InputsJSON(r mocks.Resource) string {
	b, _ := json.Marshal(render.Plain(r.Inputs))
	return string(b)
}

// Doc parses r's input key as a policy document.
func Doc(t testing.TB, r mocks.Resource, key string) policy.Document {
	t.Helper()
	var d policy.Document
	if err := json.Unmarshal([]byte(Str(t, r, key)), &d); err != nil {
		t.Fatalf("%s %s: %s is not a policy document: %v", r.Type, r.Name, key, err)
	}
	return d
}

// Statement returns the statement sid of d.
func Statement(t testing.TB, d policy.Document, sid string) policy.Statement {
	t.Helper()
	for _, s := range d.Statement {
		if s.Sid == sid {
			return s
		}
	}
	t.Fatalf("no statement %s in %+v", sid, d)
	return policy.Statement{}
}
