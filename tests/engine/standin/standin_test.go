package standin

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/tokens"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// TestNamesAWSRefuses: a test per rule of uniqueKey. A second create of a name AWS keeps unique and already
// holds is refused, in the scope AWS keeps it (IAM across regions and case, SQS, log groups and schedule groups per
// region, schedules per group, EKS access entries per principal and pod identity associations per service account
// of a cluster, Helm releases per namespace of a cluster), whether the first is the stack's or one it retained on
// delete (it stays in the store, as it stays in AWS); another name, or the same name in another scope, is created.
func TestNamesAWSRefuses(t *testing.T) {
	role := func(n string) map[string]any { return map[string]any{"name": n, "assumeRolePolicy": "{}"} }
	tests := []struct {
		name, typ          string
		first, same, other map[string]any
		refusal            string
	}{
		{"IAM roles, case folded", "aws:iam/role:Role", role("KarpenterNode-prod-eu-west-1"), role("KarpenterNode-Prod-eu-west-1"), role("KarpenterNode-dev-eu-west-1"), "EntityAlreadyExists"},
		{"IAM policies, case folded", "aws:iam/policy:Policy", map[string]any{"name": "p", "policy": "{}"}, map[string]any{"name": "P", "policy": "{}"}, map[string]any{"name": "q", "policy": "{}"}, "EntityAlreadyExists"},
		{"SQS queues, other attributes", "aws:sqs/queue:Queue", map[string]any{"name": "kib_a", "messageRetentionSeconds": 300.0},
			map[string]any{"name": "kib_a", "messageRetentionSeconds": 600.0}, map[string]any{"name": "kib_b"}, "QueueAlreadyExists"},
		{"log groups", "aws:cloudwatch/logGroup:LogGroup", map[string]any{"name": "/aws/lambda/kib-router"}, map[string]any{"name": "/aws/lambda/kib-router", "retentionInDays": 7.0},
			map[string]any{"name": "/aws/lambda/other"}, "ResourceAlreadyExistsException"},
		{"schedule groups", "aws:scheduler/scheduleGroup:ScheduleGroup", map[string]any{"name": "kib-heartbeat"}, map[string]any{"name": "kib-heartbeat"}, map[string]any{"name": "kib2-heartbeat"}, "ConflictException"},
		{"schedules, per group", "aws:scheduler/schedule:Schedule", map[string]any{"name": "prod", "groupName": "kib-heartbeat"},
			map[string]any{"name": "prod", "groupName": "kib-heartbeat", "description": "again"}, map[string]any{"name": "prod", "groupName": "kib2-heartbeat"}, "ConflictException"},
		{"EKS access entries, per principal", "aws:eks/accessEntry:AccessEntry", map[string]any{"clusterName": "prod", "principalArn": "arn:aws:iam::111111111111:role/n", "type": "EC2_LINUX"},
			map[string]any{"clusterName": "prod", "principalArn": "arn:aws:iam::111111111111:role/n", "type": "STANDARD"},
			map[string]any{"clusterName": "dev", "principalArn": "arn:aws:iam::111111111111:role/n"}, "ResourceInUseException"},
		{"pod identity associations, per service account", "aws:eks/podIdentityAssociation:PodIdentityAssociation",
			map[string]any{"clusterName": "prod", "namespace": "kube-system", "serviceAccount": "karpenter", "roleArn": "arn:aws:iam::111111111111:role/a"},
			map[string]any{"clusterName": "prod", "namespace": "kube-system", "serviceAccount": "karpenter", "roleArn": "arn:aws:iam::111111111111:role/b"},
			map[string]any{"clusterName": "prod", "namespace": "karpenter", "serviceAccount": "karpenter"}, "ResourceInUseException"},
		{"Helm releases, per namespace", "kubernetes:helm.sh/v3:Release", map[string]any{"name": "karpenter", "namespace": "kube-system", "version": "1.15.1"},
			map[string]any{"name": "karpenter", "namespace": "kube-system", "version": "1.14.1"}, map[string]any{"name": "karpenter", "namespace": "karpenter"}, "cannot re-use a name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newStandin(t, nil)
			if _, err := create(p, tt.typ, "first", tt.first); err != nil {
				t.Fatalf("the first: %v", err)
			}
			if _, err := create(p, tt.typ, "second", tt.same); err == nil || !strings.Contains(err.Error(), tt.refusal) {
				t.Errorf("a second of the same name: %v, want %s", err, tt.refusal)
			}
			if _, err := create(p, tt.typ, "other", tt.other); err != nil {
				t.Errorf("another name, or another scope: %v", err)
			}
		})
	}
}

// TestIAMNamesAreGlobalToTheAccount: a role of one name in one account is refused whatever the region, and
// created in another account.
func TestIAMNamesAreGlobalToTheAccount(t *testing.T) {
	p := newStandin(t, nil)
	if _, err := create(p, "aws:iam/role:Role", "a", map[string]any{"name": "kib-router-x"}); err != nil {
		t.Fatal(err)
	}
	other := &Provider{Package: "aws", World: World{Region: "ap-south-1", Account: p.World.Account}, Store: p.Store}
	if _, err := create(other, "aws:iam/role:Role", "b", map[string]any{"name": "kib-router-x"}); err == nil {
		t.Error("the same role name in another region of the account was created")
	}
	elsewhere := &Provider{Package: "aws", World: World{Region: "us-east-1", Account: "222222222222"}, Store: p.Store}
	if _, err := create(elsewhere, "aws:iam/role:Role", "c", map[string]any{"name": "kib-router-x"}); err != nil {
		t.Errorf("another account's role of the name: %v", err)
	}
}

// TestQueueNamesHeldAMinute: SQS refuses a queue name deleted less than 60 seconds ago, and takes it after; a
// CreateQueue of an existing queue with the same attributes answers that queue, as SQS does.
func TestQueueNamesHeldAMinute(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	p := newStandin(t, func() time.Time { return now })
	in := map[string]any{"name": "kib_a", "messageRetentionSeconds": 300.0}
	id, err := create(p, "aws:sqs/queue:Queue", "q", in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := create(p, "aws:sqs/queue:Queue", "q-again", in); err != nil {
		t.Errorf("the same queue with the same attributes: %v, want its URL", err)
	}
	if _, err := p.Delete(context.Background(), &pulumirpc.DeleteRequest{Urn: string(urn("aws:sqs/queue:Queue", "q")), Id: id}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(59 * time.Second)
	if _, err := create(p, "aws:sqs/queue:Queue", "q2", in); err == nil || !strings.Contains(err.Error(), "QueueDeletedRecently") {
		t.Errorf("59 s after its deletion: %v, want QueueDeletedRecently", err)
	}
	now = now.Add(2 * time.Second)
	if _, err := create(p, "aws:sqs/queue:Queue", "q3", in); err != nil {
		t.Errorf("61 s after its deletion: %v", err)
	}
}

// TestRulesAreOverwritten: EventBridge's PutRule creates or updates: a second rule of one name is not refused.
func TestRulesAreOverwritten(t *testing.T) {
	p := newStandin(t, nil)
	for _, n := range []string{"a", "b"} {
		if _, err := create(p, "aws:cloudwatch/eventRule:EventRule", n, map[string]any{"name": "kib-spot", "eventPattern": n}); err != nil {
			t.Errorf("rule %s: %v", n, err)
		}
	}
}

func newStandin(t *testing.T, now func() time.Time) *Provider {
	t.Helper()
	return &Provider{Package: "aws", World: World{Region: "eu-west-1", Account: "111111111111"}, Store: &Store{Dir: t.TempDir(), Now: now}}
}

func urn(typ, name string) resource.URN {
	return resource.NewURN("dev", "kib", "", tokens.Type(typ), name)
}

// create creates a resource of typ named name with inputs through the provider's Create, as the engine does in an
// update, and returns its ID.
func create(p *Provider, typ, name string, inputs map[string]any) (string, error) {
	props, err := marshal(resource.NewPropertyMapFromMap(inputs))
	if err != nil {
		return "", err
	}
	resp, err := p.Create(context.Background(), &pulumirpc.CreateRequest{Urn: string(urn(typ, name)), Properties: props})
	if err != nil {
		return "", err
	}
	return resp.GetId(), nil
}
