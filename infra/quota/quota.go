// Package quota is what AWS enforces when it creates a resource and a mock never does: the size of a queue's
// policy, of a function's environment, of a role's policies, the length of names, how many rules a bus holds.
// Each quota cites the documentation page it comes from. Measure takes the resources a stack declares (its offline
// render) and returns the worst figure of each quota; the program checks its own largest documents against the
// same quotas before declaring anything, and the tests judge whole rendered stacks with it.
package quota

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
)

// Quota is one limit AWS enforces at create time.
type Quota struct {
	// Key names the quota; What says what is measured.
	Key, What string
	Limit     int
	// Doc is the documentation page the limit comes from.
	Doc string
}

// The documentation pages.
const (
	sqsPolicies  = "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-policies.html"
	sqsQueues    = "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html"
	lambdaLimits = "https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html"
	iamQuotas    = "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html"
	ebQuotas     = "https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-quota.html"
	schedQuotas  = "https://docs.aws.amazon.com/scheduler/latest/UserGuide/scheduler-quotas.html"
	cwAlarm      = "https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html"
	cwLimits     = "https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch_limits.html"
	cfnLimits    = "https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/cloudformation-limits.html"
)

// The quotas.
var (
	SQSPolicyBytes         = Quota{"sqs-policy-bytes", "bytes of a queue's policy", 8192, sqsPolicies}
	SQSPolicyConditions    = Quota{"sqs-policy-conditions", "conditions (operator and key) of a queue's policy", 10, sqsPolicies}
	SQSPolicyPrincipals    = Quota{"sqs-policy-principals", "principals of a queue's policy", 50, sqsPolicies}
	SQSPolicyStatements    = Quota{"sqs-policy-statements", "statements of a queue's policy", 20, sqsPolicies}
	SQSStatementActions    = Quota{"sqs-statement-actions", "actions of a statement of a queue's policy", 7, sqsPolicies}
	SQSQueueName           = Quota{"sqs-queue-name", "characters of a queue's name", 80, sqsQueues}
	LambdaEnvironmentBytes = Quota{"lambda-environment-bytes", "bytes of a function's environment variables (names and values)", 4096, lambdaLimits}
	LambdaFunctionName     = Quota{"lambda-function-name", "characters of a function's name", 64, lambdaLimits}
	IAMRoleName            = Quota{"iam-role-name", "characters of a role's name", 64, iamQuotas}
	IAMTrustPolicy         = Quota{"iam-trust-policy", "characters of a role's trust policy, white space not counted (the default; 4,096 on request)", 2048, iamQuotas}
	IAMInlinePolicies      = Quota{"iam-inline-policies", "characters of a role's inline policies together, white space not counted", 10240, iamQuotas}
	IAMManagedPolicies     = Quota{"iam-managed-policies", "managed policies attached to a role (the default)", 10, iamQuotas}
	EventBridgeRulesPerBus = Quota{"eventbridge-rules-per-bus", "rules on an event bus (the default; 100 in some regions)", 300, ebQuotas}
	EventBridgeTargets     = Quota{"eventbridge-targets-per-rule", "targets of a rule", 5, ebQuotas}
	EventBridgeRuleName    = Quota{"eventbridge-rule-name", "characters of a rule's name", 64, ebQuotas}
	ScheduleName           = Quota{"scheduler-schedule-name", "characters of a schedule's or a schedule group's name", 64, schedQuotas}
	AlarmName              = Quota{"cloudwatch-alarm-name", "characters of an alarm's name", 255, cwAlarm}
	DashboardWidgets       = Quota{"cloudwatch-dashboard-widgets", "widgets of a dashboard", 500, cwLimits}
	StackSetTemplateBytes  = Quota{"cloudformation-template-bytes", "bytes of a template body passed inline", 51200, cfnLimits}
)

// All are every quota, in the order of the quota table (docs/performance.md).
var All = []Quota{
	SQSPolicyBytes, SQSPolicyConditions, SQSPolicyPrincipals, SQSPolicyStatements, SQSStatementActions, SQSQueueName,
	LambdaEnvironmentBytes, LambdaFunctionName, IAMRoleName, IAMTrustPolicy, IAMInlinePolicies, IAMManagedPolicies,
	EventBridgeRulesPerBus, EventBridgeTargets, EventBridgeRuleName, ScheduleName, AlarmName, DashboardWidgets,
	StackSetTemplateBytes,
}

// Resource is a declared resource as the offline render shows it.
type Resource struct {
	Type, Name, Account string
	Inputs              map[string]any
}

// Figure is a measure of a quota at a resource.
type Figure struct {
	Quota Quota
	Value int
	// Where names the resource (or group of resources) measured.
	Where string
}

// Over reports whether the figure passes its quota.
func (f Figure) Over() bool { return f.Value > f.Quota.Limit }

func (f Figure) String() string {
	return fmt.Sprintf("%s: %d %s, over the limit of %d (%s)", f.Where, f.Value, f.Quota.What, f.Quota.Limit, f.Quota.Doc)
}

// Measure returns every figure of rs, and the worst of each quota measured.
func Measure(rs []Resource) (all []Figure, worst map[string]Figure) {
	add := func(q Quota, value int, where string) {
		all = append(all, Figure{Quota: q, Value: value, Where: where})
	}
	inline := map[string]int{}  // account/role -> characters
	managed := map[string]int{} // account/role -> attachments
	rules := map[string]int{}   // account/bus -> rules
	targets := map[string]int{} // account/rule -> targets
	for _, r := range rs {
		where := r.Type + " " + r.Name
		if r.Account != "" {
			where += " (account " + r.Account + ")"
		}
		str := func(k string) string { s, _ := r.Inputs[k].(string); return s }
		switch r.Type {
		case "aws:sqs/queuePolicy:QueuePolicy":
			for _, f := range SQSPolicy(str("policy")) {
				add(f.Quota, f.Value, where)
			}
		case "aws:sqs/queue:Queue":
			add(SQSQueueName, len(str("name")), where)
		case "aws:lambda/function:Function":
			add(LambdaFunctionName, len(str("name")), where)
			env, _ := r.Inputs["environment"].(map[string]any)
			vars, _ := env["variables"].(map[string]any)
			n := 0
			for k, v := range vars {
				n += len(k) + len(fmt.Sprint(v))
			}
			add(LambdaEnvironmentBytes, n, where)
		case "aws:iam/role:Role":
			add(IAMRoleName, len(str("name")), where)
			add(IAMTrustPolicy, IAMSize(str("assumeRolePolicy")), where)
			if arns, ok := r.Inputs["managedPolicyArns"].([]any); ok {
				managed[r.Account+"/"+str("name")] += len(arns)
			}
		case "aws:iam/rolePolicy:RolePolicy":
			inline[r.Account+"/"+str("role")] += IAMSize(str("policy"))
		case "aws:iam/rolePolicyAttachment:RolePolicyAttachment":
			managed[r.Account+"/"+str("role")]++
		case "aws:cloudwatch/eventRule:EventRule":
			add(EventBridgeRuleName, len(str("name")), where)
			bus := str("eventBusName")
			if bus == "" {
				bus = "default"
			}
			rules[r.Account+"/"+bus]++
		case "aws:cloudwatch/eventTarget:EventTarget":
			targets[r.Account+"/"+str("rule")]++
		case "aws:scheduler/schedule:Schedule", "aws:scheduler/scheduleGroup:ScheduleGroup":
			add(ScheduleName, len(str("name")), where)
		case "aws:cloudwatch/metricAlarm:MetricAlarm":
			add(AlarmName, len(str("name")), where)
		case "aws:cloudwatch/dashboard:Dashboard":
			var body struct{ Widgets []json.RawMessage }
			_ = json.Unmarshal([]byte(str("dashboardBody")), &body)
			add(DashboardWidgets, len(body.Widgets), where)
		case "aws:cloudformation/stackSet:StackSet":
			add(StackSetTemplateBytes, len(str("templateBody")), where)
		}
	}
	// What a StackSet's template declares in each account it reaches is measured as the resources themselves.
	var inTemplates []Resource
	for _, r := range rs {
		if r.Type == "aws:cloudformation/stackSet:StackSet" {
			body, _ := r.Inputs["templateBody"].(string)
			inTemplates = append(inTemplates, TemplateResources(r.Name, body)...)
		}
	}
	if len(inTemplates) > 0 {
		more, _ := Measure(inTemplates)
		all = append(all, more...)
	}
	for _, group := range []struct {
		q      Quota
		counts map[string]int
		what   string
	}{
		{IAMInlinePolicies, inline, "role"}, {IAMManagedPolicies, managed, "role"},
		{EventBridgeRulesPerBus, rules, "event bus"}, {EventBridgeTargets, targets, "rule"},
	} {
		keys := make([]string, 0, len(group.counts))
		for k := range group.counts {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			account, name, _ := strings.Cut(k, "/")
			add(group.q, group.counts[k], fmt.Sprintf("%s %s (account %s)", group.what, name, account))
		}
	}
	worst = map[string]Figure{}
	for _, f := range all {
		if w, ok := worst[f.Quota.Key]; !ok || f.Value > w.Value {
			worst[f.Quota.Key] = f
		}
	}
	return all, worst
}

// TemplateAccount stands for an account a StackSet deploys to when its template is measured: the longest an
// account ID is.
const TemplateAccount = "999999999999"

// TemplateResources are the resources of a CloudFormation template, as the Pulumi resources of the same kind
// Measure knows: roles (and their inline policies), queues and their policies, rules (and their targets), alarms,
// schedule groups and schedules. Fn::Sub strings are measured with the account TemplateAccount; other intrinsic
// functions as their logical IDs. The account of each is "<set> (each account)".
func TemplateResources(set, body string) []Resource {
	var t struct {
		Resources map[string]struct {
			Type       string
			Properties map[string]any
		}
	}
	if err := json.Unmarshal([]byte(body), &t); err != nil {
		return nil
	}
	account := set + " (each account)"
	var out []Resource
	for _, id := range slices.Sorted(maps.Keys(t.Resources)) {
		res := t.Resources[id]
		p, _ := resolve(res.Properties).(map[string]any)
		str := func(k string) string { s, _ := p[k].(string); return s }
		doc := func(k string) string { b, _ := json.Marshal(p[k]); return string(b) }
		add := func(typ string, inputs map[string]any) {
			out = append(out, Resource{Type: typ, Name: id, Account: account, Inputs: inputs})
		}
		switch res.Type {
		case "AWS::IAM::Role":
			add("aws:iam/role:Role", map[string]any{"name": str("RoleName"), "assumeRolePolicy": doc("AssumeRolePolicyDocument"), "managedPolicyArns": p["ManagedPolicyArns"]})
			policies, _ := p["Policies"].([]any)
			for _, x := range policies {
				pol, _ := x.(map[string]any)
				b, _ := json.Marshal(pol["PolicyDocument"])
				add("aws:iam/rolePolicy:RolePolicy", map[string]any{"role": str("RoleName"), "policy": string(b)})
			}
		case "AWS::SQS::Queue":
			add("aws:sqs/queue:Queue", map[string]any{"name": str("QueueName")})
		case "AWS::SQS::QueuePolicy":
			add("aws:sqs/queuePolicy:QueuePolicy", map[string]any{"policy": doc("PolicyDocument")})
		case "AWS::Events::Rule":
			add("aws:cloudwatch/eventRule:EventRule", map[string]any{"name": str("Name"), "eventBusName": str("EventBusName")})
			targets, _ := p["Targets"].([]any)
			for range targets {
				add("aws:cloudwatch/eventTarget:EventTarget", map[string]any{"rule": str("Name")})
			}
		case "AWS::CloudWatch::Alarm":
			add("aws:cloudwatch/metricAlarm:MetricAlarm", map[string]any{"name": str("AlarmName")})
		case "AWS::Scheduler::ScheduleGroup":
			add("aws:scheduler/scheduleGroup:ScheduleGroup", map[string]any{"name": str("Name")})
		case "AWS::Scheduler::Schedule":
			add("aws:scheduler/schedule:Schedule", map[string]any{"name": str("Name")})
		}
	}
	return out
}

// resolve replaces a template's intrinsic functions by what they stand for when measured: Fn::Sub by its string
// in TemplateAccount, Ref and Fn::GetAtt by their logical ID.
func resolve(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 1 {
			if s, ok := x["Fn::Sub"].(string); ok {
				return strings.NewReplacer("${AWS::AccountId}", TemplateAccount, "${AWS::Region}", "ap-southeast-2", "${AWS::Partition}", "aws-us-gov").Replace(s)
			}
			if ref, ok := x["Ref"].(string); ok {
				return ref
			}
			if att, ok := x["Fn::GetAtt"].([]any); ok && len(att) == 2 {
				return fmt.Sprint(att[0], ".", att[1])
			}
		}
		out := make(map[string]any, len(x))
		for k, y := range x {
			out[k] = resolve(y)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, y := range x {
			out[i] = resolve(y)
		}
		return out
	}
	return v
}

// SQSPolicy measures a queue policy against SQS's policy quotas: its bytes, statements, principals, conditions,
// and the most actions of a statement.
func SQSPolicy(doc string) []Figure {
	var d struct {
		Statement []struct {
			Principal any
			Action    any
			Condition map[string]map[string]any
		}
	}
	_ = json.Unmarshal([]byte(doc), &d)
	principals, conditions, actions := 0, 0, 0
	for _, st := range d.Statement {
		switch p := st.Principal.(type) {
		case string:
			principals++
		case map[string]any:
			for _, v := range p {
				if list, ok := v.([]any); ok {
					principals += len(list)
				} else {
					principals++
				}
			}
		}
		for _, kv := range st.Condition {
			conditions += len(kv)
		}
		if list, ok := st.Action.([]any); ok {
			actions = max(actions, len(list))
		} else {
			actions = max(actions, 1)
		}
	}
	return []Figure{
		{Quota: SQSPolicyBytes, Value: len(doc)}, {Quota: SQSPolicyStatements, Value: len(d.Statement)},
		{Quota: SQSPolicyPrincipals, Value: principals}, {Quota: SQSPolicyConditions, Value: conditions},
		{Quota: SQSStatementActions, Value: actions},
	}
}

// IAMSize is a policy's size as IAM counts it against its quotas: its characters, white space not counted.
func IAMSize(doc string) int {
	n := 0
	for _, r := range doc {
		if !unicode.IsSpace(r) {
			n++
		}
	}
	return n
}
