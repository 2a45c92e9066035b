// Package dependency makes depending on a component of this program deterministic.
//
// The Go SDK expands a dependency on a component into the children the component has at that moment, and a child
// joins its parent only in its own registration goroutine (sdk/go/pulumi v3.259.0: context.go getOpts calls
// addChild; rpc.go addDependency reads getChildren). A dependent registered before a child's goroutine has run misses
// that child: the dependent may be created before it, and an update plan made by a preview that saw the child fails
// the update ("dependencies changed"). A component that embeds a Recorder and is registered by Register records each
// resource declared under it, at the call that declares it (resource transformations run in the caller's goroutine
// and are inherited by every descendant: context.go applyTransformations), so that On names them all.
package dependency

import (
	"slices"
	"sync"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// Recorder records the resources declared under the component it is embedded in. The zero value is ready.
type Recorder struct {
	mu       sync.Mutex
	declared []pulumi.Resource
}

// Component is a component of this program that embeds a Recorder.
type Component interface {
	pulumi.ComponentResource
	Record(self pulumi.Resource) pulumi.ResourceOption
}

// Register registers the component c, as ctx.RegisterComponentResource does, recording what is declared under it.
func Register(ctx *pulumi.Context, t, name string, c Component, opts ...pulumi.ResourceOption) error {
	return ctx.RegisterComponentResource(t, name, c, append(slices.Clip(opts), c.Record(c))...)
}

// Record is the option that records, for the component self, every resource declared under it (Register gives it).
func (r *Recorder) Record(self pulumi.Resource) pulumi.ResourceOption {
	return pulumi.Transformations([]pulumi.ResourceTransformation{func(a *pulumi.ResourceTransformationArgs) *pulumi.ResourceTransformationResult {
		if a.Resource != self {
			r.mu.Lock()
			r.declared = append(r.declared, a.Resource)
			r.mu.Unlock()
		}
		return nil // nothing changed
	}})
}

// Declared is every resource declared under the component so far, in declaration order.
func (r *Recorder) Declared() []pulumi.Resource {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.declared)
}

// component is a component that records what is declared under it.
type component interface {
	Declared() []pulumi.Resource
}

// On is what a resource depending on rs depends on: each of rs, and everything declared under each recording
// component among them.
func On(rs ...pulumi.Resource) []pulumi.Resource {
	var out []pulumi.Resource
	for _, r := range rs {
		out = append(out, r)
		if c, ok := r.(component); ok {
			out = append(out, c.Declared()...)
		}
	}
	return out
}
