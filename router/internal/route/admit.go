package route

import (
	"fmt"
	"slices"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/event"
)

// gate is what the bus takes of an event's content: the accounts on it and its hub.
type gate struct {
	// hub is the bus's own account: the one whose canaries may name clusters of another account ("" a bus of one
	// account).
	hub string
	// accounts are the accounts on the bus; none: every account is (a bus of one account, or an organization's, whose
	// accounts the sender check and the lookups find out).
	accounts []string
}

// onBus reports whether account is on the bus.
func (g gate) onBus(account string) bool {
	return len(g.accounts) == 0 || slices.Contains(g.accounts, account)
}

// admit is the outcome of a pending event once its sender was judged: still pending when the bus takes what it says;
// dropped when it names an account not on the bus, or is a canary naming clusters of an account not on the bus, or
// of an account other than the one it was put in when that is not the bus's own.
func (g gate) admit(ev event.Event) outcome {
	switch {
	case !g.onBus(ev.Account):
		return drop(contract.ReasonUnknownAccount, fmt.Errorf("account %s is not on the bus", ev.Account))
	case ev.Kind != contract.KindCanary:
		return outcome{}
	case !g.onBus(ev.To):
		return drop(contract.ReasonUnknownAccount, fmt.Errorf("a canary for account %s, which is not on the bus", ev.To))
	case ev.To != ev.Account && (g.hub == "" || ev.Account != g.hub):
		return drop(contract.ReasonCanaryForbidden, fmt.Errorf("a canary put in account %s names clusters of account %s: "+
			"only canaries put in the bus's own account may", ev.Account, ev.To))
	}
	return outcome{}
}
