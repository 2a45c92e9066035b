package route

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/archive"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/metrics"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/sender"
)

// Ledger records, in the archive, the delivery of each sealed record sent back, once (archive.Archive.Claim): it
// returns the delivery recorded before, if there was one.
type Ledger interface {
	Claim(ctx context.Context, d archive.Delivery) (*archive.Delivery, error)
}

var _ Ledger = (*archive.Archive)(nil)

// errNoLedger: a sealed record sent back cannot be recorded, so it is not delivered.
var errNoLedger = errors.New("the router has no ledger (ARCHIVE_BUCKET) to record the delivery of a sealed record in: it delivers none unrecorded")

// claimOutcome is the outcome of a sealed record sent back by the central queue's message id, once the ledger
// answered: still pending when its delivery is recorded now, or was by this very message (a retry of its
// delivery: the same message received again); dropped as replayed when another message delivered it before;
// retried when the ledger could not be read or written.
func claimOutcome(id string, before *archive.Delivery, err error) outcome {
	switch {
	case err != nil:
		return retry(fmt.Errorf("recording the delivery of a sealed record sent back: %w", err))
	case before == nil, before.MessageID == id:
		return outcome{}
	}
	return drop(contract.ReasonReplayed, fmt.Errorf("a sealed record delivered before, by message %s of the central queue sent by %s at %s: "+
		"a sealed record is delivered once", before.MessageID, before.Sender, before.At.UTC().Format(time.RFC3339)))
}

// claim records, before anything is delivered, the delivery of every sealed record the redrive role sent back that
// is to be delivered (its sender judged genuine by what its seal says), and applies what the ledger answered: a
// record delivered before by another message is refused as replayed, counted, logged with what delivered it.
func (r *Router) claim(ctx context.Context, msgs []message, stats *metrics.Batch, now time.Time) {
	var sealed []*message
	for i := range msgs {
		if m := &msgs[i]; m.kind == anEvent && m.out.verdict == pending && m.judged.Requeued && m.back != nil && m.back.req.Sealed {
			sealed = append(sealed, m)
		}
	}
	befores, errs := make([]*archive.Delivery, len(sealed)), make([]error, len(sealed))
	parallel(r.concurrency, len(sealed), func(i int) {
		if r.ledger == nil {
			errs[i] = errNoLedger
			return
		}
		m := sealed[i]
		befores[i], errs[i] = r.ledger.Claim(ctx, archive.Delivery{Bus: r.bus, Record: m.back.rec, MessageID: m.rec.MessageId,
			Sender: m.rec.Attributes[sender.Attribute], At: now})
	})
	for i, m := range sealed {
		o := claimOutcome(m.rec.MessageId, befores[i], errs[i])
		if o.reason == contract.ReasonReplayed {
			stats.Replayed()
			r.log.WarnContext(ctx, contract.LogReplayed, contract.LogSender, m.rec.Attributes[sender.Attribute], contract.LogEventID, m.ev.ID,
				"deliveredBy", befores[i].MessageID, "deliveredBySender", befores[i].Sender, "deliveredAt", befores[i].At)
		}
		if o.verdict != pending {
			r.decide(ctx, m, o)
		}
	}
}
