package infra

import (
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/heartbeat"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/layout"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/preflight"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/outputs"
)

// A fleet too large for one stack is split into shards (docs/deploying.md, "One stack or shards"): the hub, a stack
// of this program that declares the bus and its own clusters, and shards, stacks of this same program whose key
// hub names the hub, each declaring only its clusters. A shard declares a cluster exactly as the hub would, by the
// same names under the same parents, so a cluster moves between them by pulumi state move, changing nothing in AWS.

// hubOutputs are the hub's outputs: the shared part's, and what its shards and make verify read.
func hubOutputs(sh shared, cfg config.Config, env awsenv.Env) Outputs {
	out := sh.outputs(cfg, env)
	out.MemberBaseline = pulumi.String(outputs.BaselineProviders)
	if cfg.Baselined() {
		out.MemberBaseline = pulumi.String(outputs.BaselineStackSet)
	}
	out.AlarmTopicARN = pulumi.String(cfg.Alarms.TopicARN)
	out.CanaryIntervalSeconds = pulumi.Int(cfg.Router.CanaryIntervalSeconds)
	out.HubDelivery = pulumi.String(cfg.CentralQueue.HubDelivery)
	return out
}

// shardOutputs are a shard's outputs: what it read of its hub, so that make verify runs on a shard as on the hub; a
// secret of the hub's stays one.
func shardOutputs(h preflight.Hub, cfg config.Config, env awsenv.Env) Outputs {
	return Outputs{
		Hub: pulumi.String(cfg.Hub),
		Join: joinOutputs{
			BusName: pulumi.String(cfg.NamePrefix), Region: pulumi.String(env.Region), ClusterQueuePrefix: pulumi.String(cfg.QueuePrefix),
			RouterLogGroupName:    again(&h, &h.RouterLogGroupName, pulumi.StringInput(pulumi.String(h.RouterLogGroupName))),
			CanaryIntervalSeconds: again(&h, &h.CanaryIntervalSeconds, pulumi.IntInput(pulumi.Int(h.CanaryIntervalSeconds))),
		},
	}
}

// again is v, what a shard exports again of its hub's output field (its address in h): a secret when the hub's is.
func again[T pulumi.Input](h *preflight.Hub, field any, v T) T {
	for _, name := range outputs.Fields(&h.Join, field) {
		if h.Secret[name] {
			return pulumi.ToSecret(v).(T)
		}
	}
	return v
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
