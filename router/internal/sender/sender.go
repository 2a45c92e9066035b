// Package sender judges whether the sender of a message on the central queue may speak for the account its event
// names, and when it may not, whether that is proven (docs/security.md, "Who sent each message").
//
// What AWS documents, and what follows:
//   - SQS stamps every message with the system attribute SenderId, which Lambda's SQS record carries; "for an IAM
//     role", it is "the IAM role ID" (SQS API reference, ReceiveMessage,
//     https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html; its example,
//     ABCDE1F2GH3I4JK5LMNOP:i-a123b456, has a colon and a suffix, which AWS does not define further: it is not
//     checked). A role's unique ID starts with AROA ("IAM identifiers", unique ID prefixes,
//     https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html#identifiers-unique-ids); IAM
//     GetRole returns it as RoleId with the role's CreateDate ("GetRole",
//     https://docs.aws.amazon.com/IAM/latest/APIReference/API_GetRole.html); a role deleted and created again gets a
//     new ID, and an ID is never another role's.
//   - Every rule that delivers to the central queue delivers as its account's forwarder role (the target's RoleArn):
//     a member's because a target in another account needs one ("Sending events to an AWS service in another
//     account", https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-service-cross-account.html), the hub's
//     own unless the stack says its rules deliver through the queue's policy (Options.HubByPolicy).
//
// The verdicts, from what IAM says now and SQS's SentTimestamp:
//   - Genuine: the sender is the account's forwarder as it stands, or was when the message was sent (an ID IAM gave
//     for it after the message was sent);
//   - Forged, proven: the sender is another account's forwarder (an ID IAM gave for that account's role), or the
//     account's forwarder as it stands was created before the message was sent and has another ID, so it was the
//     forwarder then too;
//   - Unattributable: neither: the account's forwarder was created after the message was sent (one created anew
//     since), or the account has none now. IAM keeps no history of a role's former IDs, so nothing ties the sender
//     to the account, nor proves it was not its forwarder then;
//   - NotOnBus: the account is not on the bus (or its reader role is refused), and the sender is tied to no other
//     account: kept with its sender, judged against the account's forwarder once it joins;
//   - Undecided: IAM or STS failed, or the forwarder's last answer predates the message (asked again, at most once
//     per Recheck): the message is retried.
//
// A message the hub's redrive role sent (cmd/requeue sending the quarantine back) is judged by the first sender and
// send time it carries (contract.AttrFirstSender, AttrFirstSent), never by the redrive role: sending back launders
// nothing. What it carries is believed only when the router sealed it (Requeue.Unsealed is nil: router/sealing);
// otherwise it speaks for no account, and is Unsealed. An unattributable one the operator vouched for by name
// (contract.AttrVouched) is genuine when its seal says it was kept for a reason one may vouch for
// (contract.Vouchable), a proven forgery never is. The dead-letter queue's senders are not the central queue's
// (EventBridge's own delivery failures, a move whose kept SenderId AWS does not document), so a first sender from
// there is never proven forged: one that is no role naming the hub is EventBridge delivering the stack's own rules'
// events, the one sender besides the central queue that the dead-letter queue's policy admits.
package sender

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/smithy-go"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/accounts"
)

// Attribute is the SQS system attribute naming a message's sender, and SentAttribute the one giving when it was
// sent (epoch milliseconds), as Lambda's SQS record carries them.
const (
	Attribute     = "SenderId"
	SentAttribute = "SentTimestamp"
)

// Message is what the checker needs of one message: who sent it, and when (zero: unknown, taken as now), and what
// it says of its first sending when the redrive role sent it back.
type Message struct {
	Sender  string
	Sent    time.Time
	Requeue Requeue
}

// Requeue is what a message sent back by the redrive role says of itself; honoured only when the redrive role sent
// it and the router sealed what it says, since any sender may set message attributes.
type Requeue struct {
	// Sealed: the router's seal of what the message says of itself verifies. Without it the message speaks for no
	// account (the zero value fails closed): Unsealed says why (nil: it carries no seal). Unverified is why the seal
	// could not be checked now (the key's public key could not be read): the message is retried.
	Sealed               bool
	Unsealed, Unverified error
	// Vouchable: its seal says it was kept for a reason an operator may vouch for (contract.Vouchable).
	Vouchable bool
	// FirstSender and FirstSent are the sender and send time of the message where it was refused or dead-lettered
	// ("" and zero: it says none; a zero time proves nothing by the clock).
	FirstSender string
	FirstSent   time.Time
	// FromDLQ: the first sender is the one the dead-letter queue held.
	FromDLQ bool
	// Vouch is what an operator vouched for by name (contract.VouchEvent, VouchSender); "" none.
	Vouch string
}

// RoleGetter is the one IAM call the checker makes.
type RoleGetter interface {
	GetRole(ctx context.Context, in *iam.GetRoleInput, optFns ...func(*iam.Options)) (*iam.GetRoleOutput, error)
}

var _ RoleGetter = (*iam.Client)(nil)

// Verdict is what the checker makes of one sender.
type Verdict uint8

const (
	// Genuine: the account's forwarder as it stands, the hub's rules through the queue's policy, or a message sent
	// back whose first sender is one of these or that an operator vouched for.
	Genuine Verdict = iota + 1
	// Forged: proven not to be the forwarder the account had when the message was sent.
	Forged
	// Unattributable: neither tied to the account nor proven not to be its forwarder then.
	Unattributable
	// NotOnBus: the account is not on the bus, and the sender is tied to no other account.
	NotOnBus
	// Undecided: what decides could not be learned now (IAM or STS failed, or asked again shortly); retry.
	Undecided
	// Unsealed: the redrive role sent it, and what it says of itself is not what the router sealed: it speaks for no
	// account, and is evidence of what whoever holds the role tried.
	Unsealed
)

// Result is a message's verdict, with why when it is not Genuine, and the sender it judged.
type Result struct {
	Verdict Verdict
	Err     error
	// Sender and Sent are the sender judged and when it sent: the message's own, or the first sender a message sent
	// back by the redrive role carries.
	Sender string
	Sent   time.Time
	// Requeued: the redrive role sent the message back; FromDLQ, its first sender is the dead-letter queue's;
	// Vouched, it is genuine only because an operator vouched for it.
	Requeued, FromDLQ, Vouched bool
}

// RoleID is the role unique ID of a SenderId that is a role's session ("AROA...:session"), and whether it is one.
func RoleID(senderID string) (string, bool) {
	id, session, ok := strings.Cut(senderID, ":")
	return id, ok && session != "" && strings.HasPrefix(id, "AROA") && len(id) > len("AROA")
}

// Options shape a Checker.
type Options struct {
	// Hub is the router's own account.
	Hub string
	// RedriveRole names the hub's redrive role; "" when there is none.
	RedriveRole string
	// ForwarderRole is the ARN of an account's forwarder role, the hub's own included ("" when the account has none).
	ForwarderRole func(account string) string
	// HubByPolicy: the hub's rules deliver through the central queue's policy (contract.HubDeliveryQueuePolicy),
	// which admits no principal that is not a role but EventBridge for the stack's own rules: a sender that is no
	// role speaks for the hub.
	HubByPolicy bool
	// IAM returns the client that reads account's roles: the router's own for the hub, one acting as the
	// account's reader role for a member.
	IAM func(account string) (RoleGetter, error)
	// CacheSize bounds the roles remembered; TTL keeps a learned ID, NegativeTTL a role found missing or an
	// account whose reader role was refused.
	CacheSize        int
	TTL, NegativeTTL time.Duration
	// Recheck is the least time between two GetRole calls for one role. A sender that differs from a role's ID
	// is judged only on an answer IAM gave after the message was sent; an older answer is asked again, at most
	// once per Recheck, the message retried meanwhile. So a role created anew (a new ID) is learned without a
	// message of it being refused, and a stream of forgeries costs at most one GetRole per Recheck. Negative: IAM is
	// asked again whenever an answer is older than the message (observe mode, which retries nothing, so that what it
	// counts is what enforce mode would refuse).
	Recheck time.Duration
	// Now defaults to time.Now.
	Now func() time.Time
}

// DefaultRecheck is Options.Recheck unless set.
const DefaultRecheck = 10 * time.Second

// Checker decides senders. It is safe for concurrent use.
type Checker struct {
	opts  Options
	roles *expirable.LRU[string, learned] // "<account>/<role name>" -> what IAM answered
	neg   *expirable.LRU[string, learned]
	// forwarders ties each forwarder ID IAM ever gave to its account, and when IAM last gave it: an ID is never
	// another role's, so the tie holds after the role is gone.
	forwarders *lru.Cache[string, tie]
	locks      sync.Map // key -> *sync.Mutex: one GetRole at a time per role
}

// tie is the account a forwarder ID is the role of, and when IAM last said so.
type tie struct {
	account string
	at      time.Time
}

// learned is what IAM answered about a role, and when: its ID and creation ("" when it does not exist), or why it
// could not be read.
type learned struct {
	id      string
	created time.Time
	err     error // the account's reader role was refused
	at      time.Time
}

// New returns a Checker.
func New(opts Options) *Checker {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Recheck == 0 {
		opts.Recheck = DefaultRecheck
	}
	if opts.ForwarderRole == nil {
		opts.ForwarderRole = func(string) string { return "" }
	}
	size := max(opts.CacheSize, 1)
	forwarders, _ := lru.New[string, tie](size) // only a size below 1 fails
	return &Checker{
		opts:       opts,
		roles:      expirable.NewLRU[string, learned](size, nil, opts.TTL),
		neg:        expirable.NewLRU[string, learned](size, nil, opts.NegativeTTL),
		forwarders: forwarders,
	}
}

// Check judges each of msgs, messages whose events name account, which is on the bus (onBus) or not; the results
// are in msgs' order.
func (c *Checker) Check(ctx context.Context, account string, onBus bool, msgs []Message) []Result {
	out := make([]Result, len(msgs))
	for i, m := range msgs {
		out[i] = c.judge(ctx, account, onBus, m)
	}
	return out
}

// judge decides one message: by its own sender, or, sent back by the redrive role, by the first sender it carries.
func (c *Checker) judge(ctx context.Context, account string, onBus bool, m Message) Result {
	sent := m.Sent
	if sent.IsZero() {
		sent = c.opts.Now()
	}
	res, redriven := c.decide(ctx, account, onBus, m.Sender, sent, false)
	if !redriven {
		return res
	}
	r := m.Requeue
	switch {
	case r.Unverified != nil:
		return Result{Verdict: Undecided, Sender: m.Sender, Sent: sent, Requeued: true, Err: r.Unverified}
	case !r.Sealed:
		why := r.Unsealed
		if why == nil {
			why = errors.New("it carries no seal: only what the router kept and sealed may be sent back")
		}
		return Result{Verdict: Unsealed, Sender: m.Sender, Sent: sent, Requeued: true, Err: fmt.Errorf("the redrive role (%s) sent it, and %w", m.Sender, why)}
	}
	first := r.FirstSent
	if first.IsZero() {
		first = time.Unix(0, 0) // no time: the clock proves nothing
	}
	if res, redriven = c.decide(ctx, account, onBus, r.FirstSender, first, r.FromDLQ); redriven {
		// Only a record of what the redrive role sent unsealed has it for a first sender: evidence, never delivered.
		res = Result{Verdict: Unsealed, Sender: r.FirstSender, Sent: first,
			Err: errors.New("its first sender is the redrive role itself, which speaks for no account")}
	}
	res.Requeued, res.FromDLQ = true, r.FromDLQ
	if res.Verdict == Unattributable && r.Vouch != "" && r.Vouchable {
		res.Verdict, res.Vouched, res.Err = Genuine, true, nil
	}
	return res
}

// IsRedrive reports whether sender s (a SenderId), of a message sent at sent, is the hub's redrive role: the one
// sender that may ask the router to take the dead-letter queue in (contract.AttrIntake). An error: IAM could not say
// now (retry).
func (c *Checker) IsRedrive(ctx context.Context, s string, sent time.Time) (bool, error) {
	id, isRole := RoleID(s)
	if !isRole || c.opts.RedriveRole == "" {
		return false, nil
	}
	if sent.IsZero() {
		sent = c.opts.Now()
	}
	return c.is(ctx, c.opts.Hub, c.opts.RedriveRole, id, sent)
}

// role is an IAM role: its account and name.
type role struct{ account, name string }

// decide judges sender s of a message naming account, sent at sent; redriven reports that s is the redrive role,
// whose message is judged by what it carries instead (the result is then empty). fromDLQ: s is the first sender
// the dead-letter queue held.
func (c *Checker) decide(ctx context.Context, account string, onBus bool, s string, sent time.Time, fromDLQ bool) (res Result, redriven bool) {
	res = Result{Sender: s, Sent: sent}
	verdict := func(v Verdict, err error) (Result, bool) {
		res.Verdict, res.Err = v, err
		return res, false
	}
	if s == "" {
		return verdict(Unattributable, errors.New("the message has no SenderId: SQS names the sender of every message, so nothing attributes it"))
	}
	id, isRole := RoleID(s)
	// The account's forwarder as it stands: the one sender that speaks for it.
	var fwd role
	var fl learned
	var ferr error
	if arn := c.opts.ForwarderRole(account); onBus && arn != "" {
		fwd = role{account, arn[strings.LastIndex(arn, "/")+1:]}
		fl, ferr = c.learn(ctx, fwd.account, fwd.name, time.Time{}, true)
		switch {
		case ferr == nil && isRole && fl.id == id:
			return verdict(Genuine, nil)
		case errors.Is(ferr, accounts.ErrUnknownAccount): // its reader role is refused: not on the bus
			onBus, fwd = false, role{}
		}
	}
	// A forwarder IAM named: another account's is proven, whatever the account named; the account's own, one IAM
	// named after the message was sent (so it existed then, under the forwarder's name: a forwarder since created
	// anew whose former ID the router learned), speaks for it.
	if isRole {
		if t, ok := c.forwarders.Get(id); ok && t.account != account {
			return verdict(Forged, fmt.Errorf("sender %s is account %s's forwarder, which speaks for %s only, not for account %s", s, t.account, t.account, account))
		} else if ok && onBus && !t.at.Before(sent) {
			return verdict(Genuine, nil)
		}
	}
	var undecided error
	if isRole && c.opts.RedriveRole != "" {
		switch match, err := c.is(ctx, c.opts.Hub, c.opts.RedriveRole, id, sent); {
		case match:
			return Result{}, true
		case err != nil:
			undecided = err
		}
	}
	if !isRole && account == c.opts.Hub && (c.opts.HubByPolicy || fromDLQ) {
		// The central queue's policy (in this mode) and the dead-letter queue's admit no principal that is not a role
		// but EventBridge for the stack's own rules, which carry the hub's own events only.
		return verdict(Genuine, nil)
	}
	if !onBus {
		if undecided != nil {
			return verdict(Undecided, undecided)
		}
		err := fmt.Errorf("account %s is not on the bus", account)
		if ferr != nil {
			err = ferr
		}
		return verdict(NotOnBus, err)
	}
	if fwd == (role{}) {
		return verdict(Unattributable, fmt.Errorf("sender %s: no role is account %s's forwarder on this bus, so nothing ties a sender to it", s, account))
	}
	if ferr != nil {
		return verdict(Undecided, ferr)
	}
	if undecided != nil {
		return verdict(Undecided, undecided)
	}
	// Judged on an answer IAM gave after the message was sent: an older one may predate a forwarder created anew.
	if fl.at.Before(sent) {
		if c.opts.Now().Sub(fl.at) < c.opts.Recheck {
			return verdict(Undecided, fmt.Errorf("sender %s, role %s of account %s: %w", s, fwd.name, account, errNotYet))
		}
		if fl, ferr = c.learn(ctx, fwd.account, fwd.name, fl.at, true); ferr != nil {
			return verdict(Undecided, ferr)
		}
		if isRole && fl.id == id {
			return verdict(Genuine, nil)
		}
	}
	switch {
	case fl.id == "":
		return verdict(Unattributable, fmt.Errorf("sender %s: account %s has no forwarder role %s now, so nothing ties a sender to it", s, account, fwd.name))
	case createdBy(fl.created).After(sent):
		return verdict(Unattributable, fmt.Errorf("sender %s is not account %s's forwarder %s (%s), which was created %s, after the message was sent "+
			"(%s): IAM keeps no former ID of the role, so the sender can be neither tied to the account nor ruled out", s, account,
			fwd.name, fl.id, stamp(fl.created), stamp(sent)))
	case fromDLQ:
		return verdict(Unattributable, fmt.Errorf("sender %s, as the dead-letter queue holds it, is not account %s's forwarder %s (%s): AWS does "+
			"not document what sender a message moved there keeps, so it proves nothing", s, account, fwd.name, fl.id))
	}
	return verdict(Forged, fmt.Errorf("sender %s may not speak for account %s: its forwarder %s when the message was sent (%s) was %s, created %s",
		s, account, fwd.name, stamp(sent), fl.id, stamp(fl.created)))
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// createdBy is when a role IAM says was created at created surely existed: IAM gives CreateDate to the second
// (GetRole's example, "2019-06-12T18:09:55Z"), so a message sent within that second may predate the role.
func createdBy(created time.Time) time.Time {
	if created.Equal(created.Truncate(time.Second)) {
		return created.Add(time.Second)
	}
	return created
}

// errNotYet: the role's ID IAM gave differs, but was given before the message was sent, less than Recheck ago.
var errNotYet = errors.New("the role's ID was learned before the message was sent: IAM is asked again shortly")

// is reports whether id is the unique ID of role name of account, on an answer IAM gave after sent: the
// remembered one, or, when that is older, a new one, at most once per Recheck (errNotYet meanwhile).
func (c *Checker) is(ctx context.Context, account, name, id string, sent time.Time) (bool, error) {
	l, err := c.learn(ctx, account, name, time.Time{}, false)
	switch {
	case err != nil:
		return false, err
	case l.id == id:
		return true, nil
	case !l.at.Before(sent):
		return false, nil
	case c.opts.Now().Sub(l.at) < c.opts.Recheck:
		return false, fmt.Errorf("sender %s, role %s of account %s: %w", id, name, account, errNotYet)
	}
	if l, err = c.learn(ctx, account, name, l.at, false); err != nil {
		return false, err
	}
	return l.id == id, nil
}

// learn returns what IAM says of role name of account: the remembered answer, unless it is no newer than stale
// (then IAM is asked again). A refused reader role is an error wrapping accounts.ErrUnknownAccount, remembered. The
// ID of a forwarder is tied to its account for good.
func (c *Checker) learn(ctx context.Context, account, name string, stale time.Time, forwarder bool) (learned, error) {
	key := account + "/" + name
	mu, _ := c.locks.LoadOrStore(key, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	for _, cache := range []*expirable.LRU[string, learned]{c.roles, c.neg} {
		if l, ok := cache.Get(key); ok && l.at.After(stale) {
			return l, l.err
		}
	}
	client, err := c.opts.IAM(account)
	if err != nil {
		return learned{}, fmt.Errorf("reading the roles of account %s: %w", account, err)
	}
	out, err := client.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(name)})
	now := c.opts.Now()
	var missing *types.NoSuchEntityException
	switch {
	case err == nil:
		l := learned{id: aws.ToString(out.Role.RoleId), created: aws.ToTime(out.Role.CreateDate), at: now}
		c.neg.Remove(key)
		c.roles.Add(key, l)
		if forwarder && l.id != "" {
			c.forwarders.Add(l.id, tie{account, now})
		}
		return l, nil
	case errors.As(err, &missing):
		l := learned{at: now}
		c.roles.Remove(key)
		c.neg.Add(key, l)
		return l, nil
	case accounts.AssumeRoleDenied(err):
		l := learned{at: now, err: fmt.Errorf("%w: learning the role %s of account %s: %w", accounts.ErrUnknownAccount, name, account, err)}
		c.neg.Add(key, l)
		return l, l.err
	case isAccessDenied(err):
		// Not a forgery: the reader role predates the check, or its policy was changed. Retried, and visible.
		return learned{}, fmt.Errorf("iam:GetRole of %s in account %s refused (the account's reader role may not read it: "+
			"update the account's baseline): %w", name, account, err)
	default:
		return learned{}, fmt.Errorf("iam:GetRole of %s in account %s: %w", name, account, err)
	}
}

func isAccessDenied(err error) bool {
	var api smithy.APIError
	return errors.As(err, &api) && (api.ErrorCode() == "AccessDenied" || api.ErrorCode() == "AccessDeniedException")
}
