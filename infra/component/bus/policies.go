package bus

import (
	"fmt"
	"strings"

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

// Hub says how the hub's side of the bus is wired: whether its rules deliver through the central queue's policy
// (ByPolicy) rather than as its forwarder role, and the rules' ARNs they then send for; whether it has a redrive
// role (Redrive).
type Hub struct {
	ByPolicy bool
	RuleARNs []string
	Redrive  bool
}

// CentralPolicy lets only roles of the bus send to the central queue: the hub's forwarder (its rules deliver as it),
// the member accounts' forwarders (their rules deliver as theirs) and the redrive role; and, when the hub's rules
// deliver through the queue's policy (hub.ByPolicy), EventBridge for the stack's own rules, by aws:SourceArn (a rule's
// ARN names its account), the form EventBridge documents for an SQS target's resource policy ("Using resource-based
// policies for Amazon EventBridge", https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-use-resource-based.html#eb-sqs-permissions).
// The Deny makes that true inside the account too, where an identity policy alone would otherwise suffice: a role
// allowed sqs:SendMessage on * cannot put a forged event on the bus. Its two conditions must both hold to deny: a
// principal not among the senders (aws:PrincipalArn, missing for a service principal, which the negated operator
// matches), and a request not made for one of the stack's rules (aws:SourceArn, which only a service sets; with the
// rules delivering as roles, a value no request carries). So the only sender that is no role is EventBridge for the
// stack's own rules, whose events are the hub's own: what the router's sender check rests on in that mode. No role is
// a principal: members' roles are admitted by any principal with conditions on aws:PrincipalArn, so the policy can be
// set before the roles exist and keeps admitting a role recreated later. The hub's roles, of the queue's own
// account, need no Allow here: their identity policies suffice within an account, and the Deny excepts them.
//
// SQS counts at most 10 conditions in a queue's policy (docs/performance.md, "AWS quotas"): the policy's count does
// not grow with the members (MemberQuotaFigures measures it before anything is declared).
func CentralPolicy(env awsenv.Env, queueARN, forwarderRoleARN, redriveRoleARN string, f Forwarders, hub Hub) policy.Document {
	var statements []policy.Statement
	var senders []string
	if !hub.ByPolicy {
		senders = append(senders, forwarderRoleARN)
	}
	if hub.Redrive {
		senders = append(senders, redriveRoleARN)
	}
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
	deny := policy.Statement{
		Sid: "OnlyTheBusSends", Effect: "Deny", Principal: "*",
		Action: []string{"sqs:SendMessage"}, Resource: []string{queueARN},
		Condition: map[string]map[string]any{},
	}
	if len(senders) > 0 {
		deny.Condition["ArnNotLike"] = map[string]any{"aws:PrincipalArn": senders}
	}
	if hub.ByPolicy {
		statements = append(statements, fromRules(env, queueARN, hub.RuleARNs, "TheHubsRules"))
		deny.Condition["ArnNotEquals"] = map[string]any{"aws:SourceArn": hub.RuleARNs}
	}
	statements = append(statements, deny)
	return policy.New(append(statements, policy.DenyInsecureTransport(queueARN))...)
}

// QuarantinePolicy keeps the quarantine's evidence as the router wrote it: only the router may send there (by
// aws:PrincipalArn, so it can be set before the router's role exists), so whatever is there the router refused;
// only the redrive role may receive, delete or change a message's visibility (the requeue command, which reads
// what is there and sends it back); nobody may purge it. Without a redrive role (redriveRoleARN ""), nobody may
// read it at all. These are Denies: an administrator of the account allowed sqs:* on * is refused too. What a
// Deny here cannot stop is whoever may set the queue's attributes (its policy, its retention): the stack's
// deployer, as for every resource of the stack.
func QuarantinePolicy(queueARN, routerRoleARN, redriveRoleARN string) policy.Document {
	readers := policy.Statement{
		Sid: "OnlyTheRedriveRoleReads", Effect: "Deny", Principal: "*",
		Action: []string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility"}, Resource: []string{queueARN},
	}
	if redriveRoleARN != "" {
		readers.Condition = map[string]map[string]any{"ArnNotEquals": {"aws:PrincipalArn": redriveRoleARN}}
	}
	return policy.New(
		policy.Statement{
			Sid: "OnlyTheRouterKeeps", Effect: "Deny", Principal: "*",
			Action: []string{"sqs:SendMessage"}, Resource: []string{queueARN},
			Condition: map[string]map[string]any{"ArnNotEquals": {"aws:PrincipalArn": routerRoleARN}},
		},
		readers,
		policy.Statement{Sid: "NobodyPurges", Effect: "Deny", Principal: "*", Action: []string{"sqs:PurgeQueue"}, Resource: []string{queueARN}},
		policy.DenyInsecureTransport(queueARN),
	)
}

// RedriveAllowPolicy values for the bus's queues ("CreateQueue", RedriveAllowPolicy,
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html): without one a queue
// is "allowAll": "Any source queues in this AWS account in the same Region can specify this queue as the dead-letter
// queue", which would let any queue of the account move messages, attributes and all, into the central queue or the
// quarantine. DenyAll refuses every source queue; OnlyFrom admits the one queue given.
const DenyAllRedrive = `{"redrivePermission":"denyAll"}`

// OnlyFrom is the RedriveAllowPolicy that admits sourceARN alone ("byQueue", up to 10 source queues).
func OnlyFrom(sourceARN string) string {
	return fmt.Sprintf(`{"redrivePermission":"byQueue","sourceQueueArns":[%q]}`, sourceARN)
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
		fromRules(env, queueARN, ruleARNs, "EventBridgeRules"),
		policy.Statement{
			Sid: "OnlyTheRulesSend", Effect: "Deny", Principal: "*",
			Action: []string{"sqs:SendMessage"}, Resource: []string{queueARN},
			Condition: map[string]map[string]any{"ArnNotEquals": {"aws:SourceArn": sources}},
		},
		policy.DenyInsecureTransport(queueARN),
	)
}

func fromRules(env awsenv.Env, queueARN string, ruleARNs []string, sid string) policy.Statement {
	return policy.Statement{
		Sid: sid, Effect: "Allow", Principal: policy.Service(env.Principal("events")),
		Action: []string{"sqs:SendMessage"}, Resource: []string{queueARN},
		Condition: map[string]map[string]any{"ArnEquals": {"aws:SourceArn": ruleARNs}},
	}
}

// RedrivePolicy is what sending the quarantine's messages back into the central queue takes, and nothing more: the
// requeue command receives from the quarantine, sends to the central queue as its caller (the records back, and the
// request that the router take the dead-letter queue in), deletes what it sent and releases what it did not
// (ChangeMessageVisibility); it lists the dead-letter queue and the archive, and reads the seal key's public key to
// check a record's seal before sending it. Not sqs:StartMessageMoveTask: AWS does not document what sender a moved
// message keeps; nor kms:Sign, which the key's policy denies it: what it sends says of itself only what the router
// sealed.
//
// The archives are every bucket of the bus's archive prefix (archivesARN, "arn:<partition>:s3:::<prefix>"): those a
// release before 0.4.0 made, one per deployment, which make requeue FROM=archive finds with ListBuckets
// (s3:ListAllMyBuckets, which takes no narrower resource than "*": "Actions defined by Amazon S3", and lists the
// caller's own account's buckets alone); and the one the bus has (archiveARN), named too when its name does not start
// with the prefix (a name prefix longer than ArchiveBucketPrefix keeps). It lists their keys by version and reads a
// version a delete marker hides (s3:ListBucketVersions, s3:GetObjectVersion: requeue reads what a delete marker hides,
// and says so), only as buckets of account (OfAccount), as each of its calls names it (ExpectedBucketOwner).
func RedrivePolicy(dlqARN, centralARN, quarantineARN, sealKeyARN, archivesARN, archiveARN, account string) policy.Document {
	read := []string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes"}
	buckets := []string{archivesARN + "*"}
	if !strings.HasPrefix(archiveARN, archivesARN) {
		buckets = append(buckets, archiveARN)
	}
	objects := make([]string, len(buckets))
	for i, b := range buckets {
		objects[i] = b + "/*"
	}
	list := policy.Allow("ListTheArchives", []string{"s3:ListBucket", "s3:ListBucketVersions"}, buckets)
	list.Condition = OfAccount(account)
	get := policy.Allow("ReadTheArchives", []string{"s3:GetObject", "s3:GetObjectVersion"}, objects)
	get.Condition = OfAccount(account)
	return policy.New(
		policy.Allow("ListTheDeadLetterQueue", []string{"sqs:ReceiveMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes"}, []string{dlqARN}),
		policy.Allow("ReadTheQuarantine", read, []string{quarantineARN}),
		policy.Allow("SendToTheCentralQueue", []string{"sqs:SendMessage", "sqs:GetQueueAttributes"}, []string{centralARN}),
		policy.Allow("CheckSeals", []string{"kms:GetPublicKey"}, []string{sealKeyARN}),
		policy.Allow("FindTheArchives", []string{"s3:ListAllMyBuckets"}, []string{"*"}),
		list, get,
	)
}

// RedriveTrust lets exactly principals (roles and users, by ARN) assume the redrive role: their accounts are the
// principal, their ARNs the aws:PrincipalArn condition (policy.PrincipalIs), so a principal named before it
// exists, or created anew, is admitted, and nobody else of those accounts is, whatever sts:AssumeRole their own
// policies allow. Only with a source identity (sts:SetSourceIdentity, the sts:SourceIdentity condition key): a session
// of the role opened without one is refused, and CloudTrail records the one it was opened with on every call the
// session makes, sending to the central queue included, which make requeue sets to who runs it ("Monitor and control
// actions taken with assumed roles", https://docs.aws.amazon.com/IAM/latest/UserGuide/id_credentials_temp_control-access_monitor.html).
//
// The source identity is bound to the caller as far as AWS allows: an IAM user may set only its own name
// (${aws:username}, which AWS sets for a user and for no role); a role, any (AWS gives a role's session no name of its
// caller to compare with: the source identity is then the caller's word, unless its own session was opened with one,
// which AWS carries unchanged into the redrive role's and refuses to change). One statement for each, the users' only
// when some are named, so that the trust stays within IAM's 2,048 characters for as many principals as before.
func RedriveTrust(principals []string) policy.Document {
	var users, roles []string
	for _, p := range principals {
		if strings.Contains(p, ":user/") {
			users = append(users, p)
		} else {
			roles = append(roles, p)
		}
	}
	statement := func(sid string, arns []string, operator, sourceIdentity string) policy.Statement {
		principal, condition := policy.PrincipalIs(arns...)
		condition[operator] = map[string]any{"sts:SourceIdentity": sourceIdentity}
		return policy.Statement{Sid: sid, Effect: "Allow", Principal: principal, Action: []string{"sts:AssumeRole", "sts:SetSourceIdentity"}, Condition: condition}
	}
	var statements []policy.Statement
	if len(roles) > 0 {
		statements = append(statements, statement("NamedRoles", roles, "StringLike", "*"))
	}
	if len(users) > 0 {
		statements = append(statements, statement("NamedUsers", users, "StringEquals", "${aws:username}"))
	}
	return policy.New(statements...)
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
// principal besides the forwarders that may send to the central queue, and the one that may read the quarantine.
// Only principals may assume it (RedriveTrust).
func redriveRole(ctx *pulumi.Context, name, roleName string, principals []string, dlqARN, centralARN, quarantineARN, archivesARN, account string, evidence Evidence,
	tags pulumi.StringMap, opts ...pulumi.ResourceOption,
) (*iam.Role, error) {
	role, err := iam.NewRole(ctx, name, &iam.RoleArgs{
		Name:             pulumi.String(roleName),
		Description:      pulumi.String("Sends interruption events of the quarantine and the dead-letter queue back to the central queue"),
		AssumeRolePolicy: pulumi.String(RedriveTrust(principals).JSON()),
		Tags:             tags,
	}, opts...)
	if err != nil {
		return nil, fmt.Errorf("declaring the redrive role: %w", err)
	}
	doc := pulumi.All(evidence.SealKeyARN, evidence.ArchiveBucketARN).ApplyT(func(v []any) string {
		return RedrivePolicy(dlqARN, centralARN, quarantineARN, v[0].(string), archivesARN, v[1].(string), account).JSON()
	}).(pulumi.StringOutput)
	if _, err := iam.NewRolePolicy(ctx, name, &iam.RolePolicyArgs{
		Name: pulumi.String("redrive"), Role: role.Name, Policy: doc,
	}, opts...); err != nil {
		return nil, fmt.Errorf("declaring the redrive policy: %w", err)
	}
	return role, nil
}
