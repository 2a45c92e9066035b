package infra

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/heartbeat"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/preflight"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/shardplan"
)

// A fleet too large for one stack is split into shards (docs/deploying.md, "One stack or shards"): the hub, a stack
// of this program that declares the bus and its own clusters, and shards, stacks of this same program whose key
// hub names the hub, each declaring only its clusters. A shard declares a cluster exactly as the hub would, by the
// same names under the same parents, so a cluster moves between them by pulumi state move, changing nothing in AWS.

// The hub's outputs a shard reads: what joining its bus takes.
const (
	OutputAccount        = "account"
	OutputHeartbeatRate  = "heartbeatRate"
	OutputMemberBaseline = "memberBaseline"
	OutputAlarmTopic     = "alarmTopicArn"
)

// Where member accounts get their baseline (OutputMemberBaseline): the hub's StackSet, or the hub itself,
// through each listed account's provider.
const (
	BaselineStackSet  = "stackset"
	BaselineProviders = "providers"
)

// hubReferenceName is the logical name of a shard's stack reference to its hub.
const hubReferenceName = "hub"

// hubOutputs are the program's outputs a shard reads.
func hubOutputs(cfg config.Config, env awsenv.Env) map[string]pulumi.Input {
	baseline := BaselineProviders
	if cfg.Baselined() {
		baseline = BaselineStackSet
	}
	return map[string]pulumi.Input{
		OutputAccount:        pulumi.String(env.Account),
		OutputHeartbeatRate:  pulumi.String(heartbeatRate(cfg)),
		OutputMemberBaseline: pulumi.String(baseline),
		OutputAlarmTopic:     pulumi.String(cfg.Alarms.TopicARN),
	}
}

// hubJoin is what a shard read of its hub: the outputs it exports again, so that make verify runs on a shard as
// on the hub.
type hubJoin struct {
	ref            *pulumi.StackReference
	routerLogGroup string
	canaryInterval float64
}

func (h hubJoin) outputs(cfg config.Config, env awsenv.Env) map[string]pulumi.Input {
	return map[string]pulumi.Input{
		"hub": pulumi.String(cfg.Hub), "busName": pulumi.String(cfg.NamePrefix), "region": pulumi.String(env.Region),
		"clusterQueuePrefix": pulumi.String(cfg.QueuePrefix), "routerLogGroupName": pulumi.String(h.routerLogGroup),
		"canaryIntervalSeconds": pulumi.Int(int(h.canaryInterval)),
	}
}

// joinHub reads the hub a shard names and checks the shard against it, before anything but the reference is
// declared: the same bus name, region and account; clusters of member accounts only where the hub's StackSet
// gives every member the baseline (a shard declares none: the hub's own list of accounts would have to name
// them). It returns cfg with the hub's heartbeat.
func joinHub(ctx *pulumi.Context, cfg config.Config, env awsenv.Env) (config.Config, hubJoin, error) {
	ref, err := pulumi.NewStackReference(ctx, hubReferenceName, &pulumi.StackReferenceArgs{Name: pulumi.String(cfg.Hub)})
	if err != nil {
		return cfg, hubJoin{}, fmt.Errorf("hub: reading stack %s: %w", cfg.Hub, err)
	}
	out := map[string]string{}
	h := hubJoin{ref: ref}
	for _, k := range []string{"busName", "region", "routerLogGroupName", "canaryIntervalSeconds", OutputAccount, OutputHeartbeatRate, OutputMemberBaseline, OutputAlarmTopic} {
		d, err := ref.GetOutputDetails(k)
		if err != nil {
			return cfg, hubJoin{}, fmt.Errorf("hub: reading output %s of stack %s: %w", k, cfg.Hub, err)
		}
		if k == "canaryIntervalSeconds" {
			h.canaryInterval, _ = d.Value.(float64)
			continue
		}
		s, ok := d.Value.(string)
		if !ok {
			return cfg, hubJoin{}, fmt.Errorf("hub: stack %s has no output %s: it is not a hub of this program, or was never updated "+
				"with this version (run pulumi up in it first)", cfg.Hub, k)
		}
		out[k] = s
	}
	h.routerLogGroup = out["routerLogGroupName"]
	var problems []string
	if out["busName"] != cfg.NamePrefix {
		problems = append(problems, fmt.Sprintf("namePrefix: %q, but the bus of hub %s is %q: a shard's namePrefix is its hub's", cfg.NamePrefix, cfg.Hub, out["busName"]))
	}
	if out["region"] != env.Region {
		problems = append(problems, fmt.Sprintf("hub: %s is in %s, this stack in %s: a shard runs in its hub's region", cfg.Hub, out["region"], env.Region))
	}
	if out[OutputAccount] != env.Account {
		problems = append(problems, fmt.Sprintf("hub: %s runs in account %s, this stack in %s: a shard runs in its hub's account", cfg.Hub, out[OutputAccount], env.Account))
	}
	if out[OutputMemberBaseline] != BaselineStackSet {
		for i, cl := range cfg.Clusters {
			if cfg.IsMember(cl.Account) {
				problems = append(problems, fmt.Sprintf("clusters[%d].account: %s is a member account, and hub %s gives members their baseline "+
					"through its own list of accounts, not organization.memberOUs: keep the account's clusters in the hub, or give the "+
					"hub organization.memberOUs", i, cl.Account, cfg.Hub))
			}
		}
	}
	if len(problems) > 0 {
		return cfg, hubJoin{}, &config.Error{Problems: problems}
	}
	// What the hub's configuration says of its clusters, a shard's say too: the heartbeat, and the topic the
	// heartbeat alarms of the hub's account notify.
	cfg.Heartbeat = config.Heartbeat{Enabled: out[OutputHeartbeatRate] != "", Rate: out[OutputHeartbeatRate]}
	cfg.Alarms.TopicARN = out[OutputAlarmTopic]
	return cfg, h, nil
}

// shardBeats gives each account of a shard the heartbeat's shared part the hub (or its StackSet) declares there,
// by its fixed names.
func shardBeats(cfg config.Config, accounts map[string]account) {
	if !cfg.Heartbeat.Enabled {
		return
	}
	for id, acc := range accounts {
		acc.beat = &beat{group: pulumi.String(heartbeat.Name(cfg.NamePrefix)), role: pulumi.String(heartbeatRoleARN(cfg, acc.env))}
		accounts[id] = acc
	}
}

// checkSize refuses, before anything is declared, a stack whose provider processes would take more than its
// budget (providerBudgetMB, by default what a standard CI runner holds): the preview would not finish there. The
// refusal names the stack's size, the limit, the command that plans the split and the key a larger machine raises.
func checkSize(cfg config.Config) error {
	s := shardplan.Of(cfg)
	if s.Fits(cfg.ProviderBudgetMB) {
		return nil
	}
	aws, kubernetes, _ := s.Counts()
	var what []string
	if members := aws - 1; members > 0 {
		what = append(what, fmt.Sprintf("%d member accounts", members))
	}
	if kubernetes > 0 {
		what = append(what, fmt.Sprintf("%d clusters with Karpenter installed", kubernetes))
	}
	return &config.Error{Problems: []string{fmt.Sprintf("clusters: this stack starts %d provider processes in one preview (%s, one "+
		"provider each, and the stack's own), about %.1f GB with pulumi-aws at %d MB and pulumi-kubernetes at %d MB a process: "+
		"past providerBudgetMB, %d MB (%s). Split it into shards: make shards STACK=%s prints the shards' configurations and the "+
		"pulumi state move commands that move each cluster without touching AWS (docs/deploying.md, \"One stack or shards\"); "+
		"where previews and updates run on a machine with more memory, raise providerBudgetMB instead",
		s.Providers(), strings.Join(what, " and "), float64(s.MemoryMB())/1024, shardplan.AWSProviderMB, shardplan.KubernetesProviderMB,
		cfg.ProviderBudgetMB, budgetWhy(cfg.ProviderBudgetMB), cfg.Stack)}}
}

func budgetWhy(mb int) string {
	if mb == config.DefaultProviderBudgetMB {
		return "the default: a standard CI runner's 16 GB, less 2 GB for the CLI and the program"
	}
	return "this stack's"
}

// movedIn completes what the last update says of the clusters this stack took from another by pulumi state move:
// their state came along, their record in the outputs did not, and without it the preflight would take a moved
// cluster's roles, which exist, for what a removed cluster left, and adopt them again. The record is the source
// stack's (the cluster's movedFrom, or, in a shard, its hub), in the clusters it deployed or, once that stack was
// updated without it, in those it retained. A cluster whose podIdentityAssociationId is set is adopted as the
// configuration asks.
func movedIn(ctx *pulumi.Context, cfg config.Config, hub hubJoin, before *preflight.Last) error {
	// What each source stack deployed and retained, read once per source, not once per cluster.
	type record struct {
		deployed map[string]config.Deployed
		retained map[string]string
	}
	records := map[string]record{}
	read := func(source string) (record, error) {
		if r, ok := records[source]; ok {
			return r, nil
		}
		ref := hub.ref
		if ref == nil || source != cfg.Hub {
			var err error
			if ref, err = pulumi.NewStackReference(ctx, "moved-from-"+source, &pulumi.StackReferenceArgs{Name: pulumi.String(source)}); err != nil {
				return record{}, fmt.Errorf("movedFrom: reading stack %s: %w", source, err)
			}
		}
		deployed, err := ref.GetOutputDetails("clusters")
		if err != nil {
			return record{}, fmt.Errorf("reading the clusters of stack %s: %w", source, err)
		}
		retained, err := ref.GetOutputDetails(OutputRetainedClusters)
		if err != nil {
			return record{}, fmt.Errorf("reading what stack %s retained: %w", source, err)
		}
		r := record{deployed: config.DeployedClusters(deployed.Value), retained: retainedAssociations(retained.Value)}
		records[source] = r
		return r, nil
	}
	for _, cl := range cfg.Clusters {
		if _, known := before.Deployed[cl.Name]; known || cl.Karpenter.PodIdentityAssociationID != "" {
			continue
		}
		source := cmp.Or(cl.MovedFrom, cfg.Hub)
		if source == "" {
			continue
		}
		r, err := read(source)
		if err != nil {
			return fmt.Errorf("cluster %s: %w", cl.Name, err)
		}
		if d, ok := r.deployed[cl.Name]; ok {
			before.Deployed[cl.Name] = d
		} else if id, ok := r.retained[cl.Name]; ok {
			before.Deployed[cl.Name] = config.Deployed{Mode: cl.Mode, Namespace: cl.Karpenter.Namespace, PodIdentityAssociationID: id}
		} else if cl.MovedFrom != "" {
			return fmt.Errorf("clusters: %s has movedFrom %s, whose last update neither deployed nor retained it: is it the stack "+
				"pulumi state move took it from?", cl.Name, source)
		}
	}
	return nil
}
