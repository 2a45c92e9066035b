// Package sender decides whether the sender of a message on the central queue may speak for the account its event
// names (docs/security.md, "Who sent each message").
//
// What AWS documents, and what follows:
//   - SQS stamps every message with the system attribute SenderId, which Lambda's SQS record carries; "for an IAM
//     role", it is "the IAM role ID" (SQS API reference, ReceiveMessage,
//     https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html; its example,
//     ABCDE1F2GH3I4JK5LMNOP:i-a123b456, has a colon and a suffix, which AWS does not define further: it is not
//     checked). A role's unique ID starts with AROA ("IAM identifiers", unique ID prefixes,
//     https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html#identifiers-unique-ids), and IAM
//     GetRole returns it as RoleId; a role deleted and created again gets a new one.
//   - Every rule that delivers to the central queue delivers as an execution role, its account's forwarder: a
//     member's rules because a target in another account needs one ("Sending events to an AWS service in another
//     account", https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-service-cross-account.html), the hub's
//     own because a target's RoleArn may name one for an SQS target of its own account too ("For Lambda, Amazon
//     SNS, and Amazon SQS resources, EventBridge can use either an IAM execution role or a resource-based policy",
//     "Using resource-based policies for Amazon EventBridge",
//     https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-use-resource-based.html). So a message naming an
//     account must come from that account's forwarder, or from the hub's redrive role, which the hub's
//     administrators assume to send messages back (the redrive and quarantine commands, which send as it): they run
//     the router itself, so it may speak for any account on the bus.
//
// What AWS does not document, and how it is decided instead of guessed: the SenderId of a delivery through a
// queue's resource policy alone, and whether StartMessageMoveTask keeps a message's original SenderId and
// SentTimestamp (a redrive makes "new messages"). Neither is a path the bus uses: every sender the central queue
// admits is a role. A sender that is not a role, or a role that may not speak for the account (a former ID of a
// forwarder created anew, kept by a move task, included), is refused; the router keeps every refused message in
// the quarantine queue, counted and alarmed on, from which an operator sends it back as the redrive role. So no
// refusal loses an event, whatever AWS stamps.
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
	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/accounts"
)

// Attribute is the SQS system attribute naming a message's sender, and SentAttribute the one giving when it was
// sent (epoch milliseconds), as Lambda's SQS record carries them.
const (
	Attribute     = "SenderId"
	SentAttribute = "SentTimestamp"
)

// Message is what the checker needs of one message: who sent it, and when (zero: unknown, taken as now).
type Message struct {
	Sender string
	Sent   time.Time
}

// RoleGetter is the one IAM call the checker makes.
type RoleGetter interface {
	GetRole(ctx context.Context, in *iam.GetRoleInput, optFns ...func(*iam.Options)) (*iam.GetRoleOutput, error)
}

var _ RoleGetter = (*iam.Client)(nil)

// Verdict is what the checker makes of one sender.
type Verdict uint8

const (
	// Genuine: a role that may speak for the account.
	Genuine Verdict = iota + 1
	// Forged: a role that may not speak for the account, a sender that is not a role, or no sender at all.
	Forged
	// Undecided: the role the sender must be could not be learned now (IAM or STS failed); ask again later.
	Undecided
)

// Result is a sender's verdict, with why when it is not Genuine.
type Result struct {
	Verdict Verdict
	Err     error
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
	// IAM returns the client that reads account's roles: the router's own for the hub, one acting as the
	// account's reader role for a member.
	IAM func(account string) (RoleGetter, error)
	// CacheSize bounds the roles remembered; TTL keeps a learned ID, NegativeTTL a role found missing or an
	// account whose reader role was refused.
	CacheSize        int
	TTL, NegativeTTL time.Duration
	// Recheck is the least time between two GetRole calls for one role. A sender that differs from a role's ID
	// is refused only on an answer IAM gave after the message was sent; an older answer is asked again, at most
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
	locks sync.Map // key -> *sync.Mutex: one GetRole at a time per role
}

// learned is what IAM answered about a role, and when: its ID ("" when it does not exist), or why it could not be
// read.
type learned struct {
	id  string
	err error // the account's reader role was refused
	at  time.Time
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
	return &Checker{
		opts:  opts,
		roles: expirable.NewLRU[string, learned](size, nil, opts.TTL),
		neg:   expirable.NewLRU[string, learned](size, nil, opts.NegativeTTL),
	}
}

// Check decides each of msgs, messages whose events name account; the results are in msgs' order.
func (c *Checker) Check(ctx context.Context, account string, msgs []Message) []Result {
	out := make([]Result, len(msgs))
	// The roles that speak for account: its forwarder, and the hub's redrive role for every account.
	var candidates []role
	if arn := c.opts.ForwarderRole(account); arn != "" {
		candidates = append(candidates, role{account, arn[strings.LastIndex(arn, "/")+1:]})
	}
	if c.opts.RedriveRole != "" {
		candidates = append(candidates, role{c.opts.Hub, c.opts.RedriveRole})
	}
	for i, m := range msgs {
		switch _, isRole := RoleID(m.Sender); {
		case m.Sender == "":
			out[i] = Result{Forged, errors.New("the message has no SenderId: SQS names the sender of every message, so it cannot be attributed")}
		case !isRole:
			out[i] = Result{Forged, fmt.Errorf("sender %s is not an IAM role: every sender the central queue admits (the accounts' "+
				"forwarders, the redrive role) is one, so it cannot speak for account %s", m.Sender, account)}
		default:
			out[i] = c.decide(ctx, account, m, candidates)
		}
	}
	return out
}

// role is an IAM role: its account and name.
type role struct{ account, name string }

// decide checks one role sender naming account against the roles that may speak for it.
func (c *Checker) decide(ctx context.Context, account string, m Message, candidates []role) Result {
	id, _ := RoleID(m.Sender)
	sent := m.Sent
	if sent.IsZero() {
		sent = c.opts.Now()
	}
	var names []string
	var undecided error
	for _, cand := range candidates {
		match, err := c.is(ctx, cand.account, cand.name, id, sent)
		switch {
		case match:
			return Result{Verdict: Genuine}
		case err != nil:
			undecided = err
		}
		names = append(names, fmt.Sprintf("%s's %s", cand.account, cand.name))
	}
	if undecided != nil {
		return Result{Undecided, undecided}
	}
	who := "no role may"
	if len(names) > 0 {
		who = "only " + strings.Join(names, " or ") + " may"
	}
	return Result{Forged, fmt.Errorf("sender %s may not speak for account %s: %s", m.Sender, account, who)}
}

// errNotYet: the role's ID IAM gave differs, but was given before the message was sent, less than Recheck ago.
var errNotYet = errors.New("the role's ID was learned before the message was sent: IAM is asked again shortly")

// is reports whether id is the unique ID of role name of account, on an answer IAM gave after sent: the
// remembered one, or, when that is older, a new one, at most once per Recheck (errNotYet meanwhile).
func (c *Checker) is(ctx context.Context, account, name, id string, sent time.Time) (bool, error) {
	l, err := c.learn(ctx, account, name, time.Time{})
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
	if l, err = c.learn(ctx, account, name, l.at); err != nil {
		return false, err
	}
	return l.id == id, nil
}

// learn returns what IAM says of role name of account: the remembered answer, unless it is no newer than stale
// (then IAM is asked again). A refused reader role is an error wrapping accounts.ErrUnknownAccount, remembered.
func (c *Checker) learn(ctx context.Context, account, name string, stale time.Time) (learned, error) {
	key := account + "/" + name
	mu, _ := c.locks.LoadOrStore(key, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	for _, cache := range []*expirable.LRU[string, learned]{c.roles, c.neg} {
		if l, ok := cache.Get(key); ok && l.at.After(stale) {
			if l.err != nil {
				return l, l.err
			}
			return l, nil
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
		l := learned{id: aws.ToString(out.Role.RoleId), at: now}
		c.neg.Remove(key)
		c.roles.Add(key, l)
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
