package route

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/accounts"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/forward"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/metrics"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/owner"
)

// nullSQS accepts every entry, doing as little as a fake can, so the benchmark measures the router.
type nullSQS struct{ sends atomic.Int64 }

func (*nullSQS) GetQueueUrl(_ context.Context, in *sqs.GetQueueUrlInput, _ ...func(*sqs.Options)) (*sqs.GetQueueUrlOutput, error) {
	return &sqs.GetQueueUrlOutput{QueueUrl: aws.String("https://sqs/" + *in.QueueName)}, nil
}

func (n *nullSQS) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	n.sends.Add(1)
	ok := make([]sqstypes.SendMessageBatchResultEntry, len(in.Entries))
	for i, e := range in.Entries {
		ok[i].Id = e.Id
	}
	return &sqs.SendMessageBatchOutput{Successful: ok}, nil
}

// cpuTime is the process's user+system CPU time: the target is CPU per message, and sends run concurrently.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

const benchMessages, benchClusters = 100, 5

// warmRouter returns a router whose caches know every instance and queue of its 100-message, 5-cluster batch.
func warmRouter(tb testing.TB) (*Router, events.SQSEvent, *fakeEC2, *nullSQS) {
	const messages, clusters = benchMessages, benchClusters
	owners := map[string]string{}
	var in events.SQSEvent
	for i := range messages {
		id := instance(i + 1)
		owners[id] = fmt.Sprintf("cluster-%d", i%clusters)
		in.Records = append(in.Records, events.SQSMessage{MessageId: fmt.Sprintf("m%d", i), Body: spot(id)})
	}
	ec2 := &fakeEC2{owners: owners}
	sqsAPI := &nullSQS{}
	r := New(
		accounts.New(owner.New(ec2, owner.Options{CacheSize: 1000, OwnerTTL: time.Hour, NoOwnerTTL: time.Hour}), accounts.Options{}),
		forward.New(sqsAPI, forward.Options{CacheSize: 100, URLTTL: time.Hour, MissingTTL: time.Hour}),
		Options{QueuePrefix: qprefix, SendConcurrency: 8, Metrics: metrics.NewWriter(io.Discard, "NS", "bench"),
			Log: slog.New(slog.DiscardHandler)})
	if resp, err := r.Handle(context.Background(), in); err != nil || len(resp.BatchItemFailures) != 0 {
		tb.Fatalf("warm-up: %v %v", err, resp)
	}
	ec2.calls = 0
	sqsAPI.sends.Store(0)
	return r, in, ec2, sqsAPI
}

// TestAllocationsPerMessage holds the allocation target (docs/performance.md) (<= 15 per message, warm cache) in make test;
// allocation counts, unlike times, do not depend on the machine.
func TestAllocationsPerMessage(t *testing.T) {
	r, in, _, _ := warmRouter(t)
	perBatch := testing.AllocsPerRun(50, func() { _, _ = r.Handle(context.Background(), in) })
	if perMsg := perBatch / benchMessages; perMsg > 15 {
		t.Fatalf("%.1f allocations per message, target <= 15", perMsg)
	}
}

// BenchmarkHandle routes a 100-message batch over 5 clusters with warm caches; cpu-ns/msg and allocs/msg are
// the figures of docs/performance.md (make bench).
func BenchmarkHandle(b *testing.B) {
	const messages, clusters = benchMessages, benchClusters
	r, in, ec2, sqsAPI := warmRouter(b)
	ctx := context.Background()

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpuBefore := cpuTime(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := r.Handle(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	cpu := cpuTime(b) - cpuBefore
	runtime.ReadMemStats(&after)
	if ec2.calls != 0 {
		b.Fatalf("DescribeInstances called %d times on a warm cache", ec2.calls)
	}
	if want := int64(b.N * clusters * 2); sqsAPI.sends.Load() != want {
		b.Fatalf("SendMessageBatch calls = %d, want %d (2 per cluster per batch)", sqsAPI.sends.Load(), want)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*messages), "ns/msg")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*messages), "cpu-ns/msg")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N*messages), "allocs/msg")
}
