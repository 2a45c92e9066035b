package infra

import (
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/heartbeat"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/layout"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/preflight"
)

// A fleet too large for one stack is split into shards (docs/deploying.md, "One stack or shards"): the hub, a stack
// of this program that declares the bus and its own clusters, and shards, stacks of this same program whose key
// hub names the hub, each declaring only its clusters. A shard declares a cluster exactly as the hub would, by the
// same names under the same parents, so a cluster moves between them by pulumi state move, changing nothing in AWS.

// hubOutputs are the program's outputs a shard reads.
func hubOutputs(cfg config.Config, env awsenv.Env) map[string]pulumi.Input {
	baseline := layout.BaselineProviders
	if cfg.Baselined() {
		baseline = layout.BaselineStackSet
	}
	return map[string]pulumi.Input{
		layout.OutputAccount:        pulumi.String(env.Account),
		layout.OutputHeartbeatRate:  pulumi.String(heartbeatRate(cfg)),
		layout.OutputMemberBaseline: pulumi.String(baseline),
		layout.OutputAlarmTopic:     pulumi.String(cfg.Alarms.TopicARN),
	}
}

// shardOutputs are a shard's outputs: what it read of its hub, so that make verify runs on a shard as on the hub.
func shardOutputs(h preflight.Hub, cfg config.Config, env awsenv.Env) map[string]pulumi.Input {
	return map[string]pulumi.Input{
		"hub": pulumi.String(cfg.Hub), "busName": pulumi.String(cfg.NamePrefix), "region": pulumi.String(env.Region),
		"clusterQueuePrefix": pulumi.String(cfg.QueuePrefix), "routerLogGroupName": pulumi.String(h.RouterLogGroup),
		"canaryIntervalSeconds": pulumi.Int(int(h.CanaryInterval)),
	}
}

// shardBeats gives each account of a shard the heartbeat's shared part the hub (or its StackSet) declares there,
// by its fixed names.
func shardBeats(cfg config.Config, accounts map[string]account) {
	if !cfg.Heartbeat.Enabled {
		return
	}
	for id, acc := range accounts {
		acc.beat = &beat{group: pulumi.String(heartbeat.Name(cfg.NamePrefix)), role: pulumi.String(layout.HeartbeatRoleARN(cfg, acc.env))}
		accounts[id] = acc
	}
}
