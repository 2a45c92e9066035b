// Package layout is what the configuration makes of the stack's shared part before any of it is declared: the
// names and ARNs of the router, its role and the heartbeat's role, who forwards to the central queue, and the router's
// settings. The program declares by it (package infra) and the preflight measures by it (package preflight), so what
// is measured is what is declared. The stack's outputs are package outputs'.
package layout

import (
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/bus"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/heartbeat"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/member"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/iamname"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// RouterName names the router's function and its log group.
func RouterName(cfg config.Config) string { return cfg.NamePrefix + "-router" }

// RouterRoleName names the router's role in region: as its function, with the region (iamname).
func RouterRoleName(cfg config.Config, region string) string {
	return iamname.OfPrefix(cfg.NamePrefix, "router", region)
}

// RouterRoleARN is the ARN of the router's role in hubEnv.
func RouterRoleARN(cfg config.Config, hubEnv awsenv.Env) string {
	return hubEnv.IAMARN("role/" + RouterRoleName(cfg, hubEnv.Region))
}

// HeartbeatRoleARN is the ARN of the role the heartbeat's schedules put canaries with in env, by its fixed name.
func HeartbeatRoleARN(cfg config.Config, env awsenv.Env) string {
	return env.IAMARN("role/" + heartbeat.RoleName(cfg.NamePrefix, env.Region))
}

// DashboardName names the bus's dashboard in region: CloudWatch's dashboards are one namespace for the whole account
// ("All dashboards in your account are global, not region-specific", AWS::CloudWatch::Dashboard,
// https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-resource-cloudwatch-dashboard.html), and a
// bus of each region (one prefix, one stack per region, or two Buses) would otherwise write the one dashboard.
func DashboardName(namePrefix, region string) string { return namePrefix + "-" + region }

// HeartbeatAlarmName names a cluster's heartbeat alarm.
func HeartbeatAlarmName(namePrefix, cluster string) string {
	return namePrefix + "-" + cluster + "-karpenter-not-reading"
}

// memberRoleARNs are the ARNs of the role name(namePrefix) in every member account.
func memberRoleARNs(cfg config.Config, env awsenv.Env, name func(namePrefix, region string) string) []string {
	var out []string
	for _, id := range cfg.MemberAccounts() {
		out = append(out, env.In(id).IAMARN("role/"+name(cfg.NamePrefix, env.Region)))
	}
	return out
}

// RouterSettings are the router's settings for cfg: what becomes its environment, besides the queues' URLs, the
// seal key and the archive, which the router component adds.
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

// Forwarders are who may send to the central queue besides the stack's rules: the members' forwarder roles, by
// organization or one by one.
func Forwarders(cfg config.Config, env awsenv.Env) bus.Forwarders {
	if cfg.IsOrganization() {
		return bus.Forwarders{OrgID: cfg.Organization.ID, RoleName: member.ForwarderRoleName(cfg.NamePrefix, env.Region)}
	}
	return bus.Forwarders{ARNs: memberRoleARNs(cfg, env, member.ForwarderRoleName)}
}
