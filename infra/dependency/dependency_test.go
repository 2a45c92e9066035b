package dependency_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/dependency"
)

type part struct {
	pulumi.ResourceState
	dependency.Recorder
}

type thing struct{ pulumi.CustomResourceState }

type mocks struct {
	mu   sync.Mutex
	deps map[string][]string // name -> the URNs it was registered depending on
}

func (m *mocks) NewResource(a pulumi.MockResourceArgs) (string, resource.PropertyMap, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.deps[a.Name] = a.RegisterRPC.GetDependencies()
	return a.Name + "-id", a.Inputs, nil
}

func (m *mocks) Call(pulumi.MockCallArgs) (resource.PropertyMap, error) {
	return resource.PropertyMap{}, nil
}

// TestOnNamesWhatWasDeclaredUnderAComponent: the moment a component's constructor returns, On names every resource
// declared under it, nested components' included, while the SDK's own expansion sees only the children whose
// registration goroutines have run; a dependent registered with it depends on each custom one.
func TestOnNamesWhatWasDeclaredUnderAComponent(t *testing.T) {
	m := &mocks{deps: map[string][]string{}}
	err := pulumi.RunErr(func(ctx *pulumi.Context) error {
		outer := &part{}
		if err := dependency.Register(ctx, "test:index:Part", "outer", outer); err != nil {
			return err
		}
		var a thing
		if err := ctx.RegisterResource("test:index:Thing", "a", nil, &a, pulumi.Parent(outer)); err != nil {
			return err
		}
		inner := &part{}
		if err := dependency.Register(ctx, "test:index:Part", "inner", inner, pulumi.Parent(outer)); err != nil {
			return err
		}
		var b thing
		if err := ctx.RegisterResource("test:index:Thing", "b", nil, &b, pulumi.Parent(inner)); err != nil {
			return err
		}
		got := dependency.On(outer)
		if want := []pulumi.Resource{outer, &a, inner, &b}; !slices.Equal(got, want) {
			t.Errorf("On(outer) names %d resources, want 4 (outer, a, inner, b): %v", len(got), got)
		}
		if got := dependency.On(inner); !slices.Equal(got, []pulumi.Resource{inner, &b}) {
			t.Errorf("On(inner) names %d resources, want inner and b", len(got))
		}
		var standalone thing
		if err := ctx.RegisterResource("test:index:Thing", "standalone", nil, &standalone); err != nil {
			return err
		}
		if got := dependency.On(&standalone); !slices.Equal(got, []pulumi.Resource{&standalone}) {
			t.Errorf("On(a custom resource) = %v, want itself", got)
		}
		var dependent thing
		return ctx.RegisterResource("test:index:Thing", "dependent", nil, &dependent, pulumi.DependsOn(dependency.On(outer)))
	}, pulumi.WithMocks("p", "s", m))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b"} {
		urn := "urn:pulumi:s::p::test:index:Part$test:index:Thing::" + name
		if name == "b" {
			urn = "urn:pulumi:s::p::test:index:Part$test:index:Part$test:index:Thing::b"
		}
		if !slices.Contains(m.deps["dependent"], urn) {
			t.Errorf("the dependent depends on %v, want %s among them", m.deps["dependent"], urn)
		}
	}
}
