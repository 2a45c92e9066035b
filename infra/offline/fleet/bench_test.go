package fleet_test

import (
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/offline/fleet"
)

// BenchmarkRender renders each sized stack offline (the program under the SDK's mocks, as make render does,
// without compiling it): make bench and make scale report the time per render and the resources declared.
func BenchmarkRender(b *testing.B) {
	for _, s := range fleet.Stacks() {
		b.Run(s.Name, func(b *testing.B) {
			var n int
			for b.Loop() {
				rs, err := fleet.Render(s)
				if err != nil {
					b.Fatal(err)
				}
				n = len(rs)
			}
			b.ReportMetric(float64(n), "resources")
		})
	}
}
