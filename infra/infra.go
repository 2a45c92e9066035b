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
	"path/filepath"
	"slices"
	"sort"
	"strings"

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
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/previous"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/routerbuild"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
)

// Options adapt the program to where it runs.
type Options struct {
	// BuildRouter builds the router Lambda. By default it compiles router/ into build/router, relative to the
	// project directory (Pulumi runs the program there); tests and the offline render pass a stub.
	BuildRouter func(ctx context.Context) (routerbuild.Artifact, error)
	// LookPath finds a command where the program runs (exec.LookPath by default): installing Karpenter needs
	// the AWS CLI, creating a cluster kubectl too. The offline render, which runs neither, passes a stub.
	LookPath func(file string) (string, error)
}

// BuildFromSource compiles the router module at routerDir into outDir.
func BuildFromSource(routerDir, outDir string) func(ctx context.Context) (routerbuild.Artifact, error) {
	return func(ctx context.Context) (routerbuild.Artifact, error) {
		return routerbuild.Build(ctx, routerDir, outDir)
	}
}

// DefaultOptions build the router from the project's router/ directory and look commands up in PATH.
func DefaultOptions() Options {
	return Options{BuildRouter: BuildFromSource("router", filepath.Join("build", "router")), LookPath: exec.LookPath}
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

// Deploy declares the stack and returns its outputs. The configuration is read and validated first: a mistake
// is reported, with every other one, before any resource is declared. Then the commands the stack needs where it
// runs, and the changes to Karpenter releases it cannot make safely, are checked against the last update.
func Deploy(ctx *pulumi.Context, opts Options) (map[string]pulumi.Input, error) {
	values, err := stackConfig()
	if err != nil {
		return nil, err
	}
	env, err := awsenv.Lookup(ctx) // provider lookups, no resource: the configuration names member accounts against it
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(ctx.Stack(), env.Account, config.Values(values, config.Namespace))
	if err != nil {
		return nil, err
	}
	defaults := DefaultOptions()
	if opts.BuildRouter == nil {
		opts.BuildRouter = defaults.BuildRouter
	}
	if opts.LookPath == nil {
		opts.LookPath = defaults.LookPath
	}
	if err := checkCommands(cfg, opts.LookPath); err != nil {
		return nil, err
	}
	deployed, err := previous.Output(ctx, "clusters")
	if err != nil {
		return nil, err
	}
	if err := config.CheckReleases(cfg, config.DeployedClusters(deployed)); err != nil {
		return nil, err
	}
	artifact, err := opts.BuildRouter(ctx.Context())
	if err != nil {
		return nil, fmt.Errorf("building the router: %w", err)
	}
	tags := Tags(cfg)

	b, err := bus.New(ctx, cfg.NamePrefix, &bus.Args{
		NamePrefix:               cfg.NamePrefix,
		CentralRetentionSeconds:  cfg.CentralQueue.MessageRetentionSeconds,
		VisibilityTimeoutSeconds: cfg.Router.VisibilityTimeout(),
		MaxReceiveCount:          cfg.CentralQueue.MaxReceiveCount,
		EventMaxAgeSeconds:       cfg.CentralQueue.EventMaxAgeSeconds,
		ForwarderRoleARNs:        memberRoleARNs(cfg, env, member.ForwarderRoleName),
		Env:                      env,
		Tags:                     tags,
	})
	if err != nil {
		return nil, err
	}
	r, err := routerfn.New(ctx, routerName(cfg), &routerfn.Args{
		FunctionName:                 routerName(cfg),
		RoleDescription:              "Runs the karpenter-interruption-bus router of stack " + cfg.Stack,
		Settings:                     RouterSettings(cfg, env),
		MemoryMB:                     cfg.Router.MemoryMB,
		TimeoutSeconds:               cfg.Router.TimeoutSeconds,
		LogRetentionDays:             cfg.Router.LogRetentionDays,
		BatchSize:                    cfg.Router.BatchSize,
		MaximumBatchingWindowSeconds: cfg.Router.MaximumBatchingWindowSeconds,
		MaximumConcurrency:           cfg.Router.MaximumConcurrency,
		Artifact:                     artifact,
		CentralQueueARN:              b.CentralQueueARN,
		CentralQueueURL:              b.CentralQueueURL,
		Env:                          env,
		Tags:                         tags,
	})
	if err != nil {
		return nil, err
	}
	a, err := alarms.New(ctx, cfg.NamePrefix+"-alarms", &alarms.Args{
		NamePrefix:              cfg.NamePrefix,
		TopicARN:                cfg.Alarms.TopicARN,
		OldestMessageAgeSeconds: cfg.Alarms.OldestMessageAgeSeconds,
		CentralQueueName:        b.CentralQueueName,
		DLQName:                 b.DLQName,
		FunctionName:            r.FunctionName,
		Tags:                    tags,
	})
	if err != nil {
		return nil, err
	}
	hub := account{env: env}
	if cfg.Heartbeat.Enabled {
		if hub.beat, err = heartbeat.New(ctx, heartbeat.Name(cfg.NamePrefix), &heartbeat.Args{NamePrefix: cfg.NamePrefix, Env: env, Tags: tags}); err != nil {
			return nil, err
		}
	}
	accounts := map[string]account{env.Account: hub}
	for _, id := range cfg.MemberAccounts() {
		if accounts[id], err = declareMember(ctx, cfg, id, env, b, r, tags); err != nil {
			return nil, err
		}
	}
	if cfg.Dashboard {
		if _, err := dashboard.New(ctx, cfg.NamePrefix+"-dashboard", &dashboard.Args{
			Name: cfg.NamePrefix, Bus: cfg.NamePrefix, Namespace: contract.MetricsNamespace, Region: env.Region,
			CentralQueueName: b.CentralQueueName, DLQName: b.DLQName, FunctionName: r.FunctionName,
			Clusters: dashboardRows(cfg),
		}); err != nil {
			return nil, err
		}
	}
	queueNames, clusters := pulumi.StringMap{}, pulumi.Map{}
	for _, cl := range cfg.Clusters {
		acc := accounts[cl.Account]
		args := &cluster.Args{
			Cluster:       cl,
			QueueName:     queuename.For(cfg.QueuePrefix, cl.Name),
			PolicyName:    cfg.NamePrefix + "-interruption-queue",
			Env:           acc.env,
			Tags:          tags,
			RouterRoleARN: r.RoleARN,
			DeployRoleARN: acc.deployRole,
		}
		if cfg.IsMember(cl.Account) {
			args.HubAccount = env.Account
		}
		if acc.beat != nil {
			args.Heartbeat = &heartbeat.Cluster{
				Bus: cfg.NamePrefix, Group: acc.beat.GroupName, RoleARN: acc.beat.RoleARN, Rate: cfg.Heartbeat.Interval(),
				AlarmName: HeartbeatAlarmName(cfg.NamePrefix, cl.Name), AlarmActions: alarmActions(cfg, cl.Account), Env: acc.env,
			}
		}
		c, err := cluster.New(ctx, args, acc.opts...)
		if err != nil {
			return nil, err
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
			"account": pulumi.String(cl.Account),
		}
	}
	return map[string]pulumi.Input{
		"centralQueueUrl":    b.CentralQueueURL,
		"centralQueueArn":    b.CentralQueueARN,
		"deadLetterQueueUrl": b.DLQURL,
		"deadLetterQueueArn": b.DLQARN,
		"routerFunctionName": r.FunctionName,
		"routerRoleArn":      r.RoleARN,
		"redriveRoleArn":     b.RedriveRoleARN,
		"ruleArns":           b.RuleARNs,
		"alarmArns":          a.ARNs,
		"clusterQueuePrefix": pulumi.String(cfg.QueuePrefix),
		"busName":            pulumi.String(cfg.NamePrefix),
		"region":             pulumi.String(env.Region),
		"routerLogGroupName": r.LogGroupName,
		"clusterQueueNames":  queueNames,
		"clusters":           clusters,
	}, nil
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
	beat       *heartbeat.Heartbeat
	deployRole string
}

// declareMember declares a member account's provider and, through it, the account's part of the bus and its
// heartbeat's shared part.
func declareMember(ctx *pulumi.Context, cfg config.Config, id string, hubEnv awsenv.Env, b *bus.Bus, r *routerfn.Router, tags pulumi.StringMap) (account, error) {
	a := cfg.Accounts[id]
	p, err := aws.NewProvider(ctx, "account-"+id, &aws.ProviderArgs{
		Region:            pulumi.String(hubEnv.Region),
		AllowedAccountIds: pulumi.StringArray{pulumi.String(id)},
		AssumeRole:        &aws.ProviderAssumeRoleArgs{RoleArn: pulumi.String(a.DeployRoleARN), SessionName: pulumi.String("karpenter-interruption-bus")},
	})
	if err != nil {
		return account{}, fmt.Errorf("declaring the provider of account %s: %w", id, err)
	}
	env := hubEnv.In(id)
	opts := []pulumi.ResourceOption{pulumi.Providers(p)}
	centralARN := hubEnv.ARN("sqs", bus.CentralQueueName(cfg.NamePrefix))
	routerRoleARN := hubEnv.IAMARN("role/" + routerName(cfg)) // the router's role is named as its function
	if _, err := member.New(ctx, "account-"+id+"-bus", &member.Args{
		NamePrefix: cfg.NamePrefix, Env: env, HubCentralQueueARN: centralARN, HubRouterRoleARN: routerRoleARN,
		EventMaxAgeSeconds: cfg.CentralQueue.EventMaxAgeSeconds, AlarmActions: alarmActions(cfg, id), Tags: tags,
	}, append(opts, pulumi.DependsOn([]pulumi.Resource{b, r}))...); err != nil {
		return account{}, err
	}
	acc := account{env: env, opts: opts, deployRole: a.DeployRoleARN}
	if cfg.Heartbeat.Enabled {
		if acc.beat, err = heartbeat.New(ctx, "account-"+id+"-heartbeat", &heartbeat.Args{NamePrefix: cfg.NamePrefix, Env: env, Tags: tags}, opts...); err != nil {
			return account{}, err
		}
	}
	return acc, nil
}

// routerName names the router's function and its role.
func routerName(cfg config.Config) string { return cfg.NamePrefix + "-router" }

// memberRoleARNs are the ARNs of the role name(namePrefix) in every member account.
func memberRoleARNs(cfg config.Config, env awsenv.Env, name func(string) string) []string {
	var out []string
	for _, id := range cfg.MemberAccounts() {
		out = append(out, env.In(id).IAMARN("role/"+name(cfg.NamePrefix)))
	}
	return out
}

// RouterSettings are the router's settings for cfg: what becomes its environment, besides the central queue's
// URL, which the router component adds.
func RouterSettings(cfg config.Config, env awsenv.Env) contract.Settings {
	return contract.Settings{
		Account:            env.Account,
		MemberReaderRoles:  memberRoleARNs(cfg, env, member.ReaderRoleName),
		ClusterQueuePrefix: cfg.QueuePrefix,
		OwnerTagKeys:       cfg.Router.OwnerTagKeys,
		MetricsNamespace:   contract.MetricsNamespace,
		BusName:            cfg.NamePrefix,
		LogLevel:           cfg.Router.LogLevel,
		BusQueues:          []string{bus.CentralQueueName(cfg.NamePrefix), bus.DLQName(cfg.NamePrefix)},
	}
}

// stackConfig is the stack's configuration as the Pulumi SDK receives it ("<namespace>:<key>" to value), read
// whole so that keys the program does not know can be reported.
func stackConfig() (map[string]string, error) {
	values := map[string]string{}
	if raw := os.Getenv(pulumi.EnvConfig); raw != "" {
		if err := json.Unmarshal([]byte(raw), &values); err != nil {
			return nil, fmt.Errorf("reading the stack configuration from %s: %w", pulumi.EnvConfig, err)
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
		return fmt.Errorf("commands missing where pulumi runs (README, \"Prerequisites\"):\n  %s", strings.Join(missing, "\n  "))
	}
	return nil
}

// Tags go on every resource that takes them: the stack's own, then the configured ones.
func Tags(cfg config.Config) pulumi.StringMap {
	tags := pulumi.StringMap{
		"karpenter-interruption-bus/stack": pulumi.String(cfg.Stack),
		"managed-by":                       pulumi.String("pulumi"),
	}
	for k, v := range cfg.Tags {
		tags[k] = pulumi.String(v)
	}
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
