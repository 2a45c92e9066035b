package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/harness"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/sqsemu"
)

// retryOnce sends one spot warning for cluster alpha whose first SendMessageBatch fails with a 500, polls the
// central queue as Lambda's pollers do (continuously) until alpha's Karpenter can read the event, and returns how
// long that took from the publishing, with the router's redelivery log line. goaws returns a message whose
// visibility ended within sqsemu.PeriodicTick; SQS does so at once, and Lambda's pollers long-poll, so AWS adds
// less than this stand-in does.
func retryOnce(ctx context.Context, b *harness.Bus, n int) (time.Duration, map[string]any, error) {
	id := fmt.Sprintf("i-%017x", n)
	b.EC2.Put(id, map[string]string{"eks:eks-cluster-name": "alpha"})
	b.SQS.SetFault(harness.QueueOf("alpha"), &sqsemu.Fault{Status: 500, Code: "InternalError", Times: 1})
	start := time.Now()
	if err := b.Publish(ctx, spotEvent(id)); err != nil {
		return 0, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		if _, err := b.ESM.PollOnce(ctx); err != nil {
			return 0, nil, err
		}
		got, err := b.Consume(ctx, harness.QueueOf("alpha"))
		if err != nil {
			return 0, nil, err
		}
		if len(got) == 1 {
			elapsed := time.Since(start)
			for _, l := range b.Out.Lines() {
				if l["msg"] == "message left for redelivery" && l["eventId"] == "ev-"+id {
					return elapsed, l, nil
				}
			}
			return elapsed, nil, nil
		}
		select {
		case <-ctx.Done():
			return 0, nil, fmt.Errorf("the event never reached alpha: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestRetryComesBackInSeconds: a message left for redelivery after a transient cluster-queue failure comes back
// after the router's backoff (the default, 2 s, for a first receive), not after the central queue's visibility
// timeout, and reaches its cluster. The time it took is reported (BenchmarkRetryLatency measures it for the
// README); what is asserted is what the router asked SQS for, which does not depend on the machine.
func TestRetryComesBackInSeconds(t *testing.T) {
	b, err := harness.New(context.Background(), harness.Options{Clusters: []string{"alpha"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	elapsed, line, err := retryOnce(context.Background(), b, 1)
	if err != nil {
		t.Fatal(err)
	}
	if line == nil {
		t.Fatal("the event reached alpha without being retried: the fault was not injected")
	}
	want := contract.DefaultSettings.RetryDelay.Seconds()
	if line["retryInSeconds"] != want {
		t.Errorf("the router brought the message back after %v s, want the first backoff, %v s (log: %v)", line["retryInSeconds"], want, line)
	}
	if got := b.Metric(contract.MetricRetried, "", ""); got != 1 {
		t.Errorf("Retried = %v, want 1", got)
	}
	t.Logf("transient failure to delivery: %s (router backoff %v s; the central queue's visibility timeout is 30 s here, 181 s by default)", elapsed.Round(time.Millisecond), want)
}

// BenchmarkRetryLatency measures the time from a transient cluster-queue failure to the event's delivery, with
// the router's default backoff: make bench reports it as s/retry (docs/performance.md, "Performance"; goal at most 10 s).
func BenchmarkRetryLatency(b *testing.B) {
	bus, err := harness.New(context.Background(), harness.Options{Clusters: []string{"alpha"}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(bus.Close)
	var total time.Duration
	n := 0
	for b.Loop() {
		n++
		elapsed, line, err := retryOnce(context.Background(), bus, n)
		if err != nil || line == nil {
			b.Fatalf("retry %d: %v (retried: %t)", n, err, line != nil)
		}
		total += elapsed
	}
	b.ReportMetric(total.Seconds()/float64(n), "s/retry")
}
