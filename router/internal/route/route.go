// Package route handles one Lambda invocation: a batch of SQS messages from the central queue, each one raw
// EventBridge event, forwarded byte for byte to the queue of every cluster that owns an instance it names.
package route

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/event"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/accounts"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/canary"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/forward"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/intake"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/metrics"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/owner"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/quarantine"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/redeliver"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/sender"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sealing"
)

// Resolver finds the owning cluster of instances of an account in a region.
type Resolver interface {
	Resolve(ctx context.Context, account, region string, ids []string) map[string]owner.Owner
}

// Sender delivers bodies to one queue, returning one error per body.
type Sender interface {
	Send(ctx context.Context, q forward.Queue, bodies []*string) []error
}

// Redeliverer brings a message left for redelivery back after a backoff on its receive count, and says when.
type Redeliverer interface {
	Later(ctx context.Context, receiptHandle string, receiveCount int) (time.Duration, error)
}

// SenderChecker judges whether the senders of messages may speak for the account their events name, which is on
// the bus or not, and whether a sender is the redrive role.
type SenderChecker interface {
	Check(ctx context.Context, account string, onBus bool, msgs []sender.Message) []sender.Result
	IsRedrive(ctx context.Context, s string, sent time.Time) (bool, error)
}

// Verifier checks the router's seal of what a message sent back says of itself.
type Verifier interface {
	Verify(ctx context.Context, rec sealing.Record, seal string) error
}

// Intaker takes the dead-letter queue into the quarantine.
type Intaker interface {
	Take(ctx context.Context) (intake.Result, error)
}

// Quarantiner keeps refused messages, returning one error per message.
type Quarantiner interface {
	Keep(ctx context.Context, msgs []quarantine.Message) []error
}

var (
	_ Quarantiner   = (*quarantine.Queue)(nil)
	_ Resolver      = (*accounts.Owners)(nil)
	_ Sender        = (*forward.Forwarder)(nil)
	_ Redeliverer   = (*redeliver.Scheduler)(nil)
	_ SenderChecker = (*sender.Checker)(nil)
	_ Verifier      = (*sealing.Sealer)(nil)
	_ Intaker       = (*intake.Intake)(nil)
)

// Router handles batches. It is safe for concurrent use.
type Router struct {
	owners      Resolver
	sender      Sender
	redeliverer Redeliverer
	senders     SenderChecker
	quarantine  Quarantiner
	seals       Verifier
	intake      Intaker
	observe     bool
	seen        sync.Map // SenderIds of no role already logged
	refused     sync.Map // accounts whose reader role the sender check found refused, already logged
	prefix      string
	bus         string
	hub         string
	accounts    []string
	canaries    *canary.Limiter
	busQueues   []string
	concurrency int
	metrics     *metrics.Writer
	log         *slog.Logger
	now         func() time.Time
}

// Options configures a Router.
type Options struct {
	// QueuePrefix starts every cluster queue's name; see queuename.For.
	QueuePrefix string
	// Bus is the bus's name (its Bus dimension): canaries for another bus are dropped.
	Bus string
	// Hub is the bus's own account, where make verify runs: the one account whose canaries may name clusters of
	// another account. Empty: a bus of one account, whose canaries name their own account's clusters only.
	Hub string
	// Accounts are the accounts on the bus (its own and its members'): an event of any other is dropped as
	// unknown_account. Empty: every account is.
	Accounts []string
	// Canaries, when set, bounds the canaries delivered to each cluster (canary.Limiter); the excess is dropped as
	// canary_rate_limited.
	Canaries *canary.Limiter
	// BusQueues are never a destination: an event must not loop back into the bus.
	BusQueues []string
	// Redeliverer, when set, brings retried messages back after a backoff instead of the visibility timeout.
	Redeliverer Redeliverer
	// Senders, when set, checks that each message's sender may speak for the account its event names, before
	// anything else is decided of it: a proven forgery is dropped as forged_sender, a sender that cannot be
	// attributed as unattributable_sender, an undecided one retried; with SenderObserve, each is logged, counted and
	// forwarded all the same.
	Senders       SenderChecker
	SenderObserve bool
	// Quarantine, when set, keeps every message refused for one of contract.QuarantineReasons instead of deleting
	// it; one it cannot keep is retried.
	Quarantine Quarantiner
	// Seals, when set, verifies the seal of what a message the redrive role sent says of itself: without it, no such
	// message is believed (contract.ReasonUnsealed).
	Seals Verifier
	// Intake, when set, takes the dead-letter queue into the quarantine when the redrive role asks
	// (contract.AttrIntake).
	Intake Intaker
	// SendConcurrency bounds the queues sent to at once.
	SendConcurrency int
	Metrics         *metrics.Writer
	Log             *slog.Logger
	// Now defaults to time.Now; tests fix it.
	Now func() time.Time
}

// New returns a Router.
func New(owners Resolver, sender Sender, opts Options) *Router {
	r := &Router{
		owners: owners, sender: sender, redeliverer: opts.Redeliverer, senders: opts.Senders, observe: opts.SenderObserve,
		quarantine: opts.Quarantine, seals: opts.Seals, intake: opts.Intake,
		prefix: opts.QueuePrefix, bus: opts.Bus, hub: opts.Hub,
		accounts: opts.Accounts, canaries: opts.Canaries, busQueues: opts.BusQueues,
		concurrency: max(opts.SendConcurrency, 1), metrics: opts.Metrics, log: opts.Log, now: opts.Now,
	}
	if r.now == nil {
		r.now = time.Now
	}
	return r
}

// verdict is what becomes of a message.
type verdict uint8

const (
	// routing: not decided yet; the message's deliveries are still to be tried.
	routing verdict = iota
	// forwarded: every owner's queue that exists took it; acknowledged.
	forwarded
	// dropped: acknowledged without (full) delivery, for a reason, never retried.
	dropped
	// quarantined: refused, and kept in the quarantine queue; acknowledged.
	quarantined
	// retried: listed in BatchItemFailures, so SQS delivers it again.
	retried
	// asked: a request of the redrive role to take the dead-letter queue in (contract.AttrIntake), no event.
	asked
	// taken: such a request, done; acknowledged.
	taken
)

// outcome is a message's verdict with its reason (dropped) and its cause: why it was dropped or retried, or,
// when forwarded, why some owner had no queue.
type outcome struct {
	verdict verdict
	reason  contract.Reason
	err     error
}

func drop(reason contract.Reason, err error) outcome {
	return outcome{verdict: dropped, reason: reason, err: err}
}
func retry(err error) outcome { return outcome{verdict: retried, err: err} }

// message is one record of the batch: its event, its outcome once decided, and while it is routing, the tally of
// its deliveries.
type message struct {
	rec *events.SQSMessage
	ev  event.Event
	out outcome
	// judged is what the sender check made of it: the sender judged (the first sender of a message sent back) is
	// what the quarantine keeps.
	judged sender.Result
	// sealed is the reason a message sent back was kept for, and first its ID where it was first refused, when its
	// seal verifies ("" otherwise).
	sealed contract.Reason
	first  string

	sent    int      // deliveries SQS accepted
	noQueue error    // why an owner has no queue, if one has none
	failed  error    // a delivery that may succeed when tried again
	limited []string // clusters a canary was not delivered to: they had one less than an interval ago
}

// settle decides the outcome of a message whose deliveries have all been tried. A delivery that may succeed
// later makes the whole message retried: the owners that got it get it again, which Karpenter handles
// idempotently. Otherwise it is forwarded if any owner's queue took it, and dropped for want of a queue if none
// did.
func (m *message) settle() {
	switch {
	case m.out.verdict != routing:
	case m.failed != nil:
		m.out = retry(m.failed)
	case m.sent > 0:
		m.out = outcome{verdict: forwarded, err: m.noQueue}
	case len(m.limited) > 0 && m.noQueue == nil:
		m.out = drop(contract.ReasonCanaryRateLimited, fmt.Errorf("clusters %v had a canary less than the canary interval ago", m.limited))
	default:
		m.out = drop(contract.ReasonNoQueue, m.noQueue)
	}
}

// delivery is every body bound for one queue in this batch.
type delivery struct {
	queue   forward.Queue
	cluster string
	n       int // messages bound for the queue
	msgs    []*message
	bodies  []*string
	errs    []error
}

// Handle routes a batch. Each message is forwarded, dropped with a reason, or listed in BatchItemFailures for
// redelivery; one bad message never fails the others. The error is non-nil only when the batch could not be
// started at all, so Lambda retries it whole.
func (r *Router) Handle(ctx context.Context, in events.SQSEvent) (events.SQSEventResponse, error) {
	if err := ctx.Err(); err != nil {
		return events.SQSEventResponse{}, fmt.Errorf("batch of %d messages not started: %w", len(in.Records), err)
	}
	var stats metrics.Batch
	msgs := r.parse(in.Records, &stats)
	r.checkSenders(ctx, msgs, &stats)
	r.admit(msgs)
	deliveries := r.plan(msgs, r.resolve(ctx, lookups(msgs)))
	// The refused messages are kept, and the dead-letter queue taken in when asked, while the others are delivered:
	// neither holds the batch up.
	var wg sync.WaitGroup
	var took intake.Result
	wg.Go(func() { r.keep(ctx, msgs, &stats) })
	wg.Go(func() { took = r.takeIn(ctx, msgs) })
	r.send(ctx, deliveries)
	wg.Wait()
	stats.DeadLettered(took.Kept)
	now := r.now()
	r.tally(ctx, deliveries, &stats, now)
	resp := r.respond(ctx, msgs, len(deliveries), &stats)
	if r.metrics != nil {
		if err := r.metrics.Flush(&stats, now); err != nil {
			r.log.ErrorContext(ctx, "writing metrics", "error", err)
		}
	}
	return resp, nil
}

// where is an account and a region: the scope of an instance id.
type where struct{ account, region string }

// parse decodes every record and drops what is not an interruption event or a canary of this bus. Nothing is
// decided here of the account an event names: its sender is judged first (checkSenders), so an event naming an
// account not on the bus is kept with the verdict on its sender, never sent back later as that account's unjudged.
func (r *Router) parse(recs []events.SQSMessage, stats *metrics.Batch) []message {
	msgs := make([]message, len(recs))
	for i := range recs {
		m := &msgs[i]
		m.rec = &recs[i]
		if intake.Requested(m.rec) {
			m.out = outcome{verdict: asked}
			stats.Receive(contract.KindUnknown)
			continue
		}
		ev, err := event.Parse([]byte(m.rec.Body))
		m.ev = ev // with ErrNotInterruption it still names the event, for the drop log
		switch {
		case errors.Is(err, event.ErrNotInterruption):
			m.out = drop(contract.ReasonNotInterruption, err)
		case err != nil:
			m.out = drop(contract.ReasonUnparseable, err)
		case ev.Kind == contract.KindCanary && ev.Bus != r.bus:
			m.out = drop(contract.ReasonNotInterruption, fmt.Errorf("a canary for bus %q, this is %q", ev.Bus, r.bus))
		}
		stats.Receive(ev.Kind)
	}
	return msgs
}

// onBus reports whether account is on the bus: every account when the bus lists none (a bus of one account, or an
// organization's, whose accounts the sender check and the lookups find out).
func (r *Router) onBus(account string) bool {
	return len(r.accounts) == 0 || slices.Contains(r.accounts, account)
}

// admit drops, of the messages still routing once their senders were judged, those whose content the bus does not
// take: an event of an account not on the bus (when no sender check judged it), a canary naming clusters of an
// account not on the bus, or of an account other than the one it was put in outside the bus's own.
func (r *Router) admit(msgs []message) {
	for i := range msgs {
		m := &msgs[i]
		ev := m.ev
		switch {
		case m.out.verdict != routing:
		case !r.onBus(ev.Account):
			m.out = drop(contract.ReasonUnknownAccount, fmt.Errorf("account %s is not on the bus", ev.Account))
		case ev.Kind == contract.KindCanary && !r.onBus(ev.To):
			m.out = drop(contract.ReasonUnknownAccount, fmt.Errorf("a canary for account %s, which is not on the bus", ev.To))
		case ev.Kind == contract.KindCanary && ev.To != ev.Account && (r.hub == "" || ev.Account != r.hub):
			m.out = drop(contract.ReasonCanaryForbidden, fmt.Errorf("a canary put in account %s names clusters of account %s: "+
				"only canaries put in the bus's own account may", ev.Account, ev.To))
		}
	}
}

// lookups are the instance ids of the routing messages to look up, per account and region (canaries name
// clusters, not instances).
func lookups(msgs []message) map[where][]string {
	ids := make(map[where][]string, 1)
	for i := range msgs {
		m := &msgs[i]
		if m.out.verdict != routing || m.ev.Kind == contract.KindCanary {
			continue
		}
		w := where{m.ev.Account, m.ev.Region}
		if _, ok := ids[w]; !ok && len(ids) == 0 { // sized for the usual batch: one scope, one instance a message
			ids[w] = make([]string, 0, len(msgs))
		}
		ids[w] = append(ids[w], m.ev.InstanceIDs...)
	}
	return ids
}

// checkSenders judges, for each account the routing messages name, whether their senders may speak for it (the
// accounts in parallel, as lookups are), and settles what may not (settleSender). A message the redrive role sent
// back is judged by the first sender it carries.
func (r *Router) checkSenders(ctx context.Context, msgs []message, stats *metrics.Batch) {
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
		if m.out.verdict != routing {
			continue
		}
		c := byAccount[m.ev.Account]
		if c == nil {
			c = &checked{}
			byAccount[m.ev.Account] = c
			names = append(names, m.ev.Account)
		}
		c.msgs = append(c.msgs, m)
		c.in = append(c.in, sender.Message{Sender: m.rec.Attributes[sender.Attribute], Sent: millis(m.rec.Attributes[sender.SentAttribute]),
			Requeue: r.requeueOf(ctx, m)})
	}
	// The accounts on the bus first: the forwarders they learn tie their IDs to them, so a forwarder naming an
	// account not on the bus in the same batch is found out.
	on, off := partition(names, r.onBus)
	for _, group := range [][]string{on, off} {
		parallel(r.concurrency, len(group), func(i int) {
			c := byAccount[group[i]]
			c.out = r.senders.Check(ctx, group[i], r.onBus(group[i]), c.in)
		})
	}
	for _, a := range names {
		c := byAccount[a]
		for j, m := range c.msgs {
			m.judged = c.out[j]
			r.settleSender(ctx, m, c.in[j].Sender, stats)
		}
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

// millis is an SQS epoch-milliseconds attribute as a time; zero when it is none.
func millis(v string) time.Time {
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// requeueOf is what a record says of its first sending (contract.AttrFirstSender, ...) and whether the router sealed
// it (contract.AttrSeal over the body and what it says, verified here; m.sealed and m.first are set when it verifies);
// the checker honours it only when the redrive role sent the record, and only when sealed. A record with no seal is
// not verified at all (the events of the bus's rules carry none).
func (r *Router) requeueOf(ctx context.Context, m *message) sender.Requeue {
	rec := m.rec
	req := sender.Requeue{
		FirstSender: attr(rec, contract.AttrFirstSender), FirstSent: millis(attr(rec, contract.AttrFirstSent)),
		FromDLQ: attr(rec, contract.AttrOrigin) == contract.OriginDLQ, Vouch: attr(rec, contract.AttrVouched),
	}
	seal, reason := attr(rec, contract.AttrSeal), contract.Reason(attr(rec, contract.AttrReason))
	switch {
	case seal == "":
		req.Unsealed = sealing.ErrNoSeal
		return req
	case r.seals == nil:
		req.Unsealed = errors.New("the router has no seal key (SEAL_KEY_ARN), so it believes no seal")
		return req
	}
	sealed := sealing.Record{
		BodySHA256: sealing.BodyDigest(rec.Body), Account: m.ev.Account, Reason: string(reason), FirstSender: req.FirstSender,
		FirstSent: attr(rec, contract.AttrFirstSent), Origin: attr(rec, contract.AttrOrigin), MessageID: attr(rec, contract.AttrMessageID),
	}
	switch err := r.seals.Verify(ctx, sealed, seal); {
	case errors.Is(err, sealing.ErrBroken), errors.Is(err, sealing.ErrNoSeal):
		req.Unsealed = err
	case err != nil:
		req.Unverified = err
	default:
		m.sealed, m.first = reason, sealed.MessageID
		req.Sealed, req.Vouchable = true, slices.Contains(contract.Vouchable, reason)
	}
	return req
}

// settleSender applies the sender check's result of m, sent by s (the record's own SenderId): a proven forgery is
// dropped as forged_sender, an unattributable sender as unattributable_sender, an account not on the bus as
// unknown_account (each kept in the quarantine), an undecided one retried; observed, only the last two are.
func (r *Router) settleSender(ctx context.Context, m *message, s string, stats *metrics.Batch) {
	res := m.judged
	who := s // the sender judged: the record's, or the first sender of a message sent back
	if res.Requeued {
		who = res.Sender
	}
	if _, isRole := sender.RoleID(s); !isRole && s != "" {
		stats.ServiceSender()
		if _, logged := r.seen.LoadOrStore(s, true); !logged {
			r.log.InfoContext(ctx, contract.LogServiceSender, contract.LogSender, s, "account", m.ev.Account, contract.LogEventID, m.ev.ID)
		}
	}
	refuse := func(reason contract.Reason) {
		if r.observe {
			r.log.WarnContext(ctx, contract.LogSenderObserved, contract.LogReason, reason, contract.LogSender, who,
				"account", m.ev.Account, contract.LogEventID, m.ev.ID, contract.LogRequeued, res.Requeued, "error", res.Err.Error())
			return
		}
		m.out = drop(reason, res.Err)
	}
	if res.Requeued && slices.Contains(contract.Evidence, m.sealed) && res.Verdict != sender.Undecided {
		// A proof stays a proof: what the router kept as evidence is refused again for it, whatever its sender is now.
		res.Err = fmt.Errorf("kept before as %s, evidence, which is never sent back", m.sealed)
		switch m.sealed {
		case contract.ReasonForgedSender:
			res.Verdict = sender.Forged
		case contract.ReasonUnsealed:
			res.Verdict = sender.Unsealed
		default:
			refuse(m.sealed)
			return
		}
	}
	switch res.Verdict {
	case sender.Genuine:
		if res.Vouched {
			r.log.WarnContext(ctx, contract.LogVouched, contract.LogSender, who, "account", m.ev.Account, contract.LogEventID, m.ev.ID,
				contract.LogVouch, attr(m.rec, contract.AttrVouched), contract.LogVouchedBy, attr(m.rec, contract.AttrVouchedBy))
		}
	case sender.Forged:
		stats.ForgedSender()
		refuse(contract.ReasonForgedSender)
	case sender.Unsealed:
		stats.Unsealed()
		refuse(contract.ReasonUnsealed)
	case sender.Unattributable:
		refuse(contract.ReasonUnattributable)
	case sender.NotOnBus:
		if errors.Is(res.Err, accounts.ErrUnknownAccount) {
			if _, logged := r.refused.LoadOrStore(m.ev.Account, true); !logged {
				r.log.WarnContext(ctx, contract.LogReaderRefused, "account", m.ev.Account, "error", res.Err.Error())
			}
		}
		m.out = drop(contract.ReasonUnknownAccount, res.Err)
	case sender.Undecided:
		if r.observe {
			r.log.WarnContext(ctx, contract.LogSenderObserved, contract.LogSender, who, "account", m.ev.Account,
				contract.LogEventID, m.ev.ID, "error", res.Err.Error())
			return
		}
		m.out = retry(fmt.Errorf("checking the sender: %w", res.Err))
	default:
		m.out = retry(fmt.Errorf("no verdict on sender %q of account %s", s, m.ev.Account))
	}
}

// attr is a record's string message attribute k, or "".
func attr(rec *events.SQSMessage, k string) string {
	if v := rec.MessageAttributes[k].StringValue; v != nil {
		return *v
	}
	return ""
}

// keep sends every message refused for a reason worth reading again to the quarantine (when there is one), and
// settles each: quarantined once SQS took it, retried otherwise, so that no refusal deletes a message the
// quarantine did not take.
func (r *Router) keep(ctx context.Context, msgs []message, stats *metrics.Batch) {
	if r.quarantine == nil {
		return
	}
	var refused []*message
	var kept []quarantine.Message
	for i := range msgs {
		m := &msgs[i]
		if m.out.verdict != dropped || !contract.Quarantined(m.out.reason) {
			continue
		}
		refused = append(refused, m)
		kept = append(kept, r.kept(m))
	}
	if len(refused) == 0 {
		return
	}
	for i, err := range r.quarantine.Keep(ctx, kept) {
		m := refused[i]
		if err != nil {
			m.out = retry(fmt.Errorf("refused as %s (%w), and %w", m.out.reason, m.out.err, err))
			continue
		}
		m.out.verdict = quarantined
		stats.Quarantine()
	}
}

// kept is what the quarantine keeps of refused message m: its sender and send time are the ones its sender check
// judged (the first sender of a message sent back), or, unjudged, the record's own.
func (r *Router) kept(m *message) quarantine.Message {
	k := quarantine.Message{
		Body: &m.rec.Body, Reason: m.out.reason, Err: m.out.err, Account: m.ev.Account,
		Sender: m.rec.Attributes[sender.Attribute], Sent: m.rec.Attributes[sender.SentAttribute],
		MessageID: m.rec.MessageId, Refused: m.rec.MessageId, EventID: m.ev.ID,
	}
	if j := m.judged; j.Requeued && m.first != "" {
		k.MessageID = m.first // a sealed message the redrive role sent back keeps the ID it was first refused under
	}
	if j := m.judged; j.Verdict != 0 && j.Requeued {
		k.Sender, k.Sent, k.FromDLQ = j.Sender, "", j.FromDLQ
		if !j.Sent.IsZero() && j.Sent.UnixMilli() > 0 {
			k.Sent = strconv.FormatInt(j.Sent.UnixMilli(), 10)
		}
	}
	return k
}

// takeIn takes the dead-letter queue into the quarantine once when the batch holds requests of the redrive role to
// (contract.AttrIntake), and settles each request: taken, refused when another sender made it, retried when it
// could not be done now.
func (r *Router) takeIn(ctx context.Context, msgs []message) intake.Result {
	var asks []*message
	for i := range msgs {
		if msgs[i].out.verdict == asked {
			asks = append(asks, &msgs[i])
		}
	}
	var res intake.Result
	var done bool
	for _, m := range asks {
		s := m.rec.Attributes[sender.Attribute]
		if r.intake == nil || r.senders == nil {
			m.out = drop(contract.ReasonNotInterruption, errors.New("a request to take the dead-letter queue in, which this router cannot "+
				"(no DEAD_LETTER_QUEUE_URL or no redrive role)"))
			continue
		}
		switch ok, err := r.senders.IsRedrive(ctx, s, millis(m.rec.Attributes[sender.SentAttribute])); {
		case err != nil:
			m.out = retry(fmt.Errorf("checking who asked to take the dead-letter queue in: %w", err))
			continue
		case !ok:
			m.out = drop(contract.ReasonNotInterruption, fmt.Errorf("a request to take the dead-letter queue in sent by %s, "+
				"not the redrive role: only it may ask", s))
			continue
		}
		if !done {
			var err error
			if res, err = r.intake.Take(ctx); err != nil {
				m.out = retry(fmt.Errorf("taking the dead-letter queue in (%d kept before): %w", res.Kept, err))
				continue
			}
			done = true
			r.log.InfoContext(ctx, contract.LogDeadLettersTaken, "kept", res.Kept, "more", res.More, contract.LogSender, s)
		}
		m.out = outcome{verdict: taken}
	}
	return res
}

// resolve finds the owners of the instances of each account and region, the scopes in parallel, so one
// account's slow or throttled EC2 does not hold up the others'.
func (r *Router) resolve(ctx context.Context, ids map[where][]string) map[where]map[string]owner.Owner {
	scopes := make([]where, 0, len(ids))
	for w := range ids {
		scopes = append(scopes, w)
	}
	found := make([]map[string]owner.Owner, len(scopes))
	parallel(r.concurrency, len(scopes), func(i int) {
		found[i] = r.owners.Resolve(ctx, scopes[i].account, scopes[i].region, ids[scopes[i]])
	})
	out := make(map[where]map[string]owner.Owner, len(scopes))
	for i, w := range scopes {
		out[w] = found[i]
	}
	return out
}

// plan groups the routing messages by destination queue: an event naming instances of k clusters goes to each
// of the k queues once. A message whose owners are not all known is retried; one without owner is dropped.
func (r *Router) plan(msgs []message, ownersByScope map[where]map[string]owner.Owner) []*delivery {
	var out []*delivery
	byQueue := make(map[forward.Queue]*delivery)
	queues := make(map[string]queueOf) // cluster -> its queue, worked out once a batch
	// Each message's destinations first, counted per queue, so each delivery is sized once.
	type destination struct {
		m *message
		d *delivery
	}
	dests := make([]destination, 0, len(msgs))
	var clusters []string
	for i := range msgs {
		m := &msgs[i]
		if m.out.verdict != routing {
			continue
		}
		var err error
		if m.ev.Kind == contract.KindCanary {
			clusters = append(clusters[:0], m.ev.Clusters...) // named, not looked up
		} else if clusters, err = owners(ownersByScope[where{m.ev.Account, m.ev.Region}], m.ev.InstanceIDs, clusters[:0]); errors.Is(err, accounts.ErrUnknownAccount) {
			m.out = drop(contract.ReasonUnknownAccount, err)
			continue
		} else if err != nil {
			m.out = retry(err) // deliver nothing now, all on redelivery
			continue
		}
		if len(clusters) == 0 {
			m.out = drop(contract.ReasonNoOwner, fmt.Errorf("no instance of %v has an owner tag", m.ev.InstanceIDs))
			continue
		}
		for _, c := range clusters {
			qo, ok := queues[c]
			if !ok {
				qo = r.queueOf(c)
				queues[c] = qo
			}
			if qo.err != nil {
				m.noQueue = qo.err
				continue
			}
			account := m.ev.Account
			if m.ev.Kind == contract.KindCanary {
				account = m.ev.To // a canary may name its clusters' account
				if r.canaries != nil && !r.canaries.Take(canary.Key{Account: account, Cluster: c}) {
					m.limited = append(m.limited, c)
					continue
				}
			}
			q := forward.Queue{Account: account, Region: m.ev.Region, Name: qo.name}
			d := byQueue[q]
			if d == nil {
				d = &delivery{queue: q, cluster: c}
				byQueue[q] = d
				out = append(out, d)
			}
			d.n++
			dests = append(dests, destination{m, d})
		}
	}
	for _, d := range out {
		d.msgs, d.bodies = make([]*message, 0, d.n), make([]*string, 0, d.n)
	}
	for _, x := range dests {
		x.d.msgs = append(x.d.msgs, x.m)
		x.d.bodies = append(x.d.bodies, &x.m.rec.Body)
	}
	return out
}

// queueOf is a cluster's queue name, or why no queue on the bus can bear its name.
type queueOf struct {
	name string
	err  error
}

func (r *Router) queueOf(cluster string) queueOf {
	if err := queuename.ValidateCluster(cluster); err != nil {
		// A tag value no EKS cluster can have.
		return queueOf{err: fmt.Errorf("owner tag value %w", err)}
	}
	name := queuename.For(r.prefix, cluster)
	if slices.Contains(r.busQueues, name) {
		return queueOf{err: fmt.Errorf("refusing to forward the event of cluster %q into the bus's own queue %s", cluster, name)}
	}
	return queueOf{name: name}
}

// owners appends to clusters, once each, the owning clusters of ids; an error when an owner is not known.
func owners(known map[string]owner.Owner, ids, clusters []string) ([]string, error) {
	for _, id := range ids {
		o := known[id]
		if o.Err != nil {
			return clusters, fmt.Errorf("finding owner of %s: %w", id, o.Err)
		}
		if o.Cluster != "" && !slices.Contains(clusters, o.Cluster) {
			clusters = append(clusters, o.Cluster)
		}
	}
	return clusters, nil
}

// send delivers to the queues concurrently, at most r.concurrency at a time.
func (r *Router) send(ctx context.Context, deliveries []*delivery) {
	parallel(r.concurrency, len(deliveries), func(i int) {
		d := deliveries[i]
		d.errs = r.sender.Send(ctx, d.queue, d.bodies)
	})
}

// tally records each delivery's result in its messages, and counts the forwarded ones with their lag; each
// canary delivered is counted and logged (verify reads those lines).
func (r *Router) tally(ctx context.Context, deliveries []*delivery, stats *metrics.Batch, now time.Time) {
	for _, d := range deliveries {
		for i, m := range d.msgs {
			switch err := d.errs[i]; {
			case err == nil && m.ev.Kind == contract.KindCanary:
				m.sent++
				stats.Canary(d.cluster)
				r.log.InfoContext(ctx, contract.LogCanaryForwarded, contract.LogEventID, m.ev.ID, contract.LogCluster, d.cluster,
					"queue", d.queue.Name, "lagSeconds", now.Sub(m.ev.Time).Seconds())
			case err == nil:
				m.sent++
				stats.Forward(d.cluster)
				if !m.ev.Time.IsZero() { // an event without a time has no lag to report
					stats.Lag(now.Sub(m.ev.Time))
				}
			case errors.Is(err, forward.ErrNoQueue):
				m.noQueue = err
			default:
				m.failed = err
				if m.ev.Kind == contract.KindCanary && r.canaries != nil {
					r.canaries.Release(canary.Key{Account: d.queue.Account, Cluster: d.cluster}) // its retry may go
				}
			}
		}
	}
}

// respond settles every message, logs each drop and retry once, counts them, and lists the retried messages.
func (r *Router) respond(ctx context.Context, msgs []message, queues int, stats *metrics.Batch) events.SQSEventResponse {
	var resp events.SQSEventResponse
	var nForwarded, nDropped int
	for i := range msgs {
		m := &msgs[i]
		m.settle()
		switch m.out.verdict {
		case dropped, quarantined:
			nDropped++
			stats.Drop(m.out.reason)
			r.logDrop(ctx, m)
		case retried:
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.rec.MessageId})
			stats.Retry()
		case forwarded:
			nForwarded++
			if m.out.err != nil {
				r.log.InfoContext(ctx, "event forwarded to some owners only", "messageId", m.rec.MessageId,
					"eventId", m.ev.ID, "error", m.out.err.Error())
			}
		}
	}
	r.redeliver(ctx, msgs)
	r.log.InfoContext(ctx, "batch routed", "received", len(msgs), "forwarded", nForwarded, "dropped", nDropped,
		"retried", len(resp.BatchItemFailures), "queues", queues)
	return resp
}

// redeliver schedules every retried message's return and logs it once. One whose visibility cannot be changed
// comes back after the queue's visibility timeout instead: later, never lost.
func (r *Router) redeliver(ctx context.Context, msgs []message) {
	var retry []*message
	for i := range msgs {
		if msgs[i].out.verdict == retried {
			retry = append(retry, &msgs[i])
		}
	}
	if len(retry) == 0 {
		return
	}
	in := make([]any, len(retry))
	parallel(r.concurrency, len(retry), func(i int) {
		m := retry[i]
		attrs := []any{"messageId", m.rec.MessageId, "eventId", m.ev.ID, "kind", m.ev.Kind, "instances", m.ev.InstanceIDs,
			"error", m.out.err.Error()}
		if r.redeliverer != nil {
			receives, _ := strconv.Atoi(m.rec.Attributes["ApproximateReceiveCount"])
			if d, err := r.redeliverer.Later(ctx, m.rec.ReceiptHandle, receives); err != nil {
				attrs = append(attrs, "redeliveryError", err.Error())
			} else {
				attrs = append(attrs, "retryInSeconds", d.Seconds())
			}
		}
		in[i] = attrs
	})
	for _, attrs := range in {
		r.log.WarnContext(ctx, "message left for redelivery", attrs.([]any)...)
	}
}

// parallel runs fn(0..n-1), at most limit at a time.
func parallel(limit, n int, fn func(i int)) {
	switch n {
	case 0:
		return
	case 1:
		fn(0)
		return
	}
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			fn(i)
		})
	}
	wg.Wait()
}

func (r *Router) logDrop(ctx context.Context, m *message) {
	attrs := []any{"messageId", m.rec.MessageId, contract.LogReason, m.out.reason, "error", m.out.err.Error()}
	if m.out.verdict == quarantined {
		attrs = append(attrs, contract.LogQuarantined, true)
	}
	switch m.out.reason {
	case contract.ReasonForgedSender, contract.ReasonUnattributable, contract.ReasonUnknownAccount:
		s := m.rec.Attributes[sender.Attribute]
		if m.judged.Requeued {
			s = m.judged.Sender
			attrs = append(attrs, contract.LogRequeued, true)
		}
		attrs = append(attrs, contract.LogSender, s, "account", m.ev.Account)
	}
	switch {
	case m.ev.Kind != "":
		attrs = append(attrs, contract.LogEventID, m.ev.ID, "kind", m.ev.Kind, "instances", m.ev.InstanceIDs)
	case m.ev.ID != "":
		attrs = append(attrs, contract.LogEventID, m.ev.ID)
	case m.out.reason == contract.ReasonUnparseable:
		attrs = append(attrs, "bodyPrefix", prefix(m.rec.Body, 256))
	}
	r.log.InfoContext(ctx, contract.LogMessageDropped, attrs...)
}

func prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
