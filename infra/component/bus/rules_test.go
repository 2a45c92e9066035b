package bus

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"quamina.net/go/quamina"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

func event(t *testing.T, fixture string, edits ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "router", "event", "testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for i := 0; i < len(edits); i += 2 {
		if !strings.Contains(s, edits[i]) {
			t.Fatalf("%s has no %q", fixture, edits[i])
		}
		s = strings.Replace(s, edits[i], edits[i+1], 1)
	}
	return []byte(s)
}

// TestRulePatterns runs the rules' patterns in quamina, an EventBridge pattern matcher, against sample events:
// each interruption matches its own rule only, a canary of this bus the canary rule only; what Karpenter ignores,
// and another bus's canaries, match none.
func TestRulePatterns(t *testing.T) {
	q, err := quamina.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Rules("kib-test") {
		if err := q.AddPattern(r.Key, r.Pattern); err != nil {
			t.Fatalf("rule %s: quamina rejects its pattern: %v", r.Key, err)
		}
	}
	tests := []struct {
		name  string
		event []byte
		want  []string
	}{
		{"spot warning", event(t, "spot-interruption.json"), []string{"spot-interruption"}},
		{"rebalance", event(t, "rebalance-recommendation.json"), []string{"rebalance"}},
		{"terminated", event(t, "state-change-terminated.json"), []string{"state-change"}},
		{"stopping", event(t, "state-change-stopping.json"), []string{"state-change"}},
		{"stopped", event(t, "state-change-stopping.json", `"stopping"`, `"stopped"`), []string{"state-change"}},
		{"shutting-down", event(t, "state-change-stopping.json", `"stopping"`, `"shutting-down"`), []string{"state-change"}},
		{"health scheduled change", event(t, "health-scheduled-change.json"), []string{"scheduled-change"}},
		{"capacity reservation", event(t, "capacity-reservation-interruption.json"), []string{"capacity-reservation"}},
		{"pending", event(t, "state-change-stopping.json", `"stopping"`, `"pending"`), nil},
		{"running", event(t, "state-change-stopping.json", `"stopping"`, `"running"`), nil},
		{"health for RDS", event(t, "health-scheduled-change.json", `"service":"EC2"`, `"service":"RDS"`), nil},
		{"health issue", event(t, "health-scheduled-change.json", `"scheduledChange"`, `"issue"`), nil},
		{"health account notification", event(t, "health-scheduled-change.json", `"scheduledChange"`, `"accountNotification"`), nil},
		{"other source", event(t, "spot-interruption.json", `"aws.ec2"`, `"custom.app"`), nil},
		{"EBS event", event(t, "spot-interruption.json", `"EC2 Spot Instance Interruption Warning"`, `"EBS Volume Notification"`), nil},
		{"canary", event(t, "canary.json"), []string{contract.RuleCanary}},
		{"another bus's canary", event(t, "canary.json", `"bus":"kib-test"`, `"bus":"kib-prod"`), nil},
		{"canary detail-type from another source", event(t, "canary.json", `"karpenter-interruption-bus.canary"`, `"custom.app"`), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := q.MatchesForEvent(tt.event)
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, x := range got {
				keys = append(keys, x.(string))
			}
			slices.Sort(keys)
			if !slices.Equal(keys, tt.want) {
				t.Errorf("matching rules = %v, want %v", keys, tt.want)
			}
		})
	}
}
