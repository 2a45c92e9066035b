package judge

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/karpenter"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/harness"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/sqsemu"
	kp "github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/karpenter/karpenter"
)

// Member is the member account of the cases' fleet: its cluster's queue and instances live there, its events
// carry its account, and the router reads its tags through its reader role (the STS stub).
const Member = "210987654321"

// casesSpec is the fleet every case starts from: two clusters in the bus's account, one in a member account, each
// with two instances of each capacity type (the same offerings in every cluster).
var casesSpec = Spec{Hub: []string{"alpha", "beta"}, Members: map[string][]string{Member: {"gamma"}}, Instances: 6}

// A Case publishes events about some of the fleet's instances; every instance it names (its targets) should be
// acted on by its own cluster's controller as Karpenter acts on Kind, and nothing else anywhere.
type Case struct {
	Name string
	Kind contract.Kind
	// Events returns the bodies to publish and the instances they name that belong to a cluster.
	Events func(f *Fleet) (bodies []string, targets []Instance)
}

// pick is the n-th instance of capacity type capacity in cluster.
func pick(f *Fleet, cluster, capacity string, n int) Instance {
	for _, in := range f.Cluster(cluster).Instances {
		if in.Capacity == capacity {
			if n == 0 {
				return in
			}
			n--
		}
	}
	panic(fmt.Sprintf("no %s instance %d in %s", capacity, n, cluster))
}

// one is a case of one EC2 event about one instance.
func one(name string, kind contract.Kind, cluster, capacity string, event func(id, account string) string) Case {
	return Case{Name: name, Kind: kind, Events: func(f *Fleet) ([]string, []Instance) {
		in := pick(f, cluster, capacity, 0)
		return []string{event(in.ID, f.Owner(in.ID).Account)}, []Instance{in}
	}}
}

// Cases are the interruption kinds the bus forwards, each about instances of one cluster (the Health event:
// of two), then events that no controller may act on.
var Cases = []Case{
	one("spot warning", contract.KindSpotInterruption, "alpha", Spot, SpotWarning),
	one("rebalance recommendation", contract.KindRebalanceRecommendation, "beta", Spot, Rebalance),
	one("stopping, in a member account", contract.KindStateChange, "gamma", OnDemand, StateChange("stopping")),
	one("stopped", contract.KindStateChange, "alpha", OnDemand, StateChange("stopped")),
	one("shutting-down", contract.KindStateChange, "beta", Reserved, StateChange("shutting-down")),
	one("terminated", contract.KindStateChange, "gamma", Spot, StateChange("terminated")),
	one("capacity reservation interruption", contract.KindCapacityReservationInterruption, "alpha", Reserved, ReservationWarning),
	{Name: "scheduled change naming instances of two clusters", Kind: contract.KindScheduledChange, Events: func(f *Fleet) ([]string, []Instance) {
		a, b := pick(f, "alpha", OnDemand, 1), pick(f, "beta", Spot, 1)
		return []string{ScheduledChange(sqsemu.Account, a.ID, b.ID)}, []Instance{a, b}
	}},
	{Name: "an instance of no cluster", Kind: contract.KindSpotInterruption, Events: func(*Fleet) ([]string, []Instance) {
		return []string{SpotWarning("i-0fffffffffffffff0", sqsemu.Account)}, nil
	}},
	{Name: "a canary", Kind: contract.KindCanary, Events: func(*Fleet) ([]string, []Instance) {
		return []string{Canary("alpha", "beta")}, nil
	}},
}

// deletes reports whether Karpenter deletes the NodeClaim of an instance an event of kind names (its action
// CordonAndDrain), and reports reports whether it publishes an event about it: every version's
// actionForMessage and notifyForMessage, for the kinds it parses.
func deletes(kind contract.Kind) bool {
	return kind != contract.KindRebalanceRecommendation
}

// marks reports whether an event of kind marks the offering of a target of capacity type capacity unavailable
// in its cluster's caches: a Spot warning the Spot offering, a capacity reservation interruption the
// reservation.
func marks(kind contract.Kind, capacity string) bool {
	return kind == contract.KindSpotInterruption && capacity == Spot ||
		kind == contract.KindCapacityReservationInterruption && capacity == Reserved
}

// Want is the state every instance of the fleet should end in after c, with Karpenter v.
func (c Case) Want(v karpenter.Version, f *Fleet, targets []Instance) map[string]map[string]State {
	acts := karpenter.Acts(v, c.Kind)
	out := map[string]map[string]State{}
	for _, cl := range f.Clusters {
		out[cl.Name] = map[string]State{}
		for _, in := range cl.Instances {
			var s State
			for _, t := range targets {
				if !acts || f.Owner(t.ID) != cl {
					continue
				}
				if t.ID == in.ID {
					s.Deleting = deletes(c.Kind)
					s.Reported = true
				}
				if marks(c.Kind, t.Capacity) && t.Offering() == in.Offering() {
					s.Unavailable = true
				}
			}
			out[cl.Name][in.ID] = s
		}
	}
	return out
}

// Run runs every case against the controllers of the Karpenter the working directory's module pins, built by
// build, on a fresh fleet each, with the router binary router ("" for the router's handler in this process).
func Run(t *testing.T, build Build, router string) {
	pinned, _, err := kp.Pinned(".")
	if err != nil {
		t.Fatal(err)
	}
	v, err := karpenter.Parse(pinned)
	if err != nil {
		t.Fatal(err)
	}
	// The member account is admitted both ways a hub admits members: listed (its reader role in the router's
	// environment) and by organization (the router derives the role from the event's account).
	for _, admitted := range []struct{ name, organization string }{{"listed member", ""}, {"organization", "o-a1b2c3d4e5"}} {
		t.Run(admitted.name, func(t *testing.T) {
			for _, c := range Cases {
				t.Run(c.Name, func(t *testing.T) { runCase(t, v, c, build, router, admitted.organization) })
			}
		})
	}
}

// runCase runs c on a fresh fleet and reads the whole fleet afterwards.
func runCase(t *testing.T, v karpenter.Version, c Case, build Build, router, organization string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	spec := casesSpec
	spec.Router, spec.Organization = router, organization
	f, err := NewFleet(ctx, spec, build)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bodies, targets := c.Events(f)
	if err := f.Bus.Publish(ctx, bodies...); err != nil {
		t.Fatal(err)
	}
	if err := f.Settle(ctx, 20); err != nil {
		t.Fatalf("%v\nrouter stderr: %s", err, f.Bus.StderrText())
	}
	got, err := f.States(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := c.Want(v, f, targets)
	for _, cl := range f.Clusters {
		for _, in := range cl.Instances {
			if g, w := got[cl.Name][in.ID], want[cl.Name][in.ID]; g != w {
				t.Errorf("%s's %s instance %s: %s, want %s", cl.Name, in.Capacity, in.ID, g, w)
			}
		}
	}
	left, err := f.Left(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("messages left behind: %v", left)
	}
	if drops := f.Bus.Drops(); c.Kind != contract.KindCanary && len(targets) > 0 && len(drops) > 0 {
		t.Errorf("the router dropped %v", slices.Collect(maps.Keys(drops)))
	}
}

var eventSeq int

// envelope is an EventBridge event of account, with a fresh id.
func envelope(detailType, source, account string, resources []string, detail string) string {
	eventSeq++
	return fmt.Sprintf(`{"version":"0","id":"judge-%d","detail-type":%q,"source":%q,"account":%q,"time":%q,"region":%q,"resources":[%s],"detail":%s}`,
		eventSeq, detailType, source, account, time.Now().UTC().Format(time.RFC3339), sqsemu.Region, quoted(resources), detail)
}

func quoted(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ",")
}

func instanceARN(account, id string) []string {
	return []string{"arn:aws:ec2:" + sqsemu.Region + ":" + account + ":instance/" + id}
}

// SpotWarning is EC2's Spot Instance Interruption Warning for instance id of account.
func SpotWarning(id, account string) string {
	return envelope("EC2 Spot Instance Interruption Warning", "aws.ec2", account, instanceARN(account, id),
		fmt.Sprintf(`{"instance-id":%q,"instance-action":"terminate"}`, id))
}

// Rebalance is EC2's Instance Rebalance Recommendation.
func Rebalance(id, account string) string {
	return envelope("EC2 Instance Rebalance Recommendation", "aws.ec2", account, instanceARN(account, id),
		fmt.Sprintf(`{"instance-id":%q}`, id))
}

// StateChange is EC2's Instance State-change Notification for state.
func StateChange(state string) func(id, account string) string {
	return func(id, account string) string {
		return envelope("EC2 Instance State-change Notification", "aws.ec2", account, instanceARN(account, id),
			fmt.Sprintf(`{"instance-id":%q,"state":%q}`, id, state))
	}
}

// ReservationWarning is EC2's Capacity Reservation Instance Interruption Warning.
func ReservationWarning(id, account string) string {
	return envelope("EC2 Capacity Reservation Instance Interruption Warning", "aws.ec2", account, instanceARN(account, id),
		fmt.Sprintf(`{"instance-id":%q,"instance-action":"terminate"}`, id))
}

// ScheduledChange is an AWS Health scheduled change (an instance retirement) affecting ids of account.
func ScheduledChange(account string, ids ...string) string {
	entities := make([]string, len(ids))
	for i, id := range ids {
		entities[i] = fmt.Sprintf(`{"entityValue":%q}`, id)
	}
	return envelope("AWS Health Event", "aws.health", account, ids, `{"eventArn":"arn:aws:health:`+sqsemu.Region+
		`::event/EC2/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED/judge","service":"EC2","eventTypeCode":"AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED",`+
		`"eventTypeCategory":"scheduledChange","affectedEntities":[`+strings.Join(entities, ",")+`]}`)
}

// Canary is the bus's canary naming clusters, put in the bus's account (as make verify and the heartbeat do).
func Canary(clusters ...string) string {
	return envelope(contract.DetailTypeCanary, contract.SourceCanary, sqsemu.Account,
		[]string{"arn:aws:scheduler:" + sqsemu.Region + ":" + sqsemu.Account + ":schedule/" + harness.NamePrefix + "-heartbeat/judge"},
		fmt.Sprintf(`{"bus":%q,"clusters":[%s]}`, harness.NamePrefix, quoted(clusters)))
}
