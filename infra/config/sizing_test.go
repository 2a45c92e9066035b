package config

import (
	"testing"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sizing"
)

// TestDefaultsMeetAZone: in the model (router/sizing, docs/performance.md "Sizing for a zone"), the defaults bring
// the zone's burst to every Karpenter within 10 s at p99, and so they do with AWS's calls twice as slow as assumed.
func TestDefaultsMeetAZone(t *testing.T) {
	for _, slow := range []time.Duration{1, 2} {
		lat := sizing.DefaultLatency
		lat.SQS, lat.EC2, lat.Invoke = lat.SQS*slow, lat.EC2*slow, lat.Invoke*slow
		p := sizing.Project(Zone, DefaultRouter.Mapping(), lat)
		if p.P99 > 10*time.Second {
			t.Errorf("latency x%d: p99 %s, over 10 s (%+v)", slow, p.P99, p)
		}
	}
}
