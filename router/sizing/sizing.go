// Package sizing projects how long a burst of interruption events takes to reach every Karpenter through the bus
// in Lambda's terms, each invocation with its own CPU, from the event source mapping's settings and the router's
// measured service time. It is the model of docs/performance.md ("Sizing for a zone"); the storm prints its
// projection beside what it measured, and infra/config's defaults are checked against it.
//
// What it takes from AWS's documentation, each an assumption where AWS gives no figure:
//   - standard mode: "Lambda starts processing five batches at a time with five concurrent invocations", then adds
//     "up to 300 more instances per minute", up to maximumConcurrency and to the mapping's most, 1,250 ("Configuring
//     scaling behavior for SQS event source mappings", https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html);
//   - a batching window: "If you're using a batch window and your SQS queue contains very low traffic, Lambda might
//     wait for up to 20 seconds before invoking your function" ("Using Lambda with Amazon SQS",
//     https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html): a partial batch waits out the window at best, 20 s
//     at worst; with no window, a batch of at most 10 is invoked at once;
//   - the router's drain (contract.Settings.Drain, router/internal/drain): an invocation whose batch was full receives
//     chunks of contract.DrainChunk itself, ten ReceiveMessage calls at a time, routes each as a batch and deletes it,
//     ten DeleteMessageBatch calls at a time, for as long as the queue gives some, up to Drain messages;
//   - provisioned mode: the minimum pollers are ready before the burst, then it scales by "up to 1,000 concurrency
//     per minute" up to the maximum pollers, and "each event poller … up to 10 concurrent invocations" (same page);
//   - "up to" is a ceiling, not a promise, and AWS gives no per-second step: Best is the most AWS's words allow (the
//     ramp at its full rate, 5 more invocations a second in standard mode, 1,000 more a minute in provisioned
//     mode), Worst the least they promise (no scale-up during the burst: 5
//     invocations in standard mode, one per minimum poller in provisioned mode). The defaults are sized on Worst;
//     the ceiling on the function's concurrency (Ceiling) on Best;
//   - a poller fills a batch of B from a backlog in ceil(B/10) ReceiveMessage round trips (10 messages a call);
//   - the router looks each account's instances up in DescribeInstances calls of contract.MaxIDsPerDescribe ids, one after
//     another in an account, the accounts at once (sendConcurrency at a time), then sends to the queues,
//     sendConcurrency calls in flight, each queue's events in calls of 10 (router/internal/route); the event is at
//     its Karpenter one SQS round trip after its send, Karpenter long-polling its queue.
package sizing

import (
	"math"
	"slices"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// Latency is the round trip of each AWS call the path makes.
type Latency struct {
	SQS, EC2 time.Duration
	// Invoke is Lambda's own time to start an invocation of a warm execution environment.
	Invoke time.Duration
}

// DefaultLatency is the storm's assumption of in-region round trips (make storm's flags): AWS publishes no
// latency figures for these calls.
var DefaultLatency = Latency{SQS: 20 * time.Millisecond, EC2: 150 * time.Millisecond, Invoke: 20 * time.Millisecond}

// Invocation is one batch as the router sees it.
type Invocation struct {
	Events, Queues, Accounts int
	// SendConcurrency is the router's SEND_CONCURRENCY: calls in flight, sends and lookups alike.
	SendConcurrency int
}

// rounds is how many waves of n calls at most c at a time make.
func rounds(n, c int) int {
	if n <= 0 {
		return 0
	}
	return (n + max(c, 1) - 1) / max(c, 1)
}

// ServiceTime is one invocation's time: the accounts' lookups, then the sends, plus cpu.
func ServiceTime(v Invocation, lat Latency, cpu time.Duration) time.Duration {
	perQueue := (v.Events + max(v.Queues, 1) - 1) / max(v.Queues, 1)
	calls := v.Queues * rounds(perQueue, 10)
	return time.Duration(rounds(v.Accounts, v.SendConcurrency)*v.DescribeCalls())*lat.EC2 + time.Duration(rounds(calls, v.SendConcurrency))*lat.SQS + cpu
}

// DescribeCalls is how many DescribeInstances calls the invocation makes in each account, one after another: its
// events spread evenly over its accounts, contract.MaxIDsPerDescribe instances a call.
func (v Invocation) DescribeCalls() int {
	return rounds(rounds(v.Events, max(v.Accounts, 1)), contract.MaxIDsPerDescribe)
}

// DistinctQueues is the expected number of distinct clusters among n events, each about a cluster drawn
// uniformly from c.
func DistinctQueues(n, c int) int {
	if c <= 0 || n <= 0 {
		return 0
	}
	return int(math.Round(float64(c) * (1 - math.Pow(1-1/float64(c), float64(n)))))
}

// Case is which of AWS's words the projection takes: the most they allow, or the least they promise.
type Case uint8

const (
	// Best ramps at the full rate AWS's "up to" allows.
	Best Case = iota
	// Worst scales up not at all during the burst: what AWS promises.
	Worst
)

// StandardStart is how many invocations standard mode starts a burst with; StandardRamp the most it adds a second
// (300 a minute); ProvisionedRampPerMinute the most invocations provisioned mode adds a minute ("up to 1,000
// concurrency per minute"); PollerInvocations the most invocations one poller runs at once.
const (
	StandardStart            = 5
	StandardRamp             = 5
	StandardMost             = 1250
	ProvisionedRampPerMinute = 1000
	PollerInvocations        = 10
)

// LowTrafficWait is the most a partial batch waits with a batching window, whatever the window: AWS's "up to 20
// seconds".
const LowTrafficWait = 20 * time.Second

// DrainReceivers are the ReceiveMessage (and DeleteMessageBatch) calls a drain makes at once.
const DrainReceivers = 10

// Mapping is the event source mapping and the router's settings.
type Mapping struct {
	// Case is the ramp the projection assumes (Best unless set).
	Case      Case
	BatchSize int
	Window    time.Duration
	// MaximumConcurrency bounds standard mode; ignored when MinimumPollers is set.
	MaximumConcurrency int
	// Reserved, when set, is the function's reserved concurrency: no more invocations run at once, whatever the
	// mapping would.
	Reserved int
	// MinimumPollers and MaximumPollers, when MinimumPollers > 0, are provisioned mode's.
	MinimumPollers, MaximumPollers int
	// Drain is the most messages an invocation whose batch was full (contract.MaxReceive) takes from the queue
	// itself, in chunks of contract.DrainChunk; 0 none.
	Drain           int
	SendConcurrency int
	// CPUPerEvent is the router's CPU per event at the function's memory size.
	CPUPerEvent time.Duration
	// Service, when set, is one invocation's time as measured (the storm's), instead of ServiceTime's count.
	Service time.Duration
}

// Storm is a burst of events, all in the central queue at once, about instances of clusters spread evenly over
// accounts.
type Storm struct {
	Events, Clusters, Accounts int
}

// Projection is what the model says of a storm.
type Projection struct {
	// Drain is when the last event is at its Karpenter; P50 and P99 are over the events.
	Drain, P50, P99 time.Duration
	// Service is one invocation's time, Invocations how many the storm takes, PeakConcurrency the most at once.
	Service         time.Duration
	Invocations     int
	PeakConcurrency int
	// DescribeRate is the most DescribeInstances calls the router makes in one account in any one second (each
	// invocation's calls in each account its batch names, counted in the second they start): EC2 refills
	// DescribeInstances's bucket 20 tokens a second per account and region, from 100, shared with every other
	// caller of DescribeInstances there, Karpenter among them.
	DescribeRate float64
	// LambdaSeconds is the invocations' total duration (billed, times the memory size).
	LambdaSeconds float64
	// Quiet is the most an event of another account waits during the burst, the central queue being fair between
	// accounts: SQS hands it to the next invocation that starts, rather than after the burst's backlog, so it waits
	// at most for one invocation to end and then its own.
	Quiet time.Duration
}

// concurrency is how many invocations the mapping runs t after the burst began.
func (m Mapping) concurrency(t time.Duration) int {
	if m.Reserved > 0 {
		return min(m.Reserved, m.mapping(t))
	}
	return m.mapping(t)
}

func (m Mapping) mapping(t time.Duration) int {
	switch {
	case m.MinimumPollers > 0 && m.Case == Worst:
		return m.MinimumPollers
	case m.MinimumPollers > 0:
		return min(m.MaximumPollers*PollerInvocations, m.MinimumPollers*PollerInvocations+int(t.Seconds()*ProvisionedRampPerMinute/60))
	case m.Case == Worst:
		return min(m.MaximumConcurrency, StandardStart)
	}
	return min(m.MaximumConcurrency, StandardMost, StandardStart+int(t.Seconds()*StandardRamp))
}

// Ceiling is the most invocations the mapping can run at once: its maximum concurrency, or its maximum pollers
// times the invocations each may run.
func (m Mapping) Ceiling() int {
	if m.MinimumPollers > 0 {
		return m.MaximumPollers * PollerInvocations
	}
	return min(m.MaximumConcurrency, StandardMost)
}

// Project runs the mapping over the storm: each free invocation slot takes the next batch; a slot opens when the
// mapping's concurrency allows it. An invocation whose batch was full then drains (Mapping.Drain): chunk after chunk,
// each received, routed and deleted before the next, until the queue is empty or it took Drain messages.
func Project(s Storm, m Mapping, lat Latency) Projection {
	batch := max(min(m.BatchSize, s.Events), 1)
	inv := Invocation{Events: batch, Queues: DistinctQueues(batch, s.Clusters), Accounts: min(s.Accounts, batch), SendConcurrency: m.SendConcurrency}
	svc := ServiceTime(inv, lat, time.Duration(batch)*m.CPUPerEvent)
	if m.Service > 0 {
		svc = m.Service
	}
	fill := time.Duration(rounds(batch, 10)) * lat.SQS
	if s.Events < m.BatchSize && m.Window > 0 { // a partial batch waits out the window, and up to 20 s in low traffic
		fill = max(fill, m.Window)
		if m.Case == Worst {
			fill = max(fill, LowTrafficWait)
		}
	}
	cycle := fill + lat.Invoke + svc
	var p Projection
	p.Service = svc
	var done []time.Duration // when each batch's events are at their Karpenters
	type slot struct {
		start    time.Duration
		end      time.Duration // when it frees, once it is not draining
		draining bool
		next     time.Duration // when a draining invocation takes its next chunk
		taken    int
	}
	var busy []*slot
	var billed time.Duration // the invocations' total duration
	left := s.Events
	const step = 10 * time.Millisecond
	calls := map[int]int{} // DescribeInstances calls of one account, by second
	for t := time.Duration(0); left > 0 || slices.ContainsFunc(busy, func(sl *slot) bool { return sl.draining }); t += step {
		for _, sl := range busy {
			if !sl.draining || sl.next > t {
				continue
			}
			c := min(contract.DrainChunk, m.Drain-sl.taken, left)
			receive := time.Duration(rounds(rounds(max(c, 1), contract.MaxReceive), DrainReceivers)) * lat.SQS
			if c <= 0 { // an empty round: the invocation ends
				sl.draining, sl.end = false, t+receive
				continue
			}
			left -= c
			sl.taken += c
			v := Invocation{Events: c, Queues: DistinctQueues(c, s.Clusters), Accounts: min(s.Accounts, c), SendConcurrency: m.SendConcurrency}
			routed := t + receive + ServiceTime(v, lat, time.Duration(c)*m.CPUPerEvent)
			for range c {
				done = append(done, routed+lat.SQS)
			}
			calls[int((t + receive).Seconds())] += v.DescribeCalls()
			sl.next = routed + time.Duration(rounds(rounds(c, contract.MaxReceive), DrainReceivers))*lat.SQS // the deletes
		}
		busy = slices.DeleteFunc(busy, func(sl *slot) bool {
			if !sl.draining && sl.end <= t {
				billed += sl.end - sl.start
				return true
			}
			return false
		})
		for len(busy) < m.concurrency(t) && left > 0 {
			n := min(batch, left)
			left -= n
			sl := &slot{start: t, end: t + cycle}
			if m.Drain > 0 && n == contract.MaxReceive {
				sl.draining, sl.next = true, t+cycle
			}
			busy = append(busy, sl)
			for range n {
				done = append(done, t+cycle+lat.SQS)
			}
			p.Invocations++
			calls[int((t + fill + lat.Invoke).Seconds())] += inv.DescribeCalls()
		}
		p.PeakConcurrency = max(p.PeakConcurrency, len(busy))
	}
	for _, sl := range busy {
		billed += sl.end - sl.start
	}
	slices.Sort(done)
	p.Drain = done[len(done)-1]
	p.P50 = done[(len(done)-1)/2]
	p.P99 = done[int(math.Ceil(0.99*float64(len(done))))-1]
	for _, n := range calls {
		p.DescribeRate = max(p.DescribeRate, float64(n))
	}
	p.LambdaSeconds = (billed - time.Duration(p.Invocations)*fill).Seconds() // billed from its start, not the batch's gathering
	p.Quiet = 2*cycle + lat.SQS
	return p
}

// MeasuredCPUPerEvent is the router's CPU per event of a storm's batch on one full core: the most of
// BenchmarkInvocation's cpu-ms/invocation over its shapes (6.1 ms for 100 events, make bench, docs/performance.md),
// rounded up.
const MeasuredCPUPerEvent = 65 * time.Microsecond

// OneVCPUMemoryMB is the memory size at which a function has the equivalent of one vCPU; Lambda allocates CPU in
// proportion to memory ("Configure Lambda function memory", https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html).
const OneVCPUMemoryMB = 1769

// LambdaCPU is perEvent, measured on one full core, at a function of memoryMB (below one vCPU, slower in
// proportion; above it, no faster: the router's work is not parallel enough to count on more).
func LambdaCPU(perEvent time.Duration, memoryMB int) time.Duration {
	if memoryMB >= OneVCPUMemoryMB {
		return perEvent
	}
	return perEvent * OneVCPUMemoryMB / time.Duration(max(memoryMB, 1))
}
