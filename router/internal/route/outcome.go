package route

import (
	"errors"
	"fmt"

	"github.com/aws/aws-lambda-go/events"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/event"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/sender"
)

// kind is what a record of the batch is: it decides which stages see it.
type kind uint8

const (
	// anEvent is an EventBridge event, or what claims to be one: its sender is judged and it is routed.
	anEvent kind = iota
	// anIntake is a request of the redrive role to take the dead-letter queue in (contract.AttrIntake): no event.
	anIntake
)

// verdict is what becomes of a message.
type verdict uint8

const (
	// pending: not decided yet; an event's deliveries, or an intake, are still to be tried.
	pending verdict = iota
	// forwarded: every owner's queue that exists took it; acknowledged.
	forwarded
	// dropped: acknowledged without (full) delivery, for a reason, never retried.
	dropped
	// quarantined: dropped for a reason worth keeping, and kept in the quarantine queue; acknowledged.
	quarantined
	// retried: listed in BatchItemFailures, so SQS delivers it again.
	retried
	// taken: an intake request, carried out; acknowledged.
	taken
)

var verdictNames = [...]string{"pending", "forwarded", "dropped", "quarantined", "retried", "taken"}

func (v verdict) String() string { return verdictNames[v] }

// outcome is a message's verdict with its reason (dropped, quarantined) and its cause: why it was dropped or retried,
// or, when forwarded, why some owner had no queue.
type outcome struct {
	verdict verdict
	reason  contract.Reason
	err     error
}

func drop(reason contract.Reason, err error) outcome {
	return outcome{verdict: dropped, reason: reason, err: err}
}
func retry(err error) outcome { return outcome{verdict: retried, err: err} }

// errTransition: a stage tried to change an outcome in a way no rule allows (a bug, never a message's fault).
var errTransition = errors.New("an outcome no rule allows")

// allowed reports whether a message of kind k (sentBack: a sealed record the redrive role sent back) may go from
// outcome o to n:
//   - a pending event may be forwarded, dropped or retried;
//   - a pending intake request may be taken, dropped or retried;
//   - a dropped message may be quarantined (kept, for a reason the quarantine keeps, or keeps of a record sent back)
//     or retried (the quarantine could not keep it: a refusal never deletes what was not kept);
//
// every other outcome is final.
func allowed(k kind, sentBack bool, o, n outcome) bool {
	kept := contract.Quarantined
	if sentBack {
		kept = contract.QuarantinedWhenSentBack
	}
	switch o.verdict {
	case pending:
		switch n.verdict {
		case dropped, retried:
			return true
		case forwarded:
			return k == anEvent
		case taken:
			return k == anIntake
		}
	case dropped:
		switch n.verdict {
		case quarantined:
			return n.reason == o.reason && kept(o.reason)
		case retried:
			return kept(o.reason)
		}
	}
	return false
}

// message is one record of the batch: what it is, its event, its outcome, what its sender check found, and while it
// is pending, the tally of its deliveries.
type message struct {
	rec  *events.SQSMessage
	kind kind
	ev   event.Event
	out  outcome
	// back is what a record sent back says of itself (readSentBack; nil before its sender is judged); judged, what the
	// sender check made of it: the sender judged (the first sender of a record sent back) is what the quarantine keeps.
	back   *sentBack
	judged sender.Result

	sent    int      // deliveries SQS accepted
	noQueue error    // why an owner has no queue, if one has none
	failed  error    // a delivery that may succeed when tried again
	limited []string // clusters a canary was not delivered to: they had one less than an interval ago
}

// sentBack reports whether m is a sealed record the redrive role sent back, its seal verified.
func (m *message) sentBack() bool { return m.judged.Requeued && m.back != nil && m.back.req.Sealed }

// keptFor reports whether m, refused for reason, is kept in the quarantine.
func (m *message) keptFor(reason contract.Reason) bool {
	if m.sentBack() {
		return contract.QuarantinedWhenSentBack(reason)
	}
	return contract.Quarantined(reason)
}

// set is the one way a message's outcome changes: to n, when allowed says it may; otherwise the outcome stays, and
// the error names the transition refused.
func (m *message) set(n outcome) error {
	if !allowed(m.kind, m.sentBack(), m.out, n) {
		return fmt.Errorf("%w: message %s from %s (%s) to %s (%s)", errTransition, m.rec.MessageId, m.out.verdict, m.out.reason,
			n.verdict, n.reason)
	}
	m.out = n
	return nil
}
