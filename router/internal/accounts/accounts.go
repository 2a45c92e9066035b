// Package accounts finds owners in the account an event comes from: the router's own account with its own
// credentials, each member account with the credentials of that account's reader role, which STS issues on
// AssumeRole and aws.CredentialsCache keeps and renews shortly before they expire, so each member costs one
// AssumeRole per credential lifetime (an hour by default), not one per lookup. A member's lookup is made the first
// time one of its events comes, so an organization's accounts need no list: their reader roles follow from a
// fixed name. An account whose reader role cannot be assumed (access denied: not a member, or no role there) is
// not on the bus: its events are dropped, and it is remembered for a while, so a stream of them costs no AssumeRole.
package accounts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/owner"
)

// Resolver is one account's owner lookup.
type Resolver interface {
	Resolve(ctx context.Context, region string, ids []string) map[string]owner.Owner
}

var _ Resolver = (*owner.Resolver)(nil)

// ErrUnknownAccount marks the owners of an account the router cannot look into: its reader role cannot be
// assumed. Its events are dropped as unknown_account, not retried.
var ErrUnknownAccount = errors.New("the account's reader role cannot be assumed")

// Options shape Owners.
type Options struct {
	// ReaderRole is the reader role of an account, "" for the router's own (contract.Settings.ReaderRole).
	ReaderRole func(account string) string
	// NewResolver looks an account's instances up as its reader role.
	NewResolver func(roleARN string) (Resolver, error)
	// DeniedTTL is how long an account whose reader role was refused is remembered.
	DeniedTTL time.Duration
	// Now defaults to time.Now.
	Now func() time.Time
	Log *slog.Logger
}

// Owners resolves each account's instances with that account's resolver.
type Owners struct {
	own  Resolver
	opts Options

	mu      sync.Mutex
	members map[string]Resolver
	denied  map[string]time.Time // account -> until when
}

// New returns Owners looking up the router's own account with own, and each member account as its reader role.
func New(own Resolver, opts Options) *Owners {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ReaderRole == nil {
		opts.ReaderRole = func(string) string { return "" }
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &Owners{own: own, opts: opts, members: map[string]Resolver{}, denied: map[string]time.Time{}}
}

// Resolve returns the owner of each of ids in account and region. An account without a reader role is the
// router's own (the router drops events of unknown accounts before they get here); a member whose reader role is
// refused has every id's owner ErrUnknownAccount.
func (o *Owners) Resolve(ctx context.Context, account, region string, ids []string) map[string]owner.Owner {
	role := o.opts.ReaderRole(account)
	if role == "" {
		return o.own.Resolve(ctx, region, ids)
	}
	o.mu.Lock()
	until, denied := o.denied[account]
	if denied && o.opts.Now().After(until) {
		delete(o.denied, account)
		denied = false
	}
	r := o.members[account]
	var err error
	if r == nil && !denied {
		if r, err = o.opts.NewResolver(role); err == nil {
			o.members[account] = r
		}
	}
	o.mu.Unlock()
	switch {
	case denied:
		return unknown(ids, fmt.Errorf("%w: %s was refused less than %s ago", ErrUnknownAccount, role, o.opts.DeniedTTL))
	case err != nil:
		return unknown(ids, fmt.Errorf("looking up account %s as %s: %w", account, role, err))
	}
	out := r.Resolve(ctx, region, ids)
	for _, ow := range out {
		if ow.Err != nil && AssumeRoleDenied(ow.Err) {
			o.mu.Lock()
			_, already := o.denied[account]
			o.denied[account] = o.opts.Now().Add(o.opts.DeniedTTL)
			o.mu.Unlock()
			if !already {
				o.opts.Log.WarnContext(ctx, contract.LogReaderRefused,
					"account", account, "role", role, "forSeconds", o.opts.DeniedTTL.Seconds(), "error", ow.Err.Error())
			}
			return unknown(ids, fmt.Errorf("%w: %s: %w", ErrUnknownAccount, role, ow.Err))
		}
	}
	return out
}

func unknown(ids []string, err error) map[string]owner.Owner {
	out := make(map[string]owner.Owner, len(ids))
	for _, id := range ids {
		out[id] = owner.Owner{Err: err}
	}
	return out
}

// AssumeRoleDenied reports whether err is STS refusing AssumeRole (AccessDenied): the role does not exist, or
// does not trust the router. Throttling and 5xx are not: those are retried.
func AssumeRoleDenied(err error) bool {
	var op *smithy.OperationError
	if !errors.As(err, &op) {
		return false
	}
	if op.ServiceID == "STS" && op.OperationName == "AssumeRole" {
		var api smithy.APIError
		return errors.As(op.Err, &api) && api.ErrorCode() == "AccessDenied"
	}
	// Another operation (EC2's DescribeInstances) failing on its credentials wraps the AssumeRole's own error.
	return AssumeRoleDenied(op.Err)
}

// SessionName names the router's sessions in member accounts, as CloudTrail shows them there.
const SessionName = "karpenter-interruption-bus-router"

// Sessions hands out one credentials provider per reader role, cached and renewed before it expires, so that the
// owner lookups and the sender check (iam:GetRole) made as one member share one AssumeRole per credential lifetime.
type Sessions struct {
	sts    *sts.Client
	mu     sync.Mutex
	byRole map[string]aws.CredentialsProvider
}

// NewSessions returns Sessions assuming roles through stsClient.
func NewSessions(stsClient *sts.Client) *Sessions {
	return &Sessions{sts: stsClient, byRole: map[string]aws.CredentialsProvider{}}
}

// For returns the credentials of roleARN. A failed AssumeRole fails the call made with them (the router retries
// the message, or drops it when access is denied), never the router.
func (s *Sessions) For(roleARN string) (aws.CredentialsProvider, error) {
	if contract.AccountOfRole(roleARN) == "" {
		return nil, fmt.Errorf("reader role %q is not an IAM role ARN", roleARN)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.byRole[roleARN]; ok {
		return c, nil
	}
	c := aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(s.sts, roleARN, func(o *stscreds.AssumeRoleOptions) {
		o.RoleSessionName = SessionName
	}))
	s.byRole[roleARN] = c
	return c, nil
}

// MemberEC2 returns an EC2 client of cfg acting as the reader role roleARN, with its credentials from sessions.
func MemberEC2(cfg aws.Config, sessions *Sessions, roleARN string) (*ec2.Client, error) {
	creds, err := sessions.For(roleARN)
	if err != nil {
		return nil, err
	}
	return ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.Credentials = creds }), nil
}
