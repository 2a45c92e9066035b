package sizing

import (
	"testing"
	"time"
)

// TestServiceTimeCountsRounds: lookups of the accounts at once, then the sends in waves of sendConcurrency.
func TestServiceTimeCountsRounds(t *testing.T) {
	lat := Latency{SQS: 20 * time.Millisecond, EC2: 150 * time.Millisecond}
	tests := []struct {
		v    Invocation
		want time.Duration
	}{
		{Invocation{Events: 100, Queues: 5, Accounts: 1, SendConcurrency: 8}, 150*time.Millisecond + 2*20*time.Millisecond},   // 10 calls of 10
		{Invocation{Events: 100, Queues: 79, Accounts: 5, SendConcurrency: 8}, 150*time.Millisecond + 10*20*time.Millisecond}, // 79 calls
		{Invocation{Events: 100, Queues: 79, Accounts: 5, SendConcurrency: 32}, 150*time.Millisecond + 3*20*time.Millisecond},
		{Invocation{Events: 100, Queues: 79, Accounts: 40, SendConcurrency: 32}, 2*150*time.Millisecond + 3*20*time.Millisecond},
	}
	for _, tt := range tests {
		if got := ServiceTime(tt.v, lat, 0); got != tt.want {
			t.Errorf("%+v: %s, want %s", tt.v, got, tt.want)
		}
	}
}

func TestDistinctQueues(t *testing.T) {
	for _, tt := range []struct{ n, c, want int }{{100, 200, 79}, {100, 5, 5}, {1, 200, 1}, {0, 5, 0}, {100, 1000, 95}} {
		if got := DistinctQueues(tt.n, tt.c); got != tt.want {
			t.Errorf("DistinctQueues(%d, %d) = %d, want %d", tt.n, tt.c, got, tt.want)
		}
	}
}

// TestProjectRampsAsLambdaDoes: standard mode starts at 5 invocations and adds 5 a second; a larger maximum
// concurrency stops helping once the burst drains before the ramp reaches it; provisioned pollers start ready.
func TestProjectRampsAsLambdaDoes(t *testing.T) {
	storm := Storm{Events: 10000, Clusters: 200, Accounts: 5}
	m := Mapping{BatchSize: 100, Window: time.Second, MaximumConcurrency: 5, SendConcurrency: 32}
	five := Project(storm, m, DefaultLatency)
	if five.PeakConcurrency != 5 || five.Invocations != 100 {
		t.Errorf("at most 5: peak %d, %d invocations", five.PeakConcurrency, five.Invocations)
	}
	m.MaximumConcurrency = 1000
	wide := Project(storm, m, DefaultLatency)
	if wide.P99 >= five.P99 || wide.PeakConcurrency >= 50 {
		t.Errorf("up to 1000: p99 %s (5: %s), peak %d: the ramp bounds it", wide.P99, five.P99, wide.PeakConcurrency)
	}
	m.MinimumPollers, m.MaximumPollers = 50, 100
	provisioned := Project(storm, m, DefaultLatency)
	if provisioned.P99 >= wide.P99 || provisioned.PeakConcurrency < 50 {
		t.Errorf("provisioned: p99 %s (standard %s), peak %d", provisioned.P99, wide.P99, provisioned.PeakConcurrency)
	}
	// Each event is at its Karpenter after its batch's fill, Lambda's start, the lookups and sends, and one SQS
	// round trip: the first batch's events, at the least.
	first := time.Duration(10)*DefaultLatency.SQS + DefaultLatency.Invoke + five.Service + DefaultLatency.SQS
	if five.P50 < first || five.Drain < five.P99 || five.P99 < five.P50 {
		t.Errorf("p50 %s p99 %s drain %s, first batch %s", five.P50, five.P99, five.Drain, first)
	}
	// Another account's event, the queue fair, waits for one invocation and its own, not for the backlog.
	if five.Quiet >= five.P50 || five.Quiet < first {
		t.Errorf("a quiet account's event: %s (the burst's p50 %s, its first batch %s)", five.Quiet, five.P50, first)
	}
}

func TestLambdaCPU(t *testing.T) {
	if got := LambdaCPU(10*time.Microsecond, 1769); got != 10*time.Microsecond {
		t.Errorf("one vCPU: %s", got)
	}
	if got := LambdaCPU(10*time.Microsecond, 256); got <= 60*time.Microsecond || got >= 80*time.Microsecond {
		t.Errorf("256 MB: %s, want about 6.9 times one vCPU's", got)
	}
}
