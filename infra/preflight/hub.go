package preflight

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/previous"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/outputs"
)

// HubReferenceName is the logical name of a shard's stack reference to its hub.
const HubReferenceName = "hub"

// Hub is what a shard read of its hub: what joining its bus takes, part of which the shard exports again, so that
// make verify runs on a shard as on the hub.
type Hub struct {
	ref *pulumi.StackReference
	outputs.Join[string, int]
	// Secret names the hub's outputs that are secrets, which the shard exports again as secrets.
	Secret map[string]bool
}

// joinHub reads the hub a shard names and checks the shard against it, before anything but the reference is
// declared: the same bus name, region and account; clusters of member accounts only where the hub's StackSet
// gives every member the baseline (a shard declares none: the hub's own list of accounts would have to name
// them). It returns cfg with the hub's heartbeat.
func joinHub(ctx *pulumi.Context, cfg config.Config, env awsenv.Env) (config.Config, Hub, error) {
	ref, err := pulumi.NewStackReference(ctx, HubReferenceName, &pulumi.StackReferenceArgs{Name: pulumi.String(cfg.Hub)})
	if err != nil {
		return cfg, Hub{}, fmt.Errorf("hub: reading stack %s: %w", cfg.Hub, err)
	}
	h := Hub{ref: ref, Secret: map[string]bool{}}
	missing, err := outputs.Decode(previous.Reader(ref, h.Secret), &h.Join)
	if err != nil {
		return cfg, Hub{}, fmt.Errorf("hub: stack %s: %w", cfg.Hub, err)
	}
	// What a shard does without: the queues' prefix, which it makes of its own namePrefix (the hub's, checked
	// below), and the canary interval, which hubs before 0.4.0 did not export (make verify then takes the router's).
	optional := outputs.Fields(&h.Join, &h.ClusterQueuePrefix, &h.CanaryIntervalSeconds)
	missing = slices.DeleteFunc(missing, func(name string) bool { return slices.Contains(optional, name) })
	if len(missing) > 0 {
		return cfg, Hub{}, fmt.Errorf("hub: stack %s has no output %s: it is not a hub of this program, or was never updated "+
			"with this version (run pulumi up in it first)", cfg.Hub, strings.Join(missing, ", "))
	}
	out := h.Join
	var problems []config.Problem
	if out.BusName != cfg.NamePrefix {
		problems = append(problems, config.Problemf("namePrefix", "%q, but the bus of hub %s is %q: a shard's namePrefix is its hub's", cfg.NamePrefix, cfg.Hub, out.BusName))
	}
	if out.Region != env.Region {
		problems = append(problems, config.Problemf("hub", "%s is in %s, this stack in %s: a shard runs in its hub's region", cfg.Hub, out.Region, env.Region))
	}
	if out.Account != env.Account {
		problems = append(problems, config.Problemf("hub", "%s runs in account %s, this stack in %s: a shard runs in its hub's account", cfg.Hub, out.Account, env.Account))
	}
	if out.MemberBaseline != outputs.BaselineStackSet {
		for i, cl := range cfg.Clusters {
			if cfg.IsMember(cl.Account) {
				problems = append(problems, config.Problemf(fmt.Sprintf("clusters[%d].account", i), "%s is a member account, and hub %s gives members their baseline "+
					"through its own list of accounts, not organization.memberOUs: keep the account's clusters in the hub, or give the "+
					"hub organization.memberOUs", cl.Account, cfg.Hub))
			}
		}
	}
	if len(problems) > 0 {
		return cfg, Hub{}, &config.Error{Problems: problems}
	}
	// What the hub's configuration says of its clusters, a shard's say too: the heartbeat, and the topic the
	// heartbeat alarms of the hub's account notify.
	cfg.Heartbeat = config.Heartbeat{Enabled: out.HeartbeatRate != "", Rate: out.HeartbeatRate}
	cfg.Alarms.TopicARN = out.AlarmTopicARN
	return cfg, h, nil
}

// movedIn completes what the last update says of the clusters this stack took from another by pulumi state move:
// their state came along, their record in the outputs did not, and without it the preflight would take a moved
// cluster's roles, which exist, for what a removed cluster left, and adopt them again. The record is the source
// stack's (the cluster's movedFrom, or, in a shard, its hub), in the clusters it deployed or, once that stack was
// updated without it, in those it retained. A cluster whose podIdentityAssociationId is set is adopted as the
// configuration asks.
func movedIn(ctx *pulumi.Context, cfg config.Config, hub Hub, before *Last) error {
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
		var last outputs.Record[map[string]string, map[string]outputs.ReadCluster]
		if _, err := outputs.Decode(previous.Reader(ref, nil), &last); err != nil {
			return record{}, fmt.Errorf("reading the clusters of stack %s: %w", source, err)
		}
		r := record{deployed: config.DeployedClusters(last.Clusters), retained: last.RetainedPodIdentityAssociations}
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
