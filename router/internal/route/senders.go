package route

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/accounts"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/metrics"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/sender"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sealing"
)

// sentBack is what a record says of its first sending, for the sender check to honour when the redrive role sent it
// back (it does only then), and what its seal proves of it: sealed is the reason it was kept for and first the ID it
// was first refused under, when its seal verifies ("" otherwise).
type sentBack struct {
	req    sender.Requeue
	sealed contract.Reason
	first  string
	// rec is the record its seal covers, when it verifies: what the ledger records once delivered.
	rec sealing.Record
}

// errNoSealKey: the router was given no seal key, so no seal can be checked.
var errNoSealKey = errors.New("the router has no seal key (SEAL_KEY_ARN), so it believes no seal")

// sentBackOf is what record rec, carrying seal and vouch, says of itself, given what checking its seal found: verified
// is Verify's answer, hasKey whether the router has a key to check with. A record with no seal, or with one that does
// not verify, speaks for no account (Unsealed); one whose seal could not be checked now is retried (Unverified).
func sentBackOf(rec sealing.Record, seal, vouch string, hasKey bool, verified error) sentBack {
	b := sentBack{req: sender.Requeue{FirstSender: rec.FirstSender, FirstSent: millis(rec.FirstSent), FromDLQ: rec.Origin == contract.OriginDLQ,
		Vouch: vouch}}
	switch {
	case seal == "":
		b.req.Unsealed = sealing.ErrNoSeal
	case !hasKey:
		b.req.Unsealed = errNoSealKey
	case errors.Is(verified, sealing.ErrBroken), errors.Is(verified, sealing.ErrNoSeal):
		b.req.Unsealed = verified
	case verified != nil:
		b.req.Unverified = verified
	default:
		b.sealed, b.first, b.rec = contract.Reason(rec.Reason), rec.MessageID, rec
		b.req.Sealed, b.req.Vouchable = true, slices.Contains(contract.Vouchable, b.sealed)
	}
	return b
}

// unsealedRecord is what a record with no seal says of itself: nothing the checker believes.
var unsealedRecord = &sentBack{req: sender.Requeue{Unsealed: sealing.ErrNoSeal}}

// readSentBack reads what m says of its first sending (sealing.ReadSentBack) and checks its seal. A record with no
// seal is not read further: the events of the bus's rules carry none, and the checker believes nothing unsealed.
func (r *Router) readSentBack(ctx context.Context, m *message) *sentBack {
	if attr(m.rec, contract.AttrSeal) == "" {
		return unsealedRecord
	}
	rec, seal := sealing.ReadSentBack(m.rec.Body, m.ev.Account, func(k string) string { return attr(m.rec, k) })
	var verified error
	if r.seals != nil {
		verified = r.seals.Verify(ctx, rec, seal)
	}
	b := sentBackOf(rec, seal, attr(m.rec, contract.AttrVouched), r.seals != nil, verified)
	return &b
}

// senderRuling is what the sender check's result makes of a message (out: still pending, dropped or retried), and
// what is counted and logged of it.
type senderRuling struct {
	out outcome
	// observed: observe mode let it through, which enforce mode would have refused for reason ("": retried) because
	// of err.
	observed bool
	reason   contract.Reason
	err      error
	// forged and unsealed are counted (MetricForgedSender, MetricUnsealed); vouched, delivered on an operator's vouch,
	// is logged with who vouched; readerRefused, its account's reader role was refused, is logged once per account.
	forged, unsealed, vouched, readerRefused bool
}

// ruleOnSender is the rule of a message's sender: res is the checker's verdict, sealed the reason a record sent back
// was kept for when its seal verifies, observe the mode. A proven forgery is dropped as forged_sender, what the
// redrive role sent unsealed as unsealed, an unattributable sender as unattributable_sender, an account not on the bus
// as unknown_account; an undecided one is retried. A sealed record kept as evidence stays evidence whatever its first
// sender is now. Observed, only unknown_account is dropped; the rest is let through, and logged.
func ruleOnSender(res sender.Result, sealed contract.Reason, observe bool) senderRuling {
	refuse := func(reason contract.Reason, err error) senderRuling {
		if observe {
			return senderRuling{observed: true, reason: reason, err: err}
		}
		return senderRuling{out: drop(reason, err), reason: reason, err: err}
	}
	if res.Requeued && slices.Contains(contract.Evidence, sealed) && res.Verdict != sender.Undecided {
		// A proof stays a proof: what the router kept as evidence is refused again for it, whatever its sender is now.
		err := fmt.Errorf("kept before as %s, evidence, which is never sent back", sealed)
		ruling := refuse(sealed, err)
		ruling.forged, ruling.unsealed = sealed == contract.ReasonForgedSender, sealed == contract.ReasonUnsealed
		return ruling
	}
	switch res.Verdict {
	case sender.Genuine:
		return senderRuling{vouched: res.Vouched}
	case sender.Forged:
		ruling := refuse(contract.ReasonForgedSender, res.Err)
		ruling.forged = true
		return ruling
	case sender.Unsealed:
		ruling := refuse(contract.ReasonUnsealed, res.Err)
		ruling.unsealed = true
		return ruling
	case sender.Unattributable:
		return refuse(contract.ReasonUnattributable, res.Err)
	case sender.NotOnBus:
		return senderRuling{out: drop(contract.ReasonUnknownAccount, res.Err), reason: contract.ReasonUnknownAccount, err: res.Err,
			readerRefused: errors.Is(res.Err, accounts.ErrUnknownAccount)}
	case sender.Undecided:
		if observe {
			return senderRuling{observed: true, err: res.Err}
		}
		return senderRuling{out: retry(fmt.Errorf("checking the sender: %w", res.Err)), err: res.Err}
	}
	err := fmt.Errorf("the sender check gave no verdict on sender %q", res.Sender)
	return senderRuling{out: retry(err), err: err}
}

// judgeSenders judges the sender of every pending event, for each account the events name (the accounts in parallel,
// as lookups are), and applies the rule of each. A record the redrive role sent back is judged by the first sender its
// seal vouches for.
func (r *Router) judgeSenders(ctx context.Context, msgs []message, stats *metrics.Batch) {
	if r.senders == nil {
		return
	}
	type checked struct {
		msgs []*message
		in   []sender.Message
		out  []sender.Result
	}
	byAccount := map[string]*checked{}
	var names []string
	for i := range msgs {
		m := &msgs[i]
		if m.kind != anEvent || m.out.verdict != pending {
			continue
		}
		c := byAccount[m.ev.Account]
		if c == nil {
			c = &checked{}
			byAccount[m.ev.Account] = c
			names = append(names, m.ev.Account)
		}
		m.back = r.readSentBack(ctx, m)
		c.msgs = append(c.msgs, m)
		c.in = append(c.in, sender.Message{Sender: m.rec.Attributes[sender.Attribute], Sent: millis(m.rec.Attributes[sender.SentAttribute]),
			Requeue: m.back.req})
	}
	// The accounts on the bus first: the forwarders they learn tie their IDs to them, so a forwarder naming an
	// account not on the bus in the same batch is found out. Each account's check writes its own results only.
	on, off := partition(names, r.gate.onBus)
	for _, group := range [][]string{on, off} {
		parallel(r.concurrency, len(group), func(i int) {
			c := byAccount[group[i]]
			c.out = r.senders.Check(ctx, group[i], r.gate.onBus(group[i]), c.in)
		})
	}
	for _, a := range names {
		c := byAccount[a]
		for j, m := range c.msgs {
			m.judged = c.out[j]
			r.applySender(ctx, m, stats)
		}
	}
}

// applySender applies the rule on m's sender: its outcome, what is counted and logged of it.
func (r *Router) applySender(ctx context.Context, m *message, stats *metrics.Batch) {
	s, res := m.rec.Attributes[sender.Attribute], m.judged
	who := s // the sender judged: the record's, or the first sender of a message sent back
	if res.Requeued {
		who = res.Sender
	}
	if res.Requeued {
		// Who sent it back, as SQS stamped it: the redrive role's ID and the session's name, which CloudTrail ties to
		// the source identity the session was opened with.
		id, session, _ := strings.Cut(s, ":")
		r.log.InfoContext(ctx, contract.LogSentBack, contract.LogSender, s, contract.LogRoleID, id, contract.LogSession, session,
			"account", m.ev.Account, contract.LogEventID, m.ev.ID, "firstSender", res.Sender, "sealedAs", m.back.sealed)
	}
	if _, isRole := sender.RoleID(s); !isRole && s != "" {
		stats.ServiceSender()
		if _, logged := r.seen.LoadOrStore(s, true); !logged {
			r.log.InfoContext(ctx, contract.LogServiceSender, contract.LogSender, s, "account", m.ev.Account, contract.LogEventID, m.ev.ID)
		}
	}
	ruling := ruleOnSender(res, m.back.sealed, r.observe) // judged, so read
	if ruling.forged {
		stats.ForgedSender()
	}
	if ruling.unsealed {
		stats.Unsealed()
	}
	switch {
	case ruling.observed: // reason "": enforce mode would have retried it
		r.log.WarnContext(ctx, contract.LogSenderObserved, contract.LogReason, ruling.reason, contract.LogSender, who,
			"account", m.ev.Account, contract.LogEventID, m.ev.ID, contract.LogRequeued, res.Requeued, "error", ruling.err.Error())
	case ruling.vouched:
		r.log.WarnContext(ctx, contract.LogVouched, contract.LogSender, who, "account", m.ev.Account, contract.LogEventID, m.ev.ID,
			contract.LogVouch, attr(m.rec, contract.AttrVouched), contract.LogVouchedBy, attr(m.rec, contract.AttrVouchedBy))
	case ruling.readerRefused:
		if _, logged := r.refused.LoadOrStore(m.ev.Account, true); !logged {
			r.log.WarnContext(ctx, contract.LogReaderRefused, "account", m.ev.Account, "error", res.Err.Error())
		}
	}
	if ruling.out.verdict != pending {
		r.decide(ctx, m, ruling.out)
	}
}

// partition splits names into those keep says true of and the others, in order.
func partition(names []string, keep func(string) bool) (yes, no []string) {
	for _, n := range names {
		if keep(n) {
			yes = append(yes, n)
		} else {
			no = append(no, n)
		}
	}
	return yes, no
}
