package config

import (
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sizing"
)

// Zone is the burst the defaults are sized for: a whole zone's Spot capacity reclaimed, 10,000 instances of 200
// clusters in 5 accounts (docs/performance.md, "Sizing for a zone").
var Zone = sizing.Storm{Events: 10000, Clusters: 200, Accounts: 5}

// Mapping is r's event source mapping and router as router/sizing models them, with the router's default
// SEND_CONCURRENCY and its measured CPU per event at r's memory size.
func (r Router) Mapping() sizing.Mapping {
	m := sizing.Mapping{
		BatchSize: r.BatchSize, Window: time.Duration(r.MaximumBatchingWindowSeconds) * time.Second,
		MaximumConcurrency: r.MaximumConcurrency, SendConcurrency: contract.DefaultSettings.SendConcurrency,
		CPUPerEvent: sizing.LambdaCPU(sizing.MeasuredCPUPerEvent, r.MemoryMB), Reserved: r.Reserved(),
	}
	if pp := r.ProvisionedPollers; pp != nil {
		m.MinimumPollers, m.MaximumPollers = pp.Minimum, pp.Maximum
	}
	return m
}
