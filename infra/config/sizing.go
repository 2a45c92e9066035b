package config

import (
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sizing"
)

// Zone is the burst the defaults are sized for: a whole zone's Spot capacity reclaimed, 10,000 instances of 200
// clusters in 5 accounts (docs/performance.md, "Sizing for a zone").
var Zone = sizing.Storm{Events: 10000, Clusters: 200, Accounts: 5}

// Goals of the defaults (docs/performance.md, "Sizing for a zone"): a lone interruption on a quiet queue reaches its
// cluster's queue within LoneGoal at p99, the zone's burst within StormGoal, in the worst case AWS's words allow
// and with every AWS call twice as slow as assumed.
const (
	LoneGoal  = 2 * time.Second
	StormGoal = 5 * time.Second
)

// Lone is one interruption on a quiet queue.
var Lone = sizing.Storm{Events: 1, Clusters: 200, Accounts: 1}

// Mapping is r's event source mapping and router as router/sizing models them, with the router's default
// SEND_CONCURRENCY and DRAIN and its measured CPU per event at r's memory size.
func (r Router) Mapping() sizing.Mapping {
	m := sizing.Mapping{
		BatchSize: r.BatchSize, Window: time.Duration(r.MaximumBatchingWindowSeconds) * time.Second,
		MaximumConcurrency: r.MaximumConcurrency, SendConcurrency: contract.DefaultSettings.SendConcurrency,
		Drain:       contract.DefaultSettings.Drain,
		CPUPerEvent: sizing.LambdaCPU(sizing.MeasuredCPUPerEvent, r.MemoryMB), Reserved: r.Reserved(),
	}
	if pp := r.ProvisionedPollers; pp != nil {
		m.MinimumPollers, m.MaximumPollers = pp.Minimum, pp.Maximum
	}
	return m
}
