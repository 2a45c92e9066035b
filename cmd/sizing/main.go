// Command sizing prints the model's table of docs/performance.md ("Sizing for a zone"): the zone's burst
// (config.Zone) through the event source mapping under the defaults and the settings around them (router/sizing).
package main

import (
	"fmt"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sizing"
)

func main() {
	base := config.DefaultRouter.Mapping()
	slow := sizing.DefaultLatency
	slow.SQS, slow.EC2, slow.Invoke = 2*slow.SQS, 2*slow.EC2, 2*slow.Invoke
	with := func(change func(*sizing.Mapping)) sizing.Mapping {
		m := base
		change(&m)
		return m
	}
	rows := []struct {
		name string
		m    sizing.Mapping
		lat  sizing.Latency
	}{
		{"maximumConcurrency 5, SEND_CONCURRENCY 8 (the old defaults)", with(func(m *sizing.Mapping) { m.MaximumConcurrency, m.SendConcurrency = 5, 8 }), sizing.DefaultLatency},
		{"maximumConcurrency 5, SEND_CONCURRENCY 32", with(func(m *sizing.Mapping) { m.MaximumConcurrency = 5 }), sizing.DefaultLatency},
		{"maximumConcurrency 10, SEND_CONCURRENCY 32", with(func(m *sizing.Mapping) { m.MaximumConcurrency = 10 }), sizing.DefaultLatency},
		{"maximumConcurrency 20, SEND_CONCURRENCY 8", with(func(m *sizing.Mapping) { m.MaximumConcurrency, m.SendConcurrency = 20, 8 }), sizing.DefaultLatency},
		{fmt.Sprintf("**maximumConcurrency %d, SEND_CONCURRENCY %d, batch %d, window %s** (the defaults)", base.MaximumConcurrency, base.SendConcurrency, base.BatchSize, base.Window), base, sizing.DefaultLatency},
		{"maximumConcurrency 50, SEND_CONCURRENCY 32", with(func(m *sizing.Mapping) { m.MaximumConcurrency = 50 }), sizing.DefaultLatency},
		{"provisionedPollers 10–100, SEND_CONCURRENCY 32", with(func(m *sizing.Mapping) { m.MinimumPollers, m.MaximumPollers = 10, 100 }), sizing.DefaultLatency},
		{"the defaults, every AWS call twice as slow", base, slow},
		{"the defaults with batchSize 10", with(func(m *sizing.Mapping) { m.BatchSize = 10 }), sizing.DefaultLatency},
	}
	fmt.Printf("%d events over %d clusters in %d accounts\n\n", config.Zone.Events, config.Zone.Clusters, config.Zone.Accounts)
	fmt.Println("| settings | service time | p50 | p99 | drain | peak invocations | invocations | DescribeInstances/s | Lambda s |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		p := sizing.Project(config.Zone, r.m, r.lat)
		fmt.Printf("| %s | %s | %s | %s | %s | %d | %d | %.0f | %.0f |\n", r.name, p.Service.Round(time.Millisecond),
			p.P50.Round(10*time.Millisecond), p.P99.Round(10*time.Millisecond), p.Drain.Round(10*time.Millisecond),
			p.PeakConcurrency, p.Invocations, p.DescribeRate, p.LambdaSeconds)
	}
}
