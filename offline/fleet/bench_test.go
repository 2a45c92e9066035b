package fleet_test

import (
	"fmt"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/fleet"
)

// BenchmarkRender renders each sized stack offline (the program under the SDK's mocks, as make render does,
// without compiling it): make bench and make scale report the time per render and the resources declared.
func BenchmarkRender(b *testing.B) {
	for _, s := range fleet.Stacks() {
		b.Run(s.Name, func(b *testing.B) { benchRender(b, s) })
	}
}

// benchRender renders s once per iteration and reports the resources declared, and the time per resource.
func benchRender(b *testing.B, s fleet.Stack) {
	var n int
	for b.Loop() {
		rs, err := fleet.Render(s)
		if err != nil {
			b.Fatal(err)
		}
		n = len(rs)
	}
	b.ReportMetric(float64(n), "resources")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/resource")
}

// BenchmarkRenderFleet renders the largest configuration the docs describe as one stack, 200 clusters in the hub's
// account and 500 member accounts with one each (the StackSet baseline), and half and a quarter of it: the time
// and allocations per resource at each size show what grows faster than the fleet (docs/performance.md,
// "The program at fleet size"; make scale).
func BenchmarkRenderFleet(b *testing.B) {
	for _, f := range []struct{ clusters, members int }{{50, 125}, {100, 250}, {200, 500}} {
		b.Run(fmt.Sprintf("%d-clusters-%d-members", f.clusters, f.members), func(b *testing.B) {
			b.ReportAllocs()
			benchRender(b, fleet.Stack{Name: "fleet", Config: fleet.Fleet(f.clusters, f.members)})
		})
	}
}
