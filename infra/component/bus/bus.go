// Package bus declares the shared part of the interruption bus: the EventBridge rules, the central buffering
// queue and its dead-letter queue, with their policies.
package bus

import (
	"fmt"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/cloudwatch"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/iam"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/sqs"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/iamname"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/policy"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// Type is the component's type token.
const Type = "karpenter-interruption-bus:index:Bus"

// Args configure the bus.
type Args struct {
	// NamePrefix starts every resource's name: "<NamePrefix>-central", "<NamePrefix>-<rule>", ...
	NamePrefix string
	// CentralRetentionSeconds is how long the central queue keeps an event.
	CentralRetentionSeconds int
	// VisibilityTimeoutSeconds hides a received event from other invocations while one routes it.
	VisibilityTimeoutSeconds int
	// MaxReceiveCount is how many receives move an event to the dead-letter queue.
	MaxReceiveCount int
	// EventMaxAgeSeconds bounds how long EventBridge retries delivering an event to the central queue.
	EventMaxAgeSeconds int
	// Forwarders are the member accounts' forwarder roles, which may send to the central queue.
	Forwarders Forwarders
	// RouterRoleARN is the router's role, the one principal that may send to the quarantine queue (known by its
	// name before it exists).
	RouterRoleARN string
	// HubByPolicy: the hub's rules deliver through the central queue's policy, not as the hub's forwarder role, which
	// is then not declared (config.CentralQueue.HubDelivery).
	HubByPolicy bool
	// RedrivePrincipals may assume the redrive role; none: no redrive role is declared.
	RedrivePrincipals []string
	// ArchiveMode (S3's GOVERNANCE or COMPLIANCE) and ArchiveRetentionDays are the archive's default retention.
	ArchiveMode          string
	ArchiveRetentionDays int
	// ArchiveAdoption says whether a bucket of the archive's name is adopted: the preflight asked S3 who owns it, and
	// the last update's outputs whether the stack holds an archive already.
	ArchiveAdoption Adoption
	Env             awsenv.Env
	Tags            pulumi.StringMap
}

// Bus is the shared plumbing.
type Bus struct {
	pulumi.ResourceState

	CentralQueueURL  pulumi.StringOutput `pulumi:"centralQueueUrl"`
	CentralQueueARN  pulumi.StringOutput `pulumi:"centralQueueArn"`
	CentralQueueName pulumi.StringOutput `pulumi:"centralQueueName"`
	DLQURL           pulumi.StringOutput `pulumi:"deadLetterQueueUrl"`
	DLQARN           pulumi.StringOutput `pulumi:"deadLetterQueueArn"`
	DLQName          pulumi.StringOutput `pulumi:"deadLetterQueueName"`
	// QuarantineURL and QuarantineARN are the queue the router keeps the messages it refuses in.
	QuarantineURL pulumi.StringOutput    `pulumi:"quarantineQueueUrl"`
	QuarantineARN pulumi.StringOutput    `pulumi:"quarantineQueueArn"`
	RuleARNs      pulumi.StringMapOutput `pulumi:"ruleArns"`
	// RedriveRoleARN is the role the principals named assume to send messages of the quarantine and the DLQ back to
	// the central queue; "" when none is named.
	RedriveRoleARN pulumi.StringOutput `pulumi:"redriveRoleArn"`
	// SealKeyARN is the key the router seals what it keeps with; ArchiveBucket (and its ARN) where each refusal is
	// also written, once, locked.
	SealKeyARN       pulumi.StringOutput `pulumi:"sealKeyArn"`
	ArchiveBucket    pulumi.StringOutput `pulumi:"archiveBucket"`
	ArchiveBucketARN pulumi.StringOutput `pulumi:"archiveBucketArn"`

	waitFor []pulumi.Resource
}

// CentralQueueName and DLQName are the names of the bus's queues of the stack whose name prefix is namePrefix.
func CentralQueueName(namePrefix string) string { return namePrefix + "-central" }

// DLQName names the dead-letter queue.
func DLQName(namePrefix string) string { return namePrefix + "-dlq" }

// QuarantineName names the quarantine queue: the messages the router refuses (contract.QuarantineReasons), kept.
func QuarantineName(namePrefix string) string { return namePrefix + "-quarantine" }

// RetentionSeconds is how long the dead-letter and quarantine queues keep a message: SQS's most, 14 days, to read
// it and send it back ("CreateQueue", MessageRetentionPeriod,
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html).
const RetentionSeconds = 1209600

// ForwarderRoleName names the forwarder role of an account of the bus of namePrefix in region: the execution role
// its rules deliver to the central queue as, the hub's own and each member's alike (the router checks that an event
// naming an account was sent by that account's forwarder: docs/security.md, "Who sent each message").
func ForwarderRoleName(namePrefix, region string) string {
	return iamname.OfPrefix(namePrefix, "forward", region)
}

// ForwarderTrust lets EventBridge take a forwarder role, in the form EventBridge documents for a rule's execution
// role ("Sending events to an AWS service in another account",
// https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-service-cross-account.html): no condition. EventBridge
// documents aws:SourceArn and aws:SourceAccount for the resource policies of the targets it calls, not for the
// AssumeRole of a rule's execution role; a trust requiring them, if EventBridge did not set them, would send every
// event to the dead-letter queue. What narrows the role: only a principal of the account allowed iam:PassRole on it
// can give it to a rule; it may only send to the hub's central queue; and events whose source is aws.* cannot be put
// by anyone but AWS.
func ForwarderTrust(env awsenv.Env) policy.Document {
	return policy.AssumableBy(env.Principal("events"), nil)
}

// Rule is one of the bus's EventBridge rules, each named "<namePrefix>-<Key>" and targeting the central queue.
type Rule struct {
	Key, Description, Pattern string
}

// Rules are the bus's rules, all on the default event bus (AWS service events arrive only there): one per event
// type the bus carries (contract.EventTypes), and the canary rule, which takes only this bus's canaries. Their
// count does not depend on the clusters.
func Rules(namePrefix string) []Rule {
	var out []Rule
	for _, t := range contract.EventTypes {
		out = append(out, Rule{Key: t.Rule, Description: t.Description, Pattern: t.Pattern()})
	}
	return append(out, Rule{
		Key: contract.RuleCanary, Description: "The interruption bus's own canaries (heartbeat, verify) to the central queue",
		Pattern: contract.CanaryPattern(namePrefix),
	})
}

// MessageGroup is the message group of the events of account in the central queue: every rule that targets it,
// the hub's own and each member's forwarding rules, sets it (EventBridge's SqsParameters, "for a target that is an
// Amazon SQS fair or FIFO queue": https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_SqsParameters.html).
// A standard queue whose messages carry a group is a fair queue: when one group holds a disproportionate share of
// the messages in flight, SQS delivers the other groups' first ("Amazon SQS fair queues",
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-fair-queues.html), so one account's
// storm does not delay the other accounts' events. An account ID is 12 digits, within the group's 100 characters.
func MessageGroup(account string) string { return account }

// RuleARNs are the ARNs of the bus's rules in env.
func RuleARNs(env awsenv.Env, namePrefix string) []string {
	var out []string
	for _, t := range Rules(namePrefix) {
		out = append(out, env.ARN("events", "rule/"+namePrefix+"-"+t.Key))
	}
	return out
}

// RedriveRoleName names the redrive role.
func RedriveRoleName(namePrefix, region string) string {
	return iamname.OfPrefix(namePrefix, "redrive", region)
}

// CentralPolicyOf is the central queue's policy of the bus of namePrefix in env; byPolicy and redrive say whether the
// hub's rules deliver through the policy and whether the bus has a redrive role.
func CentralPolicyOf(env awsenv.Env, namePrefix string, f Forwarders, byPolicy, redrive bool) policy.Document {
	hub := Hub{ByPolicy: byPolicy, Redrive: redrive}
	if byPolicy {
		hub.RuleARNs = RuleARNs(env, namePrefix)
	}
	return CentralPolicy(env, env.ARN("sqs", CentralQueueName(namePrefix)),
		env.IAMARN("role/"+ForwarderRoleName(namePrefix, env.Region)), env.IAMARN("role/"+RedriveRoleName(namePrefix, env.Region)), f, hub)
}

// New declares the bus as a component of its own (the program's).
func New(ctx *pulumi.Context, name string, args *Args, opts ...pulumi.ResourceOption) (*Bus, error) {
	b := &Bus{}
	if err := ctx.RegisterComponentResource(Type, name, b, opts...); err != nil {
		return nil, err
	}
	if err := b.declare(ctx, name, args, pulumi.Parent(b)); err != nil {
		return nil, err
	}
	b.waitFor = []pulumi.Resource{b}
	if err := ctx.RegisterResourceOutputs(b, pulumi.Map{
		"centralQueueUrl": b.CentralQueueURL, "centralQueueArn": b.CentralQueueARN, "centralQueueName": b.CentralQueueName,
		"deadLetterQueueUrl": b.DLQURL, "deadLetterQueueArn": b.DLQARN, "deadLetterQueueName": b.DLQName,
		"ruleArns": b.RuleARNs, "redriveRoleArn": b.RedriveRoleARN,
		"quarantineQueueUrl": b.QuarantineURL, "quarantineQueueArn": b.QuarantineARN,
		"sealKeyArn": b.SealKeyARN, "archiveBucket": b.ArchiveBucket, "archiveBucketArn": b.ArchiveBucketARN,
	}); err != nil {
		return nil, err
	}
	return b, nil
}

// Declare declares the bus's resources as children of parent, with no component of their own: the component
// package's Bus is the bus there, and one component per concept keeps a Bus from holding a Bus. The returned
// Bus is not a resource: only its outputs and WaitFor are to be used.
func Declare(ctx *pulumi.Context, name string, args *Args, parent pulumi.Resource) (*Bus, error) {
	b := &Bus{}
	if err := b.declare(ctx, name, args, pulumi.Parent(parent)); err != nil {
		return nil, err
	}
	return b, nil
}

// WaitFor are the resources something sending to the central queue waits for: the component, or, declared
// without one, the queues and their policies.
func (b *Bus) WaitFor() []pulumi.Resource { return b.waitFor }

// declare declares the bus's resources under parent and sets b's outputs.
func (b *Bus) declare(ctx *pulumi.Context, name string, args *Args, parent pulumi.ResourceOrInvokeOption) error {
	env := args.Env
	np := args.NamePrefix

	// The names are known before creation, so policies can name ARNs without waiting on outputs. No queue sets its
	// maxMessageSize: the provider's default, 256 KiB, is the most it takes (contract.MaxMessageBytes says why).
	centralName, dlqName := CentralQueueName(np), DLQName(np)
	centralARN, dlqARN := env.ARN("sqs", centralName), env.ARN("sqs", dlqName)

	dlq, err := sqs.NewQueue(ctx, name+"-dlq", &sqs.QueueArgs{
		Name:                    pulumi.String(dlqName),
		MessageRetentionSeconds: pulumi.Int(RetentionSeconds),
		// The router reads it when the redrive role asks (its intake), as long as it reads the central queue.
		VisibilityTimeoutSeconds: pulumi.Int(args.VisibilityTimeoutSeconds),
		SqsManagedSseEnabled:     pulumi.Bool(true),
		// Only the central queue may use it as its dead-letter queue.
		RedriveAllowPolicy: pulumi.String(OnlyFrom(centralARN)),
		Tags:               args.Tags,
	}, parent)
	if err != nil {
		return fmt.Errorf("declaring the dead-letter queue: %w", err)
	}
	redrivePolicy := fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":%d}`, dlqARN, args.MaxReceiveCount)
	central, err := sqs.NewQueue(ctx, name+"-central", &sqs.QueueArgs{
		Name:                     pulumi.String(centralName),
		MessageRetentionSeconds:  pulumi.Int(args.CentralRetentionSeconds),
		VisibilityTimeoutSeconds: pulumi.Int(args.VisibilityTimeoutSeconds),
		SqsManagedSseEnabled:     pulumi.Bool(true),
		RedrivePolicy:            pulumi.String(redrivePolicy),
		// No queue may make the central queue its dead-letter queue: a move from one is no sender of the bus.
		RedriveAllowPolicy: pulumi.String(DenyAllRedrive),
		Tags:               args.Tags,
	}, parent, pulumi.DependsOn([]pulumi.Resource{dlq}))
	if err != nil {
		return fmt.Errorf("declaring the central queue: %w", err)
	}

	quarantineName := QuarantineName(np)
	quarantineARN := env.ARN("sqs", quarantineName)
	quarantine, err := sqs.NewQueue(ctx, name+"-quarantine", &sqs.QueueArgs{
		Name:                    pulumi.String(quarantineName),
		MessageRetentionSeconds: pulumi.Int(RetentionSeconds),
		SqsManagedSseEnabled:    pulumi.Bool(true),
		// No queue may make the quarantine its dead-letter queue: what is there, the router wrote.
		RedriveAllowPolicy: pulumi.String(DenyAllRedrive),
		Tags:               args.Tags,
	}, parent)
	if err != nil {
		return fmt.Errorf("declaring the quarantine queue: %w", err)
	}
	redriveRoleName, redriveARN := RedriveRoleName(np, env.Region), ""
	if len(args.RedrivePrincipals) > 0 {
		redriveARN = env.IAMARN("role/" + redriveRoleName)
	}
	quarantinePolicy, err := sqs.NewQueuePolicy(ctx, name+"-quarantine", &sqs.QueuePolicyArgs{
		QueueUrl: quarantine.Url, Policy: pulumi.String(QuarantinePolicy(quarantineARN, args.RouterRoleARN, redriveARN).JSON()),
	}, parent)
	if err != nil {
		return fmt.Errorf("declaring the quarantine queue policy: %w", err)
	}

	// The rules deliver as the hub's forwarder role, as every member's rules do as theirs: the central queue's
	// senders are all roles, each known to the router's sender check. Through the queue's policy instead, there is
	// no forwarder of the hub.
	var forwarder *iam.Role
	var targetOpts []pulumi.ResourceOption
	if !args.HubByPolicy {
		var forwarderPolicy *iam.RolePolicy
		if forwarder, forwarderPolicy, err = forwarderRole(ctx, name+"-forward", ForwarderRoleName(np, env.Region), env, centralARN, args.Tags, parent); err != nil {
			return err
		}
		targetOpts = append(targetOpts, pulumi.DependsOn([]pulumi.Resource{forwarderPolicy}))
	}

	ruleARNs := pulumi.StringMap{}
	ruleARNList := RuleARNs(env, np)
	for _, t := range Rules(np) {
		ruleName := np + "-" + t.Key
		rule, err := cloudwatch.NewEventRule(ctx, name+"-"+t.Key, &cloudwatch.EventRuleArgs{
			Name:         pulumi.String(ruleName),
			Description:  pulumi.String(t.Description),
			EventPattern: pulumi.String(t.Pattern),
			Tags:         args.Tags,
		}, parent)
		if err != nil {
			return fmt.Errorf("declaring rule %s: %w", t.Key, err)
		}
		target := &cloudwatch.EventTargetArgs{
			Rule:     rule.Name,
			TargetId: pulumi.String("central-queue"),
			Arn:      central.Arn,
			// The central queue is a fair queue for its message groups: each account's events are one group, so
			// one account's storm does not hold back the others' (docs/performance.md, "Fairness between accounts").
			SqsTarget: &cloudwatch.EventTargetSqsTargetArgs{MessageGroupId: pulumi.String(MessageGroup(env.Account))},
			RetryPolicy: &cloudwatch.EventTargetRetryPolicyArgs{
				MaximumEventAgeInSeconds: pulumi.Int(args.EventMaxAgeSeconds),
				MaximumRetryAttempts:     pulumi.Int(185),
			},
			DeadLetterConfig: &cloudwatch.EventTargetDeadLetterConfigArgs{Arn: dlq.Arn},
		}
		if forwarder != nil {
			// An SQS target of the rule's own account may be reached through an execution role ("For Lambda, Amazon
			// SNS, and Amazon SQS resources, EventBridge can use either an IAM execution role or a resource-based
			// policy", https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-use-resource-based.html; the
			// English page's older advice is not to: docs/security.md, "How the hub's rules deliver"): SQS then stamps
			// the role's ID as the message's SenderId, which AWS documents, where a delivery through the queue's
			// policy alone gets an ID AWS does not. make verify says whether it delivers.
			target.RoleArn = forwarder.Arn
		}
		if _, err := cloudwatch.NewEventTarget(ctx, name+"-"+t.Key, target, append([]pulumi.ResourceOption{parent}, targetOpts...)...); err != nil {
			return fmt.Errorf("declaring the target of rule %s: %w", t.Key, err)
		}
		ruleARNs[t.Key] = rule.Arn
	}

	evidence, err := declareEvidence(ctx, name, EvidenceArgs{
		NamePrefix: np, RouterRoleARN: args.RouterRoleARN, Mode: args.ArchiveMode, RetentionDays: args.ArchiveRetentionDays, Env: env, Tags: args.Tags,
		Adoption: args.ArchiveAdoption, Invoke: []pulumi.InvokeOption{parent},
	}, parent)
	if err != nil {
		return err
	}
	b.SealKeyARN, b.ArchiveBucket, b.ArchiveBucketARN = evidence.SealKeyARN, evidence.ArchiveBucket, evidence.ArchiveBucketARN

	b.RedriveRoleARN = pulumi.String("").ToStringOutput()
	if len(args.RedrivePrincipals) > 0 {
		archives := "arn:" + env.Partition + ":s3:::" + ArchiveBucketPrefix(np)
		redrive, err := redriveRole(ctx, name+"-redrive", redriveRoleName, args.RedrivePrincipals, dlqARN, centralARN, quarantineARN, archives, env.Account,
			evidence, args.Tags, parent)
		if err != nil {
			return err
		}
		b.RedriveRoleARN = redrive.Arn
	}
	centralPolicy, err := sqs.NewQueuePolicy(ctx, name+"-central", &sqs.QueuePolicyArgs{
		QueueUrl: central.Url, Policy: pulumi.String(CentralPolicyOf(env, np, args.Forwarders, args.HubByPolicy, len(args.RedrivePrincipals) > 0).JSON()),
	}, parent)
	if err != nil {
		return fmt.Errorf("declaring the central queue policy: %w", err)
	}
	if _, err := sqs.NewQueuePolicy(ctx, name+"-dlq", &sqs.QueuePolicyArgs{
		QueueUrl: dlq.Url, Policy: pulumi.String(DLQPolicy(env, dlqARN, centralARN, ruleARNList).JSON()),
	}, parent); err != nil {
		return fmt.Errorf("declaring the dead-letter queue policy: %w", err)
	}

	b.CentralQueueURL, b.CentralQueueARN, b.CentralQueueName = central.Url, central.Arn, central.Name
	b.DLQURL, b.DLQARN, b.DLQName = dlq.Url, dlq.Arn, dlq.Name
	b.QuarantineURL, b.QuarantineARN = quarantine.Url, quarantine.Arn
	b.RuleARNs = ruleARNs.ToStringMapOutput()
	b.waitFor = []pulumi.Resource{dlq, central, centralPolicy, quarantine, quarantinePolicy}
	if forwarder != nil {
		b.waitFor = append(b.waitFor, forwarder)
	}
	return nil
}
