package judge

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sizing"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/lambdaesm"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/sqsemu"
)

// Latency is what each stub adds to every call, standing in for the round trip to the real service.
type Latency struct{ SQS, EC2, STS time.Duration }

// sqsActions are the SQS calls the storm makes, each slowed by Latency.SQS.
var sqsActions = []string{"SendMessage", "SendMessageBatch", "ReceiveMessage", "DeleteMessage", "DeleteMessageBatch",
	"ChangeMessageVisibility", "ChangeMessageVisibilityBatch", "GetQueueUrl"}

// StormSpec shapes a storm.
type StormSpec struct {
	Clusters int // spread over Accounts accounts, the first the bus's (the rest members, behind STS)
	Accounts int
	Events   int // one per instance: each cluster gets Events/Clusters
	// The event source mapping: batch size, batching window and concurrent invocations (router processes).
	BatchSize   int
	Window      time.Duration
	Concurrency int
	Latency     Latency
	Router      string // the router bootstrap
	// Trickle, in bus mode, is a steady stream of that many events from one more member account, TrickleClusters
	// clusters of its own, one every TrickleEvery while the burst is published and drained: what one account's
	// storm does to another account's events.
	Trickle         int
	TrickleClusters int
	TrickleEvery    time.Duration
	// Timeout bounds each mode.
	Timeout time.Duration
}

// The modes of a storm: the bus (one set of rules, the router) and Karpenter's own setup, where every
// cluster's rules send every event to every cluster's queue.
const (
	ModeBus        = "bus"
	ModePerCluster = "per-cluster rules"
)

// Sample is one event of a storm: when its NodeClaim was deleted (since the storm began), and how long that took
// from the event reaching the queue EventBridge puts it on.
type Sample struct{ Done, Latency time.Duration }

// StormResult is one mode's storm.
type StormResult struct {
	Mode   string
	Events int
	// Acted: NodeClaims deleted by their own cluster's controller. Lost: events whose NodeClaim never was.
	// Misrouted: events a controller other than the owner's received (it looked the instance up and found nothing).
	Acted, Lost, Misrouted int
	P50, P99, Max          time.Duration
	// Drain is from the first event's arrival to the last NodeClaim's deletion.
	Drain time.Duration
	// Requests are the AWS requests the storm cost, by service and action (idle receives of empty queues and
	// this measurement's own reads left out); Left is what the queues still held at the end.
	Requests map[string]int
	Left     map[string]int
	// RouterPeakRSS is the most memory one router process used (bytes); 0 without a router.
	RouterPeakRSS int64
	// Invocations is how many the router served, and Invocation their median and slowest duration.
	Invocations                  int
	InvocationP50, InvocationMax time.Duration
	Samples                      []Sample
	Errors                       []string // the first controller and poller errors, if any
	// Accounts are the events' latencies by the account they came from, the trickle's last.
	Accounts []AccountResult
}

// AccountResult is one account's share of a storm.
type AccountResult struct {
	Account string
	Trickle bool // the steady stream of another account, not the burst
	Events  int
	P50     time.Duration
	P99     time.Duration
}

// TrickleAccount is the account of the trickle's clusters.
const TrickleAccount = "300000000001"

// RequestsPerEvent is Requests' total over Events.
func (r StormResult) RequestsPerEvent() float64 {
	total := 0
	for _, n := range r.Requests {
		total += n
	}
	return float64(total) / float64(r.Events)
}

// observer records what the controllers did, through their Kubernetes clients.
type observer struct {
	mu        sync.Mutex
	deleted   map[string]time.Time // NodeClaim name -> first delete
	misrouted int
	errors    []string
	// invocations are the router's invocations' durations.
	invocations []time.Duration
}

func (o *observer) errorf(format string, args ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.errors) < 5 {
		o.errors = append(o.errors, fmt.Sprintf(format, args...))
	}
}

// Storm runs spec in mode, Karpenter's controllers built by build.
func Storm(ctx context.Context, spec StormSpec, mode string, build Build) (StormResult, error) {
	ctx, cancel := context.WithTimeout(ctx, spec.Timeout)
	defer cancel()
	obs := &observer{deleted: map[string]time.Time{}}
	fs := Spec{Instances: (spec.Events + spec.Clusters - 1) / spec.Clusters, BatchSize: spec.BatchSize, Members: map[string][]string{}}
	if mode == ModeBus {
		fs.Router, fs.Environments = spec.Router, spec.Concurrency
	}
	trickle := mode == ModeBus && spec.Trickle > 0
	if trickle {
		for i := range max(spec.TrickleClusters, 1) {
			fs.Members[TrickleAccount] = append(fs.Members[TrickleAccount], fmt.Sprintf("t%03d", i))
		}
	}
	for i := range spec.Clusters {
		name := fmt.Sprintf("c%03d", i)
		if a := i % spec.Accounts; a == 0 {
			fs.Hub = append(fs.Hub, name)
		} else {
			m := fmt.Sprintf("2000000000%02d", a)
			fs.Members[m] = append(fs.Members[m], name)
		}
	}
	f, err := NewFleet(ctx, fs, func(c *Cluster) (Controller, error) {
		c.Kube = observed(c, obs)
		return build(c)
	})
	if err != nil {
		return StormResult{}, err
	}
	defer f.Close()
	b := f.Bus
	for _, action := range sqsActions {
		b.SQS.SetLatency(action, spec.Latency.SQS)
	}
	defer func() {
		for _, action := range sqsActions {
			b.SQS.SetLatency(action, 0)
		}
	}()
	b.EC2.SetLatency(spec.Latency.EC2)
	if b.STS != nil {
		b.STS.SetLatency(spec.Latency.STS)
	}

	// The events: one per instance, kinds that make Karpenter delete the NodeClaim, in an order that mixes clusters.
	type event struct {
		body  string
		in    Instance
		owner *Cluster
	}
	var evs, trickled []event
	var trickleClusters []*Cluster
	for _, c := range f.Clusters {
		if c.Account == TrickleAccount {
			trickleClusters = append(trickleClusters, c)
			continue
		}
		for j, in := range c.Instances {
			var body string
			switch j % 4 {
			case 0, 1:
				body = SpotWarning(in.ID, c.Account)
			case 2:
				body = StateChange("stopping")(in.ID, c.Account)
			default:
				body = ScheduledChange(c.Account, in.ID)
			}
			evs = append(evs, event{body, in, c})
		}
	}
	evs = evs[:min(len(evs), spec.Events)]
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i] })
	if trickle {
		// Round robin over the trickle's clusters, Trickle events in all; they follow the burst in evs, and are sent
		// one at a time, apart.
		for j := 0; len(trickled) < spec.Trickle; j++ {
			n := len(trickled)
			for _, c := range trickleClusters {
				if j < len(c.Instances) && len(trickled) < spec.Trickle {
					trickled = append(trickled, event{SpotWarning(c.Instances[j].ID, c.Account), c.Instances[j], c})
				}
			}
			if len(trickled) == n {
				break // fewer instances than Trickle
			}
		}
	}
	burst := len(evs)
	evs = append(evs, trickled...)

	run, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for _, c := range f.Clusters {
		wg.Go(func() {
			for run.Err() == nil {
				if err := c.Controller.Reconcile(run); err != nil && run.Err() == nil {
					obs.errorf("controller of %s: %v", c.Name, err)
				}
			}
		})
	}
	if mode == ModeBus {
		for _, env := range b.Environments[:min(spec.Concurrency, len(b.Environments))] {
			h := env.Handler
			timed := func(ctx context.Context, batch events.SQSEvent) (events.SQSEventResponse, error) {
				t0 := time.Now()
				resp, err := h(ctx, batch)
				obs.mu.Lock()
				obs.invocations = append(obs.invocations, time.Since(t0))
				obs.mu.Unlock()
				return resp, err
			}
			m := lambdaesm.Mapping{SQS: b.SQS.Client(), QueueURL: b.Central, BatchSize: spec.BatchSize, Handler: timed}
			wg.Go(func() {
				for run.Err() == nil {
					r, err := m.PollWindow(run, spec.Window)
					if err != nil && run.Err() == nil {
						obs.errorf("poller: %v", err)
					}
					if r.Received == 0 {
						select {
						case <-run.Done():
						case <-time.After(20 * time.Millisecond):
						}
					}
				}
			})
		}
	}
	before := b.SQS.Snapshot()
	ec2Before := b.EC2.Calls()

	// EventBridge delivers each event to its rules' targets: the central queue, or every cluster's queue.
	targets := map[string]*sqs.Client{b.Central: b.SQS.Client()}
	urls := map[*Cluster]string{}
	if mode == ModePerCluster {
		targets = map[string]*sqs.Client{}
		for _, c := range f.Clusters {
			u, err := c.URL(ctx)
			if err != nil {
				return StormResult{}, err
			}
			urls[c] = u
			targets[u] = b.SQS.ClientIn(c.Account)
		}
	}
	start := time.Now()
	sent := make([]time.Time, len(evs))
	var sendErr error
	var sendMu sync.Mutex
	// Each job is one batch of ten events to one target, the batches in order, each to every target before the
	// next: the fan-out EventBridge does (one target per rule in Karpenter's own setup, as many rules as clusters).
	type job struct {
		from, to int
		url      string
	}
	jobs := make(chan job)
	var senders sync.WaitGroup
	for range 32 {
		senders.Go(func() {
			for j := range jobs {
				entries := make([]types.SendMessageBatchRequestEntry, 0, 10)
				for i := j.from; i < j.to; i++ {
					entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(i)), MessageBody: aws.String(evs[i].body)})
				}
				_, err := targets[j.url].SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(j.url), Entries: entries})
				now := time.Now()
				sendMu.Lock()
				if err != nil && sendErr == nil {
					sendErr = err
				}
				for i := j.from; i < j.to; i++ {
					if mode == ModeBus || urls[evs[i].owner] == j.url {
						sent[i] = now
					}
				}
				sendMu.Unlock()
			}
		})
	}
	// The trickle: one event at a time, every TrickleEvery from the burst's start, as another account's instances
	// keep being interrupted while the burst waits.
	var trickling sync.WaitGroup
	trickling.Go(func() {
		for i := burst; i < len(evs) && ctx.Err() == nil; i++ {
			select {
			case <-ctx.Done():
			case <-time.After(time.Until(start.Add(time.Duration(i-burst) * spec.TrickleEvery))):
			}
			_, err := b.SQS.Client().SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(b.Central), MessageBody: aws.String(evs[i].body)})
			now := time.Now()
			sendMu.Lock()
			if err != nil && sendErr == nil {
				sendErr = err
			}
			sent[i] = now
			sendMu.Unlock()
		}
	})
	order := slices.Sorted(maps.Keys(targets))
	for i := 0; i < burst; i += 10 {
		for _, u := range order {
			jobs <- job{i, min(i+10, burst), u}
		}
	}
	close(jobs)
	senders.Wait()
	trickling.Wait()
	if sendErr != nil {
		return StormResult{}, fmt.Errorf("publishing: %w", sendErr)
	}

	// Wait for every NodeClaim, or the timeout.
	for ctx.Err() == nil {
		obs.mu.Lock()
		n := len(obs.deleted)
		obs.mu.Unlock()
		if n >= len(evs) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Let the last deletes of messages land before counting what is left.
	settle := time.Now().Add(30 * time.Second)
	var left map[string]int
	for {
		if left, err = f.Left(context.Background()); err != nil || len(left) == 0 || time.Now().After(settle) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	res := StormResult{Mode: mode, Events: len(evs), Left: left, Requests: map[string]int{}}
	for _, env := range b.Environments {
		rss, err := env.PeakRSS()
		if err == nil {
			res.RouterPeakRSS = max(res.RouterPeakRSS, rss)
		}
	}
	stop()
	wg.Wait()

	for action, n := range b.SQS.Snapshot() {
		if d := n - before[action]; d > 0 && action != sqsemu.EmptyReceive && action != "GetQueueAttributes" && action != "GetQueueUrl" {
			res.Requests["SQS "+action] = d
		}
	}
	if n := b.EC2.Calls() - ec2Before; n > 0 {
		res.Requests["EC2 DescribeInstances"] = n
	}
	if b.STS != nil {
		for _, role := range b.Settings.MemberReaderRoles {
			res.Requests["STS AssumeRole"] += b.STS.Calls(role)
		}
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	res.Misrouted, res.Errors = obs.misrouted, obs.errors
	if inv := slices.Sorted(slices.Values(obs.invocations)); len(inv) > 0 {
		res.Invocations, res.InvocationP50, res.InvocationMax = len(inv), inv[len(inv)/2], inv[len(inv)-1]
	}
	var lat []time.Duration
	var last time.Time
	byAccount := map[string][]time.Duration{}
	for i, e := range evs {
		at, ok := obs.deleted["nc-"+e.in.ID]
		if !ok {
			res.Lost++
			continue
		}
		res.Acted++
		l := at.Sub(sent[i])
		lat = append(lat, l)
		byAccount[e.owner.Account] = append(byAccount[e.owner.Account], l)
		res.Samples = append(res.Samples, Sample{Done: at.Sub(start), Latency: l})
		if at.After(last) {
			last = at
		}
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		res.P50, res.P99, res.Max = lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1]
		res.Drain = last.Sub(start)
	}
	for _, a := range slices.Sorted(maps.Keys(byAccount)) {
		l := slices.Sorted(slices.Values(byAccount[a]))
		res.Accounts = append(res.Accounts, AccountResult{Account: a, Trickle: a == TrickleAccount, Events: len(l), P50: l[len(l)/2], P99: l[len(l)*99/100]})
	}
	// The trickle's account last.
	slices.SortStableFunc(res.Accounts, func(x, y AccountResult) int {
		switch {
		case x.Trickle == y.Trickle:
			return 0
		case x.Trickle:
			return 1
		}
		return -1
	})
	return res, nil
}

// AccountTable is each account's events and latency, for the bus's runs.
func AccountTable(results []StormResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| mode | events | account | of | events | p50 | p99 |\n|---|---:|---|---|---:|---:|---:|\n")
	for _, r := range results {
		for _, a := range r.Accounts {
			of := "the burst"
			if a.Trickle {
				of = "a trickle beside it"
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %d | %s | %s |\n", r.Mode, r.Events, a.Account, of, a.Events, round(a.P50), round(a.P99))
		}
	}
	return b.String()
}

// observed wraps c's Kubernetes client: it records each NodeClaim's first deletion, and counts the lookups of
// instances that are not c's (an event that reached the wrong Karpenter).
func observed(c *Cluster, obs *observer) client.Client {
	mine := map[string]bool{}
	for _, in := range c.Instances {
		mine[in.ID] = true
	}
	return interceptorClient(c.Kube, func(name string) {
		obs.mu.Lock()
		defer obs.mu.Unlock()
		if _, ok := obs.deleted[name]; !ok {
			obs.deleted[name] = time.Now()
		}
	}, func(field, value string) {
		if field == "status.instanceID" && !mine[value] {
			obs.mu.Lock()
			obs.misrouted++
			obs.mu.Unlock()
		}
	})
}

// Table is the storm's results as a Markdown table, one row per mode.
func Table(spec StormSpec, results []StormResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| mode | events | acted | lost | misrouted | p50 | p99 | max | drain | requests per event | router peak memory |\n")
	fmt.Fprintf(&b, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		mem := "–"
		if r.RouterPeakRSS > 0 {
			mem = fmt.Sprintf("%.0f MiB", float64(r.RouterPeakRSS)/(1<<20))
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %s | %s | %s | %s | %.1f | %s |\n", r.Mode, r.Events, r.Acted, r.Lost, r.Misrouted,
			round(r.P50), round(r.P99), round(r.Max), round(r.Drain), r.RequestsPerEvent(), mem)
	}
	return b.String()
}

func round(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

// Breakdown is each mode's requests by service and action.
func Breakdown(results []StormResult) string {
	var b strings.Builder
	for _, r := range results {
		fmt.Fprintf(&b, "%s, %d events:", r.Mode, r.Events)
		if r.Invocations > 0 {
			fmt.Fprintf(&b, " %d router invocations (median %s, slowest %s);", r.Invocations, round(r.InvocationP50), round(r.InvocationMax))
		}
		for _, k := range slices.Sorted(maps.Keys(r.Requests)) {
			fmt.Fprintf(&b, " %s %d,", k, r.Requests[k])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Projection is the model's (router/sizing) view of the storm's burst beside what the storm measured: in the
// storm's terms (its routers all running from the start, each invocation the time the storm measured), which
// checks the model against the run; and in Lambda's terms (standard mode's ramp up to lambdaConcurrency, each
// invocation its own CPU), which is what the burst would take in AWS.
func Projection(spec StormSpec, measured StormResult, lambdaConcurrency int) string {
	storm := sizing.Storm{Events: spec.Events, Clusters: spec.Clusters, Accounts: spec.Accounts}
	lat := sizing.Latency{SQS: spec.Latency.SQS, EC2: spec.Latency.EC2, Invoke: sizing.DefaultLatency.Invoke}
	base := sizing.Mapping{BatchSize: spec.BatchSize, Window: spec.Window, SendConcurrency: contract.DefaultSettings.SendConcurrency}
	here := base
	here.MinimumPollers, here.MaximumPollers, here.Service = spec.Concurrency, spec.Concurrency, measured.InvocationP50
	aws := base
	aws.MaximumConcurrency, aws.CPUPerEvent = lambdaConcurrency, sizing.LambdaCPU(sizing.MeasuredCPUPerEvent, 256)
	var b strings.Builder
	fmt.Fprintf(&b, "The model (router/sizing) of the burst, %d events:\n\n", spec.Events)
	quiet := "–"
	for _, a := range measured.Accounts {
		if a.Trickle {
			quiet = round(a.P99) + " (no fair queue in goaws)"
		}
	}
	fmt.Fprintf(&b, "| | invocation | p50 | p99 | drain | another account's event, p99 |\n|---|---:|---:|---:|---:|---:|\n")
	fmt.Fprintf(&b, "| measured here | %s (median) | %s | %s | %s | %s |\n", round(measured.InvocationP50), round(measured.P50), round(measured.P99), round(measured.Drain), quiet)
	for _, row := range []struct {
		name string
		m    sizing.Mapping
	}{
		{fmt.Sprintf("model, as here: %d routers from the start, the measured invocation", spec.Concurrency), here},
		{fmt.Sprintf("model, in Lambda: maximumConcurrency %d, each invocation its own CPU", lambdaConcurrency), aws},
	} {
		p := sizing.Project(storm, row.m, lat)
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s (fair queue) |\n", row.name, round(p.Service), round(p.P50), round(p.P99), round(p.Drain), round(p.Quiet))
	}
	return b.String()
}
