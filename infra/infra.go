// Package infra is the Pulumi program: one interruption bus per account and region, shared by every cluster in
// the stack's configuration. main and the tests both run Program; Deploy is the one place that maps the stack's
// configuration onto the components.
package infra

import (
	"context"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/bucketowner"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/alarms"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/bus"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/cluster"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/dashboard"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/heartbeat"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/member"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/routerfn"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/concurrency"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/dependency"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/layout"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/preflight"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/reach"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/routerbuild"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/spotrole"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/release"
)

// Options adapt the program to where it runs.
type Options struct {
	// BuildRouter builds the router Lambda. By default it compiles the source the router module embeds
	// (routerbuild.Embedded), wherever the program runs; tests and the offline render pass a stub.
	BuildRouter func(ctx context.Context) (routerbuild.Artifact, error)
	// LookPath finds a command where the program runs (exec.LookPath by default): installing Karpenter needs
	// the AWS CLI, creating a cluster kubectl too. The offline render, which runs neither, passes a stub.
	LookPath func(file string) (string, error)
	// ReadConcurrency reads what Lambda says of the account's concurrency and of the router's function's reservation,
	// as the identity the stack's AWS provider uses, and in which account it read (concurrency.FromEnvironment by
	// default: the provider's identity keys over the environment's credentials, in the stack's region); the offline
	// render and the tests pass their own.
	ReadConcurrency func(ctx context.Context, region string, id concurrency.Identity, function string) (concurrency.Account, error)
	// ReadArchiveOwner asks S3 who owns the bucket of the archive's name, as the identity the stack's AWS provider uses
	// (bucketowner.FromEnvironment by default); the offline render and the tests pass their own.
	ReadArchiveOwner func(ctx context.Context, region string, id concurrency.Identity, bucket, account string) (bucketowner.Answer, error)
	// Today is the day Karpenter's support policy is judged on (cluster.Args.Today); zero means now.
	Today time.Time
	// Probe says why the machine running pulumi cannot reach a cluster's Kubernetes API (reach.Default by default: the
	// kubeconfig's token command and the API server's /version); the offline render and the tests under mocks pass
	// reach.Always.
	Probe reach.Probe
}

// DefaultOptions build the router from its embedded source, look commands up in PATH, and read Lambda's account
// settings and the archive's owner with the environment's credentials.
func DefaultOptions() Options {
	return Options{BuildRouter: routerbuild.Embedded, LookPath: exec.LookPath, ReadConcurrency: concurrency.FromEnvironment,
		ReadArchiveOwner: bucketowner.FromEnvironment, Probe: reach.Default}
}

// Program is the Pulumi program.
func Program(opts Options) pulumi.RunFunc {
	return func(ctx *pulumi.Context) error {
		out, err := Deploy(ctx, opts)
		if err != nil {
			return err
		}
		m := Exports(out)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			ctx.Export(k, m[k])
		}
		return nil
	}
}

// Deploy declares the stack and returns its outputs, in three steps: the preflight (preflight.Run, the one order
// of every check the program and the component package run) reads the configuration and checks it, against where
// the program runs, the last update, AWS and the clusters' Kubernetes APIs, before anything is declared in AWS; the
// shared part is declared (declareShared: bus, router, alarms, members' baselines, dashboard); then each cluster
// (declareClusters). Only stack references and the member accounts' providers, which declare nothing in AWS, come
// before the preflight ends.
func Deploy(ctx *pulumi.Context, opts Options) (Outputs, error) {
	opts = opts.withDefaults()
	var accounts map[string]account
	f, err := preflight.Run(ctx, preflight.Input{
		Kind: preflight.Program,
		Load: preflight.StackConfiguration,
		Accounts: func(cfg config.Config, env awsenv.Env) (map[string][]pulumi.InvokeOption, error) {
			var err error
			accounts, err = declareAccounts(ctx, cfg, env, programNaming(cfg))
			return invokeOptions(accounts), err
		},
	}, opts.preflight())
	if err != nil {
		return Outputs{}, err
	}
	cfg, env, found := f.Config, f.Env, f.Found
	spot, err := ensureSpotRoles(ctx, found.SpotServiceLinkedRole, spotOrigins(f.Previous.SpotServiceLinkedRoles), accounts)
	if err != nil {
		return Outputs{}, err
	}
	var out Outputs
	var routerRole pulumi.StringInput
	// What the releases of clusters out of reach wait for, besides the clusters in reach: everything else the stack
	// declares (the accounts' Spot roles, and the hub's whole shared part).
	first := spot.resources()
	if cfg.IsShard() {
		// The hub declares the bus; a shard only joins its clusters to it, and says where they went.
		shardBeats(cfg, accounts)
		routerRole = pulumi.String(layout.RouterRoleARN(cfg, env))
		out = shardOutputs(f.Hub, cfg, env)
	} else {
		sh, err := declareShared(ctx, cfg, env, opts, accounts, dashboardRows(cfg), f.ArchiveAdoption(), nil, programNaming(cfg))
		if err != nil {
			return Outputs{}, err
		}
		routerRole = sh.router.RoleARN
		first = append(first, sh.resources()...)
		out = hubOutputs(sh, cfg, env)
	}
	queueNames, clusters, digests, err := declareClusters(ctx, cfg, env, accounts, found, spot, routerRole, opts.Today, f.Unreachable, first)
	if err != nil {
		return Outputs{}, err
	}
	records := pulumi.Map{}
	for c, record := range clusters {
		if f.Unreachable[c] {
			// What is deployed, which an update cannot change out of reach: the next update compares against it.
			record.ReleaseDigest = pulumi.String(f.Before.Deployed[c].ReleaseDigest)
		}
		records[c] = Exports(record)
	}
	warnReleasesOutOfReach(ctx, f, digests)
	out.ClusterQueueNames, out.Clusters = queueNames, records
	out.SpotServiceLinkedRoles = spot.origins
	out.RetainedPodIdentityAssociations = stillRetained(cfg, f.Before, f.AdoptingOutOfReach)
	// Which release of the program made the stack: an upgrade's preview shows it change, and CHANGELOG.md says
	// what else changes with it.
	out.Version = pulumi.String(release.Version)
	return out, nil
}

// stillRetained is the output RetainedPodIdentityAssociations for this update: what the last update remembered, and the
// associations of the clusters it declared that this one removes, less the clusters this one declares but those
// whose adoption it cannot finish (adopting): a cluster both declared and retained is adopted again by the next
// update (preflight.Check).
func stillRetained(cfg config.Config, before preflight.Last, adopting map[string]string) pulumi.StringMap {
	out := pulumi.StringMap{}
	for c, id := range before.Retained {
		out[c] = pulumi.String(id)
	}
	for c, d := range before.Deployed {
		if d.PodIdentityAssociationID != "" {
			out[c] = pulumi.String(d.PodIdentityAssociationID)
		}
	}
	for _, cl := range cfg.Clusters {
		delete(out, cl.Name)
	}
	for c, id := range adopting {
		out[c] = pulumi.String(id)
	}
	return out
}

// preflight are the options the preflight runs with.
func (o Options) preflight() preflight.Options {
	return preflight.Options{LookPath: o.LookPath, ReadConcurrency: o.ReadConcurrency, ReadArchiveOwner: o.ReadArchiveOwner, Probe: o.Probe}
}

func (o Options) withDefaults() Options {
	defaults := DefaultOptions()
	if o.BuildRouter == nil {
		o.BuildRouter = defaults.BuildRouter
	}
	if o.LookPath == nil {
		o.LookPath = defaults.LookPath
	}
	if o.ReadConcurrency == nil {
		o.ReadConcurrency = defaults.ReadConcurrency
	}
	if o.ReadArchiveOwner == nil {
		o.ReadArchiveOwner = defaults.ReadArchiveOwner
	}
	if o.Probe == nil {
		o.Probe = defaults.Probe
	}
	return o
}

// shared is what the stack declares once, whatever its clusters.
type shared struct {
	bus    *bus.Bus
	router *routerfn.Router
	alarms *alarms.Alarms
	// others are the rest of it: the heartbeat's shared parts, the members' baselines, the dashboard.
	others []pulumi.Resource
}

// resources are the shared part's components and resources: all that a release out of reach waits for, besides the
// clusters in reach.
func (sh shared) resources() []pulumi.Resource {
	var out []pulumi.Resource
	if sh.bus != nil {
		out = append(out, sh.bus.WaitFor()...)
	}
	if sh.router != nil {
		out = append(out, sh.router)
	}
	if sh.alarms != nil {
		out = append(out, sh.alarms)
	}
	return append(out, sh.others...)
}

// outputs are the shared part's outputs, the program's stack outputs and the component package's Bus's alike.
func (sh shared) outputs(cfg config.Config, env awsenv.Env) Outputs {
	b, r := sh.bus, sh.router
	return Outputs{
		Join: joinOutputs{
			BusName:            pulumi.String(cfg.NamePrefix),
			Account:            pulumi.String(env.Account),
			Region:             pulumi.String(env.Region),
			ClusterQueuePrefix: pulumi.String(cfg.QueuePrefix),
			RouterLogGroupName: r.LogGroupName,
			HeartbeatRate:      pulumi.String(heartbeatRate(cfg)),
		},
		Bus: busOutputs{
			CentralQueueURL:    b.CentralQueueURL,
			CentralQueueARN:    b.CentralQueueARN,
			DeadLetterQueueURL: b.DLQURL,
			DeadLetterQueueARN: b.DLQARN,
			QuarantineQueueURL: b.QuarantineURL,
			QuarantineQueueARN: b.QuarantineARN,
			RouterFunctionName: r.FunctionName,
			RouterRoleARN:      r.RoleARN,
			RedriveRoleARN:     b.RedriveRoleARN,
			SealKeyARN:         b.SealKeyARN,
			ArchiveBucket:      b.ArchiveBucket,
			// Every archive of the bus starts so: make requeue FROM=archive reads them all.
			ArchiveBucketPrefix: pulumi.String(bus.ArchiveBucketPrefix(cfg.NamePrefix)),
			RuleARNs:            b.RuleARNs,
			AlarmARNs:           sh.alarms.ARNs,
		},
	}
}

// declareShared declares the bus, the router, their alarms, the members' baselines (and the heartbeat's shared
// part in each account) and the dashboard, with a row for each of rows.
// parent places them: nil for the program, whose bus is a component of its own (bus.New); the component
// package's Bus for the package (provider/), which is the bus there, so the queues and rules hang right under it
// (bus.Declare).
func declareShared(ctx *pulumi.Context, cfg config.Config, env awsenv.Env, opts Options, accounts map[string]account, rows []dashboard.Cluster,
	adoption bus.Adoption, parent pulumi.Resource, n naming,
) (shared, error) {
	artifact, err := opts.BuildRouter(ctx.Context())
	if err != nil {
		return shared{}, fmt.Errorf("building the router: %w", err)
	}
	var under []pulumi.ResourceOption
	declareBus := func(ctx *pulumi.Context, name string, args *bus.Args) (*bus.Bus, error) {
		return bus.New(ctx, name, args)
	}
	if parent != nil {
		under = []pulumi.ResourceOption{pulumi.Parent(parent)}
		declareBus = func(ctx *pulumi.Context, name string, args *bus.Args) (*bus.Bus, error) {
			return bus.Declare(ctx, name, args, parent)
		}
	}
	tags := Tags(cfg)
	b, err := declareBus(ctx, n.of(cfg.NamePrefix), &bus.Args{
		NamePrefix:               cfg.NamePrefix,
		CentralRetentionSeconds:  cfg.CentralQueue.MessageRetentionSeconds,
		VisibilityTimeoutSeconds: cfg.Router.VisibilityTimeout(),
		MaxReceiveCount:          cfg.CentralQueue.MaxReceiveCount,
		EventMaxAgeSeconds:       cfg.CentralQueue.EventMaxAgeSeconds,
		Forwarders:               layout.Forwarders(cfg, env),
		RouterRoleARN:            layout.RouterRoleARN(cfg, env),
		HubByPolicy:              cfg.CentralQueue.ByPolicy(),
		RedrivePrincipals:        cfg.Redrive.Principals,
		ArchiveMode:              cfg.Archive.S3Mode(),
		ArchiveRetentionDays:     cfg.Archive.RetentionDays,
		ArchiveAdoption:          adoption,
		Env:                      env,
		Tags:                     tags,
	})
	if err != nil {
		return shared{}, err
	}
	r, err := routerfn.New(ctx, n.of(layout.RouterName(cfg)), &routerfn.Args{
		FunctionName:                 layout.RouterName(cfg),
		RoleName:                     layout.RouterRoleName(cfg, env.Region),
		RoleDescription:              "Runs the karpenter-interruption-bus router of stack " + cfg.Stack,
		Settings:                     layout.RouterSettings(cfg, env),
		MemoryMB:                     cfg.Router.MemoryMB,
		TimeoutSeconds:               cfg.Router.TimeoutSeconds,
		LogRetentionDays:             cfg.Router.LogRetentionDays,
		BatchSize:                    cfg.Router.BatchSize,
		MaximumBatchingWindowSeconds: cfg.Router.MaximumBatchingWindowSeconds,
		MaximumConcurrency:           cfg.Router.MaximumConcurrency,
		ProvisionedPollers:           cfg.Router.ProvisionedPollers,
		ReservedConcurrency:          cfg.Router.Reserved(),
		Artifact:                     artifact,
		CentralQueueARN:              b.CentralQueueARN,
		CentralQueueURL:              b.CentralQueueURL,
		QuarantineQueueARN:           b.QuarantineARN,
		QuarantineQueueURL:           b.QuarantineURL,
		DLQARN:                       b.DLQARN,
		DLQURL:                       b.DLQURL,
		SealKeyARN:                   b.SealKeyARN,
		ArchiveBucket:                b.ArchiveBucket,
		ArchiveBucketARN:             b.ArchiveBucketARN,
		Env:                          env,
		Tags:                         tags,
	}, under...)
	if err != nil {
		return shared{}, err
	}
	a, err := alarms.New(ctx, n.of(cfg.NamePrefix+"-alarms"), &alarms.Args{
		NamePrefix:              cfg.NamePrefix,
		Bus:                     cfg.NamePrefix,
		Namespace:               contract.MetricsNamespace,
		MaximumConcurrency:      cfg.Router.ConcurrencyLimit(),
		TopicARN:                cfg.Alarms.TopicARN,
		OldestMessageAgeSeconds: cfg.Alarms.OldestMessageAgeSeconds,
		CentralQueueName:        b.CentralQueueName,
		DLQName:                 b.DLQName,
		FunctionName:            r.FunctionName,
		Tags:                    tags,
	}, under...)
	if err != nil {
		return shared{}, err
	}
	others, err := declareMembers(ctx, cfg, env, accounts, b, r, tags, n, under...)
	if err != nil {
		return shared{}, err
	}
	if cfg.Dashboard {
		d, err := dashboard.New(ctx, n.of(cfg.NamePrefix+"-dashboard"), &dashboard.Args{
			Name: layout.DashboardName(cfg.NamePrefix, env.Region), Bus: cfg.NamePrefix, Namespace: contract.MetricsNamespace, Region: env.Region, MaximumConcurrency: cfg.Router.ConcurrencyLimit(),
			CentralQueueName: b.CentralQueueName, DLQName: b.DLQName, FunctionName: r.FunctionName,
			Clusters: rows,
		}, under...)
		if err != nil {
			return shared{}, err
		}
		others = append(others, d)
	}
	return shared{bus: b, router: r, alarms: a, others: others}, nil
}

// warnReleasesOutOfReach warns, once, of the clusters out of reach whose Karpenter release the update must create,
// adopt or change (preflight.ReleasesWarning), comparing the digest each asks (digests) with the last update's.
func warnReleasesOutOfReach(ctx *pulumi.Context, f preflight.Flight, digests map[string]pulumi.StringOutput) {
	releases := map[string]preflight.Release{}
	var compared []config.Cluster
	var asked []any
	for _, cl := range f.Config.Clusters {
		if !f.Unreachable[cl.Name] {
			continue
		}
		// Only a release deployed before needs its digest, which is known in a preview: a new cluster's values wait
		// for its new role.
		if r := preflight.ReleaseOf(cl, f.Before, f.AdoptingOutOfReach, ""); r != preflight.ReleaseChange && r != preflight.ReleaseUnchanged {
			releases[cl.Name] = r
			continue
		}
		compared = append(compared, cl)
		asked = append(asked, digests[cl.Name])
	}
	warn := func(releases map[string]preflight.Release) {
		if w := preflight.ReleasesWarning(f.Config, releases); w != "" {
			_ = ctx.Log.Warn(w, nil)
		}
	}
	if len(compared) == 0 {
		warn(releases)
		return
	}
	pulumi.All(asked...).ApplyT(func(v []any) error {
		for i, cl := range compared {
			releases[cl.Name] = preflight.ReleaseOf(cl, f.Before, f.AdoptingOutOfReach, v[i].(string))
		}
		warn(releases)
		return nil
	})
}

// declareClusters declares each cluster's component in its account, and returns the outputs clusterQueueNames
// and clusters, and the digest of each cluster's Karpenter release (cluster.ReleaseDigest). The clusters in unreachable come last, and their Karpenter releases wait for everything else of the
// update (first, and the other clusters): an update that must change such a release fails on it only once all that
// can be reached was done (cluster.Args.After).
func declareClusters(ctx *pulumi.Context, cfg config.Config, env awsenv.Env, accounts map[string]account, found preflight.Report,
	spot spotRoles, routerRole pulumi.StringInput, today time.Time, unreachable map[string]bool, first []pulumi.Resource,
) (pulumi.StringMap, map[string]clusterRecord, map[string]pulumi.StringOutput, error) {
	queueNames, clusters, digests := pulumi.StringMap{}, map[string]clusterRecord{}, map[string]pulumi.StringOutput{}
	var ordered, outOfReach []config.Cluster
	for _, cl := range cfg.Clusters {
		if unreachable[cl.Name] {
			outOfReach = append(outOfReach, cl)
		} else {
			ordered = append(ordered, cl)
		}
	}
	ordered = append(ordered, outOfReach...)
	reached := slices.Clone(first)
	for _, cl := range ordered {
		acc := accounts[cl.Account]
		hub := ""
		if cfg.IsMember(cl.Account) {
			hub = env.Account
		}
		var prerequisites []pulumi.Resource
		if role := spot.roles[cl.Account]; role != nil && cl.Mode.InstallsKarpenter() {
			prerequisites = []pulumi.Resource{role} // Karpenter cannot launch Spot before it exists
		}
		args := clusterArgs(cfg, cl, acc, hub, routerRole, found, prerequisites)
		args.Today = today
		if assoc, ok := found.Retained[cl.Name]; ok {
			args.Adopt = &cluster.Adopt{PodIdentityAssociationID: assoc, InCluster: cl.Mode == config.ModeInstall}
		}
		if unreachable[cl.Name] {
			args.After = slices.Clone(reached)
		}
		c, err := cluster.New(ctx, args, acc.opts...)
		if err != nil {
			return nil, nil, nil, err
		}
		digests[cl.Name] = c.ReleaseDigest
		if !unreachable[cl.Name] {
			reached = append(reached, c)
		}
		queueNames[cl.Name] = c.QueueName
		namespace := "" // the namespace of the release this stack installs, which the next update checks against
		if cl.Mode.InstallsKarpenter() {
			namespace = cl.Karpenter.Namespace
		}
		clusters[cl.Name] = clusterRecord{
			Mode: pulumi.String(cl.Mode), QueueName: c.QueueName, QueueURL: c.QueueURL, QueueARN: c.QueueARN,
			ControllerRoleARN: c.ControllerRoleARN, NodeRoleName: c.NodeRoleName, ChartValue: c.ChartValue,
			KarpenterNamespace: pulumi.String(namespace), HeartbeatAlarmARN: c.HeartbeatAlarmARN,
			Account: pulumi.String(cl.Account), PodIdentityAssociationID: c.PodIdentityAssociationID,
			ReleaseDigest: c.ReleaseDigest,
		}
	}
	return queueNames, clusters, digests, nil
}

// clusterArgs are the arguments of cl's component in account acc: the program's and the component package's
// (DeclareJoin) alike. hub is the hub's account for a cluster of another account, "" otherwise.
func clusterArgs(cfg config.Config, cl config.Cluster, acc account, hub string, routerRole pulumi.StringInput, found preflight.Report,
	prerequisites []pulumi.Resource,
) *cluster.Args {
	args := &cluster.Args{
		Cluster:       cl,
		QueueName:     queuename.For(cfg.QueuePrefix, cl.Name),
		PolicyName:    cfg.NamePrefix + "-interruption-queue",
		Env:           acc.env,
		Tags:          Tags(cfg),
		RouterRoleARN: routerRole,
		DeployRoleARN: acc.deployRole,
		HubAccount:    hub,
		Prerequisites: prerequisites,
	}
	if c, ok := found.Clusters[cl.Name]; ok && cl.Mode == config.ModeInstall {
		args.Existing = &cluster.Existing{Endpoint: c.Endpoint, CertificateAuthority: c.CertificateAuthority}
	}
	if acc.beat != nil {
		args.Heartbeat = &heartbeat.Cluster{
			Bus: cfg.NamePrefix, Group: acc.beat.group, RoleARN: acc.beat.role, Rate: cfg.Heartbeat.Interval(),
			AlarmName: layout.HeartbeatAlarmName(cfg.NamePrefix, cl.Name), AlarmActions: alarmActions(cfg, cl.Account), Env: acc.env,
		}
	}
	return args
}

func dashboardRows(cfg config.Config) []dashboard.Cluster {
	rows := make([]dashboard.Cluster, len(cfg.Clusters))
	for i, cl := range cfg.Clusters {
		rows[i] = dashboard.Cluster{Name: cl.Name, Queue: queuename.For(cfg.QueuePrefix, cl.Name)}
	}
	return rows
}

// alarmActions are the topics an alarm in account notifies: CloudWatch notifies topics of the alarm's own
// account, alarms.topicArn in the stack's, accounts.<id>.alarmTopicArn in a member's.
func alarmActions(cfg config.Config, account string) []string {
	topic := cfg.Alarms.TopicARN
	if cfg.IsMember(account) {
		topic = cfg.Accounts[account].AlarmTopicARN
	}
	if topic == "" {
		return nil
	}
	return []string{topic}
}

// account is where a cluster's resources go: the account's environment, the provider declaring them there (a
// member's; none for the stack's own), the heartbeat's shared part there, and, for a member, its deploy role.
type account struct {
	env        awsenv.Env
	opts       []pulumi.ResourceOption
	invoke     []pulumi.InvokeOption
	beat       *beat
	deployRole string
}

// beat is the heartbeat's shared part in an account, as its clusters' schedules take it: outputs of what
// declares it (the Heartbeat component, or the member baseline's StackSet), so a schedule waits for it.
type beat struct{ group, role pulumi.StringInput }

// declareAccounts returns every account of the stack: its own, with the default provider, and each member's,
// with a provider of its own (declared here: the lookups and resources of that account go through it).
func declareAccounts(ctx *pulumi.Context, cfg config.Config, hubEnv awsenv.Env, n naming, under ...pulumi.ResourceOption) (map[string]account, error) {
	accounts := map[string]account{hubEnv.Account: {env: hubEnv}}
	for _, id := range cfg.MemberAccounts() {
		a := cfg.Accounts[id]
		p, err := aws.NewProvider(ctx, n.ofAccount("account-"+id), &aws.ProviderArgs{
			Region:            pulumi.String(hubEnv.Region),
			AllowedAccountIds: pulumi.StringArray{pulumi.String(id)},
			AssumeRole:        &aws.ProviderAssumeRoleArgs{RoleArn: pulumi.String(a.DeployRoleARN), SessionName: pulumi.String("karpenter-interruption-bus")},
		}, under...)
		if err != nil {
			return nil, fmt.Errorf("declaring the provider of account %s: %w", id, err)
		}
		accounts[id] = account{
			env: hubEnv.In(id), opts: []pulumi.ResourceOption{pulumi.Providers(p)}, invoke: []pulumi.InvokeOption{pulumi.Provider(p)},
			deployRole: a.DeployRoleARN,
		}
	}
	return accounts, nil
}

func invokeOptions(accounts map[string]account) map[string][]pulumi.InvokeOption {
	out := map[string][]pulumi.InvokeOption{}
	for id, a := range accounts {
		out[id] = a.invoke
	}
	return out
}

// spotRoles are the EC2 Spot service-linked roles the stack declares, by account, and the origins it records.
type spotRoles struct {
	roles   map[string]*spotrole.Role
	origins pulumi.StringMap
}

// resources are the roles, in the accounts' order.
func (s spotRoles) resources() []pulumi.Resource {
	var out []pulumi.Resource
	for _, id := range slices.Sorted(maps.Keys(s.roles)) {
		out = append(out, s.roles[id])
	}
	return out
}

// ensureSpotRoles declares the EC2 Spot service-linked role in each account where the stack installs Karpenter
// and the role does not exist, or where the stack created it before (spotrole.Decide).
func ensureSpotRoles(ctx *pulumi.Context, exists map[string]bool, last map[string]spotrole.Origin, accounts map[string]account) (spotRoles, error) {
	out := spotRoles{roles: map[string]*spotrole.Role{}, origins: pulumi.StringMap{}}
	for _, id := range slices.Sorted(maps.Keys(exists)) {
		declare, origin := spotrole.Decide(exists[id], last[id])
		out.origins[id] = pulumi.String(origin)
		if !declare {
			continue
		}
		name := "spot-service-linked-role"
		if a := accounts[id]; a.opts != nil {
			name = "account-" + id + "-" + name
		}
		role, err := spotrole.New(ctx, name, accounts[id].opts...)
		if err != nil {
			return spotRoles{}, fmt.Errorf("account %s: %w", id, err)
		}
		out.roles[id] = role
	}
	return out, nil
}

// spotOrigins reads the output SpotServiceLinkedRoles of the last update.
func spotOrigins(recorded map[string]string) map[string]spotrole.Origin {
	out := map[string]spotrole.Origin{}
	for id, s := range recorded {
		out[id] = spotrole.Origin(s)
	}
	return out
}

// declareMembers declares the heartbeat's shared part in the hub and each member account's baseline: through
// the account's provider, one account at a time, or, with organization.memberOUs, once for every account of the
// units as a StackSet (member.NewStackSet), which clusters in member accounts then wait for.
func declareMembers(ctx *pulumi.Context, cfg config.Config, hubEnv awsenv.Env, accounts map[string]account, b *bus.Bus, r *routerfn.Router, tags pulumi.StringMap,
	n naming, under ...pulumi.ResourceOption,
) ([]pulumi.Resource, error) {
	var declared []pulumi.Resource
	if cfg.Heartbeat.Enabled {
		h, err := heartbeat.New(ctx, n.of(heartbeat.Name(cfg.NamePrefix)), &heartbeat.Args{NamePrefix: cfg.NamePrefix, Env: hubEnv, Tags: tags}, under...)
		if err != nil {
			return nil, err
		}
		declared = append(declared, h)
		hub := accounts[hubEnv.Account]
		hub.beat = &beat{group: h.GroupName, role: h.RoleARN}
		accounts[hubEnv.Account] = hub
	}
	// The rules send to the central queue: it exists first. Nothing else waits: the policies name the hub's
	// roles by account and aws:PrincipalArn.
	after := append([]pulumi.ResourceOption{pulumi.DependsOn(dependency.On(append(slices.Clone(b.WaitFor()), r)...))}, under...)
	if cfg.Baselined() {
		set, err := member.NewStackSet(ctx, n.of(member.StackSetName(cfg.NamePrefix)), &member.StackSetArgs{
			Baseline:            baselineArgs(cfg, hubEnv, hubEnv.In(member.AccountPlaceholder), nil),
			OrganizationalUnits: cfg.Organization.MemberOUs, Region: hubEnv.Region, CallAs: cfg.Organization.CallAs,
		}, after...)
		if err != nil {
			return nil, err
		}
		declared = append(declared, set)
		for _, id := range cfg.MemberAccounts() {
			acc := accounts[id]
			if cfg.Heartbeat.Enabled {
				acc.beat = &beat{group: set.Deployed(heartbeat.Name(cfg.NamePrefix)), role: set.Deployed(layout.HeartbeatRoleARN(cfg, acc.env))}
			}
			accounts[id] = acc
		}
		return declared, nil
	}
	for _, id := range cfg.MemberAccounts() {
		acc := accounts[id]
		m, err := member.New(ctx, n.ofAccount("account-"+id+"-bus"), baselineArgs(cfg, hubEnv, acc.env, alarmActions(cfg, id)), append(slices.Clone(acc.opts), after...)...)
		if err != nil {
			return nil, err
		}
		declared = append(declared, m)
		if cfg.Heartbeat.Enabled {
			h, err := heartbeat.New(ctx, n.ofAccount("account-"+id+"-heartbeat"), &heartbeat.Args{NamePrefix: cfg.NamePrefix, Env: acc.env, Tags: tags}, append(slices.Clone(acc.opts), under...)...)
			if err != nil {
				return nil, err
			}
			declared = append(declared, h)
			acc.beat = &beat{group: h.GroupName, role: h.RoleARN}
		}
		accounts[id] = acc
	}
	return declared, nil
}

// baselineArgs are the member baseline's arguments in env, for the bus of cfg whose hub is hubEnv: the
// program's, its StackSet's and a joining cluster's (DeclareJoin) alike.
func baselineArgs(cfg config.Config, hubEnv, env awsenv.Env, alarmActions []string) *member.Args {
	return &member.Args{
		NamePrefix: cfg.NamePrefix, Env: env,
		HubCentralQueueARN: hubEnv.ARN("sqs", bus.CentralQueueName(cfg.NamePrefix)),
		HubRouterRoleARN:   layout.RouterRoleARN(cfg, hubEnv),
		EventMaxAgeSeconds: cfg.CentralQueue.EventMaxAgeSeconds, AlarmActions: alarmActions, Tags: TagValues(cfg),
	}
}

// Tags go on every resource that takes them: the stack's own, then the configured ones.
func Tags(cfg config.Config) pulumi.StringMap { return pulumi.ToStringMap(TagValues(cfg)) }

// TagValues are Tags as plain strings (a StackSet's template carries them).
func TagValues(cfg config.Config) map[string]string {
	tags := map[string]string{"karpenter-interruption-bus/stack": cfg.Stack, "managed-by": "pulumi"}
	maps.Copy(tags, cfg.Tags)
	return tags
}

// naming gives the logical names of a bus's shared resources. The program's are named after its namePrefix, as
// ever (and a member account's after the account); a Bus component's after the component, whose name is known at
// every preview and unique in its stack, so two Buses of one stack (one per region) never share one.
type naming struct {
	// base replaces prefix at the start of a name; component: the names are a component's, each starting with base.
	base, prefix string
	component    bool
}

// programNaming names as the program always has.
func programNaming(cfg config.Config) naming {
	return naming{base: cfg.NamePrefix, prefix: cfg.NamePrefix}
}

// componentNaming names the shared resources of the Bus component named name, whose namePrefix is prefix.
func componentNaming(name, prefix string) naming {
	return naming{base: name, prefix: prefix, component: true}
}

// ofAccount is the logical name of what the program names name, a name made from a member account's ID, not from
// namePrefix: the component's name before it, whatever the prefix (which may be unknown at a preview, and may itself
// start like the name, as namePrefix "account" does).
func (n naming) ofAccount(name string) string {
	if n.component {
		return n.base + "-" + name
	}
	return name
}

// of is the logical name of what the program names name, a name made from namePrefix.
func (n naming) of(name string) string {
	if rest, ok := strings.CutPrefix(name, n.prefix); ok && (rest == "" || strings.HasPrefix(rest, "-")) {
		return n.base + rest
	}
	if n.component {
		return n.base + "-" + name
	}
	return name
}
