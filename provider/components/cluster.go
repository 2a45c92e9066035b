package components

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/pulumi/pulumi-go-provider/infer"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/cluster"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/preflight"
)

// Mode is how a cluster's Karpenter is wired to the bus (config.Mode).
type Mode string

// Values are Mode's values, config.Modes (a test holds them equal).
func (Mode) Values() []infer.EnumValue[Mode] {
	return []infer.EnumValue[Mode]{
		{Name: "Install", Value: "install", Description: "Installs Karpenter on the existing EKS cluster (the default): controller and node roles, identity, access entry, and the Helm release reading the cluster's queue."},
		{Name: "ExistingRole", Value: "existing-role", Description: "Leaves Karpenter to whoever manages it: attaches the interruption policy to its controller role; chartValue is what its chart must be given."},
		{Name: "Create", Value: "create", Description: "Creates the EKS cluster too (pulumi-eks), then installs as install does."},
	}
}

// Identity is how Karpenter's controller gets its role (config.Identity).
type Identity string

// Values are Identity's values, config.Identities (a test holds them equal).
func (Identity) Values() []infer.EnumValue[Identity] {
	return []infer.EnumValue[Identity]{
		{Name: "PodIdentity", Value: "pod-identity", Description: "EKS Pod Identity (the default); the cluster needs the eks-pod-identity-agent add-on."},
		{Name: "Irsa", Value: "irsa", Description: "IAM roles for service accounts, through the cluster's IAM OIDC provider (oidcProviderArn)."},
	}
}

// ClusterInterruption is one cluster on a bus: its interruption queue, which only the router may send to, and
// its Karpenter wired to that queue.
type ClusterInterruption struct {
	pulumi.ResourceState

	QueueName         pulumi.StringOutput `pulumi:"queueName"`
	QueueURL          pulumi.StringOutput `pulumi:"queueUrl"`
	QueueARN          pulumi.StringOutput `pulumi:"queueArn"`
	ControllerRoleARN pulumi.StringOutput `pulumi:"controllerRoleArn"`
	NodeRoleName      pulumi.StringOutput `pulumi:"nodeRoleName"`
	ChartValue        pulumi.StringOutput `pulumi:"chartValue"`
	HeartbeatAlarmARN pulumi.StringOutput `pulumi:"heartbeatAlarmArn"`
	Kubeconfig        pulumi.StringOutput `pulumi:"kubeconfig" provider:"secret"`
}

// Annotate documents the component and its outputs.
func (c *ClusterInterruption) Annotate(an infer.Annotator) {
	an.Describe(&c, "One EKS cluster on an interruption bus, declared in the cluster's account: its interruption queue, which only the "+
		"router may send to, and its Karpenter wired to it (installed, created with the cluster, or managed elsewhere). From the hub's "+
		"stack or the cluster team's own: it needs the bus's name and, from another account, the hub's account, and nothing of the "+
		"hub's deploy role. It checks the cluster in AWS first, and declares nothing when a check fails.")
	an.Describe(&c.QueueName, "The cluster's interruption queue: Karpenter's settings.interruptionQueue.")
	an.Describe(&c.QueueURL, "The queue's URL.")
	an.Describe(&c.QueueARN, "The queue's ARN.")
	an.Describe(&c.ControllerRoleARN, "Karpenter's controller role.")
	an.Describe(&c.NodeRoleName, `The role for Karpenter's EC2NodeClass spec.role (install and create modes; "" otherwise).`)
	an.Describe(&c.ChartValue, "What Karpenter's chart must be given to read the queue (existing-role mode: set it where Karpenter is managed).")
	an.Describe(&c.HeartbeatAlarmARN, `The alarm on the cluster's heartbeat ("" without one).`)
	an.Describe(&c.Kubeconfig, `A kubeconfig for the cluster's API, through aws eks get-token (install and create modes; "" otherwise).`)
}

// clusterConstructor is ClusterInterruption's constructor with opts.
func clusterConstructor(opts infra.Options) func(ctx *pulumi.Context, name string, args ClusterInterruptionArgs, ro ...pulumi.ResourceOption) (*ClusterInterruption, error) {
	return func(ctx *pulumi.Context, name string, args ClusterInterruptionArgs, ro ...pulumi.ResourceOption) (*ClusterInterruption, error) {
		c := &ClusterInterruption{}
		res := resolutionOf(ctx.Context())
		ctx.Log = redactingLog{ctx.Log, res.secrets} // the program's warnings name clusters, accounts and roles
		// Aliased to the names they had after the cluster, which stacks of 0.3.0 have (where no argument could be a
		// secret): never after a secret, which an alias would write to the state in plain text, nor an unknown.
		former := ""
		if args.ClusterName != name && !slices.Contains(res.secrets, args.ClusterName) && !slices.Contains(res.deferred, "clusterName") {
			ro = append(ro, formerNames(func(child string) (string, bool) { return formerName(name, args.ClusterName, child) }))
			former = args.ClusterName
		}
		if err := ctx.RegisterComponentResource(cluster.Type, name, c, ro...); err != nil { // the program's clusters' token
			return nil, err
		}
		// Stand-ins take the places of the arguments unknown at a preview, so the children are the update's, with
		// unknown values there; the checks of the known arguments run first, as with no unknown.
		deferred, err := standInUnknowns(ctx, c, component{"ClusterInterruption", name, "the cluster's", clusterChecks}, &args, res, func() error {
			j, err := joinOf(args, name, former)
			if err != nil {
				return err
			}
			return infra.JoinForm(ctx, c, j, res.deferred)
		})
		if err != nil {
			return nil, err
		}
		if deferred {
			return c, nil
		}
		j, err := joinOf(args, name, former)
		if err != nil {
			return nil, err
		}
		j.Unknowns = preflight.Unknowns{Marks: res.marks, FromResource: res.fromResource, Say: func(msg string) {
			said := redacted(fmt.Errorf("ClusterInterruption %s: %s (%s)", name, msg, strings.Join(res.fromResources, "; ")), res.secrets)
			_ = ctx.Log.Info(said.Error()+".", &pulumi.LogArgs{Resource: c})
		}}
		out, err := infra.DeclareJoin(ctx, c, j, opts)
		if err != nil {
			return nil, redacted(err, res.secrets)
		}
		if err := setOutputs(c, out.Map()); err != nil {
			return nil, err
		}
		return c, nil
	}
}

// joinOf is args as the program's code takes a joining cluster, the component named name (former: the name its
// children had before, "" for none).
func joinOf(args ClusterInterruptionArgs, name, former string) (infra.Join, error) {
	entry, err := json.Marshal(args)
	if err != nil {
		return infra.Join{}, err
	}
	return infra.Join{
		BusName: args.BusName, HubAccount: deref(args.HubAccountID), Cluster: entry, HeartbeatRate: deref(args.HeartbeatRate),
		HeartbeatAlarmActions: args.HeartbeatAlarmActions, MemberBaseline: deref(args.MemberBaseline),
		EnsureSpotServiceLinkedRole: deref(args.EnsureSpotServiceLinkedRole), Tags: args.Tags, Name: name, FormerName: former,
	}, nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
