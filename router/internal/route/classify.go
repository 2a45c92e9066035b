package route

import (
	"errors"
	"fmt"

	"github.com/aws/aws-lambda-go/events"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/event"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/intake"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/metrics"
)

// classify is what record rec of the bus bus is, its event, and its outcome when that alone decides it: an intake
// request (pending, for the intake); a body that is no interruption event, or none at all, or a canary of another
// bus (dropped); an event (pending). Nothing is decided here of the account an event names: its sender is judged
// first, so an event naming an account not on the bus is kept with the verdict on its sender, never sent back later
// as that account's unjudged.
func classify(rec *events.SQSMessage, bus string) (kind, event.Event, outcome) {
	if intake.Requested(rec) {
		return anIntake, event.Event{}, outcome{}
	}
	ev, err := event.Parse([]byte(rec.Body)) // with ErrNotInterruption it still names the event, for the drop log
	switch {
	case errors.Is(err, event.ErrNotInterruption):
		return anEvent, ev, drop(contract.ReasonNotInterruption, err)
	case err != nil:
		return anEvent, ev, drop(contract.ReasonUnparseable, err)
	case ev.Kind == contract.KindCanary && ev.Bus != bus:
		return anEvent, ev, drop(contract.ReasonNotInterruption, fmt.Errorf("a canary for bus %q, this is %q", ev.Bus, bus))
	}
	return anEvent, ev, outcome{}
}

// classifyAll classifies every record of the batch, counting each received by its kind.
func (r *Router) classifyAll(recs []events.SQSMessage, stats *metrics.Batch) []message {
	msgs := make([]message, len(recs))
	for i := range recs {
		m := &msgs[i]
		m.rec = &recs[i]
		m.kind, m.ev, m.out = classify(m.rec, r.bus)
		stats.Receive(m.ev.Kind) // an intake request has no kind: counted as unknown
	}
	return msgs
}
