package route

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/intake"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/metrics"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/quarantine"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/sender"
)

// refusals are the messages refused for a reason worth reading again (contract.QuarantineReasons), and what the
// quarantine keeps of each, when there is a quarantine; read before the stages run side by side.
func (r *Router) refusals(msgs []message) ([]*message, []quarantine.Message) {
	if r.quarantine == nil {
		return nil, nil
	}
	var refused []*message
	var kept []quarantine.Message
	for i := range msgs {
		m := &msgs[i]
		if m.out.verdict != dropped || !m.keptFor(m.out.reason) {
			continue
		}
		refused = append(refused, m)
		kept = append(kept, keptOf(m))
	}
	return refused, kept
}

// keptOf is what the quarantine keeps of refused message m: its sender and send time are the ones its sender check
// judged (the first sender of a message sent back), or, unjudged, the record's own; a record sent back whose seal
// verified keeps the ID it was first refused under.
func keptOf(m *message) quarantine.Message {
	k := quarantine.Message{
		Body: &m.rec.Body, Reason: m.out.reason, Err: m.out.err, Account: m.ev.Account,
		Sender: m.rec.Attributes[sender.Attribute], Sent: m.rec.Attributes[sender.SentAttribute],
		MessageID: m.rec.MessageId, Refused: m.rec.MessageId, EventID: m.ev.ID,
	}
	j := m.judged
	if j.Requeued && m.back != nil && m.back.first != "" {
		k.MessageID = m.back.first
	}
	if j.Requeued {
		k.Sender, k.Sent, k.FromDLQ = j.Sender, "", j.FromDLQ
		if !j.Sent.IsZero() && j.Sent.UnixMilli() > 0 {
			k.Sent = strconv.FormatInt(j.Sent.UnixMilli(), 10)
		}
	}
	return k
}

// keep sends kept to the quarantine: one error per message, in order. It reads no message of the batch.
func (r *Router) keep(ctx context.Context, kept []quarantine.Message) []error {
	if len(kept) == 0 {
		return nil
	}
	return r.quarantine.Keep(ctx, kept)
}

// keptOutcome is the outcome of a refused message (o) once the quarantine answered err for it: quarantined when it
// took it, or kept it in the archive only (too large for the quarantine: its error says so), retried otherwise, so
// that no refusal deletes a message that was not kept.
func keptOutcome(o outcome, err error) outcome {
	switch {
	case errors.Is(err, quarantine.ErrArchivedOnly):
		return outcome{verdict: quarantined, reason: o.reason, err: errors.Join(o.err, err)}
	case err != nil:
		return retry(fmt.Errorf("refused as %s (%w), and %w", o.reason, o.err, err))
	}
	return outcome{verdict: quarantined, reason: o.reason, err: o.err}
}

// ask is an intake request: who sent it, and when.
type ask struct {
	m    *message
	from string
	sent time.Time
}

// asksOf are the batch's intake requests, read before the stages run side by side.
func asksOf(msgs []message) []ask {
	var asks []ask
	for i := range msgs {
		if m := &msgs[i]; m.kind == anIntake { // nothing decides a request before the intake
			asks = append(asks, ask{m: m, from: m.rec.Attributes[sender.Attribute], sent: millis(m.rec.Attributes[sender.SentAttribute])})
		}
	}
	return asks
}

// intakeFacts are what the intake stage learned: whether each request's sender is the redrive role (or why IAM could
// not say), and what the one intake of the batch took (or why it failed; tried: it was tried).
type intakeFacts struct {
	redrive []bool
	errs    []error
	tried   bool
	took    intake.Result
	err     error
}

// takeIn asks IAM whether each request's sender is the redrive role, and takes the dead-letter queue into the
// quarantine once for the batch when one is. It reads no message of the batch.
func (r *Router) takeIn(ctx context.Context, asks []ask) intakeFacts {
	f := intakeFacts{redrive: make([]bool, len(asks)), errs: make([]error, len(asks))}
	if r.intake == nil || r.senders == nil {
		return f
	}
	for i, a := range asks {
		f.redrive[i], f.errs[i] = r.senders.IsRedrive(ctx, a.from, a.sent)
		if f.redrive[i] && !f.tried { // an error says false
			f.tried = true
			f.took, f.err = r.intake.Take(ctx)
		}
	}
	return f
}

// errNoIntake: this router cannot take the dead-letter queue in.
var errNoIntake = errors.New("a request to take the dead-letter queue in, which this router cannot (no DEAD_LETTER_QUEUE_URL or no redrive role)")

// intakeOutcome is the outcome of an intake request sent by from: refused when the router has no intake (can) or
// another sender than the redrive role sent it, retried while IAM cannot tell (redriveErr) or the intake failed
// (took, takeErr), taken otherwise.
func intakeOutcome(can bool, from string, redrive bool, redriveErr error, took intake.Result, takeErr error) outcome {
	switch {
	case !can:
		return drop(contract.ReasonNotInterruption, errNoIntake)
	case redriveErr != nil:
		return retry(fmt.Errorf("checking who asked to take the dead-letter queue in: %w", redriveErr))
	case !redrive:
		return drop(contract.ReasonNotInterruption, fmt.Errorf("a request to take the dead-letter queue in sent by %s, "+
			"not the redrive role: only it may ask", from))
	case takeErr != nil:
		return retry(fmt.Errorf("taking the dead-letter queue in (%d kept before): %w", took.Kept, takeErr))
	}
	return outcome{verdict: taken}
}

// applyKept and applyIntake apply, once the stages joined, what the quarantine and the intake answered.
func (r *Router) applyKept(ctx context.Context, refused []*message, errs []error, stats *metrics.Batch) {
	for i, m := range refused {
		o := keptOutcome(m.out, errs[i])
		r.decide(ctx, m, o)
		if o.verdict == quarantined {
			stats.Quarantine()
		}
	}
}

func (r *Router) applyIntake(ctx context.Context, asks []ask, f intakeFacts, stats *metrics.Batch) {
	can := r.intake != nil && r.senders != nil
	for i, a := range asks {
		r.decide(ctx, a.m, intakeOutcome(can, a.from, f.redrive[i], f.errs[i], f.took, f.err))
	}
	stats.DeadLettered(f.took.Kept) // what a failed intake kept before it failed is in the quarantine too
	if f.tried && f.err == nil {
		for i, a := range asks {
			if f.redrive[i] {
				r.log.InfoContext(ctx, contract.LogDeadLettersTaken, "kept", f.took.Kept, "more", f.took.More, contract.LogSender, a.from)
				for _, id := range f.took.ArchivedOnly {
					r.log.WarnContext(ctx, contract.LogKeptInArchiveOnly, contract.LogEventID, id, contract.LogReason, contract.ReasonDeadLettered,
						contract.LogArchivedOnly, true)
				}
				break
			}
		}
	}
}
