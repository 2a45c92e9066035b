package config

import (
	"testing"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sizing"
)

// zone is the burst the defaults are sized for: a whole zone's Spot capacity reclaimed, 10,000 instances of 200
// clusters in 5 accounts.
var zone = sizing.Storm{Events: 10000, Clusters: 200, Accounts: 5}

// defaultMapping is the event source mapping and router of the default configuration, for the model.
func defaultMapping() sizing.Mapping {
	r := DefaultRouter
	return sizing.Mapping{
		BatchSize: r.BatchSize, Window: time.Duration(r.MaximumBatchingWindowSeconds) * time.Second,
		MaximumConcurrency: r.MaximumConcurrency, SendConcurrency: contract.DefaultSettings.SendConcurrency,
		CPUPerEvent: sizing.LambdaCPU(sizing.MeasuredCPUPerEvent, r.MemoryMB),
	}
}

// TestDefaultsMeetAZone: in the model (router/sizing, docs/performance.md "Sizing for a zone"), the defaults bring
// the zone's burst to every Karpenter within 10 s at p99, and so they do with AWS's calls twice as slow as assumed.
func TestDefaultsMeetAZone(t *testing.T) {
	for _, slow := range []time.Duration{1, 2} {
		lat := sizing.DefaultLatency
		lat.SQS, lat.EC2, lat.Invoke = lat.SQS*slow, lat.EC2*slow, lat.Invoke*slow
		p := sizing.Project(zone, defaultMapping(), lat)
		if p.P99 > 10*time.Second {
			t.Errorf("latency x%d: p99 %s, over 10 s (%+v)", slow, p.P99, p)
		}
	}
}
