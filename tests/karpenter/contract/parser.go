package contract

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"quamina.net/go/quamina"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/event"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/karpenter"
	kp "github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/karpenter/karpenter"
)

// karpenterKinds are the kinds Karpenter reports for each of the router's, when that Karpenter acts on it.
var karpenterKinds = map[contract.Kind][]string{
	contract.KindSpotInterruption:                {"spot_interrupted"},
	contract.KindRebalanceRecommendation:         {"rebalance_recommendation"},
	contract.KindStateChange:                     {"instance_stopped", "instance_terminated"},
	contract.KindScheduledChange:                 {"scheduled_change"},
	contract.KindCapacityReservationInterruption: {"capacity_reservation_interrupted"},
}

// wantKind is what Karpenter v makes of an event the router reads as kind: the kind it acts on, or a no-op.
func wantKind(v karpenter.Version, kind contract.Kind) []string {
	if !karpenter.Acts(v, kind) {
		return []string{"no_op"}
	}
	return karpenterKinds[kind]
}

// Fixtures are the router's sample events (router/event/testdata), one of each kind.
func Fixtures(tb testing.TB) map[string][]byte {
	tb.Helper()
	dir := filepath.Join(root(tb), "router", "event", "testdata")
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

// Check asserts that the router and Karpenter v agree on body: whatever the router forwards (byte for byte),
// Karpenter parses as the same kind (or, for a kind v does not know, as a no-op), naming the instances the router
// routes it for; whatever Karpenter acts on for a real instance, the router forwards.
func Check(t *testing.T, v karpenter.Version, body []byte) {
	t.Helper()
	ours, err := event.Parse(body)
	theirs, kerr := kp.Parse(string(body))
	if err == nil {
		if kerr != nil {
			t.Fatalf("the router forwards %q but Karpenter %s fails: %v", body, v, kerr)
		}
		want := wantKind(v, ours.Kind)
		if !slices.Contains(want, theirs.Kind) {
			t.Fatalf("the router reads %q as %s, Karpenter %s as %s (want %v)", body, ours.Kind, v, theirs.Kind, want)
		}
		if theirs.Kind != "no_op" {
			for _, id := range ours.InstanceIDs {
				if !slices.Contains(theirs.InstanceIDs, id) {
					t.Fatalf("the router routes %q for %s, which Karpenter %s does not see in it (%v)", body, id, v, theirs.InstanceIDs)
				}
			}
		}
		return
	}
	// The router's envelope checks (account, region, health entity count) are stricter than Karpenter's.
	acts := kerr == nil && theirs.Kind != "no_op" && slices.ContainsFunc(theirs.InstanceIDs, event.IsInstanceID[string])
	if acts && !strings.Contains(err.Error(), "account") && !strings.Contains(err.Error(), "region") &&
		!strings.Contains(err.Error(), "affectedEntities exceed") {
		t.Fatalf("Karpenter %s acts on %q (%s %v) but the router drops it: %v", v, body, theirs.Kind, theirs.InstanceIDs, err)
	}
	if !errors.Is(err, event.ErrUnparseable) && !errors.Is(err, event.ErrNotInterruption) {
		t.Fatalf("error %v wraps neither sentinel", err)
	}
}

func parserAgrees(t *testing.T, v karpenter.Version) {
	for name, body := range Fixtures(t) {
		t.Run(name, func(t *testing.T) {
			if _, err := event.Parse(body); err != nil {
				t.Fatalf("the router rejects its own fixture: %v", err)
			}
			Check(t, v, body)
		})
	}
	// The capacity reservation warning is forwarded whatever the version: acted on from v1.10, a no-op before.
	capres := Fixtures(t)["capacity-reservation-interruption.json"]
	ours, err := event.Parse(capres)
	theirs, kerr := kp.Parse(string(capres))
	if err != nil || kerr != nil || ours.Kind != contract.KindCapacityReservationInterruption {
		t.Fatalf("capacity reservation warning: router %v %v, Karpenter %v", ours.Kind, err, kerr)
	}
	want := "no_op"
	if v.AtLeast(1, 10) {
		want = "capacity_reservation_interrupted"
	}
	if theirs.Kind != want {
		t.Errorf("Karpenter %s reads the capacity reservation warning as %s, want %s", v, theirs.Kind, want)
	}
	// The bus's canary, as EventBridge delivers it, is a no-op for every version: parsed, counted and deleted.
	canary := Fixtures(t)["canary.json"]
	if ours, err := event.Parse(canary); err != nil || ours.Kind != contract.KindCanary {
		t.Fatalf("the router reads its canary fixture as %v, %v", ours.Kind, err)
	}
	if theirs, err := kp.Parse(string(canary)); err != nil || theirs.Kind != "no_op" {
		t.Errorf("Karpenter %s reads the canary as %+v, %v; want a no-op", v, theirs, err)
	}
}

// everyParserCarried: every event Karpenter has a parser for is one the bus carries, as a kind of its own (not
// other_ec2), and its rule's pattern matches it (quamina, an EventBridge pattern matcher, judges).
func everyParserCarried(t *testing.T) {
	q, err := quamina.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, et := range contract.EventTypes {
		if err := q.AddPattern(et.Rule, et.Pattern()); err != nil {
			t.Fatalf("rule %s: %v", et.Rule, err)
		}
	}
	for _, p := range kp.Parsers() {
		et, ok := contract.EventTypeOf(p.Source, p.DetailType)
		if !ok || p.Version != contract.EventVersion || et.Kind == contract.KindOtherEC2 {
			t.Errorf("Karpenter parses (%s, %s, %q), which the bus does not carry as a kind of its own (%v)", p.Version, p.Source, p.DetailType, et.Kind)
			continue
		}
		// A sample of the type: the detail values the rule narrows to, where it narrows.
		detail := map[string]string{"instance-id": "i-0123456789abcdef0"}
		for field, values := range et.Detail {
			detail[field] = values[0]
		}
		body := sample(p.Source, p.DetailType, detail)
		matches, err := q.MatchesForEvent(body)
		if err != nil {
			t.Fatal(err)
		}
		if len(matches) != 1 || matches[0] != et.Rule {
			t.Errorf("%s %q: rules %v match, want exactly %s", p.Source, p.DetailType, matches, et.Rule)
		}
	}
}

func sample(source, detailType string, detail map[string]string) []byte {
	var d []string
	for k, v := range detail {
		d = append(d, `"`+k+`":"`+v+`"`)
	}
	slices.Sort(d)
	return []byte(`{"version":"0","id":"x","detail-type":"` + detailType + `","source":"` + source + `","account":"123456789012",` +
		`"time":"2026-11-21T12:00:00Z","region":"us-east-1","resources":[],"detail":{` + strings.Join(d, ",") + `}}`)
}

// Fuzz mutates the fixtures and checks both directions of the contract on every input, against this binary's
// Karpenter. Its seeds run in make test; make fuzz runs it longer.
func Fuzz(f *testing.F) {
	v, _, _ := version(f)
	for _, body := range Fixtures(f) {
		f.Add(body)
		// Seeds near the edges: other kinds' fields of the wrong type, case, null and escapes.
		s := string(body)
		f.Add([]byte(strings.Replace(s, `"detail":{`, `"detail":{"state":5,"affectedEntities":{},`, 1)))
		f.Add([]byte(strings.Replace(s, `"detail":{`, `"detail":{"instance-action":7,`, 1)))
		f.Add([]byte(strings.Replace(s, `"terminated"`, `"TERMINATED"`, 1)))
		f.Add([]byte(strings.Replace(s, `"EC2"`, `"ec2"`, 1)))
		f.Add([]byte(strings.Replace(s, `"version":"0"`, `"version":null`, 1)))
		f.Add([]byte(strings.Replace(s, `"source"`, `"Source"`, 1)))
		f.Add([]byte(strings.Replace(s, `"i-0a1b2c3d4e5f6000`, `"i-0a1b2c3d4e5f6000\u0030`, 1)))
	}
	f.Fuzz(func(t *testing.T, body []byte) { Check(t, v, body) })
}
