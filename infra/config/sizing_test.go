package config

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sizing"
)

// slowed is sizing.DefaultLatency with every AWS call x times as slow.
func slowed(x time.Duration) sizing.Latency {
	lat := sizing.DefaultLatency
	lat.SQS, lat.EC2, lat.Invoke = lat.SQS*x, lat.EC2*x, lat.Invoke*x
	return lat
}

// TestDefaultsMeetAZone: in the model (router/sizing, docs/performance.md "Sizing for a zone"), the defaults bring
// a lone event to its cluster within 2 s at p99 (no batching window: Lambda's 20-s wait in low traffic never
// applies) and the zone's burst within 5 s, in the worst case AWS's words allow (no scale-up during the burst)
// and, of course, in the best, and so they do with AWS's calls twice as slow as assumed.
func TestDefaultsMeetAZone(t *testing.T) {
	for _, c := range []sizing.Case{sizing.Worst, sizing.Best} {
		for _, slow := range []time.Duration{1, 2} {
			m := DefaultRouter.Mapping()
			m.Case = c
			if p := sizing.Project(Zone, m, slowed(slow)); p.P99 > StormGoal {
				t.Errorf("case %d, latency x%d: the zone's p99 %s, over %s (%+v)", c, slow, p.P99, StormGoal, p)
			}
			if p := sizing.Project(Lone, m, slowed(slow)); p.P99 > LoneGoal {
				t.Errorf("case %d, latency x%d: a lone event's p99 %s, over %s (%+v)", c, slow, p.P99, LoneGoal, p)
			}
		}
	}
}

// TestTheDefaultsRestOnTheDrain: without the router's drain (DRAIN=0), batches of 10 would take the zone's burst a
// hundred times over and miss the goal by far; with the old defaults (batches of 1,000, a window of 1 s) a lone
// event would wait Lambda's 20 s: the default mapping and the router's default drain are what the goals rest on.
func TestTheDefaultsRestOnTheDrain(t *testing.T) {
	m := DefaultRouter.Mapping()
	if m.Drain != 10000 || m.SendConcurrency != 32 {
		t.Errorf("the model sizes the defaults with DRAIN %d, SEND_CONCURRENCY %d; want the router's defaults 10000 and 32", m.Drain, m.SendConcurrency)
	}
	m.Case, m.Drain = sizing.Worst, 0
	if p := sizing.Project(Zone, m, slowed(2)); p.P99 <= 2*StormGoal {
		t.Errorf("with no drain the zone's p99 is %s: the test pins nothing", p.P99)
	}
	old := DefaultRouter
	old.BatchSize, old.MaximumBatchingWindowSeconds = 1000, 1
	m = old.Mapping()
	m.Case = sizing.Worst
	if p := sizing.Project(Lone, m, slowed(1)); p.P99 < sizing.LowTrafficWait {
		t.Errorf("a lone event with a window of 1 s: %s, want Lambda's %s in the worst case", p.P99, sizing.LowTrafficWait)
	}
}

// BenchmarkTheDefaults reports the model's p99 for the defaults (make bench; docs/performance.md): a lone event and
// the zone's burst, in the worst and the best case, with AWS as assumed and twice as slow.
func BenchmarkTheDefaults(b *testing.B) {
	for _, c := range []struct {
		name string
		c    sizing.Case
	}{{"worst", sizing.Worst}, {"best", sizing.Best}} {
		for _, slow := range []time.Duration{1, 2} {
			b.Run(fmt.Sprintf("%s/aws-x%d", c.name, slow), func(b *testing.B) {
				m := DefaultRouter.Mapping()
				m.Case = c.c
				var lone, zone sizing.Projection
				for b.Loop() {
					lone, zone = sizing.Project(Lone, m, slowed(slow)), sizing.Project(Zone, m, slowed(slow))
				}
				b.ReportMetric(lone.P99.Seconds(), "lone-p99-s")
				b.ReportMetric(zone.P99.Seconds(), "zone-p99-s")
			})
		}
	}
}

// TestConcurrencyCeilings: the function's reserved concurrency is the mapping's ceiling in every mode, a
// provisioned poller counting 10 invocations, whatever the account (what it can give is read from Lambda:
// infra/concurrency); an explicit reservation, never below the mode's ceiling (validated), is its own.
func TestConcurrencyCeilings(t *testing.T) {
	tests := []struct {
		name                    string
		r                       Router
		mode, reserved, limited int
	}{
		{"standard", Router{MaximumConcurrency: 20}, 20, 20, 20},
		{"provisioned 4 to 40", Router{ProvisionedPollers: &ProvisionedPollers{Minimum: 4, Maximum: 40}}, 400, 400, 400},
		{"provisioned up to AWS's 10,000", Router{ProvisionedPollers: &ProvisionedPollers{Minimum: 2, Maximum: 10000}}, 100000, 100000, 100000},
		{"an explicit reservation above the mode's", Router{MaximumConcurrency: 50, ReservedConcurrency: 80}, 50, 80, 50},
		{"an explicit reservation above the default account's", Router{ProvisionedPollers: &ProvisionedPollers{Minimum: 2, Maximum: 300}, ReservedConcurrency: 3000}, 3000, 3000, 3000},
	}
	for _, tt := range tests {
		if tt.r.ModeCeiling() != tt.mode || tt.r.Reserved() != tt.reserved || tt.r.ConcurrencyLimit() != tt.limited {
			t.Errorf("%s: mode %d, reserved %d, limit %d; want %d, %d, %d", tt.name, tt.r.ModeCeiling(), tt.r.Reserved(),
				tt.r.ConcurrencyLimit(), tt.mode, tt.reserved, tt.limited)
		}
	}
}

// TestTheExampleShowsTheDefaults: Pulumi.dev.yaml says of its router block "the defaults are shown": every router
// key it sets is the program's default.
func TestTheExampleShowsTheDefaults(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "Pulumi.dev.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var stack struct {
		Config map[string]any `yaml:"config"`
	}
	if err := yaml.Unmarshal(b, &stack); err != nil {
		t.Fatal(err)
	}
	shown, _ := stack.Config[Namespace+":router"].(map[string]any)
	if len(shown) < 5 {
		t.Fatalf("the example's router block has %d keys", len(shown))
	}
	defaults, _ := json.Marshal(DefaultRouter)
	var want map[string]any
	_ = json.Unmarshal(defaults, &want)
	for k, v := range shown {
		if fmt.Sprint(v) != fmt.Sprint(want[k]) {
			t.Errorf("Pulumi.dev.yaml shows router.%s: %v; the default is %v", k, v, want[k])
		}
	}
}

// TestTheModelIsGivenTheReservation: the sizing model caps the routers at once at the function's reservation, the
// default's included (the mode's ceiling), not only an explicit one.
func TestTheModelIsGivenTheReservation(t *testing.T) {
	for _, r := range []Router{
		{MaximumConcurrency: 20, BatchSize: 10, MemoryMB: 512},
		{ProvisionedPollers: &ProvisionedPollers{Minimum: 2, Maximum: 30}, BatchSize: 10, MemoryMB: 512},
		{MaximumConcurrency: 20, ReservedConcurrency: 40, BatchSize: 10, MemoryMB: 512},
	} {
		if got := r.Mapping().Reserved; got != r.Reserved() || got == 0 {
			t.Errorf("%+v: the model is given reservation %d, want the function's %d", r, got, r.Reserved())
		}
	}
}

// TestReservationBelowTheMappingIsRefused: "Don't set maximum concurrency higher than the function's reserved
// concurrency" (Lambda, services-sqs-scaling): an explicit reservation below the mapping's most is refused, naming
// both figures and the fix, in either mode.
func TestReservationBelowTheMappingIsRefused(t *testing.T) {
	for _, tt := range []struct {
		router string
		want   []string
	}{
		{`{"maximumConcurrency":50,"reservedConcurrency":30}`, []string{"router.maximumConcurrency: 50 is above router.reservedConcurrency (30)",
			"set router.maximumConcurrency to at most 30, or router.reservedConcurrency to at least 50"}},
		{`{"maximumConcurrency":51,"reservedConcurrency":50}`, []string{"router.maximumConcurrency: 51 is above router.reservedConcurrency (50)"}},
		{`{"provisionedPollers":{"minimum":2,"maximum":91},"reservedConcurrency":900}`, []string{"router.provisionedPollers.maximum: 91 pollers run up to 910 invocations"}},
		{`{"provisionedPollers":{"minimum":2,"maximum":100},"reservedConcurrency":900}`, []string{
			"router.provisionedPollers.maximum: 100 pollers run up to 1000 invocations at once (10 each), above router.reservedConcurrency (900)",
			"set router.provisionedPollers.maximum to at most 90, or router.reservedConcurrency to at least 1000"}},
	} {
		_, err := Load("dev", testAccount, map[string]string{"router": tt.router})
		for _, w := range tt.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %v, want it to say %q", tt.router, err, w)
			}
		}
	}
	for _, ok := range []string{`{"maximumConcurrency":50,"reservedConcurrency":50}`, `{"provisionedPollers":{"minimum":2,"maximum":90},"reservedConcurrency":900}`} {
		if _, err := Load("dev", testAccount, map[string]string{"router": ok}); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}
