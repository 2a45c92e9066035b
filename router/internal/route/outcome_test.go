package route

import (
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// TestTheOnlyChangesOfOutcome: set allows exactly the changes of outcome a rule makes, for each kind of record, and
// refuses every other, leaving the outcome as it was.
func TestTheOnlyChangesOfOutcome(t *testing.T) {
	forged, noOwner := contract.ReasonForgedSender, contract.ReasonNoOwner
	outcomes := map[string]outcome{
		"pending":                 {},
		"forwarded":               {verdict: forwarded},
		"dropped forged_sender":   drop(forged, errors.New("x")),
		"dropped no_owner":        drop(noOwner, errors.New("x")),
		"quarantined forged":      {verdict: quarantined, reason: forged},
		"quarantined no_owner":    {verdict: quarantined, reason: noOwner},
		"quarantined unknown_acc": {verdict: quarantined, reason: contract.ReasonUnknownAccount},
		"retried":                 retry(errors.New("x")),
		"taken":                   {verdict: taken},
	}
	allowedFor := map[kind]map[string][]string{
		anEvent: {
			"pending":               {"forwarded", "dropped forged_sender", "dropped no_owner", "retried"},
			"dropped forged_sender": {"quarantined forged", "retried"},
		},
		anIntake: {
			"pending":               {"taken", "dropped forged_sender", "dropped no_owner", "retried"},
			"dropped forged_sender": {"quarantined forged", "retried"},
		},
	}
	for k, table := range allowedFor {
		for from, o := range outcomes {
			for to, n := range outcomes {
				want := false
				for _, a := range table[from] {
					want = want || a == to
				}
				m := &message{rec: &events.SQSMessage{MessageId: "m0"}, kind: k, out: o}
				err := m.set(n)
				if (err == nil) != want {
					t.Errorf("kind %d, %s -> %s: %v, want allowed=%v", k, from, to, err, want)
				}
				if err != nil && (m.out != o || !errors.Is(err, errTransition)) {
					t.Errorf("kind %d, %s -> %s refused, but the outcome is %+v now (%v)", k, from, to, m.out, err)
				}
				if err == nil && m.out != n {
					t.Errorf("kind %d, %s -> %s allowed, but the outcome is %+v", k, from, to, m.out)
				}
			}
		}
	}
	if got := fmt.Sprint(quarantined); got != "quarantined" {
		t.Errorf("verdict names: %q", got)
	}
}
