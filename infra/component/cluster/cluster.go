// Package cluster declares one cluster's part of the bus: its interruption queue, and the wiring of its
// Karpenter to that queue (installed here, managed elsewhere, or on a cluster created here).
package cluster

import (
	"cmp"
	"fmt"
	"time"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/sqs"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/heartbeat"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/dependency"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/iamname"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/policy"
)

// Type is the component's type token.
const Type = "karpenter-interruption-bus:index:ClusterInterruption"

// QueueRetentionSeconds is what Karpenter's own setup uses: an interruption older than that is moot.
const QueueRetentionSeconds = 300

// Args configure one cluster.
type Args struct {
	// Cluster is the cluster's entry of the stack configuration, defaults applied.
	Cluster config.Cluster
	// Name starts every child's logical name: the component's name, which the package's ClusterInterruption is
	// given; "" for the cluster's name (the program's components are named after their clusters).
	Name string
	// FormerName, when set, is the name children were named after before Name (the cluster's): the Kubernetes
	// provider, which hangs from the stack, is aliased to its former name (the component's children are aliased by
	// the component package).
	FormerName string
	// QueueName is the cluster's interruption queue, the one the router forwards to (queuename.For).
	QueueName string
	// PolicyName names the interruption policy attached to Karpenter's own controller role (existing-role mode).
	PolicyName string
	Env        awsenv.Env
	Tags       pulumi.StringMap
	// RouterRoleARN is the only principal the queue policy lets send.
	RouterRoleARN pulumi.StringInput
	// Heartbeat, when set, gives the cluster a heartbeat schedule and the alarm on it (docs/operations.md, "Heartbeat").
	Heartbeat *heartbeat.Cluster
	// DeployRoleARN, for a cluster of a member account, is the role Pulumi takes there: the Kubernetes provider
	// signs in to the cluster as it. Env is then the member account's.
	DeployRoleARN string
	// HubAccount, for a cluster of a member account, is the hub's: its principals may read the queue's message
	// counts (make verify, run in the hub), if their own policies allow it.
	HubAccount string
	// Existing, in install mode, is the EKS cluster as a lookup already found it; when nil, the component looks
	// it up itself.
	Existing *Existing
	// Prerequisites must exist before Karpenter is installed (the account's EC2 Spot service-linked role).
	Prerequisites []pulumi.Resource
	// After, in install mode, are what the Karpenter release waits for: every other change of the update, when the
	// cluster's Kubernetes API cannot be reached from where pulumi runs (infra/reach). The release's change then fails
	// last, once all that can be reached was done, whether or not the update runs with --continue-on-error
	// (docs/deploying.md, "Clusters out of reach").
	After []pulumi.Resource
	// Today is the day Karpenter's support policy is judged on (a preview warns of a karpenter.version out of
	// support, or about to leave it); zero means now.
	Today time.Time
	// Adopt, in install and create modes, says that what an earlier deployment of the cluster retained on delete
	// exists (its roles and their policies, the node access entry, the pod identity association, the Helm release):
	// the component imports each instead of creating it, which AWS and Helm would refuse.
	Adopt *Adopt
}

// Adopt is what adopting a cluster's retained resources needs besides their names.
type Adopt struct {
	// PodIdentityAssociationID is the retained association's ID (pod-identity clusters).
	PodIdentityAssociationID string
	// InCluster: the cluster outlived the deployment that retained them (install mode), so what lives in it (the
	// access entry, the association, the Helm release) is adopted too; a cluster the stack created (create mode)
	// was deleted with it, and with it all that EKS and Kubernetes held of it: only its IAM roles remain.
	InCluster bool
}

// NodeRoleName and ControllerRoleName name the roles the stack creates for a cluster's Karpenter in region.
func NodeRoleName(cluster, region string) string {
	return iamname.Role("KarpenterNode-"+cluster, region)
}

// ControllerRoleName names the controller's role.
func ControllerRoleName(cluster, region string) string {
	return iamname.Role("KarpenterController-"+cluster, region)
}

// Existing is what installing Karpenter needs of an existing EKS cluster: its API's endpoint and CA.
type Existing struct {
	Endpoint, CertificateAuthority string
}

// ClusterInterruption is one cluster on the bus.
type ClusterInterruption struct {
	pulumi.ResourceState
	dependency.Recorder // what depending on it means (dependency.On)
	Outputs
}

// wiring is what connecting a Karpenter to its queue yields, whatever the mode.
type wiring struct {
	controllerRoleARN pulumi.StringOutput
	nodeRoleName      pulumi.StringOutput
	association       pulumi.StringOutput // the pod identity association's ID ("" without one)
	releaseDigest     pulumi.StringOutput // ReleaseDigest of the Karpenter release (unset without one)
}

// New declares the cluster's resources, every one a child of the component and named after the cluster, so
// the order of clusters in the configuration never changes a URN.
func New(ctx *pulumi.Context, args *Args, opts ...pulumi.ResourceOption) (*ClusterInterruption, error) {
	c := &ClusterInterruption{}
	if err := dependency.Register(ctx, Type, args.Cluster.Name, c, opts...); err != nil {
		return nil, err
	}
	out, err := Declare(ctx, c, args)
	if err != nil {
		return nil, err
	}
	c.Outputs = out
	if err := ctx.RegisterResourceOutputs(c, out.Map()); err != nil {
		return nil, err
	}
	return c, nil
}

// Outputs are what a cluster on the bus yields.
type Outputs struct {
	QueueName         pulumi.StringOutput `pulumi:"queueName"`
	QueueURL          pulumi.StringOutput `pulumi:"queueUrl"`
	QueueARN          pulumi.StringOutput `pulumi:"queueArn"`
	ControllerRoleARN pulumi.StringOutput `pulumi:"controllerRoleArn"`
	// NodeRoleName is the role for Karpenter's EC2NodeClass spec.role (install and create modes; "" otherwise).
	NodeRoleName pulumi.StringOutput `pulumi:"nodeRoleName"`
	// ChartValue is what Karpenter's chart must be given to read the queue.
	ChartValue pulumi.StringOutput `pulumi:"chartValue"`
	// HeartbeatAlarmARN is the alarm on the cluster's heartbeat ("" without one).
	HeartbeatAlarmARN pulumi.StringOutput `pulumi:"heartbeatAlarmArn"`
	// Kubeconfig reaches the cluster's API as the component does (install and create modes; "" otherwise): a
	// secret, as pulumi-eks's is, though it holds no token (credentials come from aws eks get-token).
	Kubeconfig pulumi.StringOutput `pulumi:"kubeconfig"`
	// PodIdentityAssociationID is the ID of the association the cluster's Karpenter runs with ("" without one): the
	// program keeps it in its outputs, to adopt the association should the cluster be removed and added back.
	PodIdentityAssociationID pulumi.StringOutput
	// ReleaseDigest is the ReleaseDigest of the Karpenter release the component declares ("" without one): the
	// program keeps it in its outputs, to tell whether an update changes a release it cannot reach.
	ReleaseDigest pulumi.StringOutput
}

// Map is o as the component registers its outputs.
func (o Outputs) Map() pulumi.Map {
	return pulumi.Map{
		"queueName": o.QueueName, "queueUrl": o.QueueURL, "queueArn": o.QueueARN,
		"controllerRoleArn": o.ControllerRoleARN, "nodeRoleName": o.NodeRoleName, "chartValue": o.ChartValue,
		"heartbeatAlarmArn": o.HeartbeatAlarmARN, "kubeconfig": o.Kubeconfig,
	}
}

// Declare declares the cluster's resources as children of parent, a component registered by the caller: New's,
// or the component package's ClusterInterruption (provider/), which registers its own and runs the same code.
func Declare(ctx *pulumi.Context, parent pulumi.Resource, args *Args) (Outputs, error) {
	cl := args.Cluster
	s := scope{ctx: ctx, cluster: cl.Name, logical: cmp.Or(args.Name, cl.Name), former: args.FormerName, self: parent, parent: pulumi.Parent(parent), tags: withCluster(args.Tags, cl.Name), env: args.Env,
		deployRole: args.DeployRoleARN, adopt: args.Adopt, today: args.Today}
	if s.today.IsZero() {
		s.today = time.Now()
	}
	queueARN := args.Env.ARN("sqs", args.QueueName)
	queue, err := s.queue(args.QueueName, queueARN, args.RouterRoleARN, args.HubAccount)
	if err != nil {
		return Outputs{}, err
	}

	var w wiring
	kubeconfig := pulumi.String("").ToStringOutput()
	switch cl.Mode {
	case config.ModeExistingRole:
		w, err = s.existingRole(cl.ControllerRoleName, args.PolicyName, queueARN)
	case config.ModeInstall:
		t := s.existingCluster(cl, args.Existing)
		t.ready = append(t.ready, dependency.On(args.Prerequisites...)...)
		t.after = dependency.On(args.After...)
		w, err = s.install(cl, t, queue.Name, queueARN)
		kubeconfig = t.kubeconfig
	case config.ModeCreate:
		var t target
		if t, err = s.createCluster(cl); err == nil {
			t.ready = append(t.ready, dependency.On(args.Prerequisites...)...)
			w, err = s.install(cl, t, queue.Name, queueARN)
			kubeconfig = t.kubeconfig
		}
	default:
		err = fmt.Errorf("cluster %s: unknown mode %q", cl.Name, cl.Mode) // config validation rules this out
	}
	if err != nil {
		return Outputs{}, err
	}
	if cl.FIS.Enabled {
		if err := s.fis(); err != nil {
			return Outputs{}, err
		}
	}
	out := Outputs{HeartbeatAlarmARN: pulumi.String("").ToStringOutput(), Kubeconfig: pulumi.ToSecret(kubeconfig).(pulumi.StringOutput)}
	if args.Heartbeat != nil {
		h := *args.Heartbeat
		h.Tags = s.tags
		if _, err := heartbeat.Schedule(ctx, s.name("heartbeat"), cl.Name, h, s.parent); err != nil {
			return Outputs{}, err
		}
		alarm, err := heartbeat.Alarm(ctx, s.name("karpenter-not-reading"), cl.Name, queue.Name, h, s.parent)
		if err != nil {
			return Outputs{}, err
		}
		out.HeartbeatAlarmARN = alarm.Arn
	}

	out.QueueName, out.QueueURL, out.QueueARN = queue.Name, queue.Url, queue.Arn
	out.ChartValue = pulumi.Sprintf("settings.interruptionQueue=%s", queue.Name)
	out.ControllerRoleARN, out.NodeRoleName = w.controllerRoleARN, w.nodeRoleName
	out.PodIdentityAssociationID = pulumi.String("").ToStringOutput()
	if w.association != (pulumi.StringOutput{}) {
		out.PodIdentityAssociationID = w.association
	}
	out.ReleaseDigest = pulumi.String("").ToStringOutput()
	if w.releaseDigest != (pulumi.StringOutput{}) {
		out.ReleaseDigest = w.releaseDigest
	}
	return out, nil
}

// scope is what every child of one cluster's component is declared with.
type scope struct {
	ctx     *pulumi.Context
	cluster string
	// logical starts the children's logical names (Args.Name); former is Args.FormerName.
	logical, former string
	self            pulumi.Resource // the component
	today           time.Time
	// parent makes the component its children's parent, and, for resources and lookups alike, gives them its
	// provider (a member account's, for a cluster there).
	parent     pulumi.ResourceOrInvokeOption
	deployRole string
	tags       pulumi.StringMap
	env        awsenv.Env
	adopt      *Adopt
}

// adopting is the import option of the retained IAM resource whose import ID is id, when the cluster's retained
// resources are adopted; none otherwise.
func (s scope) adopting(id string) []pulumi.ResourceOption {
	if s.adopt == nil {
		return nil
	}
	return []pulumi.ResourceOption{pulumi.Import(pulumi.ID(id))}
}

// adoptingInCluster is adopting for what lives in the EKS cluster, which only an install cluster kept.
func (s scope) adoptingInCluster(id string) []pulumi.ResourceOption {
	if s.adopt == nil || !s.adopt.InCluster {
		return nil
	}
	return s.adopting(id)
}

// name is a child's logical name: the component's (the cluster's, in the program), then what it is.
func (s scope) name(what string) string { return s.logical + "-" + what }

// ReleaseName is the logical name of cluster's Karpenter release.
func ReleaseName(cluster string) string { return cluster + "-karpenter" }

// KubernetesProviderName is the logical name of the Kubernetes provider of cluster, which hangs from the stack, not
// from the cluster's component (install).
func KubernetesProviderName(cluster string) string { return cluster + "-k8s" }

// queue declares the cluster's interruption queue and its policy: only the router may send, only over TLS.
func (s scope) queue(name, arn string, routerRoleARN pulumi.StringInput, hubAccount string) (*sqs.Queue, error) {
	// maxMessageSize left to the provider's default, 256 KiB (router/contract.MaxMessageBytes says why).
	q, err := sqs.NewQueue(s.ctx, s.name("queue"), &sqs.QueueArgs{
		Name:                    pulumi.String(name),
		MessageRetentionSeconds: pulumi.Int(QueueRetentionSeconds),
		SqsManagedSseEnabled:    pulumi.Bool(true),
		Tags:                    s.tags,
	}, s.parent)
	if err != nil {
		return nil, fmt.Errorf("declaring the queue of %s: %w", s.cluster, err)
	}
	hubReads := hubAccount != ""
	pol := routerRoleARN.ToStringOutput().ApplyT(func(router string) string { return QueuePolicy(arn, router, hubReads).JSON() }).(pulumi.StringOutput)
	if _, err := sqs.NewQueuePolicy(s.ctx, s.name("queue"), &sqs.QueuePolicyArgs{QueueUrl: q.Url, Policy: pol}, s.parent); err != nil {
		return nil, fmt.Errorf("declaring the queue policy of %s: %w", s.cluster, err)
	}
	return q, nil
}

// QueuePolicy lets only the router's role send to the cluster's queue: the Allow admits it (from another
// account too), the Deny shuts out everyone else, inside the account as well, where an identity policy with
// sqs:SendMessage would otherwise suffice to forge an interruption and make Karpenter drain a node. The router's
// role is admitted by its account and its ARN in aws:PrincipalArn, not as a principal: the policy can be set before
// the role exists, and keeps admitting it if it is recreated. With hubReads (a member's cluster), the router's
// account, the hub, may read the queue's attributes, its message counts, which is all verify needs; its principals
// still need their own policies to allow it.
func QueuePolicy(queueARN, routerRoleARN string, hubReads bool) policy.Document {
	statements := queuePolicy(queueARN, routerRoleARN)
	if hubReads {
		statements = append(statements, policy.Statement{
			Sid: "HubReadsCounts", Effect: "Allow", Principal: map[string]string{"AWS": policy.RootOf(routerRoleARN)},
			Action: []string{"sqs:GetQueueAttributes"}, Resource: []string{queueARN},
		})
	}
	return policy.New(statements...)
}

func queuePolicy(queueARN, routerRoleARN string) []policy.Statement {
	router, routerCondition := policy.PrincipalIs(routerRoleARN)
	return []policy.Statement{
		{
			// GetQueueUrl too: a router in another account (a hub) may look the queue up only if the queue says so.
			Sid: "RouterForwards", Effect: "Allow", Principal: router, Condition: routerCondition,
			Action: []string{"sqs:SendMessage", "sqs:GetQueueUrl"}, Resource: []string{queueARN},
		},
		{
			Sid: "OnlyTheRouterSends", Effect: "Deny", Principal: "*",
			Action: []string{"sqs:SendMessage"}, Resource: []string{queueARN},
			Condition: map[string]map[string]any{"ArnNotEquals": {"aws:PrincipalArn": routerRoleARN}},
		},
		policy.DenyInsecureTransport(queueARN),
	}
}

func withCluster(tags pulumi.StringMap, name string) pulumi.StringMap {
	out := pulumi.StringMap{"karpenter-interruption-bus/cluster": pulumi.String(name)}
	for k, v := range tags {
		out[k] = v
	}
	return out
}
