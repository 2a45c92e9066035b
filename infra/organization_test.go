package infra_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/member"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/stacktest"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// TestOrganizationHubNamesNoMember: with organization.id, the central queue's policy, the router's policy and its
// environment name the organization and the roles' fixed names, and no member account; the members still get
// their baseline through their providers.
func TestOrganizationHubNamesNoMember(t *testing.T) {
	r := mustRun(t, "dev", withOrganization(hubStack(accountA, accountB, accountC)))
	hub := r.resources.Where(func(x mocks.Resource) bool { return x.Account == hubAccount })
	central := stacktest.Doc(t, hub.Named(t, "aws:sqs/queuePolicy:QueuePolicy", "kib-dev-central"), "policy")
	fn := hub.One(t, "aws:lambda/function:Function")
	routerPolicy := hub.Named(t, "aws:iam/rolePolicy:RolePolicy", "kib-dev-router")
	for what, text := range map[string]string{
		"the central queue's policy": central.JSON(), "the router's policy": stacktest.Str(t, routerPolicy, "policy"),
		"the router's environment": stacktest.InputsJSON(fn),
	} {
		for _, m := range []string{accountA, accountB, accountC} {
			if strings.Contains(text, m) {
				t.Errorf("%s names member %s: %s", what, m, text)
			}
		}
		if !strings.Contains(text, testOrganization) {
			t.Errorf("%s does not name the organization %s", what, testOrganization)
		}
	}
	forward := stacktest.Statement(t, central, "OrganizationAccountsForward")
	if got := forward.Condition["StringEquals"]["aws:PrincipalOrgID"]; got != testOrganization {
		t.Errorf("OrganizationAccountsForward: aws:PrincipalOrgID %v", got)
	}
	if got := forward.Condition["ArnLike"]["aws:PrincipalArn"]; got != "arn:aws:iam::*:role/"+member.ForwarderRoleName("kib-dev", "us-east-1") {
		t.Errorf("OrganizationAccountsForward: aws:PrincipalArn %v", got)
	}
	s := routerSettings(t, fn)
	if len(s.MemberReaderRoles) != 0 || s.OrganizationID != testOrganization || s.ReaderRoleName != member.ReaderRoleName("kib-dev", "us-east-1") {
		t.Errorf("router settings: readers %v, organization %q, reader name %q", s.MemberReaderRoles, s.OrganizationID, s.ReaderRoleName)
	}
	if got := s.ReaderRole(accountB); got != "arn:aws:iam::"+accountB+":role/kib-dev-reader-us-east-1" {
		t.Errorf("the router derives %s's reader role as %q", accountB, got)
	}
	if n := len(r.resources.OfType(member.Type)); n != 3 {
		t.Errorf("%d member baselines declared through providers, want 3", n)
	}
	if n := len(r.resources.OfType(member.StackSetType)); n != 0 {
		t.Errorf("%d StackSets without memberOUs", n)
	}
}

// TestMemberOUsGetTheBaselineFromAStackSet: with organization.memberOUs the hub declares the baseline once, as a
// service-managed StackSet deployed automatically to the units, instead of through each member's provider; the
// members' clusters are still declared there, their heartbeat schedules waiting for the StackSet's deployment.
func TestMemberOUsGetTheBaselineFromAStackSet(t *testing.T) {
	for _, callAs := range []string{"", "SELF"} {
		t.Run("callAs "+callAs, func(t *testing.T) {
			cfg := withOrganization(hubStack(accountA, accountB), testOU)
			want := "DELEGATED_ADMIN"
			if callAs != "" {
				cfg["organization"] = strings.Replace(cfg["organization"], "{", `{"callAs":"`+callAs+`",`, 1)
				want = callAs
			}
			r := mustRun(t, "dev", cfg)
			if n := len(r.resources.OfType(member.Type)); n != 0 {
				t.Errorf("%d baselines declared through providers beside the StackSet", n)
			}
			for _, x := range r.resources.OfType("aws:iam/role:Role") {
				if x.Account != hubAccount && slices.Contains([]string{"kib-dev-forward", "kib-dev-reader", "kib-dev-heartbeat"}, stacktest.Str(t, x, "name")) {
					t.Errorf("%s declared in %s through its provider", stacktest.Str(t, x, "name"), x.Account)
				}
			}
			set := r.resources.One(t, "aws:cloudformation/stackSet:StackSet")
			instance := r.resources.One(t, "aws:cloudformation/stackSetInstance:StackSetInstance")
			for _, x := range []mocks.Resource{set, instance} {
				if x.Account != hubAccount {
					t.Errorf("%s declared in %s, want the hub", x.Type, x.Account)
				}
				if got := stacktest.Str(t, x, "callAs"); got != want {
					t.Errorf("%s callAs %q, want %q", x.Type, got, want)
				}
			}
			p := stacktest.Plain(set)
			auto, _ := p["autoDeployment"].(map[string]any)
			if p["permissionModel"] != "SERVICE_MANAGED" || auto["enabled"] != true || p["name"] != member.StackSetName("kib-dev") ||
				!slices.Contains(p["capabilities"].([]any), any("CAPABILITY_NAMED_IAM")) {
				t.Errorf("StackSet inputs %v", p)
			}
			targets, _ := stacktest.Plain(instance)["deploymentTargets"].(map[string]any)
			if ous, _ := targets["organizationalUnitIds"].([]any); len(ous) != 1 || ous[0] != testOU || stacktest.Str(t, instance, "region") != "us-east-1" {
				t.Errorf("StackSet instance targets %v in %s", targets, stacktest.Str(t, instance, "region"))
			}
			var tmpl struct {
				Resources map[string]struct {
					Type       string
					Properties map[string]any
				}
			}
			if err := json.Unmarshal([]byte(stacktest.Str(t, set, "templateBody")), &tmpl); err != nil {
				t.Fatal(err)
			}
			if size := tmpl.Resources[member.LogicalDLQ].Properties["MaximumMessageSize"]; size != float64(contract.MaxMessageBytes) {
				t.Errorf("the template's dead-letter queue takes messages of %v bytes, want %d", size, contract.MaxMessageBytes)
			}
			for _, id := range []string{member.LogicalForwarder, member.LogicalReader, member.LogicalDLQ, member.LogicalHeartbeatGroup, member.LogicalHeartbeatRole} {
				if _, ok := tmpl.Resources[id]; !ok {
					t.Errorf("the template has no %s", id)
				}
			}
			schedules := r.resources.OfType("aws:scheduler/schedule:Schedule").Where(func(x mocks.Resource) bool { return x.Account != hubAccount })
			if len(schedules) != 3 { // A's two clusters, B's one
				t.Fatalf("%d member schedules, want 3", len(schedules))
			}
			for _, s := range schedules {
				if !slices.Contains(s.Dependencies, instance.URN) {
					t.Errorf("schedule %s in %s does not wait for the StackSet's deployment: %v", s.Name, s.Account, s.Dependencies)
				}
				if got := stacktest.Str(t, s, "groupName"); got != "kib-dev-heartbeat" {
					t.Errorf("schedule %s: group %q", s.Name, got)
				}
				role := stacktest.Plain(s)["target"].(map[string]any)["roleArn"]
				if role != "arn:aws:iam::"+s.Account+":role/kib-dev-heartbeat-us-east-1" {
					t.Errorf("schedule %s: role %v", s.Name, role)
				}
			}
		})
	}
}

// TestStackSetTargetsEveryUnit: the member baseline's StackSet is deployed to every unit of memberOUs, in the
// order given, not only the first; and an account that leaves the units loses the baseline
// (RetainStacksOnAccountRemoval false): its forwarding rules stop sending to the hub and the router may no
// longer read its instances, as for an account that was never a member. CloudFormation deletes the stack's
// resources when an account is removed from a target OU unless RetainStacksOnAccountRemoval is true (AWS
// CloudFormation API Reference, AutoDeployment,
// https://docs.aws.amazon.com/AWSCloudFormation/latest/APIReference/API_AutoDeployment.html).
func TestStackSetTargetsEveryUnit(t *testing.T) {
	ous := []string{"ou-ab12-cd34ef56", "ou-ab12-1111aaaa", "ou-zz99-2222bbbb"}
	r := mustRun(t, "dev", withOrganization(hubStack(accountA), ous...))
	instance := r.resources.One(t, "aws:cloudformation/stackSetInstance:StackSetInstance")
	targets, _ := stacktest.Plain(instance)["deploymentTargets"].(map[string]any)
	got, _ := targets["organizationalUnitIds"].([]any)
	if fmt.Sprint(got) != fmt.Sprint(ous) {
		t.Errorf("the StackSet is deployed to %v, want every unit of memberOUs %v", got, ous)
	}
	auto, _ := stacktest.Plain(r.resources.One(t, "aws:cloudformation/stackSet:StackSet"))["autoDeployment"].(map[string]any)
	if auto["enabled"] != true || auto["retainStacksOnAccountRemoval"] != false {
		t.Errorf("autoDeployment %v, want enabled, the stacks of an account leaving the units deleted", auto)
	}
}

// TestEveryAccountHasItsForwarder: whatever the stack's shape (one account, a member list, an organization, an
// organization whose members join only through memberOUs), the router starts with the forwarder's name, and knows the
// forwarder of its own account (the hub's rules) and of any member: a router without it would refuse every event.
func TestEveryAccountHasItsForwarder(t *testing.T) {
	for name, cfg := range map[string]map[string]string{
		"one account":        {"clusters": `[{"name":"hub-a"}]`},
		"members":            hubStack(accountA),
		"organization":       withOrganization(hubStack(accountA)),
		"memberOUs only":     withOrganization(map[string]string{"clusters": `[{"name":"hub-a"}]`}, testOU),
		"memberOUs, members": withOrganization(hubStack(accountA, accountB), testOU),
	} {
		t.Run(name, func(t *testing.T) {
			r := mustRun(t, "dev", cfg)
			s := routerSettings(t, r.resources.Named(t, "aws:lambda/function:Function", "kib-dev-router"))
			want := member.ForwarderRoleName("kib-dev", "us-east-1")
			if got := s.ForwarderRole(hubAccount); got != "arn:aws:iam::"+hubAccount+":role/"+want {
				t.Errorf("the hub's forwarder: %q", got)
			}
			if name == "one account" {
				return
			}
			if got := s.ForwarderRole(accountA); got != "arn:aws:iam::"+accountA+":role/"+want {
				t.Errorf("a member's forwarder: %q", got)
			}
		})
	}
}
