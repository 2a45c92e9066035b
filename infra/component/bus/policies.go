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

// CentralPolicy lets only the stack's rules (through EventBridge), the member accounts' forwarder roles (their
// rules send as them) and the redrive role send to the central queue. The Deny makes that true inside the
// account too, where an identity policy alone would otherwise suffice: a role allowed sqs:SendMessage on *
// cannot put a forged event on the bus. No role is a principal: members' roles are admitted by any principal with
// conditions on aws:PrincipalArn, so the policy can be set before the roles exist and keeps admitting a role
// recreated later. A member's rule delivers as its execution role (RoleArn), so SQS sees that role as the caller,
// with no aws:SourceArn, which AWS sets only for a service principal calling on a resource owner's behalf ("AWS
// global condition context keys", aws:SourceArn, https://docs.aws.amazon.com/IAM/latest/UserGuide/
// reference_policies_condition-keys.html#condition-keys-sourcearn): members by aws:PrincipalArn, the stack's
// own rules by aws:SourceArn. The redrive role, of the queue's own account, needs no Allow here: its identity
// policy suffices within an account, and the Deny excepts it.
//
// SQS counts at most 10 conditions in a queue's policy (docs/performance.md, "AWS quotas"): the policy uses 5 with accounts, 7
// with an organization, whatever the number of members.
func CentralPolicy(env awsenv.Env, queueARN string, ruleARNs []string, redriveRoleARN string, f Forwarders) policy.Document {
	statements := []policy.Statement{fromRules(env, queueARN, ruleARNs)}
	senders := []string{redriveRoleARN}
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
		Sid: "OnlyTheRulesTheRedriveRoleAndForwardersSend", Effect: "Deny", Principal: "*",
		Action: []string{"sqs:SendMessage"}, Resource: []string{queueARN},
		Condition: map[string]map[string]any{"ArnNotEquals": {"aws:SourceArn": ruleARNs}, "ArnNotLike": {"aws:PrincipalArn": senders}},
	})
	if f.OrgID != "" {
		// The forwarder's name admits any account of the organization, the hub's own included, where no forwarder
		// exists: a role of the hub so named must not send.
		statements = append(statements, policy.Statement{
			Sid: "NoForwarderInTheHub", Effect: "Deny", Principal: "*",
			Action: []string{"sqs:SendMessage"}, Resource: []string{queueARN},
			Condition: map[string]map[string]any{"ArnEquals": {"aws:PrincipalArn": env.IAMARN("role/" + f.RoleName)}},
		})
	}
	return policy.New(append(statements, policy.DenyInsecureTransport(queueARN))...)
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

// RedrivePolicy is what moving the DLQ's messages back into the central queue takes (StartMessageMoveTask
// reads and deletes from the source and sends to the destination as its caller), and nothing more.
func RedrivePolicy(dlqARN, centralARN string) policy.Document {
	return policy.New(
		policy.Allow("ReadTheDeadLetterQueue", []string{
			"sqs:StartMessageMoveTask", "sqs:ListMessageMoveTasks", "sqs:CancelMessageMoveTask",
			"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes",
		}, []string{dlqARN}),
		policy.Allow("SendToTheCentralQueue", []string{"sqs:SendMessage", "sqs:GetQueueAttributes"}, []string{centralARN}),
	)
}

// redriveRole declares the role operators assume to redrive the DLQ: the one principal besides the rules that
// may send to the central queue. Any principal of the account whose own policy allows sts:AssumeRole on it may
// assume it (the account's usual delegation).
func redriveRole(ctx *pulumi.Context, name, roleName string, env awsenv.Env, dlqARN, centralARN string, tags pulumi.StringMap,
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
		Name: pulumi.String("redrive"), Role: role.Name, Policy: pulumi.String(RedrivePolicy(dlqARN, centralARN).JSON()),
	}, opts...); err != nil {
		return nil, fmt.Errorf("declaring the redrive policy: %w", err)
	}
	return role, nil
}
