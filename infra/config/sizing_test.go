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
