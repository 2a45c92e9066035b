package docgen

import (
	"fmt"
	"strings"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sizing"
)

// SizingRow is one line of the sizing table: a mapping, the AWS latency it is projected with, and its memory.
type SizingRow struct {
	Name     string
	Router   config.Router
	Mapping  sizing.Mapping
	Latency  sizing.Latency
	MemoryMB int
}

// SizingRows are the settings docs/performance.md ("Sizing for a zone") compares: the defaults, and the settings
// around them, each from config.Router as a stack would set it.
func SizingRows() []SizingRow {
	slow := sizing.DefaultLatency
	slow.SQS, slow.EC2, slow.Invoke = 2*slow.SQS, 2*slow.EC2, 2*slow.Invoke
	d := config.DefaultRouter
	row := func(name string, change func(*config.Router), mapping func(*sizing.Mapping), lat sizing.Latency) SizingRow {
		r := d
		if change != nil {
			change(&r)
		}
		m := r.Mapping()
		if mapping != nil {
			mapping(&m)
		}
		return SizingRow{Name: name, Router: r, Mapping: m, Latency: lat, MemoryMB: r.MemoryMB}
	}
	base := d.Mapping()
	before := func(r *config.Router) { r.BatchSize, r.MaximumBatchingWindowSeconds = 1000, 1 }
	return []SizingRow{
		row(fmt.Sprintf("**the defaults: batch %d, window %d s, DRAIN %d, %d MB, maximumConcurrency %d, SEND_CONCURRENCY %d**", d.BatchSize,
			d.MaximumBatchingWindowSeconds, base.Drain, d.MemoryMB, d.MaximumConcurrency, base.SendConcurrency), nil, nil, sizing.DefaultLatency),
		row("**the defaults, every AWS call twice as slow**", nil, nil, slow),
		row("batch 1000, window 1 s (the defaults before)", before, nil, sizing.DefaultLatency),
		row("batch 1000, window 1 s, twice as slow", before, nil, slow),
		row("the defaults with DRAIN 0 (no drain), twice as slow", nil, func(m *sizing.Mapping) { m.Drain = 0 }, slow),
		row("the defaults with 256 MB, twice as slow", func(r *config.Router) { r.MemoryMB = 256 }, nil, slow),
		row("the defaults with SEND_CONCURRENCY 8, twice as slow", nil, func(m *sizing.Mapping) { m.SendConcurrency = 8 }, slow),
		row("the defaults with maximumConcurrency 50", func(r *config.Router) { r.MaximumConcurrency = 50 }, nil, sizing.DefaultLatency),
		row("provisionedPollers 4–40", func(r *config.Router) {
			r.ProvisionedPollers = &config.ProvisionedPollers{Minimum: 4, Maximum: 40}
		}, nil, sizing.DefaultLatency),
		row("provisionedPollers 10–100, twice as slow", func(r *config.Router) {
			r.ProvisionedPollers = &config.ProvisionedPollers{Minimum: 10, Maximum: 100}
		}, nil, slow),
	}
}

// Sizing is the table of docs/performance.md ("Sizing for a zone"): a lone event (config.Lone) and the zone's burst
// (config.Zone) through each row's mapping, in the worst case AWS's words allow and in the best (go run ./cmd/sizing prints it too).
func Sizing() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d events over %d clusters in %d accounts.\n\n", config.Zone.Events, config.Zone.Clusters, config.Zone.Accounts)
	b.WriteString("| settings | a lone event, p99, worst case | service time | p99, worst case | p99, best case | drain, worst case | invocations at once, best case (ceiling) | invocations | DescribeInstances/s in an account, best case | Lambda GB-s |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range SizingRows() {
		worst, best := r.Mapping, r.Mapping
		worst.Case, best.Case = sizing.Worst, sizing.Best
		pw, pb := sizing.Project(config.Zone, worst, r.Latency), sizing.Project(config.Zone, best, r.Latency)
		lone := sizing.Project(config.Lone, worst, r.Latency)
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %d (%d) | %d | %.0f | %.1f |\n", r.Name, lone.P99.Round(10*time.Millisecond), pw.Service.Round(time.Millisecond),
			pw.P99.Round(10*time.Millisecond), pb.P99.Round(10*time.Millisecond), pw.Drain.Round(10*time.Millisecond),
			pb.PeakConcurrency, r.Router.ConcurrencyLimit(), pw.Invocations, pb.DescribeRate, pw.LambdaSeconds*float64(r.MemoryMB)/1024)
	}
	return b.String()
}
