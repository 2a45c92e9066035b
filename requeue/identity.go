package requeue

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// caller is who the command runs as: its ARN, and its role's unique ID when it is a role's session.
type caller struct{ arn, roleID string }

// runAs makes sure the command runs as what it needs, and returns who that is and the clients to go on with: the
// stack's redrive role to read the quarantine or the archive or send anything back (nobody else may), any identity to
// list the dead-letter queue. Run by a principal of redrive.principals, it opens a session of the redrive role itself,
// with the principal's name as its source identity, which the role's trust requires and CloudTrail records on every
// call of the session (SourceIdentity); run as the redrive role already (a session opened by hand, with a source
// identity, or the role takes none), it goes on as it.
func runAs(ctx context.Context, c Clients, out Outputs, opts Options) (caller, Clients, error) {
	needsRedrive := opts.Send || opts.From == Quarantine || opts.From == Archive
	if out.RedriveRoleARN == "" {
		if needsRedrive {
			return caller{}, c, errors.New("the stack has no redrive role, so nobody may read the quarantine or send anything back: set " +
				"redrive.principals to the ARNs of the roles or users who may (pulumi config set --path 'redrive.principals[0]' <arn>), " +
				"pulumi up, then run this as one of them (docs/operations.md, \"Refused messages: the quarantine\")")
		}
		return caller{}, c, nil
	}
	who, err := c.STS.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return caller{}, c, fmt.Errorf("learning who runs the command (sts:GetCallerIdentity): %w", err)
	}
	me := callerOf(aws.ToString(who.Arn), aws.ToString(who.UserId))
	role := out.RedriveRoleARN[strings.LastIndex(out.RedriveRoleARN, "/")+1:]
	if !needsRedrive || strings.Contains(me.arn, ":assumed-role/"+role+"/") {
		return me, c, nil
	}
	si := SourceIdentity(me.arn)
	if c.As == nil || si == "" {
		return caller{}, c, fmt.Errorf("the command runs as %s, not the stack's redrive role: only it may read the quarantine and send "+
			"messages back. Run it as a principal of redrive.principals, which it assumes the role as, or assume it first with a source "+
			"identity (aws sts assume-role --role-arn %s --role-session-name <you> --source-identity <you>)", me.arn, out.RedriveRoleARN)
	}
	session, err := c.STS.AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(out.RedriveRoleARN), RoleSessionName: aws.String(si),
		SourceIdentity: aws.String(si)})
	if err != nil {
		return caller{}, c, fmt.Errorf("%s may not assume the redrive role %s with source identity %q (is it among redrive.principals?): %w",
			me.arn, out.RedriveRoleARN, si, err)
	}
	cr := session.Credentials
	as := c.As(credentials.NewStaticCredentialsProvider(aws.ToString(cr.AccessKeyId), aws.ToString(cr.SecretAccessKey), aws.ToString(cr.SessionToken)))
	as.As = nil
	return callerOf(aws.ToString(session.AssumedRoleUser.Arn), aws.ToString(session.AssumedRoleUser.AssumedRoleId)), as, nil
}

// callerOf is the caller of ARN arn and unique ID id ("<role ID>:<session>" for a role's session).
func callerOf(arn, id string) caller {
	me := caller{arn: arn}
	if roleID, _, ok := strings.Cut(id, ":"); ok && strings.HasPrefix(roleID, "AROA") {
		me.roleID = roleID
	}
	return me
}

// SourceIdentity is the source identity and session name a principal of ARN arn opens the redrive role's session with:
// its own name (a user's, or the session's of a role: the name its identity provider gave, an e-mail address from IAM
// Identity Center), in the characters STS takes (letters, digits and _+=,.@-, 2 to 64 of them: "AssumeRole",
// SourceIdentity and RoleSessionName, https://docs.aws.amazon.com/STS/latest/APIReference/API_AssumeRole.html); ""
// when it has none.
func SourceIdentity(arn string) string {
	name := arn[strings.LastIndex(arn, "/")+1:]
	if !strings.Contains(arn, "/") {
		name = arn[strings.LastIndex(arn, ":")+1:] // the account's root
	}
	name = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("_+=,.@-", r):
			return r
		}
		return '-'
	}, name)
	if len(name) > 64 {
		name = name[:64]
	}
	if len(name) < 2 {
		return ""
	}
	return name
}
