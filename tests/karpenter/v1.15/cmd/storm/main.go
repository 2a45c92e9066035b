// Command storm sends a storm of interruption events through the bus to Karpenter's own interruption controllers
// (the default version's, one per cluster), and the same storm through Karpenter's own per-cluster setup (every
// cluster's rules deliver every event to every cluster's queue), and reports, for each, the time from an event
// reaching its queue to its NodeClaim's deletion, the drain time, the AWS requests per event and the router's
// memory (make storm; docs/performance.md, "The storm").
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/harness"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/karpenter/judge"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/karpenter/v1.15/interruption"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "storm:", err)
		os.Exit(1)
	}
}

func run() error {
	spec := judge.StormSpec{}
	flag.IntVar(&spec.Clusters, "clusters", 200, "clusters, one Karpenter controller each")
	flag.IntVar(&spec.Accounts, "accounts", 5, "accounts the clusters are spread over (the first the bus's, the rest members)")
	flag.IntVar(&spec.Events, "events", 10000, "interruption events, one per instance")
	flag.IntVar(&spec.BatchSize, "batch", 100, "the event source mapping's batch size")
	flag.DurationVar(&spec.Window, "window", time.Second, "the event source mapping's batching window")
	flag.IntVar(&spec.Concurrency, "concurrency", 5, "concurrent invocations (router processes)")
	// AWS publishes no latency figures for these calls; these are assumed in-region round trips, from a client
	// in the same region: SQS's a few tens of milliseconds, EC2's DescribeInstances (a control-plane call
	// filtering instances) and STS's AssumeRole (which signs and issues credentials) more.
	flag.DurationVar(&spec.Latency.SQS, "sqs-latency", 20*time.Millisecond, "added to every SQS call")
	flag.DurationVar(&spec.Latency.EC2, "ec2-latency", 150*time.Millisecond, "added to every EC2 DescribeInstances call")
	flag.DurationVar(&spec.Latency.STS, "sts-latency", 100*time.Millisecond, "added to every STS AssumeRole call")
	flag.DurationVar(&spec.Timeout, "timeout", 20*time.Minute, "the longest a mode may take")
	baseline := flag.Int("baseline-events", 1000, "also run the storm's first this many events through per-cluster rules, "+
		"and through the bus for a like-for-like row (0: neither)")
	flag.IntVar(&spec.Trickle, "trickle", 100, "events of one more account, sent one at a time during the burst (bus only; 0: none)")
	flag.IntVar(&spec.TrickleClusters, "trickle-clusters", 5, "that account's clusters")
	flag.DurationVar(&spec.TrickleEvery, "trickle-every", 300*time.Millisecond, "the time between two of its events")
	lambdaConcurrency := flag.Int("lambda-concurrency", 20, "the model's projection in Lambda's terms: router.maximumConcurrency (infra/config's default)")
	svg := flag.String("svg", "", "write the latency plot here (SVG)")
	flag.Parse()

	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "storm")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	if spec.Router, err = harness.BuildRouter(filepath.Join(root, "router"), dir); err != nil {
		return err
	}
	// Per-cluster rules deliver every event to every cluster's queue: Events × Clusters messages, each received
	// and deleted by a Karpenter. goaws scans a queue's messages under one lock for every receive and delete, so
	// its cost grows with each queue's depth: the baseline runs a prefix of the storm (docs/performance.md, "The storm").
	type run struct {
		mode   string
		events int
	}
	runs := []run{{judge.ModeBus, spec.Events}}
	if *baseline > 0 {
		runs = append(runs, run{judge.ModeBus, *baseline}, run{judge.ModePerCluster, *baseline})
	}
	var results []judge.StormResult
	for i, r := range runs {
		s := spec
		s.Events = r.events
		if i > 0 {
			s.Trickle = 0 // the like-for-like rows are the burst alone
		}
		fmt.Fprintf(os.Stderr, "storm: %s: %d events over %d clusters...\n", r.mode, s.Events, s.Clusters)
		res, err := judge.Storm(context.Background(), s, r.mode, interruption.Build)
		if err != nil {
			return fmt.Errorf("%s: %w", r.mode, err)
		}
		for _, e := range res.Errors {
			fmt.Fprintf(os.Stderr, "storm: %s: %s\n", r.mode, e)
		}
		results = append(results, res)
	}
	fmt.Printf("%d events over %d clusters in %d accounts; event source mapping: batch %d, window %s, concurrency %d; "+
		"latency added: SQS %s, EC2 %s, STS %s\n\n", spec.Events, spec.Clusters, spec.Accounts, spec.BatchSize, spec.Window,
		spec.Concurrency, spec.Latency.SQS, spec.Latency.EC2, spec.Latency.STS)
	fmt.Print(judge.Table(spec, results))
	if spec.Trickle > 0 {
		fmt.Printf("\nBy account (the trickle: %d events of account %s, one every %s):\n\n%s", spec.Trickle, judge.TrickleAccount, spec.TrickleEvery, judge.AccountTable(results[:1]))
	}
	fmt.Printf("\n%s", judge.Breakdown(results))
	fmt.Printf("\n%s", judge.Projection(spec, results[0], *lambdaConcurrency))
	for _, r := range results {
		if len(r.Left) > 0 {
			fmt.Printf("%s: left in queues: %v\n", r.Mode, r.Left)
		}
	}
	if *svg != "" {
		title := fmt.Sprintf("Interruption events over %d clusters: event to NodeClaim deletion", spec.Clusters)
		if err := os.WriteFile(*svg, []byte(judge.SVG(title, results)), 0o644); err != nil {
			return err
		}
	}
	for _, r := range results {
		if r.Lost > 0 || r.Mode == judge.ModeBus && r.Misrouted > 0 || len(r.Left) > 0 {
			return fmt.Errorf("%s: %d lost, %d misrouted, %d queues not empty", r.Mode, r.Lost, r.Misrouted, len(r.Left))
		}
	}
	return nil
}
