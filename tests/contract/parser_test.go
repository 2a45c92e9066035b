// Package contract checks the router against its consumer: Karpenter v1.6.3's own interruption parser.
package contract

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/event"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/karpenter"
)

// karpenterKind is the kind Karpenter reports for each of ours that v1.6.3 knows; OtherEC2 is a no-op there.
var karpenterKind = map[contract.Kind][]string{
	contract.KindSpotInterruption:        {"spot_interrupted"},
	contract.KindRebalanceRecommendation: {"rebalance_recommendation"},
	contract.KindStateChange:             {"instance_stopped", "instance_terminated"},
	contract.KindScheduledChange:         {"scheduled_change"},
	contract.KindOtherEC2:                {"no_op"},
}

func fixtures(tb testing.TB) map[string][]byte {
	tb.Helper()
	dir := filepath.Join("..", "..", "router", "event", "testdata")
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				tb.Fatal(err)
			}
			out[e.Name()] = b
		}
	}
	return out
}

// check asserts that the router and Karpenter agree on body.
func check(t *testing.T, body []byte) {
	ours, err := event.Parse(body)
	theirs, kerr := karpenter.Parse(string(body))
	if err == nil {
		// Whatever we forward, Karpenter parses, as the same kind, naming at least our instances.
		if kerr != nil {
			t.Fatalf("we forward %q but Karpenter fails: %v", body, kerr)
		}
		if !slices.Contains(karpenterKind[ours.Kind], theirs.Kind) {
			t.Fatalf("we read %q as %s, Karpenter as %s", body, ours.Kind, theirs.Kind)
		}
		for _, id := range ours.InstanceIDs {
			if ours.Kind != contract.KindOtherEC2 && !slices.Contains(theirs.InstanceIDs, id) {
				t.Fatalf("we route %q for %s, which Karpenter does not see in it (%v)", body, id, theirs.InstanceIDs)
			}
		}
		return
	}
	// Whatever Karpenter acts on for a real instance, we forward, unless our stricter envelope checks (account,
	// region, health entity count) reject it.
	acts := kerr == nil && theirs.Kind != "no_op" && slices.ContainsFunc(theirs.InstanceIDs, event.IsInstanceID[string])
	if acts && !strings.Contains(err.Error(), "account") && !strings.Contains(err.Error(), "region") &&
		!strings.Contains(err.Error(), "affectedEntities exceed") {
		t.Fatalf("Karpenter acts on %q (%s %v) but we drop it: %v", body, theirs.Kind, theirs.InstanceIDs, err)
	}
	if !errors.Is(err, event.ErrUnparseable) && !errors.Is(err, event.ErrNotInterruption) {
		t.Fatalf("error %v wraps neither sentinel", err)
	}
}

func TestFixturesAgreeWithKarpenter(t *testing.T) {
	for name, body := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			if _, err := event.Parse(body); err != nil {
				t.Fatalf("fixture rejected: %v", err)
			}
			check(t, body)
		})
	}
}

// FuzzAgreesWithKarpenter mutates the fixtures and checks both directions of the contract on every input.
// Its seeds run in make test; make fuzz runs it longer.
func FuzzAgreesWithKarpenter(f *testing.F) {
	for _, body := range fixtures(f) {
		f.Add(body)
		// Seeds near the edges: other kinds' fields of the wrong type, case, null and escapes.
		s := string(body)
		f.Add([]byte(strings.Replace(s, `"detail":{`, `"detail":{"state":5,"affectedEntities":{},`, 1)))
		f.Add([]byte(strings.Replace(s, `"terminated"`, `"TERMINATED"`, 1)))
		f.Add([]byte(strings.Replace(s, `"EC2"`, `"ec2"`, 1)))
		f.Add([]byte(strings.Replace(s, `"version":"0"`, `"version":null`, 1)))
		f.Add([]byte(strings.Replace(s, `"source"`, `"Source"`, 1)))
		f.Add([]byte(strings.Replace(s, `"i-0a1b2c3d4e5f6000`, `"i-0a1b2c3d4e5f6000\u0030`, 1)))
	}
	f.Fuzz(func(t *testing.T, body []byte) { check(t, body) })
}
