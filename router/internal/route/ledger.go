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

// Ledger records, in the archive, who delivers each sealed record sent back (archive.Archive.Claim) and, once a
// cluster queue received it, its delivery (Delivered): a record a cluster queue received before is a replay; one
// claimed and never delivered is not.
type Ledger interface {
	Claim(ctx context.Context, c archive.Claim) (*archive.Delivery, error)
	Delivered(ctx context.Context, d archive.Delivery) (*archive.Delivery, error)
}

var _ Ledger = (*archive.Archive)(nil)

// errNoLedger: a sealed record sent back cannot be recorded, so it is not delivered.
var errNoLedger = errors.New("the router has no ledger (ARCHIVE_BUCKET) to record the delivery of a sealed record in: it delivers none unrecorded")

// claimOutcome is the outcome of a sealed record sent back by the central queue's message id, once the ledger
// answered its claim: still pending when this message may deliver it (claimed now, or by this very message before: the
// same message received again); dropped as replayed when a cluster queue received it from another message before;
// dropped as ledger_hidden when a delete marker hides an entry of the ledger (its answer cannot be trusted); retried
// when another message is delivering it now, or the ledger could not be read or written.
func claimOutcome(id string, before *archive.Delivery, err error) outcome {
	switch {
	case errors.Is(err, archive.ErrHidden):
		return drop(contract.ReasonLedgerHidden, fmt.Errorf("recording the delivery of a sealed record sent back: %w", err))
	case err != nil:
		return retry(fmt.Errorf("recording the delivery of a sealed record sent back: %w", err))
	case before == nil, before.MessageID == id:
		return outcome{}
	}
	return drop(contract.ReasonReplayed, fmt.Errorf("a sealed record delivered before, by message %s of the central queue sent by %s at %s: "+
		"a sealed record is delivered once", before.MessageID, before.Sender, before.At.UTC().Format(time.RFC3339)))
}

// sealedRecords are the pending events that are sealed records the redrive role sent back (their sender judged
// genuine by what their seal says): what the ledger records.
func sealedRecords(msgs []message) []*message {
	var sealed []*message
	for i := range msgs {
		if m := &msgs[i]; m.kind == anEvent && m.out.verdict == pending && m.sentBack() {
			sealed = append(sealed, m)
		}
	}
	return sealed
}

// claim claims, before anything is delivered, every sealed record to be delivered until the invocation's end (until),
// and applies what the ledger answered: a record a cluster queue received before from another message is refused as
// replayed, counted, logged with what delivered it.
func (r *Router) claim(ctx context.Context, msgs []message, stats *metrics.Batch, now, until time.Time) {
	sealed := sealedRecords(msgs)
	befores, errs := make([]*archive.Delivery, len(sealed)), make([]error, len(sealed))
	parallel(r.concurrency, len(sealed), func(i int) {
		if r.ledger == nil {
			errs[i] = errNoLedger
			return
		}
		befores[i], errs[i] = r.ledger.Claim(ctx, archive.Claim{Delivery: r.deliveryOf(sealed[i], now), Until: until})
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

func (r *Router) deliveryOf(m *message, at time.Time) archive.Delivery {
	return archive.Delivery{Bus: r.bus, Record: m.back.rec, MessageID: m.rec.MessageId, Sender: m.rec.Attributes[sender.Attribute], At: at}
}

// record records in the ledger the delivery of every sealed record a cluster queue took (tallied, not failed): what
// could not be recorded is retried (the same message delivers it again, which Karpenter takes idempotently, then
// records it), so that no delivery goes unrecorded. Another message's delivery found there was a replay sent at the
// same time: counted and logged as one.
func (r *Router) record(ctx context.Context, msgs []message, stats *metrics.Batch, now time.Time) {
	var took []*message
	for _, m := range sealedRecords(msgs) {
		if m.sent > 0 && m.failed == nil {
			took = append(took, m)
		}
	}
	befores, errs := make([]*archive.Delivery, len(took)), make([]error, len(took))
	parallel(r.concurrency, len(took), func(i int) {
		befores[i], errs[i] = r.ledger.Delivered(ctx, r.deliveryOf(took[i], now))
	})
	for i, m := range took {
		switch {
		case errs[i] != nil:
			m.failed = fmt.Errorf("delivered, but its delivery could not be recorded in the ledger (delivered again, then recorded): %w", errs[i])
		case befores[i] != nil:
			stats.Replayed()
			r.log.WarnContext(ctx, contract.LogReplayedAtOnce, contract.LogSender, m.rec.Attributes[sender.Attribute], contract.LogEventID, m.ev.ID,
				"deliveredBy", befores[i].MessageID, "deliveredBySender", befores[i].Sender, "deliveredAt", befores[i].At)
		}
	}
}
