package route

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/accounts"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/forward"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/metrics"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/owner"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sizing"
)

// slowSQS is nullSQS with a round trip added to every call, as an in-region SQS endpoint would answer. It stands
// in for SQS's latency only: no quota, no throttling (a standard queue's API rate is nearly unlimited, docs/
// performance.md, "AWS quotas"), no failed entry.
type slowSQS struct {
	nullSQS
	rtt time.Duration
}

func (s *slowSQS) GetQueueUrl(ctx context.Context, in *sqs.GetQueueUrlInput, o ...func(*sqs.Options)) (*sqs.GetQueueUrlOutput, error) {
	time.Sleep(s.rtt)
	return s.nullSQS.GetQueueUrl(ctx, in, o...)
}

func (s *slowSQS) SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, o ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	time.Sleep(s.rtt)
	return s.nullSQS.SendMessageBatch(ctx, in, o...)
}

// invocation is one storm's shape for the benchmark: a batch of events about instances never seen before, over
// clusters spread evenly over accounts, each event's cluster drawn at random.
type invocation struct {
	clusters, accounts, sendConcurrency int
}

func (v invocation) account(c int) string { return fmt.Sprintf("%012d", 123456789012+c%v.accounts) }

// router is a warm router (queue URLs and member roles known, as after the first invocation of an execution
// environment), its EC2s answering every instance's owner after the latency, and a source of batches.
func (v invocation) router(lat sizing.Latency) (*Router, func() events.SQSEvent) {
	ec2s := map[string]*fakeEC2{}
	var mu sync.Mutex
	ownerOpts := owner.Options{CacheSize: 100_000, OwnerTTL: time.Hour, NoOwnerTTL: time.Minute}
	accountList := []string{}
	for c := range v.accounts {
		a := v.account(c)
		accountList = append(accountList, a)
		ec2s[a] = &fakeEC2{owners: map[string]string{}, before: func() { time.Sleep(lat.EC2) }}
	}
	hub := v.account(0)
	sqsAPI := &slowSQS{rtt: lat.SQS}
	r := New(
		accounts.New(owner.New(ec2s[hub], ownerOpts), accounts.Options{
			ReaderRole: func(a string) string {
				if a == hub {
					return ""
				}
				return a
			},
			NewResolver: func(role string) (accounts.Resolver, error) { return owner.New(ec2s[role], ownerOpts), nil },
		}),
		forward.New(sqsAPI, forward.Options{CacheSize: 10_000, URLTTL: time.Hour, MissingTTL: time.Hour}),
		Options{QueuePrefix: qprefix, Hub: hub, Accounts: accountList, SendConcurrency: v.sendConcurrency,
			Metrics: metrics.NewWriter(io.Discard, "NS", "bench"), Log: slog.New(slog.DiscardHandler)})
	rng := rand.New(rand.NewPCG(1, 2))
	next := 0
	batch := func() events.SQSEvent {
		var in events.SQSEvent
		mu.Lock()
		defer mu.Unlock()
		for i := range benchMessages {
			next++
			c := rng.IntN(v.clusters)
			id, a := instance(next), v.account(c)
			ec2s[a].mu.Lock()
			ec2s[a].owners[id] = fmt.Sprintf("cluster-%d", c)
			ec2s[a].mu.Unlock()
			in.Records = append(in.Records, events.SQSMessage{MessageId: fmt.Sprintf("m%d", i), Body: spotIn(a, id)})
		}
		return in
	}
	// The first invocation of an execution environment looks every queue's URL up; the storm's later ones,
	// benchmarked, do not. Warm every cluster's queue.
	for range 3 * v.clusters / benchMessages {
		_, _ = r.Handle(context.Background(), batch())
	}
	return r, batch
}

// BenchmarkInvocation is one invocation of the router on a storm's batch, 100 events about instances it has never
// seen, over clusters in accounts, against SQS and EC2 that answer after the storm's assumed round trips
// (sizing.DefaultLatency): wall time per invocation, split into the CPU it used and the time it waited on AWS
// (wall - CPU: one invocation at a time, so the CPU is this invocation's). These are the service times the
// model of docs/performance.md takes (make bench).
func BenchmarkInvocation(b *testing.B) {
	lat := sizing.DefaultLatency
	for _, v := range []invocation{
		{clusters: 5, accounts: 1, sendConcurrency: 8},
		{clusters: 200, accounts: 1, sendConcurrency: 8},
		{clusters: 200, accounts: 5, sendConcurrency: 8},
		{clusters: 200, accounts: 5, sendConcurrency: 16},
		{clusters: 200, accounts: 5, sendConcurrency: 32},
		{clusters: 200, accounts: 5, sendConcurrency: 64},
		{clusters: 1000, accounts: 20, sendConcurrency: 32},
	} {
		b.Run(fmt.Sprintf("clusters=%d/accounts=%d/send=%d", v.clusters, v.accounts, v.sendConcurrency), func(b *testing.B) {
			r, batch := v.router(lat)
			ctx := context.Background()
			var cpu, wall time.Duration
			for b.Loop() {
				b.StopTimer()
				in := batch()
				b.StartTimer()
				c0, t0 := cpuTime(b), time.Now()
				resp, err := r.Handle(ctx, in)
				wall += time.Since(t0)
				cpu += cpuTime(b) - c0
				if err != nil || len(resp.BatchItemFailures) != 0 {
					b.Fatalf("%v, %d failures", err, len(resp.BatchItemFailures))
				}
			}
			n := float64(b.N)
			b.ReportMetric(float64(wall.Milliseconds())/n, "wall-ms/invocation")
			b.ReportMetric(float64(cpu.Microseconds())/1000/n, "cpu-ms/invocation")
			b.ReportMetric(float64((wall-cpu).Milliseconds())/n, "aws-wait-ms/invocation")
		})
	}
}
