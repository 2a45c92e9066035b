package infra_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/cluster"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/member"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/stacktest"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// The hub of these tests is mocks.DefaultAccount; its members are A, B and C.
const (
	hubAccount = mocks.DefaultAccount
	accountA   = "222222222222"
	accountB   = "333333333333"
	accountC   = "444444444444"
)

// hubStack is a hub with a cluster of its own and clusters in the given member accounts (each member gets one
// cluster named after it, A two: one installed, one existing-role).
func hubStack(members ...string) map[string]string {
	entries := []string{`{"name":"hub-a"}`}
	accounts := map[string]any{}
	for _, m := range members {
		entries = append(entries, fmt.Sprintf(`{"name":"c-%s","account":"%s"}`, m, m))
		accounts[m] = map[string]string{"deployRoleArn": "arn:aws:iam::" + m + ":role/pulumi-deploy"}
	}
	if slices.Contains(members, accountA) {
		entries = append(entries, `{"name":"legacy-a","account":"`+accountA+`","mode":"existing-role","controllerRoleName":"KarpenterControllerRole-legacy"}`)
	}
	cfg := clusters(entries...)
	b, _ := json.Marshal(accounts)
	cfg["accounts"] = string(b)
	return cfg
}

// testOrganization and testOU are the organization and a unit of it of the tests with organization.
const (
	testOrganization = "o-a1b2c3d4e5"
	testOU           = "ou-ab12-cd34ef56"
)

// withOrganization admits cfg's members by the organization testOrganization and, with ous, gives the accounts of
// those units the member baseline as a StackSet.
func withOrganization(cfg map[string]string, ous ...string) map[string]string {
	o := map[string]any{"id": testOrganization}
	if len(ous) > 0 {
		o["memberOUs"] = ous
	}
	b, _ := json.Marshal(o)
	cfg["organization"] = string(b)
	return cfg
}

// expectedAccount is the account a resource belongs in: a member's component's and a cluster's children are
// their account's, every other resource the hub's.
func expectedAccount(t *testing.T, r result, x mocks.Resource) string {
	t.Helper()
	byName := map[string]mocks.Resource{}
	for _, y := range r.resources {
		if !y.Custom {
			byName[y.Name] = y
		}
	}
	start := x.Parent
	switch {
	case !x.Custom: // a component: its own name says
		start = x.Name
	case x.Type == "pulumi:providers:kubernetes": // a cluster's, hanging from the stack: its cluster's account
		start = strings.TrimSuffix(x.Name, "-k8s")
	}
	for name := start; name != ""; name = byName[name].Parent {
		if id, ok := strings.CutPrefix(name, "account-"); ok {
			return id[:12]
		}
		if c := byName[name]; c.Type == cluster.Type {
			if acc := r.outputs["clusters"].(map[string]any)[name].(map[string]any)["account"].(string); acc != "" {
				return acc
			}
		}
	}
	if id, ok := strings.CutPrefix(x.Name, "account-"); ok && x.Type == "pulumi:providers:aws" {
		return id
	}
	return hubAccount
}

// TestHubWithThreeMembers: every resource is declared through its own account's provider (the hub's default
// one for the hub's); each member has the fixed set (6 forwarding rules into the hub's central queue, their role
// and dead-letter queue, the reader role, the heartbeat's group and role) and its clusters' resources.
func TestHubWithThreeMembers(t *testing.T) {
	r := mustRun(t, "hub", hubStack(accountA, accountB, accountC))
	for _, x := range r.resources {
		if !strings.HasPrefix(x.Type, "aws:") { // components, Kubernetes resources, the stack reference: no account
			continue
		}
		if want := expectedAccount(t, r, x); x.Account != want {
			t.Errorf("%s %s (parent %s) is declared in %s, want %s", x.Type, x.Name, x.Parent, x.Account, want)
		}
	}
	central := "arn:aws:sqs:" + mocks.DefaultRegion + ":" + hubAccount + ":kib-hub-central"
	for _, m := range []string{accountA, accountB, accountC} {
		p := r.resources.Named(t, "pulumi:providers:aws", "account-"+m)
		if in := stacktest.Plain(p); in["assumeRole"].(map[string]any)["roleArn"] != "arn:aws:iam::"+m+":role/pulumi-deploy" || in["region"] != mocks.DefaultRegion {
			t.Errorf("provider of %s = %s", m, stacktest.InputsJSON(p))
		}
		comp := "account-" + m + "-bus"
		targets := r.resources.Under(comp).OfType("aws:cloudwatch/eventTarget:EventTarget")
		if n := len(r.resources.Under(comp).OfType("aws:cloudwatch/eventRule:EventRule")); n != 6 || len(targets) != 6 {
			t.Errorf("%s has %d rules and %d targets, want 6 and 6", m, n, len(targets))
		}
		for _, tg := range targets {
			in := stacktest.Plain(tg)
			if in["arn"] != central || in["roleArn"] != "arn:aws:iam::"+m+":role/kib-hub-forward-us-east-1" ||
				in["deadLetterConfig"].(map[string]any)["arn"] != "arn:aws:sqs:"+mocks.DefaultRegion+":"+m+":kib-hub-forward-dlq" {
				t.Errorf("target %s = %s", tg.Name, stacktest.InputsJSON(tg))
			}
		}
		reader := r.resources.Named(t, "aws:iam/role:Role", comp+"-reader")
		trust := stacktest.Doc(t, reader, "assumeRolePolicy").Statement[0]
		if fmt.Sprint(trust.Principal) != "map[AWS:arn:aws:iam::"+hubAccount+":root]" ||
			fmt.Sprint(trust.Condition) != "map[ArnEquals:map[aws:PrincipalArn:arn:aws:iam::"+hubAccount+":role/kib-hub-router-us-east-1]]" {
			t.Errorf("the reader role of %s trusts %v if %v, want the hub's router role only", m, trust.Principal, trust.Condition)
		}
		readerPolicy := stacktest.Doc(t, r.resources.Named(t, "aws:iam/rolePolicy:RolePolicy", comp+"-reader"), "policy")
		getRole := stacktest.Statement(t, readerPolicy, "LearnTheForwarderRoleID")
		if len(readerPolicy.Statement) != 2 || !slices.Equal(readerPolicy.Statement[0].Action, []string{"ec2:DescribeInstances"}) ||
			!slices.Equal(getRole.Action, []string{"iam:GetRole"}) || !slices.Equal(getRole.Resource, []string{"arn:aws:iam::" + m + ":role/kib-hub-forward-us-east-1"}) {
			t.Errorf("reader policy of %s = %+v, want DescribeInstances and GetRole of its own forwarder only", m, readerPolicy)
		}
		q := r.resources.Under("c-"+m).One(t, "aws:sqs/queuePolicy:QueuePolicy")
		send := stacktest.Statement(t, stacktest.Doc(t, q, "policy"), "RouterForwards")
		if fmt.Sprint(send.Principal) != "map[AWS:arn:aws:iam::"+hubAccount+":root]" ||
			fmt.Sprint(send.Condition) != "map[ArnEquals:map[aws:PrincipalArn:arn:aws:iam::"+hubAccount+":role/kib-hub-router-us-east-1]]" ||
			!slices.Equal(send.Resource, []string{"arn:aws:sqs:" + mocks.DefaultRegion + ":" + m + ":kib-hub_c-" + m}) {
			t.Errorf("queue policy of c-%s = %+v, want the hub's router on the member's queue", m, send)
		}
		if counts := stacktest.Statement(t, stacktest.Doc(t, q, "policy"), "HubReadsCounts"); fmt.Sprint(counts.Principal) != "map[AWS:arn:aws:iam::"+hubAccount+":root]" ||
			!slices.Equal(counts.Action, []string{"sqs:GetQueueAttributes"}) {
			t.Errorf("queue policy of c-%s lets %+v read, want the hub's account its counts only (make verify)", m, counts)
		}
		schedule := stacktest.Plain(r.resources.Under("c-"+m).One(t, "aws:scheduler/schedule:Schedule"))
		target := schedule["target"].(map[string]any)
		if schedule["groupName"] != "kib-hub-heartbeat" || target["roleArn"] != "arn:aws:iam::"+m+":role/kib-hub-heartbeat-us-east-1" ||
			target["arn"] != "arn:aws:events:"+mocks.DefaultRegion+":"+m+":event-bus/default" {
			t.Errorf("heartbeat of c-%s = %v, want the member's group, role and default bus", m, schedule)
		}
	}
	hubQueue := stacktest.Doc(t, r.resources.Under("hub-a").One(t, "aws:sqs/queuePolicy:QueuePolicy"), "policy")
	for _, st := range hubQueue.Statement {
		if st.Sid == "HubReadsCounts" {
			t.Errorf("the hub's own cluster queue has %+v: its account needs no grant", st)
		}
	}
	if got := r.outputs["clusters"].(map[string]any)["c-"+accountB].(map[string]any)["account"]; got != accountB {
		t.Errorf("output clusters.c-%s.account = %v", accountB, got)
	}
}

// TestHubAcceptsItsMembers: the hub's central queue takes the members' forwarder roles, and the router may take
// their reader roles and send to their cluster queues; its environment names them.
func TestHubAcceptsItsMembers(t *testing.T) {
	r := mustRun(t, "hub", hubStack(accountA, accountB, accountC))
	members := []string{accountA, accountB, accountC}
	var forwarders, readers, queues []string
	for _, m := range members {
		forwarders = append(forwarders, "arn:aws:iam::"+m+":role/kib-hub-forward-us-east-1")
		readers = append(readers, "arn:aws:iam::"+m+":role/kib-hub-reader-us-east-1")
		queues = append(queues, "arn:aws:sqs:"+mocks.DefaultRegion+":"+m+":kib-hub_*")
	}
	central := stacktest.Doc(t, r.resources.Named(t, "aws:sqs/queuePolicy:QueuePolicy", "kib-hub-central"), "policy")
	allow := stacktest.Statement(t, central, "MemberAccountsForward")
	if allow.Principal != "*" || fmt.Sprint(allow.Condition) != fmt.Sprint(map[string]map[string]any{"ArnEquals": {"aws:PrincipalArn": []any{forwarders[0], forwarders[1], forwarders[2]}}}) {
		t.Errorf("central queue admits %v if %v, want the members' forwarder roles", allow.Principal, allow.Condition)
	}
	deny := stacktest.Statement(t, central, "OnlyTheBusSends")
	if got := fmt.Sprint(deny.Condition["ArnNotLike"]["aws:PrincipalArn"]); !strings.Contains(got, forwarders[2]) {
		t.Errorf("the central queue's Deny spares %s, not the members' forwarders", got)
	}
	router := stacktest.Doc(t, r.resources.Named(t, "aws:iam/rolePolicy:RolePolicy", "kib-hub-router"), "policy")
	if s := stacktest.Statement(t, router, "ReadMemberAccounts"); !slices.Equal(s.Resource, readers) || !slices.Equal(s.Action, []string{"sts:AssumeRole"}) {
		t.Errorf("router assumes %+v, want the members' reader roles", s)
	}
	if s := stacktest.Statement(t, router, "ForwardToClusterQueues"); !slices.Equal(s.Resource[1:], queues) {
		t.Errorf("router sends to %v, want its own and the members' cluster queues", s.Resource)
	}
	settings := routerSettings(t, r.resources.One(t, "aws:lambda/function:Function"))
	if settings.Account != hubAccount || !slices.Equal(settings.MemberReaderRoles, readers) {
		t.Errorf("router settings account %s, members %v", settings.Account, settings.MemberReaderRoles)
	}
}

// TestAddingAMemberChangesNoOtherAccount: adding account C (with its cluster), or a cluster in B, changes no
// input of another member's resources; in the hub only the central queue's policy, the router's policy and its
// function (its environment) change, to admit C.
func TestAddingAMemberChangesNoOtherAccount(t *testing.T) {
	inputs := func(r result) map[string]mocks.Resource {
		out := map[string]mocks.Resource{}
		for _, x := range r.resources {
			out[identity(x)] = x
		}
		return out
	}
	before := inputs(mustRun(t, "hub", hubStack(accountA, accountB)))
	withC := mustRun(t, "hub", hubStack(accountA, accountB, accountC))
	hubChanged := map[string]bool{}
	for id, x := range inputs(withC) {
		was, existed := before[id]
		switch {
		case !existed && expectedAccount(t, withC, x) != accountC:
			t.Errorf("adding %s added %s in %s", accountC, id, expectedAccount(t, withC, x))
		case existed && stacktest.InputsJSON(was) != stacktest.InputsJSON(x):
			if x.Account != hubAccount {
				t.Errorf("adding %s changed %s in %s", accountC, id, x.Account)
			}
			hubChanged[x.Type+" "+x.Name] = true
		}
	}
	want := []string{"aws:iam/rolePolicy:RolePolicy kib-hub-router", "aws:lambda/function:Function kib-hub-router", "aws:sqs/queuePolicy:QueuePolicy kib-hub-central"}
	if got := slices.Sorted(maps.Keys(hubChanged)); !slices.Equal(got, want) {
		t.Errorf("adding %s changed in the hub %v, want %v", accountC, got, want)
	}

	cfg := hubStack(accountA, accountB)
	cfg["clusters"] = strings.TrimSuffix(cfg["clusters"], "]") + `,{"name":"more-b","account":"` + accountB + `"}]`
	for id, x := range inputs(mustRun(t, "hub", cfg)) {
		was, existed := before[id]
		switch {
		case !existed && x.Parent != "more-b" && x.Name != "more-b" && x.Name != cluster.KubernetesProviderName("more-b"):
			t.Errorf("adding a cluster in %s added %s outside its component", accountB, id)
		case existed && stacktest.InputsJSON(was) != stacktest.InputsJSON(x):
			t.Errorf("adding a cluster in %s changed %s (%s)", accountB, id, x.Account)
		}
	}
}

// TestTwoHubsInOneOrganization: two hubs (two stacks, each its own name prefix, each with its own clusters)
// sharing a member account give every resource there whose name the account holds once a name of their own.
func TestTwoHubsInOneOrganization(t *testing.T) {
	accountWide := []string{"aws:iam/role:Role", "aws:sqs/queue:Queue", "aws:cloudwatch/eventRule:EventRule",
		"aws:scheduler/scheduleGroup:ScheduleGroup", "aws:cloudwatch/metricAlarm:MetricAlarm"}
	names := func(stack string) map[string]bool {
		cfg := clusters(`{"name":"hub-`+stack+`"}`, `{"name":"c-`+stack+`","account":"`+accountA+`"}`)
		cfg["accounts"] = `{"` + accountA + `":{"deployRoleArn":"arn:aws:iam::` + accountA + `:role/pulumi-deploy"}}`
		out := map[string]bool{}
		for _, x := range mustRun(t, stack, cfg).resources {
			if n, ok := x.Inputs["name"]; ok && n.IsString() && x.Account == accountA && slices.Contains(accountWide, x.Type) {
				out[x.Type+" "+n.StringValue()] = true
			}
		}
		return out
	}
	east, west := names("east"), names("west")
	if len(east) < 10 {
		t.Fatalf("the east hub names %d resources in %s", len(east), accountA)
	}
	for n := range east {
		if west[n] {
			t.Errorf("both hubs declare %s in %s", n, accountA)
		}
	}
}

// TestMemberReaderAndForwarderNames: the hub's policies name the members' roles by the names the members give
// them.
func TestMemberReaderAndForwarderNames(t *testing.T) {
	if member.ReaderRoleName("kib-hub", "eu-west-1") != "kib-hub-reader-eu-west-1" || member.ForwarderRoleName("kib-hub", "eu-west-1") != "kib-hub-forward-eu-west-1" {
		t.Errorf("role names %s, %s", member.ReaderRoleName("kib-hub", "eu-west-1"), member.ForwarderRoleName("kib-hub", "eu-west-1"))
	}
	if contract.AccountOfRole("arn:aws:iam::"+accountA+":role/kib-hub-reader-eu-west-1") != accountA {
		t.Error("the router would not read the reader role's account")
	}
}
