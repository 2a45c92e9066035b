// Package routerfn deploys the router Lambda: its role, its log group, the function built from router/, and the
// event source mapping from the central queue.
package routerfn

import (
	"fmt"
	"strings"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/cloudwatch"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/iam"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/lambda"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/policy"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/routerbuild"
)

// Type is the component's type token.
const Type = "karpenter-interruption-bus:index:Router"

// MetricsNamespace is where the router's EMF metrics land; alarms and the dashboard read them there.
const MetricsNamespace = "KarpenterInterruptionBus"

// Args configure the router.
type Args struct {
	Config config.Config
	Env    awsenv.Env
	Tags   pulumi.StringMap
	// Artifact is the built router (routerbuild.Build).
	Artifact routerbuild.Artifact
	// CentralQueueARN is the queue the router reads.
	CentralQueueARN pulumi.StringInput
}

// Router is the deployed function.
type Router struct {
	pulumi.ResourceState

	FunctionName pulumi.StringOutput `pulumi:"functionName"`
	FunctionARN  pulumi.StringOutput `pulumi:"functionArn"`
	RoleARN      pulumi.StringOutput `pulumi:"roleArn"`
	LogGroupName pulumi.StringOutput `pulumi:"logGroupName"`
}

// New declares the router.
func New(ctx *pulumi.Context, name string, args *Args, opts ...pulumi.ResourceOption) (*Router, error) {
	r := &Router{}
	if err := ctx.RegisterComponentResource(Type, name, r, opts...); err != nil {
		return nil, err
	}
	cfg, env := args.Config, args.Env
	parent := pulumi.Parent(r)
	fnName := cfg.NamePrefix + "-router"
	logGroupName := "/aws/lambda/" + fnName

	role, err := iam.NewRole(ctx, name, &iam.RoleArgs{
		Name:             pulumi.String(fnName),
		Description:      pulumi.String("Runs the karpenter-interruption-bus router of stack " + cfg.Stack),
		AssumeRolePolicy: pulumi.String(policy.AssumableBy(env.Principal("lambda"), nil).JSON()),
		Tags:             args.Tags,
	}, parent)
	if err != nil {
		return nil, fmt.Errorf("declaring the router role: %w", err)
	}
	rolePolicy := args.CentralQueueARN.ToStringOutput().ApplyT(func(central string) string {
		return Policy(env, cfg.QueuePrefix, central, logGroupName).JSON()
	}).(pulumi.StringOutput)
	inline, err := iam.NewRolePolicy(ctx, name, &iam.RolePolicyArgs{
		Name: pulumi.String("router"), Role: role.Name, Policy: rolePolicy,
	}, parent)
	if err != nil {
		return nil, fmt.Errorf("declaring the router policy: %w", err)
	}
	logs, err := cloudwatch.NewLogGroup(ctx, name, &cloudwatch.LogGroupArgs{
		Name:            pulumi.String(logGroupName),
		RetentionInDays: pulumi.Int(cfg.Router.LogRetentionDays),
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
		MemorySize:     pulumi.Int(cfg.Router.MemoryMB),
		Timeout:        pulumi.Int(cfg.Router.TimeoutSeconds),
		Environment:    &lambda.FunctionEnvironmentArgs{Variables: pulumi.ToStringMap(Environment(cfg))},
		LoggingConfig: &lambda.FunctionLoggingConfigArgs{
			LogFormat: pulumi.String("Text"), // EMF lines are extracted from the raw JSON lines
			LogGroup:  logs.Name,
		},
		Tags: args.Tags,
	}, parent, pulumi.DependsOn([]pulumi.Resource{inline, logs}))
	if err != nil {
		return nil, fmt.Errorf("declaring the router function: %w", err)
	}
	if _, err := lambda.NewEventSourceMapping(ctx, name, &lambda.EventSourceMappingArgs{
		EventSourceArn:                 args.CentralQueueARN,
		FunctionName:                   fn.Arn,
		BatchSize:                      pulumi.Int(cfg.Router.BatchSize),
		MaximumBatchingWindowInSeconds: pulumi.Int(cfg.Router.MaximumBatchingWindowSeconds),
		FunctionResponseTypes:          pulumi.StringArray{pulumi.String("ReportBatchItemFailures")},
		ScalingConfig: &lambda.EventSourceMappingScalingConfigArgs{
			MaximumConcurrency: pulumi.Int(cfg.Router.MaximumConcurrency),
		},
		Tags: args.Tags,
	}, parent, pulumi.DependsOn([]pulumi.Resource{inline})); err != nil {
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

// Policy is the router's permissions, and nothing more: read the central queue; send to and look up the cluster
// queues, by their common prefix; describe instances (an action that takes no narrower resource than *); write
// to its own log group.
func Policy(env awsenv.Env, queuePrefix, centralQueueARN, logGroupName string) policy.Document {
	return policy.New(
		policy.Allow("ReadCentralQueue",
			[]string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes"},
			[]string{centralQueueARN}),
		policy.Allow("ForwardToClusterQueues", []string{"sqs:SendMessage", "sqs:GetQueueUrl"},
			[]string{env.ARN("sqs", queuePrefix+"*")}),
		policy.Allow("FindInstanceOwners", []string{"ec2:DescribeInstances"}, []string{"*"}),
		policy.Allow("WriteOwnLogs", []string{"logs:CreateLogStream", "logs:PutLogEvents"},
			[]string{env.ARN("logs", "log-group:"+logGroupName+":log-stream:*")}),
	)
}

// Environment is the router's environment; README.md documents each variable.
func Environment(cfg config.Config) map[string]string {
	env := map[string]string{
		"CLUSTER_QUEUE_PREFIX": cfg.QueuePrefix,
		"BUS_NAME":             cfg.NamePrefix,
		"METRICS_NAMESPACE":    MetricsNamespace,
		"LOG_LEVEL":            cfg.Router.LogLevel,
	}
	if len(cfg.Router.OwnerTagKeys) > 0 {
		env["OWNER_TAG_KEYS"] = strings.Join(cfg.Router.OwnerTagKeys, ",")
	}
	return env
}
