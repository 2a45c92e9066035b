package infra_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/cluster"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/heartbeat"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/layout"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/stacktest"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// TestHeartbeatPerCluster: every cluster, whatever its mode, has a schedule putting a canary naming it (and its
// bus) on the default event bus, with the heartbeat role; and an alarm on its queue over two beats.
func TestHeartbeatPerCluster(t *testing.T) {
	const topic = "arn:aws:sns:us-east-1:123456789012:oncall"
	cfg := clusters(`{"name":"a"}`, `{"name":"b","mode":"existing-role","controllerRoleName":"k"}`)
	cfg["alarms"] = `{"topicArn":"` + topic + `"}`
	r := mustRun(t, "dev", cfg)
	for _, c := range []string{"a", "b"} {
		t.Run(c, func(t *testing.T) {
			s := r.resources.Under(c).One(t, "aws:scheduler/schedule:Schedule")
			target := stacktest.Plain(s)["target"].(map[string]any)
			var detail contract.CanaryDetail
			if err := json.Unmarshal([]byte(target["input"].(string)), &detail); err != nil {
				t.Fatal(err)
			}
			eb := target["eventbridgeParameters"].(map[string]any)
			if stacktest.Str(t, s, "name") != c || stacktest.Str(t, s, "groupName") != "kib-dev-heartbeat" ||
				stacktest.Str(t, s, "scheduleExpression") != "rate(5 minutes)" ||
				target["arn"] != "arn:aws:events:"+mocks.DefaultRegion+":123456789012:event-bus/default" ||
				target["roleArn"] != "arn:aws:iam::123456789012:role/kib-dev-heartbeat-us-east-1" ||
				eb["source"] != contract.SourceCanary || eb["detailType"] != contract.DetailTypeCanary ||
				detail.Bus != "kib-dev" || !slices.Equal(detail.Clusters, []string{c}) {
				t.Errorf("schedule %s = %s", c, stacktest.InputsJSON(s))
			}

			a := r.resources.Under(c).Named(t, "aws:cloudwatch/metricAlarm:MetricAlarm", c+"-karpenter-not-reading")
			in := stacktest.Plain(a)
			if in["name"] != layout.HeartbeatAlarmName("kib-dev", c) || in["name"] != "kib-dev-"+c+"-karpenter-not-reading" ||
				in["treatMissingData"] != "breaching" || in["threshold"] != 1.0 || in["comparisonOperator"] != "GreaterThanOrEqualToThreshold" ||
				in["evaluationPeriods"] != 4.0 || in["datapointsToAlarm"] != 3.0 ||
				!slices.Equal(in["alarmActions"].([]any), []any{topic}) || !slices.Equal(in["okActions"].([]any), []any{topic}) {
				t.Errorf("alarm %s = %s", c, stacktest.InputsJSON(a))
			}
			queries := map[string]map[string]any{}
			for _, q := range in["metricQueries"].([]any) {
				q := q.(map[string]any)
				queries[q["id"].(string)] = q
			}
			for id, metric := range map[string]string{"age": "ApproximateAgeOfOldestMessage", "deleted": "NumberOfMessagesDeleted"} {
				m, _ := queries[id]["metric"].(map[string]any)
				dims, _ := m["dimensions"].(map[string]any)
				if m["namespace"] != "AWS/SQS" || m["metricName"] != metric || m["period"] != 300.0 || dims["QueueName"] != "kib-dev_"+c {
					t.Errorf("query %s = %v, want %s of kib-dev_%s over 300 s (one beat)", id, queries[id], metric, c)
				}
			}
			if e := queries["notReading"]; e["expression"] != "IF(FILL(age, 0) > 120 OR FILL(deleted, 0) == 0, 1, 0)" || e["returnData"] != true {
				t.Errorf("expression = %v, want the queue's oldest message over 120 s or no delete, as 1", e)
			}
		})
	}
	arn := r.outputs["clusters"].(map[string]any)["a"].(map[string]any)["heartbeatAlarmArn"]
	if arn != "arn:aws:cloudwatch:"+mocks.DefaultRegion+":123456789012:alarm:kib-dev-a-karpenter-not-reading" {
		t.Errorf("output clusters.a.heartbeatAlarmArn = %v", arn)
	}
}

func TestHeartbeatRole(t *testing.T) {
	r := mustRun(t, "dev", clusters(`{"name":"a"}`))
	role := r.resources.Named(t, "aws:iam/role:Role", "kib-dev-heartbeat")
	trust := stacktest.Doc(t, role, "assumeRolePolicy").Statement[0]
	cond, _ := json.Marshal(trust.Condition)
	if p, _ := json.Marshal(trust.Principal); string(p) != `{"Service":"scheduler.amazonaws.com"}` ||
		string(cond) != `{"ArnEquals":{"aws:SourceArn":"arn:aws:scheduler:`+mocks.DefaultRegion+`:123456789012:schedule-group/kib-dev-heartbeat"},"StringEquals":{"aws:SourceAccount":"123456789012"}}` {
		t.Errorf("heartbeat trust = %+v", trust)
	}
	doc := stacktest.Doc(t, r.resources.Named(t, "aws:iam/rolePolicy:RolePolicy", "kib-dev-heartbeat"), "policy")
	if len(doc.Statement) != 1 {
		t.Fatalf("heartbeat policy has %d statements, want 1", len(doc.Statement))
	}
	s := doc.Statement[0]
	cond, _ = json.Marshal(s.Condition)
	if !slices.Equal(s.Action, []string{"events:PutEvents"}) ||
		!slices.Equal(s.Resource, []string{"arn:aws:events:" + mocks.DefaultRegion + ":123456789012:event-bus/default"}) ||
		string(cond) != `{"ForAllValues:StringEquals":{"events:detail-type":["Interruption Bus Canary"],"events:source":["karpenter-interruption-bus.canary"]},"Null":{"events:detail-type":"false","events:source":"false"}}` {
		t.Errorf("heartbeat policy = %+v", s)
	}
}

// TestHeartbeatRate: the alarm looks at one datapoint per beat, M of N breaching (heartbeat.EvaluationFor), and
// its age branch can fire at every rate: its threshold is below the queue's retention.
func TestHeartbeatRate(t *testing.T) {
	tests := []struct {
		rate, expression string
		period, m, n     float64
	}{
		{"1m", "rate(1 minute)", 60, 4, 5},
		{"2m", "rate(2 minutes)", 120, 3, 4},
		{"5m", "rate(5 minutes)", 300, 3, 4},
		{"60m", "rate(60 minutes)", 3600, 3, 4},
	}
	for _, tt := range tests {
		cfg := clusters(`{"name":"a"}`)
		cfg["heartbeat"] = `{"rate":"` + tt.rate + `"}`
		r := mustRun(t, "dev", cfg)
		if got := stacktest.Str(t, r.resources.Under("a").One(t, "aws:scheduler/schedule:Schedule"), "scheduleExpression"); got != tt.expression {
			t.Errorf("rate %s: expression = %s", tt.rate, got)
		}
		in := stacktest.Plain(r.resources.Under("a").Named(t, "aws:cloudwatch/metricAlarm:MetricAlarm", "a-karpenter-not-reading"))
		if in["datapointsToAlarm"] != tt.m || in["evaluationPeriods"] != tt.n {
			t.Errorf("rate %s: %v of %v datapoints alarm, want %v of %v", tt.rate, in["datapointsToAlarm"], in["evaluationPeriods"], tt.m, tt.n)
		}
		for _, q := range in["metricQueries"].([]any) {
			q := q.(map[string]any)
			if m, ok := q["metric"].(map[string]any); ok && m["period"] != tt.period {
				t.Errorf("rate %s: query %v has period %v, want %v (one beat)", tt.rate, q["id"], m["period"], tt.period)
			}
			if e, ok := q["expression"].(string); ok && !strings.Contains(e, fmt.Sprintf("> %d ", int(heartbeat.AgeThreshold.Seconds()))) {
				t.Errorf("rate %s: expression %s", tt.rate, e)
			}
		}
	}
	if heartbeat.AgeThreshold >= cluster.QueueRetentionSeconds*time.Second {
		t.Errorf("age threshold %s is not below the queues' retention, %d s: the age branch could never fire", heartbeat.AgeThreshold, cluster.QueueRetentionSeconds)
	}
}

// TestHeartbeatDisabled: no schedule, no role, no alarm per cluster; the canary rule stays, for verify.
func TestHeartbeatDisabled(t *testing.T) {
	cfg := clusters(`{"name":"a"}`)
	cfg["heartbeat"] = `{"enabled":false}`
	r := mustRun(t, "dev", cfg)
	for _, typ := range []string{"aws:scheduler/schedule:Schedule", "aws:scheduler/scheduleGroup:ScheduleGroup", "karpenter-interruption-bus:index:Heartbeat"} {
		if n := len(r.resources.OfType(typ)); n != 0 {
			t.Errorf("%d %s declared with the heartbeat disabled", n, typ)
		}
	}
	if n := len(r.resources.Under("a").OfType("aws:cloudwatch/metricAlarm:MetricAlarm")); n != 0 {
		t.Errorf("%d alarms on cluster a without a heartbeat", n)
	}
	r.resources.Named(t, "aws:cloudwatch/eventRule:EventRule", "kib-dev-canary")
	if arn := r.outputs["clusters"].(map[string]any)["a"].(map[string]any)["heartbeatAlarmArn"]; arn != "" {
		t.Errorf("heartbeatAlarmArn = %v without a heartbeat", arn)
	}
}
