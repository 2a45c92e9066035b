package preflight

import (
	"fmt"
	"slices"
	"strings"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/bus"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/routerfn"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/layout"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/quota"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/standin"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// hubQuotas refuses, before anything is declared, what the hub's configuration makes too large for a quota AWS
// enforces at create time: a list of member accounts (memberQuotas), and the redrive role's trust, which names
// every principal of redrive.principals. A figure made of a value unknown at a preview (held by marks: a stand-in,
// not the value) is the update's to judge, before anything is declared there.
func hubQuotas(cfg config.Config, env awsenv.Env, marks standin.Marks) error {
	var problems []config.Problem
	for i, arn := range cfg.Redrive.Principals {
		if marks.Holds(arn) {
			continue
		}
		// IAM refuses a principal of another partition only when the role is created or assumed: say so now.
		if p := strings.SplitN(arn, ":", 3); len(p) == 3 && p[1] != env.Partition {
			problems = append(problems, config.Problemf(fmt.Sprintf("redrive.principals[%d]", i), "%q is of partition %s, and the stack deploys into %s: a role's trust "+
				"names principals of its own partition only (\"IAM identifiers\", ARNs, https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html)",
				arn, p[1], env.Partition))
		}
	}
	if n := len(cfg.Redrive.Principals); n > 0 && !slices.ContainsFunc(cfg.Redrive.Principals, marks.Holds) {
		q := quota.IAMTrustPolicy
		q.Limit = cfg.Redrive.TrustPolicyLimit
		f := quota.Figure{Quota: q, Value: quota.IAMSize(bus.RedriveTrust(cfg.Redrive.Principals).JSON())}
		if f.Over() {
			raise := fmt.Sprintf("; or, once AWS raised the account's quota \"Role trust policy length\" (at most %d), set redrive.trustPolicyLimit to it", config.MaxTrustPolicyLimit)
			if q.Limit >= config.MaxTrustPolicyLimit {
				raise = ""
			}
			problems = append(problems, config.Problemf("redrive.principals", "%d principals make the redrive role's trust policy %d characters, over the "+
				"account's %d (redrive.trustPolicyLimit; %s): name fewer, such as one role the others may assume%s", n, f.Value, q.Limit, q.Doc, raise))
		}
	}
	if len(problems) > 0 {
		return &config.Error{Problems: problems}
	}
	if marks.Holds(cfg.NamePrefix) {
		return nil // the documents name roles and queues after it
	}
	return memberQuotas(cfg, env)
}

// memberQuotas refuses, before anything is declared, a list of member accounts (accounts, without
// organization) that makes a hub document pass a quota AWS enforces at create time (MemberQuotaFigures). With
// organization.id the documents name the organization instead, and grow with nothing.
func memberQuotas(cfg config.Config, env awsenv.Env) error {
	if cfg.IsOrganization() || len(cfg.MemberAccounts()) == 0 {
		return nil
	}
	var over []string
	for _, f := range MemberQuotaFigures(cfg, env) {
		if f.Over() {
			over = append(over, fmt.Sprintf("%d %s (the hub's), over %d (%s)", f.Value, f.Quota.What, f.Quota.Limit, f.Quota.Doc))
		}
	}
	if len(over) == 0 {
		return nil
	}
	return &config.Error{Problems: []config.Problem{config.Problemf("accounts", "%d member accounts, listed one by one, make %s. Set organization.id to "+
		"admit the members by their organization instead: the hub's policies then name the organization, and grow with "+
		"no member (docs/organization.md, \"An organization of any size\")", len(cfg.MemberAccounts()), strings.Join(over, "; "))}}
}

// MemberQuotaFigures measure, before anything is declared, the hub's documents that grow with a list of member
// accounts, whole, as the stack will declare them: the central queue's policy names every member's forwarder role;
// the router's environment (the central and quarantine queues' URLs included) and its role's policy every member's reader role.
// Each figure is at least what AWS will measure (TestMemberQuotaFiguresCoverWhatIsDeclared).
func MemberQuotaFigures(cfg config.Config, env awsenv.Env) []quota.Figure {
	settings := layout.RouterSettings(cfg, env)
	// The URL SQS gives the central queue (the environment carries it), with the longest DNS suffix, China's: on
	// the safe side.
	settings.CentralQueueURL = fmt.Sprintf("https://sqs.%s.amazonaws.com.cn/%s/%s", env.Region, env.Account, bus.CentralQueueName(cfg.NamePrefix))
	settings.QuarantineQueueURL = fmt.Sprintf("https://sqs.%s.amazonaws.com.cn/%s/%s", env.Region, env.Account, bus.QuarantineName(cfg.NamePrefix))
	settings.DeadLetterQueueURL = fmt.Sprintf("https://sqs.%s.amazonaws.com.cn/%s/%s", env.Region, env.Account, bus.DLQName(cfg.NamePrefix))
	// The seal key's ARN and the archive's name are AWS's to choose: a multi-Region key's ID, and S3's longest name.
	settings.SealKey = env.ARN("kms", "key/mrk-"+strings.Repeat("0", 32))
	settings.ArchiveBucket = strings.Repeat("a", 63)
	routerPolicy := routerfn.Policy(env, settings, routerfn.Queues{
		Central: env.ARN("sqs", bus.CentralQueueName(cfg.NamePrefix)), Quarantine: env.ARN("sqs", bus.QuarantineName(cfg.NamePrefix)),
		DLQ: env.ARN("sqs", bus.DLQName(cfg.NamePrefix)),
	}, routerfn.Evidence{SealKey: settings.SealKey, Archive: "arn:" + env.Partition + ":s3:::" + settings.ArchiveBucket}, "/aws/lambda/"+layout.RouterName(cfg)).JSON()
	figures := quota.SQSPolicy(bus.CentralPolicyOf(env, cfg.NamePrefix, layout.Forwarders(cfg, env), cfg.CentralQueue.ByPolicy(), len(cfg.Redrive.Principals) > 0).JSON())
	return append(figures,
		quota.Figure{Quota: quota.LambdaEnvironmentBytes, Value: contract.EnvironSize(settings.Environ())},
		quota.Figure{Quota: quota.IAMInlinePolicies, Value: quota.IAMSize(routerPolicy)},
	)
}
