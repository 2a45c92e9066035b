package infra

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/cluster"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/dashboard"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/heartbeat"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/member"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/layout"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/preflight"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/spotrole"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
)

// The component package (provider/) declares the program's components from other programs, in any language,
// through the two functions of this file: DeclareBus, the shared part (the package's Bus), and DeclareJoin, one
// cluster joining a bus from its own stack (the package's ClusterInterruption). Both read their arguments
// through config.Load, so they are validated, defaulted and reported exactly as the stack configuration is, and
// both run the steps Deploy runs; what differs is only where the resources hang (under the package's component)
// and what a joining stack cannot know of the hub, which it is given (the bus's name and account).

// Bus is the shared part of a bus, as DeclareBus declares it: the outputs of the program's shared resources.
type Bus struct {
	Config config.Config
	Env    awsenv.Env
	// Outputs are named as the program's stack outputs.
	Outputs Outputs
}

// DeclareBus declares the shared part of the bus configured by values (the keys of the stack configuration, as
// config.Load reads them, except clusters and example) as children of parent, the component named name: the bus,
// router, alarms, heartbeat, members' baselines and dashboard, with a dashboard row for each of clusterNames. Their
// logical names start with name (FormerBusName: what they were named before).
func DeclareBus(ctx *pulumi.Context, parent pulumi.Resource, name string, values map[string]string, clusterNames []string, unknowns preflight.Unknowns, opts Options) (Bus, error) {
	opts = opts.withDefaults()
	under := pulumi.Parent(parent)
	rows := make([]dashboard.Cluster, len(clusterNames))
	var accounts map[string]account
	f, err := preflight.Run(ctx, preflight.Input{
		Kind:     preflight.Bus,
		Under:    []pulumi.InvokeOption{under},
		Unknowns: unknowns,
		Load: func(ctx *pulumi.Context, env awsenv.Env) (config.Config, error) {
			cfg, err := config.LoadBus(ctx.Stack(), env.Account, values)
			if err != nil {
				return cfg, err
			}
			for i, n := range clusterNames {
				if err := queuename.ValidateCluster(n); err != nil {
					return cfg, fmt.Errorf("clusterNames[%d]: %w", i, err)
				}
				rows[i] = dashboard.Cluster{Name: n, Queue: queuename.For(cfg.QueuePrefix, n)}
			}
			return cfg, nil
		},
		Accounts: func(cfg config.Config, env awsenv.Env) (map[string][]pulumi.InvokeOption, error) {
			var err error
			accounts, err = declareAccounts(ctx, cfg, env, componentNaming(name, cfg.NamePrefix), under)
			return invokeOptions(accounts), err
		},
	}, opts.preflight())
	if err != nil {
		return Bus{}, err
	}
	cfg, env := f.Config, f.Env
	sh, err := declareShared(ctx, cfg, env, opts, accounts, rows, f.ArchiveAdoption(), parent, componentNaming(name, cfg.NamePrefix))
	if err != nil {
		return Bus{}, err
	}
	return Bus{Config: cfg, Env: env, Outputs: sh.outputs(cfg, env)}, nil
}

// FormerBusName is the logical name child, a resource the Bus component named name declares, had when a Bus's
// resources were named after its namePrefix (prefix; 0.3.0 and before): a member account's named after the account
// alone, the others after the prefix. False for a name not the component's.
func FormerBusName(name, prefix, child string) (string, bool) {
	rest, ok := strings.CutPrefix(child, name+"-")
	if !ok {
		return "", false
	}
	if strings.HasPrefix(rest, "account-") {
		return rest, true
	}
	return prefix + "-" + rest, true
}

// heartbeatRate is the rate of the bus's heartbeat, "" without one: what its clusters' heartbeats take.
func heartbeatRate(cfg config.Config) string {
	if !cfg.Heartbeat.Enabled {
		return ""
	}
	return cfg.Heartbeat.Rate
}

// Join is one cluster joining a bus from any stack, in the account the stack's AWS provider reaches.
type Join struct {
	// BusName is the bus's name (its namePrefix, the Bus's output busName).
	BusName string
	// HubAccount is the account of the bus's hub; "" or the joining account for a cluster of the hub's own account.
	HubAccount string
	// Cluster is the cluster's entry as the configuration's clusters take one, in JSON; its account is the one
	// the provider reaches, never a key.
	Cluster json.RawMessage
	// HeartbeatRate gives the cluster a heartbeat at that rate (the bus's heartbeatRate), "" none.
	HeartbeatRate string
	// HeartbeatAlarmActions are notified by the cluster's heartbeat alarm (topics of the cluster's account).
	HeartbeatAlarmActions []string
	// MemberBaseline declares the member baseline in the cluster's account (a member account the hub's StackSet
	// does not cover): the rules forwarding its events to the hub, the role the router reads instances with, and
	// the heartbeat's shared part. At most one cluster of an account says so.
	MemberBaseline bool
	// EnsureSpotServiceLinkedRole declares the account's EC2 Spot service-linked role: created where absent,
	// adopted where present, retained on delete. At most one cluster of an account says so; without it, a cluster
	// whose Karpenter the component installs needs the role to exist.
	EnsureSpotServiceLinkedRole bool
	Tags                        map[string]string
	// Name starts the logical name of every resource declared for the cluster: the component's name ("" for the
	// cluster's). Never an input's value, which may be unknown until the update.
	Name string
	// FormerName, when set, is what Name replaced (the cluster's name, before components were named after their own):
	// the stack-level resources named after it are aliased to their former names.
	FormerName string
	// Unknowns are, at a preview, the stand-ins of the arguments unknown there and the known values that come from
	// resources of the program: the lookups they need wait for the update.
	Unknowns preflight.Unknowns
}

// DeclareJoin declares j's cluster as children of parent: its queue, its wiring to Karpenter, its heartbeat, and,
// as asked, the account's member baseline and EC2 Spot service-linked role. It checks j and the cluster in AWS
// first (the preflight of the program, for this cluster), and declares nothing when a check fails.
func DeclareJoin(ctx *pulumi.Context, parent pulumi.Resource, j Join, opts Options) (cluster.Outputs, error) {
	opts = opts.withDefaults()
	fail := func(err error) (cluster.Outputs, error) { return cluster.Outputs{}, err }
	under := pulumi.Parent(parent)
	hubAccount := j.HubAccount
	f, err := preflight.Run(ctx, preflight.Input{
		Kind:     preflight.Join,
		Under:    []pulumi.InvokeOption{under},
		Unknowns: j.Unknowns,
		Load: func(ctx *pulumi.Context, env awsenv.Env) (config.Config, error) {
			hubAccount = cmp.Or(hubAccount, env.Account)
			if p := hubProblem(j, hubAccount, env.Account); p != nil {
				return config.Config{}, &config.Error{Problems: []config.Problem{*p}}
			}
			return joinConfig(ctx.Stack(), env.Account, j)
		},
	}, opts.preflight())
	var perr *preflight.Error
	if errors.As(err, &perr) {
		problems := make([]string, len(perr.Problems))
		for i, p := range perr.Problems {
			problems[i] = argumentText.Replace(p)
		}
		return fail(&preflight.Error{Problems: problems})
	}
	if err != nil {
		return fail(err)
	}
	cfg, env, found := f.Config, f.Env, f.Found
	cl := cfg.Clusters[0]
	base := cmp.Or(j.Name, cl.Name)
	var prerequisites []pulumi.Resource
	if cl.Mode.InstallsKarpenter() {
		role, err := joinSpotRole(ctx, base, cl, env, found.SpotServiceLinkedRole[env.Account], j.EnsureSpotServiceLinkedRole, under)
		if err != nil {
			return fail(err)
		}
		if role != nil {
			prerequisites = []pulumi.Resource{role}
		}
	}
	hubEnv := env.In(hubAccount)
	acc := account{env: env}
	if j.MemberBaseline {
		if _, err := member.New(ctx, base+"-member-baseline", baselineArgs(cfg, hubEnv, env, j.HeartbeatAlarmActions), under); err != nil {
			return fail(err)
		}
	}
	if cfg.Heartbeat.Enabled {
		// The heartbeat's shared part in the account: declared here with the baseline, or else already there,
		// by its fixed names (the hub's Bus, or the hub's StackSet in a member account).
		acc.beat = &beat{group: pulumi.String(heartbeat.Name(cfg.NamePrefix)), role: pulumi.String(layout.HeartbeatRoleARN(cfg, env))}
		if j.MemberBaseline {
			h, err := heartbeat.New(ctx, base+"-heartbeat-shared", &heartbeat.Args{NamePrefix: cfg.NamePrefix, Env: env, Tags: Tags(cfg)}, under)
			if err != nil {
				return fail(err)
			}
			acc.beat = &beat{group: h.GroupName, role: h.RoleARN}
		}
	}
	hub := ""
	if hubAccount != env.Account {
		hub = hubAccount
	}
	args := clusterArgs(cfg, cl, acc, hub, pulumi.String(layout.RouterRoleARN(cfg, hubEnv)), found, prerequisites)
	if args.Heartbeat != nil {
		args.Heartbeat.AlarmActions = j.HeartbeatAlarmActions
	}
	args.Name, args.FormerName = base, j.FormerName
	return cluster.Declare(ctx, parent, args)
}

// joinSpotRole declares the account's EC2 Spot service-linked role when asked (adopting it where it exists), and
// refuses a cluster whose Karpenter cannot launch Spot: the role absent, and not asked for.
func joinSpotRole(ctx *pulumi.Context, base string, cl config.Cluster, env awsenv.Env, exists, ensure bool, opts ...pulumi.ResourceOption) (*spotrole.Role, error) {
	name := base + "-spot-service-linked-role"
	switch {
	case ensure && exists:
		return spotrole.Adopt(ctx, name, spotrole.ARN(env.Partition, env.Account), opts...)
	case ensure:
		return spotrole.New(ctx, name, opts...)
	case !exists:
		return nil, fmt.Errorf("cluster %s (account %s): the EC2 Spot service-linked role %s does not exist, and Karpenter cannot launch Spot "+
			"capacity without it. Set ensureSpotServiceLinkedRole: true on one ClusterInterruption of the account, or create it once: "+
			"aws iam create-service-linked-role --aws-service-name %s", cl.Name, env.Account, spotrole.RoleName, spotrole.ServiceName)
	}
	return nil, nil
}

// hubProblem is what is wrong with hub, j's hub account, for a cluster of account; nil when nothing is.
func hubProblem(j Join, hub, account string) *config.Problem {
	var p config.Problem
	switch {
	case !contract.IsAccount(hub):
		p = config.Problemf("hubAccountId", "%q is not an AWS account ID (12 digits)", hub)
	case j.MemberBaseline && hub == account:
		p = config.Problemf("memberBaseline", "the cluster is in the hub's own account (%s), where the Bus declares what a member's baseline would", account)
	default:
		return nil
	}
	return &p
}

// joinStandIn stands for a bus name unknown at a preview in JoinForm's checks: the shortest the configuration takes,
// so that no name made from it fails a limit that the real one would not (the component's stand-in, longer, names
// the preview's resources).
const joinStandIn = "kib"

// JoinForm runs, at a preview where some of j's arguments are unknown (unknown, their paths; their values stood for),
// the checks of DeclareJoin that need neither those nor AWS: the known arguments' forms and the names made from
// them within AWS's limits, the configuration step of its preflight. A problem it finds fails the preview, as
// DeclareJoin's would; the checks of the unknown arguments wait for the update, where DeclareJoin runs them all.
func JoinForm(ctx *pulumi.Context, parent pulumi.Resource, j Join, unknown []string) error {
	env, err := awsenv.Lookup(ctx, pulumi.Parent(parent))
	if err != nil {
		return err
	}
	of := func(arg string) bool {
		return slices.ContainsFunc(unknown, func(u string) bool { return config.Within(u, arg) }) // u is at arg, or within it
	}
	var problems []config.Problem
	if !of("hubAccountId") {
		if p := hubProblem(j, cmp.Or(j.HubAccount, env.Account), env.Account); p != nil {
			problems = append(problems, *p)
		}
	}
	if of("busName") {
		j.BusName = joinStandIn
	}
	_, err = joinConfig(ctx.Stack(), env.Account, j)
	return known(append(problems, problemsOf(err)...), unknown)
}

// BusForm is JoinForm for a Bus (DeclareBus's arguments: values, clusterNames): the checks of its configuration
// step on the known arguments, at a preview where those at the paths unknown are not known yet.
func BusForm(ctx *pulumi.Context, parent pulumi.Resource, values map[string]string, clusterNames, unknown []string) error {
	env, err := awsenv.Lookup(ctx, pulumi.Parent(parent))
	if err != nil {
		return err
	}
	// An unknown value is stood for by a value of its form (or its zero, read as absent): no problem of the others
	// hides behind it, and the problems of the unknowns are dropped (known).
	_, err = config.LoadBus(ctx.Stack(), env.Account, values)
	problems := problemsOf(err)
	for i, n := range clusterNames {
		if err := queuename.ValidateCluster(n); err != nil {
			problems = append(problems, config.Problemf(fmt.Sprintf("clusterNames[%d]", i), "%v", err))
		}
	}
	return known(problems, unknown)
}

// known is a config.Error of problems but those about the arguments at the paths unknown (or within them); nil
// when none is left. A problem of the argument holding one (a tag key too long, beside a tag whose value is unknown)
// is known to be one.
func known(problems []config.Problem, unknown []string) error {
	problems = slices.DeleteFunc(problems, func(p config.Problem) bool {
		return slices.ContainsFunc(unknown, p.About)
	})
	if len(problems) == 0 {
		return nil
	}
	return &config.Error{Problems: problems}
}

// problemsOf are the problems err reports: a configuration's each, another error's text.
func problemsOf(err error) []config.Problem {
	var cerr *config.Error
	if errors.As(err, &cerr) {
		return cerr.Problems
	}
	if err != nil {
		return []config.Problem{{Reason: err.Error()}}
	}
	return nil
}

// joinConfig reads j through config.Load, as a configuration with the one cluster, and names its problems as the
// component's arguments.
func joinConfig(stack, account string, j Join) (config.Config, error) {
	if j.BusName == "" {
		return config.Config{}, &config.Error{Problems: []config.Problem{config.Problemf("busName", "required, the bus's name (the Bus's output busName)")}}
	}
	beat := map[string]any{"enabled": j.HeartbeatRate != ""}
	if j.HeartbeatRate != "" {
		beat["rate"] = j.HeartbeatRate
	}
	values := map[string]string{"namePrefix": j.BusName, "clusters": "[" + string(j.Cluster) + "]"}
	for k, v := range map[string]any{"heartbeat": beat, "tags": j.Tags} {
		text, err := json.Marshal(v)
		if err != nil {
			return config.Config{}, err
		}
		values[k] = string(text)
	}
	cfg, err := config.LoadJoin(stack, account, values, j.Name)
	var problems []config.Problem
	for _, p := range problemsOf(err) {
		problems = append(problems, asArgument(p))
	}
	for i, arn := range j.HeartbeatAlarmActions {
		if problem := config.AlarmTopicProblem(arn, account); problem != "" {
			problems = append(problems, config.Problemf(fmt.Sprintf("heartbeatAlarmActions[%d]", i), "%s", problem))
		}
	}
	if len(problems) > 0 {
		return config.Config{}, &config.Error{Problems: problems}
	}
	return cfg, nil
}

// argumentText names, in a problem's reason, the configuration's keys of the one cluster (joinConfig) by the
// component's arguments; and in a preflight problem, the cluster.
var argumentText = strings.NewReplacer(
	"its account (clusters[0].account)", "the account of the AWS provider the component is given",
	"clusters[0] (", "cluster (",
	"clusters[0].", "",
)

// asArgument is p, a problem of joinConfig's configuration, named by the component's arguments: its path, and
// the keys its reason names.
func asArgument(p config.Problem) config.Problem {
	switch {
	case p.Path == "clusters[0].name":
		p.Path = "clusterName"
	case strings.HasPrefix(p.Path, "clusters[0]."):
		p.Path = strings.TrimPrefix(p.Path, "clusters[0].")
	case p.Path == "clusters[0]":
		p.Path = "cluster"
	case p.Path == "namePrefix":
		p.Path = "busName"
	case p.Path == "heartbeat.rate":
		p.Path = "heartbeatRate"
	}
	p.Reason = argumentText.Replace(p.Reason)
	return p
}
