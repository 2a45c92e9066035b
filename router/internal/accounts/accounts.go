// Package accounts finds owners in the account an event comes from: the router's own account with its own
// credentials, each member account with the credentials of that account's reader role, which STS issues on
// AssumeRole and aws.CredentialsCache keeps and renews shortly before they expire, so each member costs one
// AssumeRole per credential lifetime (an hour by default), not one per lookup.
package accounts

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/owner"
)

// Resolver is one account's owner lookup.
type Resolver interface {
	Resolve(ctx context.Context, region string, ids []string) map[string]owner.Owner
}

var _ Resolver = (*owner.Resolver)(nil)

// Owners resolves each account's instances with that account's resolver.
type Owners struct {
	own     Resolver
	members map[string]Resolver
}

// New returns Owners looking up the router's own account with own, and each member account with its resolver.
func New(own Resolver, members map[string]Resolver) *Owners {
	return &Owners{own: own, members: members}
}

// Resolve returns the owner of each of ids in account and region. An account that is not a member is the
// router's own (the router drops events of unknown accounts before they get here).
func (o *Owners) Resolve(ctx context.Context, account, region string, ids []string) map[string]owner.Owner {
	if r, ok := o.members[account]; ok {
		return r.Resolve(ctx, region, ids)
	}
	return o.own.Resolve(ctx, region, ids)
}

// SessionName names the router's sessions in member accounts, as CloudTrail shows them there.
const SessionName = "karpenter-interruption-bus-router"

// MemberEC2 returns an EC2 client of cfg acting as the reader role roleARN, through stsClient: its credentials
// are cached and renewed before they expire. A failed AssumeRole fails the lookup (the router retries the
// message), never the router.
func MemberEC2(cfg aws.Config, stsClient *sts.Client, roleARN string) (*ec2.Client, error) {
	if contract.AccountOfRole(roleARN) == "" {
		return nil, fmt.Errorf("reader role %q is not an IAM role ARN", roleARN)
	}
	creds := aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(stsClient, roleARN, func(o *stscreds.AssumeRoleOptions) {
		o.RoleSessionName = SessionName
	}))
	return ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.Credentials = creds }), nil
}
