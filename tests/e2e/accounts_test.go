package e2e

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/ec2stub"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/harness"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/sqsemu"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/karpenter/karpenter"
)

const (
	memberA = "222222222222"
	memberB = "333333333333"
)

// spotIn is a spot interruption warning of instance id in account, as that account's default bus has it.
func spotIn(account, id string) string {
	return strings.Replace(spotEvent(id), `"account":"`+sqsemu.Account+`"`, `"account":"`+account+`"`, 1)
}

// TestOrganization runs the router binary as a hub with two member accounts: SQS queues in three accounts, STS
// issuing each member's reader role, EC2 answering each account's credentials with that account's instances.
// Every event reaches the owning cluster's queue in its own account, read by Karpenter's parser with that
// account's credentials; an event of an account not on the bus is dropped; a failed AssumeRole is retried, not
// dropped; and the AWS requests are exact: one AssumeRole per member for as long as its credentials last, one
// DescribeInstances per account on a cold cache, none on a warm one.
func TestOrganization(t *testing.T) {
	b, stderr := routerBinaryWith(t, harness.Options{
		Clusters: []string{"alpha"}, Members: map[string][]string{memberA: {"beta"}, memberB: {"gamma"}}, RetryDelay: time.Second,
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("router stderr: %s", stderr.String())
		}
	})
	const i1, i2, i3, i4 = "i-0a1b2c3d4e5f60001", "i-0a1b2c3d4e5f60002", "i-0a1b2c3d4e5f60003", "i-0a1b2c3d4e5f60004"
	owner := func(c string) map[string]string { return map[string]string{"eks:eks-cluster-name": c} }
	b.EC2.PutIn(ec2stub.Account, i1, owner("alpha"))
	b.EC2.PutIn(ec2stub.Account, i2, owner("alpha")) // the same id in the hub: member A's event must not be looked up here
	b.EC2.PutIn(memberA, i2, owner("beta"))
	b.EC2.PutIn(memberB, i3, owner("gamma"))
	b.STS.Fail(harness.ReaderRole(memberB), 1)

	canary := strings.Replace(strings.Replace(fixture(t, "canary.json"), `"account":"`+sqsemu.Account+`"`, `"account":"`+memberA+`"`, 1),
		`{"bus":"kib-test","clusters":["alpha","beta"]}`, `{"bus":"`+b.Settings.BusName+`","clusters":["beta"]}`, 1)
	events := map[string]string{
		"alpha": spotIn(sqsemu.Account, i1), "beta": spotIn(memberA, i2), "gamma": spotIn(memberB, i3),
	}
	stranger := spotIn("999999999999", i4)
	b.publish(events["alpha"], events["beta"], events["gamma"], stranger, canary)
	res := b.drain()
	retried := 0
	for _, r := range res {
		retried += r.Failed
	}
	if retried != 1 {
		t.Errorf("%d messages retried, want member B's once (its AssumeRole failed)", retried)
	}
	want := map[string][]string{"alpha": {events["alpha"]}, "beta": {events["beta"], canary}, "gamma": {events["gamma"]}}
	for c, bodies := range want {
		got := b.received(c)
		slices.Sort(got)
		slices.Sort(bodies)
		if !slices.Equal(got, bodies) {
			t.Errorf("%s (account %s) received %q, want %q", c, b.AccountOf(harness.QueueOf(c)), got, bodies)
		}
		for _, body := range got {
			if p, err := karpenter.Parse(body); err != nil || (body != canary && p.Kind != "spot_interrupted") {
				t.Errorf("Karpenter reads %s's message as %+v, %v", c, p, err)
			}
		}
	}
	if d := b.Drops()["ev-"+i4]; len(d) != 1 || d[0].Reason != string(contract.ReasonUnknownAccount) {
		t.Errorf("the stranger's event: drops %+v, want unknown_account", d)
	}
	for role, n := range map[string]int{harness.ReaderRole(memberA): 1, harness.ReaderRole(memberB): 2} {
		if got := b.STS.Calls(role); got != n {
			t.Errorf("AssumeRole of %s: %d calls, want %d", role, got, n)
		}
	}
	for account, n := range map[string]int{ec2stub.Account: 1, memberA: 1, memberB: 1} {
		if got := b.EC2.CallsFrom(account); got != n {
			t.Errorf("DescribeInstances as %s: %d calls, want %d", account, got, n)
		}
	}

	// Warm: the same instances again cost no STS nor EC2 call, and exactly these SQS requests.
	before := b.SQS.Snapshot()
	b.publish(events["alpha"], events["beta"], events["gamma"])
	if res := b.drain(); len(res) != 1 || res[0].Failed != 0 {
		t.Fatalf("warm invocations = %+v, want one without failure", res)
	}
	for _, c := range slices.Sorted(maps.Keys(events)) {
		if got := b.received(c); len(got) != 1 || got[0] != events[c] {
			t.Errorf("%s received %q on the warm round", c, got)
		}
	}
	after := b.SQS.Snapshot()
	// The harness's reads of the queues are Karpenter's (receive, delete) and its own bookkeeping.
	for action, n := range map[string]int{"SendMessage": 3, "SendMessageBatch": 3, "DeleteMessageBatch": 1, "GetQueueUrl": 0, "ChangeMessageVisibility": 0} {
		if got := after[action] - before[action]; got != n {
			t.Errorf("warm round: %d %s, want %d", got, action, n)
		}
	}
	if b.STS.Calls(harness.ReaderRole(memberA)) != 1 || b.STS.Calls(harness.ReaderRole(memberB)) != 2 {
		t.Error("the warm round assumed a reader role again")
	}
	for _, account := range []string{ec2stub.Account, memberA, memberB} {
		if got := b.EC2.CallsFrom(account); got != 1 {
			t.Errorf("DescribeInstances as %s: %d calls after the warm round, want still 1", account, got)
		}
	}
}

// TestOrganizationOfFifty runs the router binary as the hub of an organization (organization.id) of 50 member
// accounts, each with a cluster, configured by no list: its environment names the organization and the reader
// role's fixed name, and the router derives each account's reader role from the event's account. Every event
// reaches its cluster's queue in its account; each member costs exactly one AssumeRole and one
// DescribeInstances; an account of the organization without a reader role (STS answers AccessDenied) has its
// events dropped as unknown_account, logged once and counted, the second from the negative cache, without
// another AssumeRole.
func TestOrganizationOfFifty(t *testing.T) {
	const n = 50
	members := map[string][]string{}
	var ids []string
	for i := range n {
		id := fmt.Sprintf("%012d", 300000000000+i)
		ids = append(ids, id)
		members[id] = []string{fmt.Sprintf("m%02d", i)}
	}
	b, stderr := routerBinaryWith(t, harness.Options{Clusters: []string{"hub"}, Members: members, Organization: "o-a1b2c3d4e5", BatchSize: 10})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("router stderr: %s", stderr.String())
		}
	})
	env := b.RouterEnv()
	if env["MEMBER_READER_ROLES"] != "" || env["ORGANIZATION_ID"] != "o-a1b2c3d4e5" {
		t.Fatalf("router environment: MEMBER_READER_ROLES %q, ORGANIZATION_ID %q; want no list, the organization", env["MEMBER_READER_ROLES"], env["ORGANIZATION_ID"])
	}
	owner := func(c string) map[string]string { return map[string]string{"eks:eks-cluster-name": c} }
	instance := func(i int) string { return fmt.Sprintf("i-0a1b2c3d4e5f7%04d", i) }
	b.EC2.PutIn(ec2stub.Account, instance(999), owner("hub"))
	events := map[string]string{"hub": spotIn(sqsemu.Account, instance(999))}
	for i, id := range ids {
		b.EC2.PutIn(id, instance(i), owner(members[id][0]))
		events[members[id][0]] = spotIn(id, instance(i))
	}
	const unread = "300000000999" // in the organization, its forwarder there but no reader role
	b.IAM.Create(unread, harness.ForwarderRoleName)
	first, second := spotIn(unread, "i-0fffffffffff00001"), spotIn(unread, "i-0fffffffffff00002")
	bodies := slices.Collect(maps.Values(events))
	b.publish(append(bodies, first)...)
	b.drain()
	b.publish(second)
	b.drain()

	for c, body := range events {
		if got := b.received(c); len(got) != 1 || got[0] != body {
			t.Errorf("%s (account %s) received %d messages, want its event", c, b.AccountOf(harness.QueueOf(c)), len(got))
		}
	}
	for _, id := range ids {
		if got := b.STS.Calls(harness.ReaderRole(id)); got != 1 {
			t.Errorf("AssumeRole of %s's reader: %d calls, want 1", id, got)
		}
		if got := b.EC2.CallsFrom(id); got != 1 {
			t.Errorf("DescribeInstances as %s: %d calls, want 1", id, got)
		}
	}
	if got := b.STS.Calls(harness.ReaderRole(sqsemu.Account)); got != 0 {
		t.Errorf("the hub assumed a reader role in its own account %d times", got)
	}
	if got := b.STS.Calls(harness.ReaderRole(unread)); got != 1 {
		t.Errorf("AssumeRole of %s's reader: %d calls, want 1 (the second event from the negative cache)", unread, got)
	}
	for _, ev := range []string{"ev-i-0fffffffffff00001", "ev-i-0fffffffffff00002"} {
		if d := b.Drops()[ev]; len(d) != 1 || d[0].Reason != string(contract.ReasonUnknownAccount) {
			t.Errorf("%s: drops %+v, want one unknown_account", ev, d)
		}
	}
	if got := b.Metric(contract.MetricDropped, contract.DimReason, string(contract.ReasonUnknownAccount)); got != 2 {
		t.Errorf("Dropped{Reason=unknown_account} = %v, want 2", got)
	}
	refused := 0
	for _, l := range b.Out.Lines() {
		if l["account"] == unread && l["msg"] == contract.LogReaderRefused {
			refused++
		}
	}
	if refused != 1 {
		t.Errorf("%d log lines say %s's reader role was refused, want 1", refused, unread)
	}
}
