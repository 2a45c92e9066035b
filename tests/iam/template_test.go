package iam

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/awslabs/goformation/v7"
	"github.com/awslabs/goformation/v7/cloudformation"
	"github.com/awslabs/goformation/v7/intrinsics"
)

// parseTemplate parses a StackSet's template with goformation, an independent, typed model of CloudFormation (every
// resource type and property must be one CloudFormation has: an unknown one fails the parse), as CloudFormation
// would instantiate it in account: AWS::AccountId, AWS::Region and AWS::Partition are the account's, a role's or a
// queue's Fn::GetAtt Arn is the ARN its name gives it, a queue's Ref its URL.
//
// What CloudFormation does that this does not: it creates the resources, in dependency order, and fails on what
// the services refuse (the quota judge checks sizes and names, package quota).
func parseTemplate(t *testing.T, body, account, region, partition string) *cloudformation.Template {
	t.Helper()
	pseudo := map[string]string{"AWS::AccountId": account, "AWS::Region": region, "AWS::Partition": partition}
	resource := func(template any, id string) (typ string, props map[string]any) {
		res, _ := template.(map[string]any)["Resources"].(map[string]any)[id].(map[string]any)
		props, _ = res["Properties"].(map[string]any)
		typ, _ = res["Type"].(string)
		return typ, props
	}
	arn := func(service, rest string) string {
		return fmt.Sprintf("arn:%s:%s:%s:%s:%s", partition, service, region, account, rest)
	}
	ref := func(_ string, input, template any) any {
		name, _ := input.(string)
		if v, ok := pseudo[name]; ok {
			return v
		}
		if typ, props := resource(template, name); typ == "AWS::SQS::Queue" {
			return fmt.Sprintf("https://sqs.%s.amazonaws.com/%s/%s", region, account, props["QueueName"])
		}
		return intrinsics.Ref("Ref", input, template)
	}
	getAtt := func(_ string, input, template any) any {
		args, _ := input.([]any)
		if len(args) != 2 {
			return nil
		}
		id, _ := args[0].(string)
		switch typ, props := resource(template, id); {
		case typ == "AWS::IAM::Role" && args[1] == "Arn":
			return fmt.Sprintf("arn:%s:iam::%s:role/%s", partition, account, props["RoleName"])
		case typ == "AWS::SQS::Queue" && args[1] == "Arn":
			return arn("sqs", fmt.Sprint(props["QueueName"]))
		case typ == "AWS::SQS::Queue" && args[1] == "QueueName":
			return props["QueueName"]
		}
		return nil
	}
	sub := func(_ string, input, template any) any {
		s, ok := input.(string)
		if !ok {
			return intrinsics.FnSub("Fn::Sub", input, template)
		}
		for k, v := range pseudo {
			s = strings.ReplaceAll(s, "${"+k+"}", v)
		}
		if strings.Contains(s, "${") {
			t.Errorf("Fn::Sub %q: a variable the template does not define", s)
		}
		return s
	}
	tmpl, err := goformation.ParseJSONWithOptions([]byte(body), &intrinsics.ProcessorOptions{
		IntrinsicHandlerOverrides: map[string]intrinsics.IntrinsicHandler{"Ref": ref, "Fn::GetAtt": getAtt, "Fn::Sub": sub},
	})
	if err != nil {
		t.Fatalf("goformation refuses the member baseline's template: %v", err)
	}
	return tmpl
}

// addBaseline puts what the member baseline's template declares in member account m of hub s (its roles, its
// dead-letter queue, its rules) into s.Members[m], as CloudFormation would create it there.
func addBaseline(t *testing.T, s *Stack, m string) {
	t.Helper()
	if s.Baseline == "" {
		t.Fatalf("stack %s has no member baseline StackSet", s.Name)
	}
	tmpl := parseTemplate(t, s.Baseline, m, s.Region, s.Partition)
	ms := s.Members[m]
	if ms == nil {
		ms = &Stack{Name: s.Name, Account: m, Region: s.Region, Partition: s.Partition, Roles: map[string]*Role{}, Queues: map[string]*Queue{},
			ClusterQueues: map[string]string{}, ControllerRoles: map[string]string{}}
		s.Members[m] = ms
	}
	asPolicy := func(what string, doc any) Policy {
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		var p Policy
		if err := json.Unmarshal(b, &p); err != nil || p["Statement"] == nil {
			t.Fatalf("%s: not a policy document: %s", what, b)
		}
		return p
	}
	for id, r := range tmpl.GetAllIAMRoleResources() {
		if r.RoleName == nil {
			t.Fatalf("role %s has no name: the hub's policies name it by its name", id)
		}
		role := &Role{Name: *r.RoleName, ARN: fmt.Sprintf("arn:%s:iam::%s:role/%s", s.Partition, m, *r.RoleName),
			Trust: asPolicy(id+" trust", r.AssumeRolePolicyDocument)}
		for _, p := range r.Policies {
			role.Policies = append(role.Policies, asPolicy(id+" "+p.PolicyName, p.PolicyDocument))
		}
		if strings.HasSuffix(strings.TrimSuffix(role.Name, "-"+s.Region), "-heartbeat") {
			ms.HeartbeatRole = role.Name
		}
		ms.Roles[role.Name] = role
	}
	for id, q := range tmpl.GetAllSQSQueueResources() {
		if q.QueueName == nil {
			t.Fatalf("queue %s has no name", id)
		}
		ms.queue(*q.QueueName)
	}
	for id, p := range tmpl.GetAllSQSQueuePolicyResources() {
		for _, u := range p.Queues {
			q := ms.Queues[u[strings.LastIndex(u, "/")+1:]]
			if q == nil {
				t.Fatalf("queue policy %s is for %s, which the template does not declare", id, u)
			}
			q.Policy = asPolicy(id, p.PolicyDocument)
		}
	}
	for id, r := range tmpl.GetAllEventsRuleResources() {
		if r.Name == nil {
			t.Fatalf("rule %s has no name", id)
		}
		ms.RuleARNs = append(ms.RuleARNs, ms.ARN("events", "rule/"+*r.Name))
	}
}

// TestBaselineTemplateDeclaresWhatTheProvidersDo: the member baseline reaches an account two ways, declared by
// the hub through the account's provider (organization.id) or by the StackSet's template (memberOUs), both from
// the same Go description (member.Baseline). In each member account, the roles (names, trust and inline
// policies), the queues (names and policies) and the rules are the same either way, the template read by
// goformation as CloudFormation would instantiate it there.
func TestBaselineTemplateDeclaresWhatTheProvidersDo(t *testing.T) {
	byProvider := load(t, "ous", account, "eu-west-1", render(t, "ous", orgIDStack, account))
	byTemplate := load(t, "ous", account, "eu-west-1", render(t, "ous", ousStack, account))
	if byProvider.Baseline != "" || byTemplate.Baseline == "" {
		t.Fatalf("a StackSet with organization.id alone: %t; with memberOUs: %t", byProvider.Baseline != "", byTemplate.Baseline != "")
	}
	if len(byProvider.Members) != 3 {
		t.Fatalf("%d members declared through their providers, want 3", len(byProvider.Members))
	}
	for m, want := range byProvider.Members {
		addBaseline(t, byTemplate, m)
		got := byTemplate.Members[m]
		if len(want.Roles) < 4 || len(want.Queues) < 2 || len(want.RuleARNs) == 0 {
			t.Fatalf("%s: %d roles, %d queues, %d rules through the provider: the baseline is missing", m, len(want.Roles), len(want.Queues), len(want.RuleARNs))
		}
		for name, r := range want.Roles {
			g, ok := got.Roles[name]
			switch {
			case !ok:
				t.Errorf("%s: role %s is not declared with the StackSet", m, name)
			case !reflect.DeepEqual(g.Trust, r.Trust):
				t.Errorf("%s: role %s's trust differs:\n template %v\n provider %v", m, name, g.Trust, r.Trust)
			case !reflect.DeepEqual(g.Policies, r.Policies):
				t.Errorf("%s: role %s's policies differ:\n template %v\n provider %v", m, name, g.Policies, r.Policies)
			}
		}
		for name, q := range want.Queues {
			if g, ok := got.Queues[name]; !ok || !reflect.DeepEqual(g.Policy, q.Policy) {
				t.Errorf("%s: queue %s with the StackSet: %v, through the provider: %v", m, name, got.Queues[name], q)
			}
		}
		if len(got.Roles) != len(want.Roles) || len(got.Queues) != len(want.Queues) {
			t.Errorf("%s: %d roles and %d queues with the StackSet, %d and %d through the provider", m, len(got.Roles), len(got.Queues), len(want.Roles), len(want.Queues))
		}
		if g, w := slices.Sorted(slices.Values(got.RuleARNs)), slices.Sorted(slices.Values(want.RuleARNs)); !slices.Equal(g, w) {
			t.Errorf("%s: rules with the StackSet %v, through the provider %v", m, g, w)
		}
	}
}

// TestTemplateParseRefusesWhatCloudFormationWould: the typed model is a judge, not a pass-through: a resource type
// or a property CloudFormation does not have fails the parse.
func TestTemplateParseRefusesWhatCloudFormationWould(t *testing.T) {
	for name, body := range map[string]string{
		"unknown type":     `{"Resources":{"Q":{"Type":"AWS::SQS::Queueue","Properties":{}}}}`,
		"unknown property": `{"Resources":{"Q":{"Type":"AWS::SQS::Queue","Properties":{"QueueNam":"q"}}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := goformation.ParseJSON([]byte(body)); err == nil {
				t.Errorf("goformation accepts %s", body)
			}
		})
	}
}
