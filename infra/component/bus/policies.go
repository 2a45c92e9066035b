package bus

import (
	"fmt"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/iam"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/policy"
)

// Forwarders are the member accounts' forwarder roles, which may send to the central queue besides the stack's
// rules and its redrive role: named one by one (accounts), or, with an organization, every role of its RoleName
// in an account of OrgID, without a list that grows with the members.
type Forwarders struct {
	ARNs            []string
	OrgID, RoleName string
}

// CentralPolicy lets only roles send to the central queue: the hub's forwarder (its rules deliver as it), the
// member accounts' forwarders (their rules deliver as theirs) and the redrive role. The Deny makes that true inside
// the account too, where an identity policy alone would otherwise suffice: a role allowed sqs:SendMessage on *
// cannot put a forged event on the bus, and neither can a delivery through the queue's policy by a service
// principal (no aws:PrincipalArn: the Deny's negated condition matches a missing key), whose SenderId AWS does not
// document. No role is a principal: members' roles are admitted by any principal with conditions on
// aws:PrincipalArn, so the policy can be set before the roles exist and keeps admitting a role recreated later. The
// hub's roles, of the queue's own account, need no Allow here: their identity policies suffice within an account,
// and the Deny excepts them.
//
// SQS counts at most 10 conditions in a queue's policy (docs/performance.md, "AWS quotas"): the policy uses 3 with
// accounts, 5 with an organization, whatever the number of members.
func CentralPolicy(env awsenv.Env, queueARN, forwarderRoleARN, redriveRoleARN string, f Forwarders) policy.Document {
	var statements []policy.Statement
	senders := []string{forwarderRoleARN, redriveRoleARN}
	switch {
	case f.OrgID != "":
		pattern := env.In("*").IAMARN("role/" + f.RoleName)
		statements = append(statements, policy.Statement{
			Sid: "OrganizationAccountsForward", Effect: "Allow", Principal: "*",
			Action: []string{"sqs:SendMessage"}, Resource: []string{queueARN},
			Condition: map[string]map[string]any{
				"StringEquals": {"aws:PrincipalOrgID": f.OrgID},
				"ArnLike":      {"aws:PrincipalArn": pattern},
			},
		})
		senders = append(senders, pattern)
	case len(f.ARNs) > 0:
		statements = append(statements, policy.Statement{
			Sid: "MemberAccountsForward", Effect: "Allow", Principal: "*",
			Action: []string{"sqs:SendMessage"}, Resource: []string{queueARN},
			Condition: map[string]map[string]any{"ArnEquals": {"aws:PrincipalArn": f.ARNs}},
		})
		senders = append(senders, f.ARNs...)
	}
	statements = append(statements, policy.Statement{
		Sid: "OnlyTheForwardersAndTheRedriveRoleSend", Effect: "Deny", Principal: "*",
		Action: []string{"sqs:SendMessage"}, Resource: []string{queueARN},
		Condition: map[string]map[string]any{"ArnNotLike": {"aws:PrincipalArn": senders}},
	})
	return policy.New(append(statements, policy.DenyInsecureTransport(queueARN))...)
}

// QuarantinePolicy lets only the router send to the quarantine queue (by aws:PrincipalArn, so it can be set before
// the router's role exists): whatever is there, the router refused. Reading it takes the redrive role (its identity
// policy, within the account).
func QuarantinePolicy(queueARN, routerRoleARN string) policy.Document {
	return policy.New(
		policy.Statement{
			Sid: "OnlyTheRouterKeeps", Effect: "Deny", Principal: "*",
			Action: []string{"sqs:SendMessage"}, Resource: []string{queueARN},
			Condition: map[string]map[string]any{"ArnNotEquals": {"aws:PrincipalArn": routerRoleARN}},
		},
		policy.DenyInsecureTransport(queueARN),
	)
}

// DLQPolicy lets only the rules send to a dead-letter queue (the events EventBridge could not deliver). SQS
// moves the central queue's failed messages there itself; the central queue, when given, is in the Deny's
// exceptions, in case that move is ever authorised as a request from it.
func DLQPolicy(env awsenv.Env, queueARN, centralARN string, ruleARNs []string) policy.Document {
	sources := append([]string{}, ruleARNs...)
	if centralARN != "" {
		sources = append(sources, centralARN)
	}
	return policy.New(
		fromRules(env, queueARN, ruleARNs),
		policy.Statement{
			Sid: "OnlyTheRulesSend", Effect: "Deny", Principal: "*",
			Action: []string{"sqs:SendMessage"}, Resource: []string{queueARN},
			Condition: map[string]map[string]any{"ArnNotEquals": {"aws:SourceArn": sources}},
		},
		policy.DenyInsecureTransport(queueARN),
	)
}

func fromRules(env awsenv.Env, queueARN string, ruleARNs []string) policy.Statement {
	return policy.Statement{
		Sid: "EventBridgeRules", Effect: "Allow", Principal: policy.Service(env.Principal("events")),
		Action: []string{"sqs:SendMessage"}, Resource: []string{queueARN},
		Condition: map[string]map[string]any{"ArnEquals": {"aws:SourceArn": ruleARNs}},
	}
}

// RedrivePolicy is what sending the DLQ's and the quarantine's messages back into the central queue takes, and
// nothing more: the requeue command receives from either, sends to the central queue as its caller, deletes what it
// sent and releases what it did not (ChangeMessageVisibility); StartMessageMoveTask stays allowed on the DLQ.
func RedrivePolicy(dlqARN, centralARN, quarantineARN string) policy.Document {
	return policy.New(
		policy.Allow("ReadTheDeadLetterQueue", []string{
			"sqs:StartMessageMoveTask", "sqs:ListMessageMoveTasks", "sqs:CancelMessageMoveTask",
			"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes",
		}, []string{dlqARN}),
		policy.Allow("ReadTheQuarantine", []string{
			"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes",
		}, []string{quarantineARN}),
		policy.Allow("SendToTheCentralQueue", []string{"sqs:SendMessage", "sqs:GetQueueAttributes"}, []string{centralARN}),
	)
}

// forwarderRole declares the hub's forwarder role, which the hub's rules deliver to the central queue as.
func forwarderRole(ctx *pulumi.Context, name, roleName string, env awsenv.Env, centralARN string, tags pulumi.StringMap,
	opts ...pulumi.ResourceOption,
) (*iam.Role, *iam.RolePolicy, error) {
	role, err := iam.NewRole(ctx, name, &iam.RoleArgs{
		Name:             pulumi.String(roleName),
		Description:      pulumi.String("EventBridge sends this account's interruption events to the interruption bus's central queue as this role"),
		AssumeRolePolicy: pulumi.String(ForwarderTrust(env).JSON()),
		Tags:             tags,
	}, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("declaring the forwarder role: %w", err)
	}
	inline, err := iam.NewRolePolicy(ctx, name, &iam.RolePolicyArgs{
		Name: pulumi.String("forward"), Role: role.Name,
		Policy: pulumi.String(policy.New(policy.Allow("SendToTheHub", []string{"sqs:SendMessage"}, []string{centralARN})).JSON()),
	}, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("declaring the forwarder policy: %w", err)
	}
	return role, inline, nil
}

// redriveRole declares the role operators assume to send the DLQ's and the quarantine's messages back: the one
// principal besides the forwarders that may send to the central queue. Any principal of the account whose own policy allows sts:AssumeRole on it may
// assume it (the account's usual delegation).
func redriveRole(ctx *pulumi.Context, name, roleName string, env awsenv.Env, dlqARN, centralARN, quarantineARN string, tags pulumi.StringMap,
	opts ...pulumi.ResourceOption,
) (*iam.Role, error) {
	role, err := iam.NewRole(ctx, name, &iam.RoleArgs{
		Name:        pulumi.String(roleName),
		Description: pulumi.String("Moves interruption events from the dead-letter queue back to the central queue"),
		AssumeRolePolicy: pulumi.String(policy.New(policy.Statement{
			Effect: "Allow", Principal: map[string]string{"AWS": env.IAMARN("root")}, Action: []string{"sts:AssumeRole"},
		}).JSON()),
		Tags: tags,
	}, opts...)
	if err != nil {
		return nil, fmt.Errorf("declaring the redrive role: %w", err)
	}
	if _, err := iam.NewRolePolicy(ctx, name, &iam.RolePolicyArgs{
		Name: pulumi.String("redrive"), Role: role.Name, Policy: pulumi.String(RedrivePolicy(dlqARN, centralARN, quarantineARN).JSON()),
	}, opts...); err != nil {
		return nil, fmt.Errorf("declaring the redrive policy: %w", err)
	}
	return role, nil
}
