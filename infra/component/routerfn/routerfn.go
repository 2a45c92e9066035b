// Package routerfn deploys the router Lambda: its role, its log group, the function built from router/, and the
// event source mapping from the central queue.
package routerfn

import (
	"fmt"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/cloudwatch"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/iam"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/lambda"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/bus"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/dependency"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/policy"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/routerbuild"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// Type is the component's type token.
const Type = "karpenter-interruption-bus:index:Router"

// Args configure the router.
type Args struct {
	// FunctionName names the function and its log group.
	FunctionName string
	// RoleName names its role: IAM's names are global to the account, so it carries the region (iamname).
	RoleName string
	// RoleDescription says whose router the role runs.
	RoleDescription string
	// Settings become the function's environment, with the central queue's URL.
	Settings         contract.Settings
	MemoryMB         int
	TimeoutSeconds   int
	LogRetentionDays int
	// BatchSize, MaximumBatchingWindowSeconds and MaximumConcurrency shape the event source mapping.
	BatchSize                    int
	MaximumBatchingWindowSeconds int
	MaximumConcurrency           int
	// ProvisionedPollers, when set, replaces MaximumConcurrency: provisioned mode.
	ProvisionedPollers *config.ProvisionedPollers
	// ReservedConcurrency is the function's reserved concurrency: the ceiling on routers at once, in every mode
	// (config.Router.Reserved).
	ReservedConcurrency int
	// Artifact is the built router (routerbuild.Build).
	Artifact routerbuild.Artifact
	// CentralQueueARN and CentralQueueURL are the queue the router reads.
	CentralQueueARN pulumi.StringInput
	CentralQueueURL pulumi.StringInput
	// QuarantineQueueARN and QuarantineQueueURL are the queue it keeps what it refuses in.
	QuarantineQueueARN pulumi.StringInput
	QuarantineQueueURL pulumi.StringInput
	// DLQARN and DLQURL are the dead-letter queue it takes into the quarantine when the redrive role asks.
	DLQARN pulumi.StringInput
	DLQURL pulumi.StringInput
	// SealKeyARN is the key it seals what it keeps with; ArchiveBucket and ArchiveBucketARN where it archives it.
	SealKeyARN       pulumi.StringInput
	ArchiveBucket    pulumi.StringInput
	ArchiveBucketARN pulumi.StringInput
	Env              awsenv.Env
	Tags             pulumi.StringMap
}

// Router is the deployed function.
type Router struct {
	pulumi.ResourceState
	dependency.Recorder // what depending on it means (dependency.On)

	FunctionName pulumi.StringOutput `pulumi:"functionName"`
	FunctionARN  pulumi.StringOutput `pulumi:"functionArn"`
	RoleARN      pulumi.StringOutput `pulumi:"roleArn"`
	LogGroupName pulumi.StringOutput `pulumi:"logGroupName"`
}

// New declares the router.
func New(ctx *pulumi.Context, name string, args *Args, opts ...pulumi.ResourceOption) (*Router, error) {
	r := &Router{}
	if err := dependency.Register(ctx, Type, name, r, opts...); err != nil {
		return nil, err
	}
	env := args.Env
	parent := pulumi.Parent(r)
	fnName := args.FunctionName
	logGroupName := "/aws/lambda/" + fnName
	environment := pulumi.All(args.CentralQueueURL, args.QuarantineQueueURL, args.DLQURL, args.SealKeyARN, args.ArchiveBucket).ApplyT(func(v []any) (map[string]string, error) {
		s := args.Settings
		s.CentralQueueURL, s.QuarantineQueueURL, s.DeadLetterQueueURL, s.SealKey, s.ArchiveBucket = v[0].(string), v[1].(string), v[2].(string), v[3].(string), v[4].(string)
		env := s.Environ()
		if n := contract.EnvironSize(env); n > contract.MaxEnvironSize {
			return nil, fmt.Errorf("the router's environment is %d bytes, over Lambda's %d", n, contract.MaxEnvironSize)
		}
		return env, nil
	}).(pulumi.StringMapOutput)

	role, err := iam.NewRole(ctx, name, &iam.RoleArgs{
		Name:             pulumi.String(args.RoleName),
		Description:      pulumi.String(args.RoleDescription),
		AssumeRolePolicy: pulumi.String(policy.AssumableBy(env.Principal("lambda"), nil).JSON()),
		Tags:             args.Tags,
	}, parent)
	if err != nil {
		return nil, fmt.Errorf("declaring the router role: %w", err)
	}
	rolePolicy := pulumi.All(args.CentralQueueARN, args.QuarantineQueueARN, args.DLQARN, args.SealKeyARN, args.ArchiveBucketARN).ApplyT(func(arns []any) string {
		return Policy(env, args.Settings, Queues{Central: arns[0].(string), Quarantine: arns[1].(string), DLQ: arns[2].(string)},
			Evidence{SealKey: arns[3].(string), Archive: arns[4].(string)}, logGroupName).JSON()
	}).(pulumi.StringOutput)
	inline, err := iam.NewRolePolicy(ctx, name, &iam.RolePolicyArgs{
		Name: pulumi.String("router"), Role: role.Name, Policy: rolePolicy,
	}, parent)
	if err != nil {
		return nil, fmt.Errorf("declaring the router policy: %w", err)
	}
	logs, err := cloudwatch.NewLogGroup(ctx, name, &cloudwatch.LogGroupArgs{
		Name:            pulumi.String(logGroupName),
		RetentionInDays: pulumi.Int(args.LogRetentionDays),
		Tags:            args.Tags,
	}, parent)
	if err != nil {
		return nil, fmt.Errorf("declaring the router log group: %w", err)
	}
	fn, err := lambda.NewFunction(ctx, name, &lambda.FunctionArgs{
		Name:           pulumi.String(fnName),
		Description:    pulumi.String("Forwards EC2 interruption events to the owning cluster's Karpenter queue"),
		Role:           role.Arn,
		Runtime:        pulumi.String(routerbuild.Runtime),
		Architectures:  pulumi.StringArray{pulumi.String(routerbuild.Architecture)},
		Handler:        pulumi.String(routerbuild.Handler),
		Code:           pulumi.NewFileArchive(args.Artifact.Zip),
		SourceCodeHash: pulumi.String(args.Artifact.SourceCodeHash),
		MemorySize:     pulumi.Int(args.MemoryMB),
		// Nothing else caps a function's concurrency but the account's (1,000 by default, for all its functions):
		// without it a storm in provisioned mode could take the account's whole concurrency.
		ReservedConcurrentExecutions: pulumi.Int(args.ReservedConcurrency),
		Timeout:                      pulumi.Int(args.TimeoutSeconds),
		Environment:                  &lambda.FunctionEnvironmentArgs{Variables: environment},
		LoggingConfig: &lambda.FunctionLoggingConfigArgs{
			LogFormat: pulumi.String("Text"), // EMF lines are extracted from the raw JSON lines
			LogGroup:  logs.Name,
		},
		Tags: args.Tags,
	}, parent, pulumi.DependsOn([]pulumi.Resource{inline, logs}))
	if err != nil {
		return nil, fmt.Errorf("declaring the router function: %w", err)
	}
	mapping := &lambda.EventSourceMappingArgs{
		EventSourceArn:                 args.CentralQueueARN,
		FunctionName:                   fn.Arn,
		BatchSize:                      pulumi.Int(args.BatchSize),
		MaximumBatchingWindowInSeconds: pulumi.Int(args.MaximumBatchingWindowSeconds),
		FunctionResponseTypes:          pulumi.StringArray{pulumi.String("ReportBatchItemFailures")},
		Tags:                           args.Tags,
	}
	// Either a maximum concurrency or provisioned pollers: Lambda refuses both (config validates it).
	if pp := args.ProvisionedPollers; pp != nil {
		mapping.ProvisionedPollerConfig = &lambda.EventSourceMappingProvisionedPollerConfigArgs{
			MinimumPollers: pulumi.Int(pp.Minimum), MaximumPollers: pulumi.Int(pp.Maximum),
		}
	} else {
		mapping.ScalingConfig = &lambda.EventSourceMappingScalingConfigArgs{MaximumConcurrency: pulumi.Int(args.MaximumConcurrency)}
	}
	if _, err := lambda.NewEventSourceMapping(ctx, name, mapping, parent, pulumi.DependsOn([]pulumi.Resource{inline})); err != nil {
		return nil, fmt.Errorf("declaring the event source mapping: %w", err)
	}

	r.FunctionName, r.FunctionARN, r.RoleARN, r.LogGroupName = fn.Name, fn.Arn, role.Arn, logs.Name
	if err := ctx.RegisterResourceOutputs(r, pulumi.Map{
		"functionName": r.FunctionName, "functionArn": r.FunctionARN, "roleArn": r.RoleARN, "logGroupName": r.LogGroupName,
	}); err != nil {
		return nil, err
	}
	return r, nil
}

// Policy is the router's permissions, and nothing more: read the central queue (what Lambda's event source
// mapping calls: receive, delete, get attributes; and change visibility, which brings a retried message back
// sooner); keep what it refuses in the quarantine queue; learn the IDs of its account's forwarder and redrive
// roles; send to and look up its stack's cluster queues, by their common prefix, which no shared queue or
// other stack's queue starts with; describe instances in its region (an action that takes no narrower resource
// than *); write to its own log group.
// With member accounts, it also sends to and looks up their cluster queues (by the same prefix, in each member
// account), and takes each member's reader role. In an organization, it does so in any account of the organization
// (aws:ResourceOrgID, which AWS sets for sts:AssumeRole and SQS alike: AWS's own data-perimeter policies rely on it
// for every action, aws-samples/data-perimeter-policy-examples), by the reader role's fixed name: the policy does
// not grow with the members.
// Queues are the ARNs of the bus's queues the router reads or writes.
type Queues struct{ Central, Quarantine, DLQ string }

// Evidence are the ARNs of the seal key and the archive bucket.
type Evidence struct{ SealKey, Archive string }

func Policy(env awsenv.Env, s contract.Settings, q Queues, ev Evidence, logGroupName string) policy.Document {
	describe := policy.Allow("FindInstanceOwners", []string{"ec2:DescribeInstances"}, []string{"*"})
	describe.Condition = map[string]map[string]any{"StringEquals": {"aws:RequestedRegion": env.Region}}
	queues := []string{env.ARN("sqs", s.ClusterQueuePrefix+"*")}
	for _, account := range s.MemberAccounts() {
		queues = append(queues, env.In(account).ARN("sqs", s.ClusterQueuePrefix+"*"))
	}
	send := []string{"sqs:SendMessage", "sqs:GetQueueUrl"}
	statements := []policy.Statement{
		policy.Allow("ReadCentralQueue",
			[]string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes"},
			[]string{q.Central}),
		policy.Allow("ForwardToClusterQueues", send, queues),
		// What it refuses it keeps (docs/operations.md, "Refused messages: the quarantine"), sealed and archived
		// (docs/security.md, "Sealed refusals", "The archive").
		policy.Allow("KeepRefusedMessages", []string{"sqs:SendMessage"}, []string{q.Quarantine}),
		policy.Allow("SealWhatItKeeps", []string{"kms:Sign", "kms:GetPublicKey"}, []string{ev.SealKey}),
	}
	statements = append(statements, ArchiveStatements(env.Account, ev.Archive)...)
	statements = append(statements,
		// The dead-letter queue, taken into the quarantine when the redrive role asks (router/internal/intake).
		policy.Allow("TakeTheDeadLetterQueueIn", []string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility"}, []string{q.DLQ}),
		describe,
		policy.Allow("WriteOwnLogs", []string{"logs:CreateLogStream", "logs:PutLogEvents"},
			[]string{env.ARN("logs", "log-group:"+logGroupName+":log-stream:*")}),
	)
	// The sender check learns the unique IDs of the roles of the account that may send to the central queue: its
	// forwarder (its rules, unless they deliver through the queue's policy) and the redrive role, when the stack has
	// them (docs/security.md, "Who sent each message").
	var roles []string
	if arn := s.ForwarderRole(s.Account); arn != "" {
		roles = append(roles, env.IAMARN("role/"+s.ForwarderRoleName))
	}
	if s.RedriveRoleName != "" {
		roles = append(roles, env.IAMARN("role/"+s.RedriveRoleName))
	}
	if len(roles) > 0 {
		statements = append(statements, policy.Allow("LearnTheSenderRoleIDs", []string{"iam:GetRole"}, roles))
	}
	if len(s.MemberReaderRoles) > 0 {
		statements = append(statements, policy.Allow("ReadMemberAccounts", []string{"sts:AssumeRole"}, s.MemberReaderRoles))
	}
	if s.OrganizationID != "" {
		inOrg := map[string]map[string]any{"StringEquals": {"aws:ResourceOrgID": s.OrganizationID}}
		forward := policy.Allow("ForwardToOrganizationClusterQueues", send, []string{env.In("*").ARN("sqs", s.ClusterQueuePrefix+"*")})
		forward.Condition = inOrg
		read := policy.Allow("ReadOrganizationAccounts", []string{"sts:AssumeRole"}, []string{env.In("*").IAMARN("role/" + s.ReaderRoleName)})
		read.Condition = inOrg
		statements = append(statements, forward, read)
	}
	return policy.New(statements...)
}

// ArchiveStatements are what the router does in the archive, bucketARN, and nothing more, each only in a bucket of
// account (bus.OfAccount; every call names it as the bucket's owner, ExpectedBucketOwner: router/archive):
//   - write its records, the seal key's public key and its ledger's entries (s3:PutObject; the bucket's policy refuses
//     a write without If-None-Match, so nothing is written over);
//   - read its ledger back: a record's delivery and its claims (s3:GetObject on delivered/ and claims/);
//   - list a record's claims by version, to find the latest and a delete marker over one (s3:ListBucketVersions, the
//     claims' prefix only: s3:prefix);
//   - learn that a ledger entry is not there: S3 answers a GetObject of a missing key with 404 only to a caller allowed
//     s3:ListBucket on the bucket, and with 403 to any other ("GetObject", Permissions,
//     https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html), so without it no record is ever delivered
//     (the first read of its delivery fails). S3 checks that right with the GetObject's context, which has no s3:prefix:
//     it is granted on the bucket, with no prefix (the keys' names, not what they hold).
func ArchiveStatements(account, bucketARN string) []policy.Statement {
	inAccount := func(s policy.Statement) policy.Statement {
		s.Condition = bus.OfAccount(account)
		return s
	}
	claims := inAccount(policy.Allow("ListTheClaims", []string{"s3:ListBucketVersions"}, []string{bucketARN}))
	claims.Condition["StringLike"] = map[string]any{"s3:prefix": contract.ArchiveClaimsPrefix + "*"}
	return []policy.Statement{
		inAccount(policy.Allow("ArchiveWhatItKeeps", []string{"s3:PutObject"}, bus.ArchiveWrites(bucketARN))),
		// Its ledger of the sealed records it delivers: a claim, then the delivery, each written once, read back when a
		// record is sent again (router/archive, ledger.go; docs/security.md, "Delivered once").
		inAccount(policy.Allow("ReadTheLedger", []string{"s3:GetObject"}, bus.Ledger(bucketARN))),
		claims,
		inAccount(policy.Allow("TellAMissingEntry", []string{"s3:ListBucket"}, []string{bucketARN})),
	}
}
