// Package infra is the Pulumi program: one interruption bus per account and region, shared by every cluster in
// the stack's configuration. main and the tests both run Program; Deploy is the one place that maps the stack's
// configuration onto the components.
package infra

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/alarms"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/bus"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/cluster"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/dashboard"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/heartbeat"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/member"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/routerfn"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/concurrency"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/iamname"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/preflight"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/previous"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/reach"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/routerbuild"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/spotrole"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
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
	// Today is the day Karpenter's support policy is judged on (cluster.Args.Today); zero means now.
	Today time.Time
	// Probe says why the machine running pulumi cannot reach a cluster's Kubernetes API (reach.Default by default: the
	// kubeconfig's token command and the API server's /version); the offline render and the tests under mocks pass
	// reach.Always.
	Probe reach.Probe
}

// DefaultOptions build the router from its embedded source, look commands up in PATH and read Lambda's account
// settings with the environment's credentials.
func DefaultOptions() Options {
	return Options{BuildRouter: routerbuild.Embedded, LookPath: exec.LookPath, ReadConcurrency: concurrency.FromEnvironment, Probe: reach.Default}
}

// Program is the Pulumi program.
func Program(opts Options) pulumi.RunFunc {
	return func(ctx *pulumi.Context) error {
		outputs, err := Deploy(ctx, opts)
		if err != nil {
			return err
		}
		for _, k := range sortedKeys(outputs) {
			ctx.Export(k, outputs[k])
		}
		return nil
	}
}

// Deploy declares the stack and returns its outputs, in four steps: the configuration is read and checked
// before any resource is declared (check: every mistake at once, the commands the stack needs where it runs, the
// quotas a list of members would pass, the release changes it cannot make safely against the last update); the
// preflight lookups check what the clusters need of AWS (preflight.Check), through each account's provider; the
// shared part is declared (declareShared: bus, router, alarms, members' baselines, dashboard); then each
// cluster (declareClusters). Only the stack reference to the last update and the member accounts' providers,
// which declare nothing in AWS, come before the checks end.
func Deploy(ctx *pulumi.Context, opts Options) (map[string]pulumi.Input, error) {
	opts = opts.withDefaults()
	cfg, env, last, before, err := check(ctx, opts)
	if err != nil {
		return nil, err
	}
	var hub hubJoin
	if cfg.IsShard() {
		if cfg, hub, err = joinHub(ctx, cfg, env); err != nil {
			return nil, err
		}
	}
	if err := movedIn(ctx, cfg, hub, &before); err != nil {
		return nil, err
	}
	// The accounts' providers come first: the preflight lookups in a member account go through its provider.
	accounts, err := declareAccounts(ctx, cfg, env)
	if err != nil {
		return nil, err
	}
	found, err := preflight.Check(ctx, cfg, env.Region, invokeOptions(accounts), before)
	if err != nil {
		return nil, err
	}
	unreachable := warnUnreachable(ctx, cfg, env.Region, found, opts.Probe)
	spotRoles, err := last.Get(OutputSpotServiceLinkedRoles)
	if err != nil {
		return nil, err
	}
	spot, err := ensureSpotRoles(ctx, found.SpotServiceLinkedRole, spotOrigins(spotRoles), accounts)
	if err != nil {
		return nil, err
	}
	var outputs map[string]pulumi.Input
	var routerRole pulumi.StringInput
	// What the releases of clusters out of reach wait for, besides the clusters in reach: everything else the stack
	// declares (the accounts' Spot roles, and the hub's whole shared part).
	first := spot.resources()
	if cfg.IsShard() {
		// The hub declares the bus; a shard only joins its clusters to it, and says where they went.
		shardBeats(cfg, accounts)
		routerRole = pulumi.String(routerRoleARN(cfg, env))
		outputs = hub.outputs(cfg, env)
	} else {
		sh, err := declareShared(ctx, cfg, env, opts, accounts, dashboardRows(cfg), nil)
		if err != nil {
			return nil, err
		}
		routerRole = sh.router.RoleARN
		first = append(first, sh.resources()...)
		outputs = sh.outputs(cfg, env)
		maps.Copy(outputs, hubOutputs(cfg, env))
		// verify puts a canary the router held back again once this has passed, and says which hub delivery to switch to.
		outputs["canaryIntervalSeconds"] = pulumi.Int(cfg.Router.CanaryIntervalSeconds)
		outputs["hubDelivery"] = pulumi.String(cfg.CentralQueue.HubDelivery)
	}
	queueNames, clusters, err := declareClusters(ctx, cfg, env, accounts, found, spot, routerRole, opts.Today, unreachable, first)
	if err != nil {
		return nil, err
	}
	maps.Copy(outputs, map[string]pulumi.Input{
		"clusterQueueNames": queueNames,
		"clusters":          clusters,

		OutputSpotServiceLinkedRoles: spot.origins,
		OutputRetainedClusters:       stillRetained(cfg, before, adoptedOutOfReach(cfg, found, unreachable)),
	})
	return outputs, nil
}

// OutputRetainedClusters is the output that remembers, for each cluster with a pod identity association that the
// stack removed, the association's ID, which it retained on delete: should the cluster be added back, the
// program adopts it, as it does the cluster's other retained resources, whose IDs follow from their names.
const OutputRetainedClusters = "retainedPodIdentityAssociations"

// retainedAssociations reads the last update's OutputRetainedClusters (cluster -> association ID).
func retainedAssociations(v any) map[string]string {
	out := map[string]string{}
	m, _ := v.(map[string]any)
	for c, id := range m {
		if s, ok := id.(string); ok {
			out[c] = s
		}
	}
	return out
}

// stillRetained is OutputRetainedClusters for this update: what the last update remembered, and the
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

// adoptedOutOfReach are the install clusters this update adopts (preflight.Report.Retained) while their Kubernetes
// API cannot be reached, with the ID of their pod identity association: the import of their Helm release needs the
// API server, so it fails, after the rest of the update is done (cluster.Args.After), and the next update must
// adopt the release still, where it would otherwise create it and Helm refuse the name in use.
func adoptedOutOfReach(cfg config.Config, found preflight.Report, unreachable map[string]bool) map[string]string {
	out := map[string]string{}
	for _, cl := range cfg.Clusters {
		if assoc, ok := found.Retained[cl.Name]; ok && unreachable[cl.Name] && cl.Mode == config.ModeInstall {
			out[cl.Name] = assoc
		}
	}
	return out
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
	if o.Probe == nil {
		o.Probe = defaults.Probe
	}
	return o
}

// check reads and validates the stack's configuration and checks it against where the program runs and against
// the last update, before any resource is declared; it returns the configuration, the stack's environment, the
// last update's outputs and what they say of its clusters.
func check(ctx *pulumi.Context, opts Options) (config.Config, awsenv.Env, *previous.Outputs, preflight.Last, error) {
	fail := func(err error) (config.Config, awsenv.Env, *previous.Outputs, preflight.Last, error) {
		return config.Config{}, awsenv.Env{}, nil, preflight.Last{}, err
	}
	values, err := stackConfig(ctx)
	if err != nil {
		return fail(err)
	}
	env, err := awsenv.Lookup(ctx) // provider lookups, no resource: the configuration names member accounts against it
	if err != nil {
		return fail(err)
	}
	cfg, err := config.Load(ctx.Stack(), env.Account, config.Values(values, config.Namespace))
	if err != nil {
		return fail(err)
	}
	if cfg.Example && !ctx.DryRun() {
		return fail(fmt.Errorf("stack %s is marked example: true, the documented example whose IDs are placeholders: it is never "+
			"deployed. Copy its file to Pulumi.<your stack>.yaml, keep only your clusters, and remove the example key", ctx.Stack()))
	}
	if !cfg.IsShard() { // a shard declares neither the hub's policies nor its router
		if err := checkHubQuotas(cfg, env); err != nil {
			return fail(err)
		}
		if err := checkConcurrency(ctx, cfg, env, opts.ReadConcurrency); err != nil {
			return fail(err)
		}
	}
	if err := checkSize(cfg); err != nil {
		return fail(err)
	}
	if err := checkCommands(cfg, opts.LookPath); err != nil {
		return fail(err)
	}
	last, err := previous.Read(ctx)
	if err != nil {
		return fail(err)
	}
	deployed, err := last.Get("clusters")
	if err != nil {
		return fail(err)
	}
	retained, err := last.Get(OutputRetainedClusters)
	if err != nil {
		return fail(err)
	}
	before := preflight.Last{Deployed: config.DeployedClusters(deployed), Retained: retainedAssociations(retained), Adopting: map[string]bool{}}
	// Declared by the last update and retained still: it could not finish adopting them (stillRetained). Read here,
	// from this stack's own outputs, before movedIn adds the clusters moved in to Deployed.
	for c := range before.Retained {
		if _, declared := before.Deployed[c]; declared {
			before.Adopting[c] = true
		}
	}
	if err := config.CheckReleases(cfg, before.Deployed); err != nil {
		return fail(err)
	}
	return cfg, env, last, before, nil
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
func (sh shared) outputs(cfg config.Config, env awsenv.Env) map[string]pulumi.Input {
	b, r := sh.bus, sh.router
	return map[string]pulumi.Input{
		"centralQueueUrl":    b.CentralQueueURL,
		"centralQueueArn":    b.CentralQueueARN,
		"deadLetterQueueUrl": b.DLQURL,
		"deadLetterQueueArn": b.DLQARN,
		"quarantineQueueUrl": b.QuarantineURL,
		"quarantineQueueArn": b.QuarantineARN,
		"routerFunctionName": r.FunctionName,
		"routerRoleArn":      r.RoleARN,
		"redriveRoleArn":     b.RedriveRoleARN,
		"sealKeyArn":         b.SealKeyARN,
		"archiveBucket":      b.ArchiveBucket,
		"ruleArns":           b.RuleARNs,
		"alarmArns":          sh.alarms.ARNs,
		"clusterQueuePrefix": pulumi.String(cfg.QueuePrefix),
		"busName":            pulumi.String(cfg.NamePrefix),
		"region":             pulumi.String(env.Region),
		"routerLogGroupName": r.LogGroupName,
	}
}

// declareShared declares the bus, the router, their alarms, the members' baselines (and the heartbeat's shared
// part in each account) and the dashboard, with a row for each of rows.
// parent places them: nil for the program, whose bus is a component of its own (bus.New); the component
// package's Bus for the package (provider/), which is the bus there, so the queues and rules hang right under it
// (bus.Declare).
func declareShared(ctx *pulumi.Context, cfg config.Config, env awsenv.Env, opts Options, accounts map[string]account, rows []dashboard.Cluster,
	parent pulumi.Resource,
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
	b, err := declareBus(ctx, cfg.NamePrefix, &bus.Args{
		NamePrefix:               cfg.NamePrefix,
		CentralRetentionSeconds:  cfg.CentralQueue.MessageRetentionSeconds,
		VisibilityTimeoutSeconds: cfg.Router.VisibilityTimeout(),
		MaxReceiveCount:          cfg.CentralQueue.MaxReceiveCount,
		EventMaxAgeSeconds:       cfg.CentralQueue.EventMaxAgeSeconds,
		Forwarders:               forwarders(cfg, env),
		RouterRoleARN:            routerRoleARN(cfg, env),
		HubByPolicy:              cfg.CentralQueue.ByPolicy(),
		RedrivePrincipals:        cfg.Redrive.Principals,
		ArchiveMode:              cfg.Archive.S3Mode(),
		ArchiveRetentionDays:     cfg.Archive.RetentionDays,
		Env:                      env,
		Tags:                     tags,
	})
	if err != nil {
		return shared{}, err
	}
	r, err := routerfn.New(ctx, routerName(cfg), &routerfn.Args{
		FunctionName:                 routerName(cfg),
		RoleName:                     routerRoleName(cfg, env.Region),
		RoleDescription:              "Runs the karpenter-interruption-bus router of stack " + cfg.Stack,
		Settings:                     RouterSettings(cfg, env),
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
	a, err := alarms.New(ctx, cfg.NamePrefix+"-alarms", &alarms.Args{
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
	others, err := declareMembers(ctx, cfg, env, accounts, b, r, tags, under...)
	if err != nil {
		return shared{}, err
	}
	if cfg.Dashboard {
		d, err := dashboard.New(ctx, cfg.NamePrefix+"-dashboard", &dashboard.Args{
			Name: cfg.NamePrefix, Bus: cfg.NamePrefix, Namespace: contract.MetricsNamespace, Region: env.Region, MaximumConcurrency: cfg.Router.ConcurrencyLimit(),
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

// declareClusters declares each cluster's component in its account, and returns the outputs clusterQueueNames
// and clusters. The clusters in unreachable come last, and their Karpenter releases wait for everything else of the
// update (first, and the other clusters): an update that must change such a release fails on it only once all that
// can be reached was done (cluster.Args.After).
func declareClusters(ctx *pulumi.Context, cfg config.Config, env awsenv.Env, accounts map[string]account, found preflight.Report,
	spot spotRoles, routerRole pulumi.StringInput, today time.Time, unreachable map[string]bool, first []pulumi.Resource,
) (pulumi.StringMap, pulumi.Map, error) {
	queueNames, clusters := pulumi.StringMap{}, pulumi.Map{}
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
			return nil, nil, err
		}
		if !unreachable[cl.Name] {
			reached = append(reached, c)
		}
		queueNames[cl.Name] = c.QueueName
		namespace := "" // the namespace of the release this stack installs, which the next update checks against
		if cl.Mode.InstallsKarpenter() {
			namespace = cl.Karpenter.Namespace
		}
		clusters[cl.Name] = pulumi.Map{
			"mode": pulumi.String(cl.Mode), "queueName": c.QueueName, "queueUrl": c.QueueURL, "queueArn": c.QueueARN,
			"controllerRoleArn": c.ControllerRoleARN, "nodeRoleName": c.NodeRoleName, "chartValue": c.ChartValue,
			"karpenterNamespace": pulumi.String(namespace), "heartbeatAlarmArn": c.HeartbeatAlarmARN,
			"account": pulumi.String(cl.Account), "podIdentityAssociationId": c.PodIdentityAssociationID,
		}
	}
	return queueNames, clusters, nil
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
			AlarmName: HeartbeatAlarmName(cfg.NamePrefix, cl.Name), AlarmActions: alarmActions(cfg, cl.Account), Env: acc.env,
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

// HeartbeatAlarmName names a cluster's heartbeat alarm.
func HeartbeatAlarmName(namePrefix, cluster string) string {
	return namePrefix + "-" + cluster + "-karpenter-not-reading"
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
func declareAccounts(ctx *pulumi.Context, cfg config.Config, hubEnv awsenv.Env, under ...pulumi.ResourceOption) (map[string]account, error) {
	accounts := map[string]account{hubEnv.Account: {env: hubEnv}}
	for _, id := range cfg.MemberAccounts() {
		a := cfg.Accounts[id]
		p, err := aws.NewProvider(ctx, "account-"+id, &aws.ProviderArgs{
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

// OutputSpotServiceLinkedRoles is the stack output recording, per account where the stack installs Karpenter,
// who made its EC2 Spot service-linked role (spotrole.Origin); the next update reads it back.
const OutputSpotServiceLinkedRoles = "spotServiceLinkedRoles"

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

// spotOrigins reads the output OutputSpotServiceLinkedRoles of the last update.
func spotOrigins(output any) map[string]spotrole.Origin {
	out := map[string]spotrole.Origin{}
	m, _ := output.(map[string]any)
	for id, v := range m {
		s, _ := v.(string)
		out[id] = spotrole.Origin(s)
	}
	return out
}

// declareMembers declares the heartbeat's shared part in the hub and each member account's baseline: through
// the account's provider, one account at a time, or, with organization.memberOUs, once for every account of the
// units as a StackSet (member.NewStackSet), which clusters in member accounts then wait for.
func declareMembers(ctx *pulumi.Context, cfg config.Config, hubEnv awsenv.Env, accounts map[string]account, b *bus.Bus, r *routerfn.Router, tags pulumi.StringMap,
	under ...pulumi.ResourceOption,
) ([]pulumi.Resource, error) {
	var declared []pulumi.Resource
	if cfg.Heartbeat.Enabled {
		h, err := heartbeat.New(ctx, heartbeat.Name(cfg.NamePrefix), &heartbeat.Args{NamePrefix: cfg.NamePrefix, Env: hubEnv, Tags: tags}, under...)
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
	after := append([]pulumi.ResourceOption{pulumi.DependsOn(append(slices.Clone(b.WaitFor()), r))}, under...)
	if cfg.Baselined() {
		set, err := member.NewStackSet(ctx, member.StackSetName(cfg.NamePrefix), &member.StackSetArgs{
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
				acc.beat = &beat{group: set.Deployed(heartbeat.Name(cfg.NamePrefix)), role: set.Deployed(heartbeatRoleARN(cfg, acc.env))}
			}
			accounts[id] = acc
		}
		return declared, nil
	}
	for _, id := range cfg.MemberAccounts() {
		acc := accounts[id]
		m, err := member.New(ctx, "account-"+id+"-bus", baselineArgs(cfg, hubEnv, acc.env, alarmActions(cfg, id)), append(slices.Clone(acc.opts), after...)...)
		if err != nil {
			return nil, err
		}
		declared = append(declared, m)
		if cfg.Heartbeat.Enabled {
			h, err := heartbeat.New(ctx, "account-"+id+"-heartbeat", &heartbeat.Args{NamePrefix: cfg.NamePrefix, Env: acc.env, Tags: tags}, append(slices.Clone(acc.opts), under...)...)
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
		HubRouterRoleARN:   routerRoleARN(cfg, hubEnv),
		EventMaxAgeSeconds: cfg.CentralQueue.EventMaxAgeSeconds, AlarmActions: alarmActions, Tags: TagValues(cfg),
	}
}

// routerName names the router's function and its log group.
func routerName(cfg config.Config) string { return cfg.NamePrefix + "-router" }

// routerRoleName names the router's role in region: as its function, with the region (iamname).
func routerRoleName(cfg config.Config, region string) string {
	return iamname.OfPrefix(cfg.NamePrefix, "router", region)
}

// routerRoleARN is the ARN of the router's role in hubEnv.
func routerRoleARN(cfg config.Config, hubEnv awsenv.Env) string {
	return hubEnv.IAMARN("role/" + routerRoleName(cfg, hubEnv.Region))
}

// heartbeatRoleARN is the ARN of the role the heartbeat's schedules put canaries with in env, by its fixed name.
func heartbeatRoleARN(cfg config.Config, env awsenv.Env) string {
	return env.IAMARN("role/" + heartbeat.RoleName(cfg.NamePrefix, env.Region))
}

// memberRoleARNs are the ARNs of the role name(namePrefix) in every member account.
func memberRoleARNs(cfg config.Config, env awsenv.Env, name func(namePrefix, region string) string) []string {
	var out []string
	for _, id := range cfg.MemberAccounts() {
		out = append(out, env.In(id).IAMARN("role/"+name(cfg.NamePrefix, env.Region)))
	}
	return out
}

// RouterSettings are the router's settings for cfg: what becomes its environment, besides the central queue's
// URL, which the router component adds.
func RouterSettings(cfg config.Config, env awsenv.Env) contract.Settings {
	s := contract.Settings{
		Account:            env.Account,
		MemberReaderRoles:  memberRoleARNs(cfg, env, member.ReaderRoleName),
		ClusterQueuePrefix: cfg.QueuePrefix,
		OwnerTagKeys:       cfg.Router.OwnerTagKeys,
		MetricsNamespace:   contract.MetricsNamespace,
		BusName:            cfg.NamePrefix,
		LogLevel:           cfg.Router.LogLevel,
		BusQueues:          []string{bus.CentralQueueName(cfg.NamePrefix), bus.DLQName(cfg.NamePrefix), bus.QuarantineName(cfg.NamePrefix)},
		CanaryInterval:     time.Duration(cfg.Router.CanaryIntervalSeconds) * time.Second,
		SenderCheck:        cfg.Router.SenderCheck,
		// Every account's rules deliver as its forwarder, the hub's own included unless they deliver through the
		// central queue's policy: the name is the same in each.
		ForwarderRoleName: bus.ForwarderRoleName(cfg.NamePrefix, env.Region),
		Partition:         env.Partition,
		HubDelivery:       cfg.CentralQueue.HubDelivery,
	}
	if len(cfg.Redrive.Principals) > 0 {
		s.RedriveRoleName = bus.RedriveRoleName(cfg.NamePrefix, env.Region)
	}
	if cfg.IsOrganization() {
		// Every account of the organization, by the reader role's fixed name: no list.
		s.MemberReaderRoles = nil
		s.OrganizationID, s.ReaderRoleName = cfg.Organization.ID, member.ReaderRoleName(cfg.NamePrefix, env.Region)
	}
	return s
}

// forwarders are who may send to the central queue besides the stack's rules: the members' forwarder roles, by
// organization or one by one.
func forwarders(cfg config.Config, env awsenv.Env) bus.Forwarders {
	if cfg.IsOrganization() {
		return bus.Forwarders{OrgID: cfg.Organization.ID, RoleName: member.ForwarderRoleName(cfg.NamePrefix, env.Region)}
	}
	return bus.Forwarders{ARNs: memberRoleARNs(cfg, env, member.ForwarderRoleName)}
}

// stackConfig is the stack's configuration as the Pulumi SDK receives it ("<namespace>:<key>" to value), read
// whole so that keys the program does not know can be reported. The CLI's Go language host gives the whole
// configuration in PULUMI_CONFIG; the Automation API's inline programs get it only through the context, key by
// key (the SDK lists none), so every key the program knows is read from the context too: an inline program reads
// all it uses, though it cannot report a key it does not know.
func stackConfig(ctx *pulumi.Context) (map[string]string, error) {
	values := map[string]string{}
	if raw := os.Getenv(pulumi.EnvConfig); raw != "" {
		if err := json.Unmarshal([]byte(raw), &values); err != nil {
			return nil, fmt.Errorf("reading the stack configuration from %s: %w", pulumi.EnvConfig, err)
		}
	}
	for _, k := range config.Keys() {
		key := config.Namespace + ":" + k
		if v, ok := ctx.GetConfig(key); ok {
			values[key] = v
		}
	}
	return values, nil
}

// commandUse is why the stack needs a command where pulumi up runs.
var commandUse = map[string]string{
	"aws":     "the Kubernetes provider signs in to the cluster with `aws eks get-token`",
	"kubectl": "pulumi-eks calls it to create the cluster",
}

// checkCommands reports, before any resource is declared, the commands the clusters' modes need that lookPath
// cannot find.
func checkCommands(cfg config.Config, lookPath func(string) (string, error)) error {
	needed := map[string][]string{} // command -> the entries needing it
	for i, cl := range cfg.Clusters {
		entry := fmt.Sprintf("clusters[%d] (%s, mode %s)", i, cl.Name, cl.Mode)
		switch cl.Mode {
		case config.ModeInstall:
			needed["aws"] = append(needed["aws"], entry)
		case config.ModeCreate:
			needed["aws"] = append(needed["aws"], entry)
			needed["kubectl"] = append(needed["kubectl"], entry)
		}
	}
	var missing []string
	for _, cmd := range slices.Sorted(maps.Keys(needed)) {
		if _, err := lookPath(cmd); err != nil {
			missing = append(missing, fmt.Sprintf("%s: not found (%v); %s need it: %s", cmd, err, strings.Join(needed[cmd], ", "), commandUse[cmd]))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("commands missing where pulumi runs (docs/deploying.md, \"Deploying the stack\"):\n  %s", strings.Join(missing, "\n  "))
	}
	return nil
}

// Tags go on every resource that takes them: the stack's own, then the configured ones.
func Tags(cfg config.Config) pulumi.StringMap { return pulumi.ToStringMap(TagValues(cfg)) }

// TagValues are Tags as plain strings (a StackSet's template carries them).
func TagValues(cfg config.Config) map[string]string {
	tags := map[string]string{"karpenter-interruption-bus/stack": cfg.Stack, "managed-by": "pulumi"}
	maps.Copy(tags, cfg.Tags)
	return tags
}

func sortedKeys(m map[string]pulumi.Input) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
