package components_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	presource "github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/standin"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/provider/unknownmonitor"
)

// Two previews' marks: what the engine is handed of a child must not depend on which (a mark lost on the way, a
// name hashed from a stand-in, would be a value known at the preview and wrong).
var marksA, marksB = standin.Marks{Text: "kibaaaaaaa", Whole: "kiwaaaaaaa", Digits: "911111111111", Hex: "aaaaaaaaaaaaaaaaa"},
	standin.Marks{Text: "kibbbbbbbb", Whole: "kiwbbbbbbb", Digits: "922222222222", Hex: "bbbbbbbbbbbbbbbbb"}

// TestAPreviewDeclaresTheUpdatesChildren: a component with an input unknown at the preview registers there the
// children the update registers with the value known (the same URNs, so the engine plans no delete), each
// input as the engine sees it (through the monitor, unknownmonitor) the same whatever stands for the unknown,
// and unknown where it depends on it.
func TestAPreviewDeclaresTheUpdatesChildren(t *testing.T) {
	topic := "arn:aws:sns:us-east-1:" + hub + ":ops"
	cluster := func(extra presource.PropertyMap) presource.PropertyMap {
		m := presource.PropertyMap{"busName": pv("kib-prod"), "clusterName": pv("blue"), "heartbeatRate": pv("5m")}
		maps.Copy(m, extra)
		return m
	}
	for _, tt := range []struct {
		name           string
		typ            string
		preview, known presource.PropertyMap
		// unknown is a child's input the unknown makes unknown ("type name" input).
		unknown [2]string
		// outputs are the component's outputs the unknown makes unknown.
		outputs []string
	}{
		{"an alarm topic (the topic replaced)", "ClusterInterruption",
			cluster(presource.PropertyMap{"heartbeatAlarmActions": pv([]presource.PropertyValue{unknown()})}),
			cluster(presource.PropertyMap{"heartbeatAlarmActions": pv([]presource.PropertyValue{pv(topic)})}),
			[2]string{"aws:cloudwatch/metricAlarm:MetricAlarm c-karpenter-not-reading", "alarmActions"}, nil},
		{"the alarm topics, all of them", "ClusterInterruption",
			cluster(presource.PropertyMap{"heartbeatAlarmActions": unknown()}),
			cluster(presource.PropertyMap{"heartbeatAlarmActions": pv([]presource.PropertyValue{pv(topic), pv(topic)})}),
			[2]string{"aws:cloudwatch/metricAlarm:MetricAlarm c-karpenter-not-reading", "okActions"}, nil},
		{"the cluster's name", "ClusterInterruption",
			cluster(presource.PropertyMap{"clusterName": unknown()}), cluster(nil),
			[2]string{"aws:sqs/queue:Queue c-queue", "name"}, []string{"queueName", "queueArn", "kubeconfig", "controllerRoleArn"}},
		{"a tag's value", "ClusterInterruption",
			cluster(presource.PropertyMap{"tags": pv(presource.PropertyMap{"team": unknown()})}),
			cluster(presource.PropertyMap{"tags": pv(presource.PropertyMap{"team": pv("payments")})}),
			[2]string{"aws:sqs/queue:Queue c-queue", "tags"}, nil},
		{"the tags, all of them", "ClusterInterruption",
			cluster(presource.PropertyMap{"tags": unknown()}),
			cluster(presource.PropertyMap{"tags": pv(presource.PropertyMap{"team": pv("payments"), "cost": pv("42")})}),
			[2]string{"aws:iam/role:Role c-node-role", "tags"}, nil},
		{"a chart value", "ClusterInterruption",
			cluster(presource.PropertyMap{"karpenter": pv(presource.PropertyMap{"values": pv(presource.PropertyMap{"logLevel": unknown()})})}),
			cluster(presource.PropertyMap{"karpenter": pv(presource.PropertyMap{"values": pv(presource.PropertyMap{"logLevel": pv("debug")})})}),
			[2]string{"kubernetes:helm.sh/v3:Release c-karpenter", "values"}, nil},
		{"a chart value's settings, all of them", "ClusterInterruption",
			cluster(presource.PropertyMap{"karpenter": pv(presource.PropertyMap{"values": pv(presource.PropertyMap{"settings": unknown()})})}),
			cluster(presource.PropertyMap{"karpenter": pv(presource.PropertyMap{"values": pv(presource.PropertyMap{"settings": pv(presource.PropertyMap{"featureGates": pv(presource.PropertyMap{"spotToSpotConsolidation": pv(true)})})})})}),
			[2]string{"kubernetes:helm.sh/v3:Release c-karpenter", "values"}, nil},
		{"the service account's chart values, all of them", "ClusterInterruption",
			cluster(presource.PropertyMap{"karpenter": pv(presource.PropertyMap{"values": pv(presource.PropertyMap{"serviceAccount": unknown()})})}),
			cluster(presource.PropertyMap{"karpenter": pv(presource.PropertyMap{"values": pv(presource.PropertyMap{"serviceAccount": pv(presource.PropertyMap{"annotations": pv(presource.PropertyMap{"team": pv("payments")})})})})}),
			[2]string{"kubernetes:helm.sh/v3:Release c-karpenter", "values"}, nil},
		{"the bus's name", "ClusterInterruption",
			cluster(presource.PropertyMap{"busName": unknown()}), cluster(nil),
			[2]string{"aws:sqs/queuePolicy:QueuePolicy c-queue", "policy"}, []string{"queueName"}},
		{"the hub's account, with a member baseline", "ClusterInterruption",
			cluster(presource.PropertyMap{"hubAccountId": unknown(), "memberBaseline": pv(true)}),
			cluster(presource.PropertyMap{"hubAccountId": pv(member), "memberBaseline": pv(true)}),
			[2]string{"aws:iam/role:Role c-member-baseline-reader", "assumeRolePolicy"}, nil},
		{"Karpenter's namespace", "ClusterInterruption",
			cluster(presource.PropertyMap{"karpenter": pv(presource.PropertyMap{"namespace": unknown()})}),
			cluster(presource.PropertyMap{"karpenter": pv(presource.PropertyMap{"namespace": pv("karpenter")})}),
			[2]string{"kubernetes:helm.sh/v3:Release c-karpenter", "namespace"}, nil},
		{"Karpenter's service account", "ClusterInterruption",
			cluster(presource.PropertyMap{"karpenter": pv(presource.PropertyMap{"serviceAccount": unknown()})}),
			cluster(presource.PropertyMap{"karpenter": pv(presource.PropertyMap{"serviceAccount": pv("kpt")})}),
			[2]string{"aws:eks/podIdentityAssociation:PodIdentityAssociation c-pod-identity", "serviceAccount"}, nil},
		{"the existing controller role", "ClusterInterruption",
			cluster(presource.PropertyMap{"mode": pv("existing-role"), "controllerRoleName": unknown()}),
			cluster(presource.PropertyMap{"mode": pv("existing-role"), "controllerRoleName": pv("KarpenterController")}),
			[2]string{"aws:iam/rolePolicy:RolePolicy c-interruption", "role"}, []string{"controllerRoleArn"}},
		{"the bus's owner tag keys", "Bus",
			presource.PropertyMap{"namePrefix": pv("kib-prod"), "router": pv(presource.PropertyMap{"ownerTagKeys": pv([]presource.PropertyValue{unknown()})})},
			presource.PropertyMap{"namePrefix": pv("kib-prod"), "router": pv(presource.PropertyMap{"ownerTagKeys": pv([]presource.PropertyValue{pv("team")})})},
			[2]string{"aws:lambda/function:Function c-router", "environment"}, nil},
		{"the organization", "Bus",
			presource.PropertyMap{"namePrefix": pv("kib-prod"), "organization": pv(presource.PropertyMap{"id": unknown(), "memberOUs": pv([]presource.PropertyValue{unknown()})})},
			presource.PropertyMap{"namePrefix": pv("kib-prod"), "organization": pv(presource.PropertyMap{"id": pv("o-abc123defg"), "memberOUs": pv([]presource.PropertyValue{pv("ou-ab12-cdef3456")})})},
			[2]string{"aws:sqs/queuePolicy:QueuePolicy c-central", "policy"}, nil},
		{"a member's deploy role and topic", "Bus",
			presource.PropertyMap{"namePrefix": pv("kib-prod"), "accounts": pv(presource.PropertyMap{member: pv(presource.PropertyMap{"deployRoleArn": unknown(), "alarmTopicArn": unknown()})})},
			presource.PropertyMap{"namePrefix": pv("kib-prod"), "accounts": pv(presource.PropertyMap{member: pv(presource.PropertyMap{
				"deployRoleArn": pv("arn:aws:iam::" + member + ":role/deploy"), "alarmTopicArn": pv("arn:aws:sns:us-east-1:" + member + ":ops")})})},
			[2]string{"pulumi:providers:aws c-account-" + member, "assumeRole"}, nil},
		// A member account's children are named after the component whatever namePrefix is, even one that starts
		// like their names.
		{"the bus's name prefix, with a member", "Bus",
			presource.PropertyMap{"namePrefix": unknown(), "accounts": pv(presource.PropertyMap{member: pv(presource.PropertyMap{"deployRoleArn": pv("arn:aws:iam::" + member + ":role/deploy")})})},
			presource.PropertyMap{"namePrefix": pv("account"), "accounts": pv(presource.PropertyMap{member: pv(presource.PropertyMap{"deployRoleArn": pv("arn:aws:iam::" + member + ":role/deploy")})})},
			[2]string{"aws:sqs/queue:Queue c-central", "name"}, []string{"busName"}},
		// The trust's size is the update's to judge when a principal is unknown: the stand-in is not its length.
		{"a redrive principal, among many", "Bus",
			presource.PropertyMap{"namePrefix": pv("kib-prod"), "redrive": pv(presource.PropertyMap{"principals": pv(append(principals(47), unknown()))})},
			presource.PropertyMap{"namePrefix": pv("kib-prod"), "redrive": pv(presource.PropertyMap{"principals": pv(append(principals(47), pv("arn:aws:iam::"+hub+":role/a")))})},
			[2]string{"aws:iam/role:Role c-redrive", "assumeRolePolicy"}, nil},
		{"the bus's alarm topic", "Bus",
			presource.PropertyMap{"namePrefix": pv("kib-prod"), "alarms": pv(presource.PropertyMap{"topicArn": unknown()})},
			presource.PropertyMap{"namePrefix": pv("kib-prod"), "alarms": pv(presource.PropertyMap{"topicArn": pv(topic)})},
			[2]string{"aws:cloudwatch/metricAlarm:MetricAlarm c-alarms-dlq-not-empty", "alarmActions"}, nil},
		{"a redrive principal", "Bus",
			presource.PropertyMap{"namePrefix": pv("kib-prod"), "redrive": pv(presource.PropertyMap{"principals": pv([]presource.PropertyValue{unknown()})})},
			presource.PropertyMap{"namePrefix": pv("kib-prod"), "redrive": pv(presource.PropertyMap{"principals": pv([]presource.PropertyValue{pv("arn:aws:iam::" + hub + ":role/ops")})})},
			[2]string{"aws:iam/role:Role c-redrive", "assumeRolePolicy"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			world := func(update bool) *mocks.Mocks {
				return &mocks.Mocks{SpotServiceLinkedRole: []string{hub, member}, Existing: []string{"blue"}, Update: update}
			}
			var seen [2]map[string]mocks.Resource
			for i, m := range []standin.Marks{marksA, marksB} {
				previewMarks = m
				resp, got, err := constructWith(t, world(false), tt.typ, tt.preview)
				previewMarks = marksA
				if err != nil {
					t.Fatalf("the preview: %v", err)
				}
				for _, o := range tt.outputs {
					if v := output(t, resp, o); !v.IsComputed() {
						t.Errorf("output %s = %v at the preview, want unknown", o, v)
					}
				}
				seen[i] = map[string]mocks.Resource{}
				for k, r := range got {
					r.Inputs = asTheEngineSees(t, r.Inputs, unknownmonitor.Inputs{Marks: m})
					seen[i][k] = r
				}
			}
			_, update, err := constructWith(t, world(true), tt.typ, tt.known)
			if err != nil {
				t.Fatalf("the update: %v", err)
			}
			if got, want := slices.Sorted(maps.Keys(seen[0])), slices.Sorted(maps.Keys(update)); !slices.Equal(got, want) {
				t.Fatalf("the preview declares\n%v\nthe update\n%v", got, want)
			}
			for k, r := range seen[0] {
				if fmt.Sprint(r.Inputs) != fmt.Sprint(seen[1][k].Inputs) {
					t.Errorf("%s depends on what stands for the unknown:\n%v\n%v", k, r.Inputs, seen[1][k].Inputs)
				}
			}
			child, ok := seen[0][tt.unknown[0]]
			if !ok {
				t.Fatalf("no %s among %v", tt.unknown[0], slices.Sorted(maps.Keys(seen[0])))
			}
			if v := child.Inputs[presource.PropertyKey(tt.unknown[1])]; !v.ContainsUnknowns() {
				t.Errorf("%s's %s = %v, want unknown", tt.unknown[0], tt.unknown[1], v)
			}
		})
	}
}

func pv[T presource.PropertyValueType](v T) presource.PropertyValue { return presource.NewProperty(v) }

// principals are n roles of the hub, as redrive.principals names them.
func principals(n int) []presource.PropertyValue {
	out := make([]presource.PropertyValue, n)
	for i := range out {
		out[i] = pv(fmt.Sprintf("arn:aws:iam::%s:role/r%02d", hub, i))
	}
	return out
}

// asTheEngineSees is inputs as the monitor hands them to the engine, for a component of in (the unit tests'
// fake engine bypasses the monitor: pulumi-go-provider's integration harness dials its own).
func asTheEngineSees(t *testing.T, inputs presource.PropertyMap, in unknownmonitor.Inputs) presource.PropertyMap {
	t.Helper()
	opts := plugin.MarshalOptions{KeepUnknowns: true, KeepSecrets: true, KeepResources: true}
	s, err := plugin.MarshalProperties(inputs, opts)
	if err != nil {
		t.Fatal(err)
	}
	v := unknownmonitor.Secret(unknownmonitor.Unknown(structpb.NewStructValue(s), in.Marks), in.Secrets)
	out, err := plugin.UnmarshalProperties(proto.Clone(v.GetStructValue()).(*structpb.Struct), opts)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
