package harness

import (
	"context"
	"fmt"
	"maps"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/sqsemu"
)

// Cost is what a number of interruption events cost in AWS requests, counted at the emulator, with the bus and
// with Karpenter's documented per-cluster setup (every cluster's rules match every event).
type Cost struct {
	Clusters, Events int
	// Requests by action; idle polling (receives that return nothing) is left out of both: every Karpenter
	// long-polls its queue the same way in either design.
	Bus, PerCluster map[string]int
	// EC2 DescribeInstances calls the bus made (cache misses).
	DescribeInstances int
}

// Total sums the requests of by.
func Total(by map[string]int) int {
	n := 0
	for _, v := range by {
		n += v
	}
	return n
}

// BusPerEvent and PerClusterPerEvent are the requests per event (SQS and EC2 for the bus).
func (c Cost) BusPerEvent() float64 {
	return float64(Total(c.Bus)+c.DescribeInstances) / float64(c.Events)
}

func (c Cost) PerClusterPerEvent() float64 { return float64(Total(c.PerCluster)) / float64(c.Events) }

// MeasureCost sends events spot warnings, for instances spread evenly over clusters, through both designs, in
// the steady state: the bus has routed one earlier event per cluster (its queue URLs are cached, the instances
// of the measured events are not), and every Karpenter has resolved its queue URL at start-up.
func MeasureCost(ctx context.Context, clusters, events, batchSize int) (Cost, error) {
	names := make([]string, clusters)
	for i := range names {
		names[i] = fmt.Sprintf("cluster-%03d", i)
	}
	bodies := make([]string, events)
	owners := map[string]string{}
	for i := range events {
		id := fmt.Sprintf("i-%017x", i+1)
		owners[id] = names[i%clusters]
		bodies[i] = SpotEvent(id)
	}
	cost := Cost{Clusters: clusters, Events: events}

	// The bus: EventBridge sends each event once to the central queue; the router forwards it to its owner;
	// the owning Karpenter receives and deletes it.
	b, err := New(ctx, Options{Clusters: names, BatchSize: batchSize})
	if err != nil {
		return cost, err
	}
	defer b.Close()
	for id, c := range owners {
		b.EC2.Put(id, map[string]string{"eks:eks-cluster-name": c})
	}
	var warmUp []string
	for i, c := range names {
		id := fmt.Sprintf("i-%017x", events+i+1)
		b.EC2.Put(id, map[string]string{"eks:eks-cluster-name": c})
		warmUp = append(warmUp, SpotEvent(id))
	}
	if err := b.Publish(ctx, warmUp...); err != nil {
		return cost, err
	}
	if _, err := b.Drain(ctx); err != nil {
		return cost, err
	}
	for _, c := range names {
		if _, err := b.Consume(ctx, QueueOf(c)); err != nil {
			return cost, err
		}
	}
	before, ec2Before := b.SQS.Snapshot(), b.EC2.Calls()
	if err := b.Publish(ctx, bodies...); err != nil {
		return cost, err
	}
	if _, err := b.Drain(ctx); err != nil {
		return cost, err
	}
	got := 0
	for _, c := range names {
		msgs, err := b.Consume(ctx, QueueOf(c))
		if err != nil {
			return cost, err
		}
		got += len(msgs)
	}
	if got != events {
		return cost, fmt.Errorf("the clusters received %d of %d events", got, events)
	}
	cost.Bus = diff(b.SQS.Snapshot(), before)
	cost.DescribeInstances = b.EC2.Calls() - ec2Before

	// Per-cluster rules: EventBridge sends every event to every cluster's queue; every Karpenter receives and
	// deletes all of them, its own and the others'.
	b.SQS.Reset()
	var urls []string
	for _, c := range names {
		u, err := b.SQS.CreateQueue(ctx, "pc-"+c, nil)
		if err != nil {
			return cost, err
		}
		urls = append(urls, u)
		b.urls["pc-"+c] = u // Karpenter resolved it at start-up
	}
	before = b.SQS.Snapshot()
	client := b.SQS.Client()
	for _, body := range bodies {
		for _, u := range urls {
			if _, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &u, MessageBody: &body}); err != nil {
				return cost, fmt.Errorf("per-cluster fan-out: %w", err)
			}
		}
	}
	for _, c := range names {
		if _, err := b.Consume(ctx, "pc-"+c); err != nil {
			return cost, err
		}
	}
	cost.PerCluster = diff(b.SQS.Snapshot(), before)
	return cost, nil
}

// diff returns after - before by action, leaving out the harness's own bookkeeping calls and idle polling.
func diff(after, before map[string]int) map[string]int {
	out := maps.Clone(after)
	for k, v := range before {
		out[k] -= v
	}
	for _, k := range []string{"CreateQueue", "GetQueueAttributes", sqsemu.EmptyReceive} {
		delete(out, k)
	}
	for k, v := range out {
		if v == 0 {
			delete(out, k)
		}
	}
	return out
}

// SpotEvent is a spot interruption warning for instance id.
func SpotEvent(id string) string {
	return `{"version":"0","id":"ev-` + id + `","detail-type":"EC2 Spot Instance Interruption Warning","source":"aws.ec2",` +
		`"account":"` + sqsemu.Account + `","time":"2026-11-21T12:00:00Z","region":"` + sqsemu.Region +
		`","resources":["arn:aws:ec2:` + sqsemu.Region + `:` + sqsemu.Account + `:instance/` + id + `"],` +
		`"detail":{"instance-id":"` + id + `","instance-action":"terminate"}}`
}

// HeartbeatCost is what the heartbeat's canaries cost in AWS requests, counted at the emulator and the
// EventBridge stub.
type HeartbeatCost struct {
	Canaries int
	// PutEvents calls (one per canary, as each schedule puts one), and SQS requests by action (idle polling
	// left out, as in Cost).
	PutEvents int
	SQS       map[string]int
}

// SQSPerCanary is the SQS requests per canary.
func (c HeartbeatCost) SQSPerCanary() float64 { return float64(Total(c.SQS)) / float64(c.Canaries) }

// MeasureHeartbeat puts beats canaries for each of clusters through the whole path, in the worst case for cost:
// each canary alone in its router invocation and in its Karpenter's receive (schedules fire at unrelated
// times). The steady state: every queue URL is already resolved.
func MeasureHeartbeat(ctx context.Context, clusters, beats int, put func(ctx context.Context, cluster string) error, b *Bus) (HeartbeatCost, error) {
	names := make([]string, clusters)
	for i := range names {
		names[i] = fmt.Sprintf("cluster-%03d", i)
	}
	cost := HeartbeatCost{Canaries: clusters * beats}
	beat := func() error {
		for _, c := range names {
			if err := put(ctx, c); err != nil {
				return err
			}
			cost.PutEvents++
			if _, err := b.Drain(ctx); err != nil {
				return err
			}
			msgs, err := b.Consume(ctx, QueueOf(c))
			if err != nil {
				return err
			}
			if len(msgs) != 1 {
				return fmt.Errorf("cluster %s received %d canaries, want 1", c, len(msgs))
			}
		}
		return nil
	}
	if err := beat(); err != nil { // warm-up: queue URLs resolved
		return cost, err
	}
	cost.PutEvents = 0
	before := b.SQS.Snapshot()
	for range beats {
		if err := beat(); err != nil {
			return cost, err
		}
	}
	cost.SQS = diff(b.SQS.Snapshot(), before)
	return cost, nil
}
