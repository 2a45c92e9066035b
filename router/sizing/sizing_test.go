package sizing

import (
	"math"
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
	if got, want := ServiceTime(tests[0].v, lat, 5*time.Millisecond), tests[0].want+5*time.Millisecond; got != want {
		t.Errorf("with 5 ms of CPU: %s, want %s: the CPU adds to the calls", got, want)
	}
}

func TestDistinctQueues(t *testing.T) {
	for _, tt := range []struct{ n, c, want int }{{100, 200, 79}, {100, 5, 5}, {1, 200, 1}, {0, 5, 0}, {100, 1000, 95}, {5, 0, 0}} {
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

// TestCasesAsAWSWordsThem: the worst case never scales up (5 invocations in standard mode, one per minimum
// poller in provisioned mode); the best case ramps at AWS's full rate, each provisioned poller running 10
// invocations; a reservation caps both; the ceiling is the maximum concurrency or 10 per maximum poller.
func TestCasesAsAWSWordsThem(t *testing.T) {
	storm := Storm{Events: 10000, Clusters: 200, Accounts: 5}
	std := Mapping{BatchSize: 100, Window: time.Second, MaximumConcurrency: 1000, SendConcurrency: 32}
	worst := std
	worst.Case = Worst
	if p := Project(storm, worst, DefaultLatency); p.PeakConcurrency != StandardStart {
		t.Errorf("standard, worst case: peak %d, want %d throughout", p.PeakConcurrency, StandardStart)
	}
	if p := Project(storm, std, DefaultLatency); p.PeakConcurrency <= StandardStart {
		t.Errorf("standard, best case: peak %d, want a ramp past %d", p.PeakConcurrency, StandardStart)
	}
	prov := Mapping{BatchSize: 10, Window: time.Second, MinimumPollers: 4, MaximumPollers: 40, SendConcurrency: 32}
	if p := Project(storm, prov, DefaultLatency); p.PeakConcurrency <= 40 {
		t.Errorf("provisioned 4–40, best case: peak %d invocations, want more than one per poller", p.PeakConcurrency)
	}
	if got := prov.concurrency(0); got != 4*PollerInvocations {
		t.Errorf("provisioned 4–40 at the start: %d invocations, want %d", got, 4*PollerInvocations)
	}
	// AWS: provisioned mode scales by "up to 1,000 concurrency per minute": 16 more invocations after a second, 1,000
	// more after a minute (here capped at the 400 of 40 pollers).
	if got := prov.concurrency(time.Second); got != 4*PollerInvocations+16 {
		t.Errorf("provisioned 4–40 after a second: %d invocations, want %d (1,000 a minute)", got, 4*PollerInvocations+16)
	}
	big := Mapping{MinimumPollers: 2, MaximumPollers: 10000}
	if got := big.concurrency(time.Minute); got != 2*PollerInvocations+1000 {
		t.Errorf("provisioned 2–10,000 after a minute: %d invocations, want %d (1,000 a minute)", got, 2*PollerInvocations+1000)
	}
	if got := prov.Ceiling(); got != 400 {
		t.Errorf("provisioned 4–40: ceiling %d, want 400", got)
	}
	provWorst := prov
	provWorst.Case = Worst
	if p := Project(storm, provWorst, DefaultLatency); p.PeakConcurrency != 4 {
		t.Errorf("provisioned 4–40, worst case: peak %d, want the 4 minimum pollers, one invocation each", p.PeakConcurrency)
	}
	reserved := prov
	reserved.Reserved = 30
	if p := Project(storm, reserved, DefaultLatency); p.PeakConcurrency != 30 {
		t.Errorf("provisioned 4–40 under a reservation of 30: peak %d, want 30", p.PeakConcurrency)
	}
	if got := std.concurrency(2 * time.Second); got != StandardStart+2*StandardRamp {
		t.Errorf("standard after 2 s: %d, want %d", got, StandardStart+2*StandardRamp)
	}
}

// TestDescribeCallsOf200: an invocation asks about at most 200 instances a DescribeInstances call, the calls of
// one account one after another.
func TestDescribeCallsOf200(t *testing.T) {
	for _, tt := range []struct{ events, accounts, want int }{{100, 5, 1}, {1000, 5, 1}, {1000, 1, 5}, {2000, 5, 2}, {201, 1, 2}} {
		v := Invocation{Events: tt.events, Accounts: tt.accounts, Queues: 1, SendConcurrency: 32}
		if got := v.DescribeCalls(); got != tt.want {
			t.Errorf("%d events in %d accounts: %d calls each, want %d", tt.events, tt.accounts, got, tt.want)
		}
		if got := ServiceTime(v, Latency{EC2: time.Second}, 0); got != time.Duration(tt.want)*time.Second {
			t.Errorf("%d events in %d accounts: lookups take %s, want %d round trips", tt.events, tt.accounts, got, tt.want)
		}
	}
}

// TestALoneEventAndTheWindow: a lone event with a batching window waits out the window at best and 20 s at worst
// (AWS's "up to 20 seconds" in low traffic); with no window it is invoked at once, in either case.
func TestALoneEventAndTheWindow(t *testing.T) {
	lone := Storm{Events: 1, Clusters: 200, Accounts: 1}
	windowed := Mapping{BatchSize: 1000, Window: time.Second, MaximumConcurrency: 20, SendConcurrency: 32}
	best := Project(lone, windowed, DefaultLatency)
	windowed.Case = Worst
	worst := Project(lone, windowed, DefaultLatency)
	if best.P99 < time.Second || best.P99 >= 2*time.Second || worst.P99 < LowTrafficWait {
		t.Errorf("a window of 1 s: best %s, worst %s; want the window, and 20 s", best.P99, worst.P99)
	}
	none := Mapping{BatchSize: 10, MaximumConcurrency: 20, SendConcurrency: 32, Case: Worst}
	if p := Project(lone, none, DefaultLatency); p.P99 >= time.Second {
		t.Errorf("no window: %s, want it invoked at once", p.P99)
	}
}

// TestADrainTakesTheBurstInChunks: with batches of 10 and no window, a burst takes a hundred times the invocations of
// batches of 1,000; the drain has each invocation whose batch was full take chunks of 1,000 itself, so the worst case,
// five invocations throughout, routes the burst about as fast as its best case; a drain of 0 is none.
func TestADrainTakesTheBurstInChunks(t *testing.T) {
	storm := Storm{Events: 10000, Clusters: 200, Accounts: 5}
	small := Mapping{BatchSize: 10, MaximumConcurrency: 20, SendConcurrency: 32, Case: Worst}
	without := Project(storm, small, DefaultLatency)
	small.Drain = 10000
	with := Project(storm, small, DefaultLatency)
	if without.Invocations != 1000 || with.Invocations != 5 || with.PeakConcurrency != 5 {
		t.Errorf("invocations %d without a drain, %d with (peak %d); want 1000 and the 5 of the worst case", without.Invocations, with.Invocations, with.PeakConcurrency)
	}
	if with.P99 >= without.P99/10 || with.P99 >= 5*time.Second {
		t.Errorf("p99 %s with a drain, %s without", with.P99, without.P99)
	}
	capped := small
	capped.Drain = 100
	if p := Project(storm, capped, DefaultLatency); p.Invocations <= with.Invocations {
		t.Errorf("a drain of 100: %d invocations, want more than %d: each takes 110 at most", p.Invocations, with.Invocations)
	}
	best := small
	best.Case = Best
	if p := Project(storm, best, DefaultLatency); p.P99 > with.P99 {
		t.Errorf("best case %s, worse than the worst %s", p.P99, with.P99)
	}
}

// TestStandardModeStopsAt1250: standard mode adds invocations up to maximumConcurrency and the mapping's most, 1,250.
func TestStandardModeStopsAt1250(t *testing.T) {
	m := Mapping{MaximumConcurrency: 5000}
	if got := m.concurrency(time.Hour); got != StandardMost {
		t.Errorf("after an hour: %d, want %d", got, StandardMost)
	}
	if got := m.Ceiling(); got != StandardMost {
		t.Errorf("ceiling %d, want %d", got, StandardMost)
	}
}

// TestADrainByHand: one invocation, its figures worked out by hand. 2,010 events of one cluster in one account,
// batches of 10, one invocation at a time (reserved 1), SQS 100 ms a call, EC2 and Lambda's start free, one send at a
// time, no CPU. The first batch: gathered in one receive (100 ms), sent in one call (100 ms): at its queue at 300 ms.
// It was full, so at 200 ms the invocation drains: a chunk of 1,000 received in 100 calls ten at a time (1 s), sent
// in 100 calls one at a time (10 s): at its queue at 11.3 s; the deletes, 100 calls ten at a time (1 s), so the next
// chunk at 12.2 s: at its queue at 23.3 s; then at 24.2 s an empty receive (100 ms) ends the invocation at 24.3 s.
func TestADrainByHand(t *testing.T) {
	lat := Latency{SQS: 100 * time.Millisecond}
	m := Mapping{BatchSize: 10, MaximumConcurrency: 20, Reserved: 1, SendConcurrency: 1, Drain: 10000, Case: Worst}
	p := Project(Storm{Events: 2010, Clusters: 1, Accounts: 1}, m, lat)
	want := Projection{Service: 100 * time.Millisecond, Drain: 23300 * time.Millisecond, P50: 11300 * time.Millisecond,
		P99: 23300 * time.Millisecond, Invocations: 1, PeakConcurrency: 1, DescribeRate: 5, LambdaSeconds: 24.2,
		Quiet: 500 * time.Millisecond}
	sameProjection(t, p, want)
}

// TestBatchesOneAtATimeByHand: three batches one after another, worked out by hand. 30 events of one cluster in one
// account, batches of 10, no drain, one invocation at a time (reserved 1), SQS 300 ms a call, Lambda's start 200 ms,
// EC2 free, one send at a time. Each batch: gathered in one receive (300 ms), started (200 ms), sent in one call (300
// ms): an invocation of 800 ms whose events are at their queue 300 ms after it ends; the next starts as it ends, at
// 0.8 s and 1.6 s. Each invocation is billed from its start: 3 × 0.5 s. DescribeInstances, one call an invocation, at
// 0.5, 1.3 and 2.1 s: one a second. A full batch of 10 with a window waits for none of it.
func TestBatchesOneAtATimeByHand(t *testing.T) {
	lat := Latency{SQS: 300 * time.Millisecond, Invoke: 200 * time.Millisecond}
	m := Mapping{BatchSize: 10, MaximumConcurrency: 20, Reserved: 1, SendConcurrency: 1, Case: Worst}
	p := Project(Storm{Events: 30, Clusters: 1, Accounts: 1}, m, lat)
	want := Projection{Service: 300 * time.Millisecond, Drain: 2700 * time.Millisecond, P50: 1900 * time.Millisecond,
		P99: 2700 * time.Millisecond, Invocations: 3, PeakConcurrency: 1, DescribeRate: 1, LambdaSeconds: 1.5,
		Quiet: 1900 * time.Millisecond}
	sameProjection(t, p, want)
	all := m
	all.Reserved = 0 // five at once: the three batches start together, and nothing more is invoked
	if p := Project(Storm{Events: 30, Clusters: 1, Accounts: 1}, all, lat); p.Invocations != 3 || p.PeakConcurrency != 3 || p.Drain != 1100*time.Millisecond {
		t.Errorf("five at a time: %d invocations, %d at once, drained at %s; want 3, 3, 1.1 s", p.Invocations, p.PeakConcurrency, p.Drain)
	}
	m.Window = time.Second
	if p := Project(Storm{Events: 10, Clusters: 1, Accounts: 1}, m, lat); p.P99 != 1100*time.Millisecond {
		t.Errorf("a full batch with a window of 1 s: p99 %s, want 1.1 s: it waits for nothing", p.P99)
	}
}

// sameProjection fails t unless got is want, its Lambda seconds within a rounding of a float.
func sameProjection(t *testing.T, got, want Projection) {
	t.Helper()
	if math.Abs(got.LambdaSeconds-want.LambdaSeconds) < 1e-9 {
		got.LambdaSeconds = want.LambdaSeconds
	}
	if got != want {
		t.Errorf("projection\n got %+v\nwant %+v", got, want)
	}
}
