// Package cluster declares one cluster's part of the bus: its interruption queue, and the wiring of its
// Karpenter to that queue (installed here, managed elsewhere, or on a cluster created here).
package cluster

import (
	"fmt"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/iam"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/sqs"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/policy"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
)

// Type is the component's type token.
const Type = "karpenter-interruption-bus:index:ClusterInterruption"

// QueueRetentionSeconds is what Karpenter's own setup uses: an interruption older than that is moot.
const QueueRetentionSeconds = 300

// Args configure one cluster.
type Args struct {
	Config  config.Config // the stack's, for prefixes and names
	Cluster config.Cluster
	Env     awsenv.Env
	Tags    pulumi.StringMap
	// RouterRoleARN is the only principal the queue policy lets send.
	RouterRoleARN pulumi.StringInput
}

// ClusterInterruption is one cluster on the bus.
type ClusterInterruption struct {
	pulumi.ResourceState

	QueueName         pulumi.StringOutput `pulumi:"queueName"`
	QueueURL          pulumi.StringOutput `pulumi:"queueUrl"`
	QueueARN          pulumi.StringOutput `pulumi:"queueArn"`
	ControllerRoleARN pulumi.StringOutput `pulumi:"controllerRoleArn"`
	// NodeRoleName is the role for Karpenter's EC2NodeClass spec.role (install and create modes).
	NodeRoleName pulumi.StringOutput `pulumi:"nodeRoleName"`
	// ChartValue is what Karpenter's chart must be given to read the queue.
	ChartValue pulumi.StringOutput `pulumi:"chartValue"`
}

// New declares the cluster's resources, every one a child of the component and named after the cluster, so
// the order of clusters in the configuration never changes a URN.
func New(ctx *pulumi.Context, args *Args, opts ...pulumi.ResourceOption) (*ClusterInterruption, error) {
	cl := args.Cluster
	c := &ClusterInterruption{}
	if err := ctx.RegisterComponentResource(Type, cl.Name, c, opts...); err != nil {
		return nil, err
	}
	d := &declarer{ctx: ctx, args: args, comp: c, tags: withCluster(args.Tags, cl.Name)}
	queueName := queuename.For(args.Config.QueuePrefix, cl.Name)
	queueARN := args.Env.ARN("sqs", queueName)
	queue, err := d.queue(queueName, queueARN)
	if err != nil {
		return nil, err
	}
	c.QueueName, c.QueueURL, c.QueueARN = queue.Name, queue.Url, queue.Arn
	c.ChartValue = pulumi.Sprintf("settings.interruptionQueue=%s", queue.Name)

	switch cl.Mode {
	case config.ModeExistingRole:
		err = d.existingRole(queueARN)
	case config.ModeInstall, config.ModeCreate:
		err = d.install(queue, queueARN)
	default:
		err = fmt.Errorf("clusters %s: unknown mode %q", cl.Name, cl.Mode) // config validation rules this out
	}
	if err != nil {
		return nil, err
	}
	if cl.FIS.Enabled {
		if err := d.fis(); err != nil {
			return nil, err
		}
	}
	if c.NodeRoleName.OutputState == nil { // existing-role: Karpenter's nodes are not ours to name
		c.NodeRoleName = pulumi.String("").ToStringOutput()
	}
	if err := ctx.RegisterResourceOutputs(c, pulumi.Map{
		"queueName": c.QueueName, "queueUrl": c.QueueURL, "queueArn": c.QueueARN,
		"controllerRoleArn": c.ControllerRoleARN, "nodeRoleName": c.NodeRoleName, "chartValue": c.ChartValue,
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// declarer holds what every child needs.
type declarer struct {
	ctx  *pulumi.Context
	args *Args
	comp *ClusterInterruption
	tags pulumi.StringMap
}

// name is a child's logical name: the cluster's, then what it is.
func (d *declarer) name(what string) string { return d.args.Cluster.Name + "-" + what }

func (d *declarer) parent() pulumi.ResourceOption { return pulumi.Parent(d.comp) }

// queue declares the cluster's interruption queue and its policy: only the router may send, only over TLS.
func (d *declarer) queue(name, arn string) (*sqs.Queue, error) {
	q, err := sqs.NewQueue(d.ctx, d.name("queue"), &sqs.QueueArgs{
		Name:                    pulumi.String(name),
		MessageRetentionSeconds: pulumi.Int(QueueRetentionSeconds),
		SqsManagedSseEnabled:    pulumi.Bool(true),
		Tags:                    d.tags,
	}, d.parent())
	if err != nil {
		return nil, fmt.Errorf("declaring the queue of %s: %w", d.args.Cluster.Name, err)
	}
	pol := d.args.RouterRoleARN.ToStringOutput().ApplyT(func(router string) string {
		return policy.New(
			policy.Statement{
				Sid: "RouterForwards", Effect: "Allow", Principal: map[string]string{"AWS": router},
				Action: []string{"sqs:SendMessage"}, Resource: []string{arn},
			},
			policy.DenyInsecureTransport(arn),
		).JSON()
	}).(pulumi.StringOutput)
	if _, err := sqs.NewQueuePolicy(d.ctx, d.name("queue"), &sqs.QueuePolicyArgs{QueueUrl: q.Url, Policy: pol}, d.parent()); err != nil {
		return nil, fmt.Errorf("declaring the queue policy of %s: %w", d.args.Cluster.Name, err)
	}
	return q, nil
}

// InterruptionStatement lets Karpenter read and delete its own queue's messages, and nothing else.
func InterruptionStatement(queueARN string) policy.Statement {
	return policy.Allow("AllowInterruptionQueueActions",
		[]string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueUrl"}, []string{queueARN})
}

// existingRole attaches the interruption statement to the controller role Karpenter already has; removing the
// cluster from the bus removes the statement with the queue it names, and nothing else of that Karpenter.
func (d *declarer) existingRole(queueARN string) error {
	cl := d.args.Cluster
	if _, err := iam.NewRolePolicy(d.ctx, d.name("interruption"), &iam.RolePolicyArgs{
		Name:   pulumi.String(d.args.Config.NamePrefix + "-interruption-queue"),
		Role:   pulumi.String(cl.ControllerRoleName),
		Policy: pulumi.String(policy.New(InterruptionStatement(queueARN)).JSON()),
	}, d.parent()); err != nil {
		return fmt.Errorf("attaching the interruption policy to %s: %w", cl.ControllerRoleName, err)
	}
	d.comp.ControllerRoleARN = pulumi.String(fmt.Sprintf("arn:%s:iam::%s:role/%s", d.args.Env.Partition, d.args.Env.Account, cl.ControllerRoleName)).ToStringOutput()
	return nil
}

func withCluster(tags pulumi.StringMap, name string) pulumi.StringMap {
	out := pulumi.StringMap{"karpenter-interruption-bus/cluster": pulumi.String(name)}
	for k, v := range tags {
		out[k] = v
	}
	return out
}
