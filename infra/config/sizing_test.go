package config

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sizing"
)

// TestDefaultsMeetAZone: in the model (router/sizing, docs/performance.md "Sizing for a zone"), the defaults bring
// the zone's burst to every Karpenter within 10 s at p99 in the worst case AWS's words allow (no scale-up during
// the burst) and, of course, in the best, and so they do with AWS's calls twice as slow as assumed.
func TestDefaultsMeetAZone(t *testing.T) {
	for _, c := range []sizing.Case{sizing.Worst, sizing.Best} {
		for _, slow := range []time.Duration{1, 2} {
			lat := sizing.DefaultLatency
			lat.SQS, lat.EC2, lat.Invoke = lat.SQS*slow, lat.EC2*slow, lat.Invoke*slow
			m := DefaultRouter.Mapping()
			m.Case = c
			p := sizing.Project(Zone, m, lat)
			if p.P99 > 10*time.Second {
				t.Errorf("case %d, latency x%d: p99 %s, over 10 s (%+v)", c, slow, p.P99, p)
			}
		}
	}
}

// TestTheDefaultSendConcurrencyIsNeeded: with SEND_CONCURRENCY 8 (the old default) the defaults would not meet a
// zone in the worst case with AWS twice as slow: the default is what the sizing rests on.
func TestTheDefaultSendConcurrencyIsNeeded(t *testing.T) {
	lat := sizing.DefaultLatency
	lat.SQS, lat.EC2, lat.Invoke = 2*lat.SQS, 2*lat.EC2, 2*lat.Invoke
	m := DefaultRouter.Mapping()
	m.Case, m.SendConcurrency = sizing.Worst, 8
	if p := sizing.Project(Zone, m, lat); p.P99 <= 10*time.Second {
		t.Errorf("SEND_CONCURRENCY 8 meets the zone too (p99 %s): the test pins nothing", p.P99)
	}
	if got := DefaultRouter.Mapping().SendConcurrency; got != 32 {
		t.Errorf("the model sizes the defaults with SEND_CONCURRENCY %d, want the router's default 32", got)
	}
}

// TestConcurrencyCeilings: the function's reserved concurrency is the mapping's ceiling in every mode, a
// provisioned poller counting 10 invocations, at most what an account of the default quota can reserve.
func TestConcurrencyCeilings(t *testing.T) {
	tests := []struct {
		name                    string
		r                       Router
		mode, reserved, limited int
	}{
		{"standard", Router{MaximumConcurrency: 20}, 20, 20, 20},
		{"provisioned 4 to 40", Router{ProvisionedPollers: &ProvisionedPollers{Minimum: 4, Maximum: 40}}, 400, 400, 400},
		{"provisioned up to AWS's 10,000", Router{ProvisionedPollers: &ProvisionedPollers{Minimum: 2, Maximum: 10000}}, 100000, AccountReservable, AccountReservable},
		{"an explicit reservation below the mode's", Router{MaximumConcurrency: 50, ReservedConcurrency: 10}, 50, 10, 10},
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
