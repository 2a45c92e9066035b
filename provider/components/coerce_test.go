package components_test

import (
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
)

// TestNumbersForStrings: Pulumi YAML hands a string configuration value that looks like a number to the provider
// as a number (checked with pulumi-language-yaml v1.38.0 and the v3.259.0 CLI; the engine test runs it). A
// ClusterInterruption takes the account ID it meant, zero-padded to 12 digits when YAML dropped a leading zero,
// and still refuses what is not an account ID, naming the argument.
func TestNumbersForStrings(t *testing.T) {
	const memberWithZero = "012345678901"
	tests := []struct {
		name    string
		hub     any
		account string // the member's account, where the cluster is
		want    string // a queue policy statement names the hub's account, or the error
		wantErr string
	}{
		{name: "a 12-digit number", hub: 123456789012.0, account: member, want: "arn:aws:iam::123456789012:role/kib-prod-router-us-east-1"},
		{name: "a leading zero YAML dropped", hub: 12345678901.0, account: member, want: "arn:aws:iam::" + memberWithZero + ":role/kib-prod-router-us-east-1"},
		{name: "not a whole number", hub: 1.5, account: member, wantErr: `hubAccountId: "1.5" is not an AWS account ID`},
		{name: "too many digits", hub: 1234567890123.0, account: member, wantErr: `hubAccountId: "1234567890123" is not an AWS account ID`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			world := &mocks.Mocks{Account: tt.account, Existing: []string{"green"}}
			resp, rs, err := construct(t, world, "ClusterInterruption", "green", map[string]any{
				"busName": "kib-prod", "hubAccountId": tt.hub, "clusterName": "green", "mode": "existing-role",
				"controllerRoleName": "KarpenterController-green",
			})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_ = resp
			policy := declared(rs)["aws:sqs/queuePolicy:QueuePolicy green-queue"]
			if !strings.Contains(policy.Inputs["policy"].StringValue(), tt.want) {
				t.Errorf("the queue policy does not admit %s: %s", tt.want, policy.Inputs["policy"].StringValue())
			}
		})
	}
}

// TestNumbersForOtherStrings: a number Pulumi YAML passes for a string argument that is not an account ID comes
// through as its text, unpadded: an EKS cluster named 12345678901 (names may be all digits) is that cluster, not
// 012345678901, and a role named 2024 is that role.
func TestNumbersForOtherStrings(t *testing.T) {
	const cluster = "12345678901"
	world := &mocks.Mocks{Account: member, Existing: []string{cluster}}
	_, rs, err := construct(t, world, "ClusterInterruption", "numeric", map[string]any{
		"busName": "kib-prod", "hubAccountId": "123456789012", "clusterName": 12345678901.0, "mode": "existing-role",
		"controllerRoleName": 2024.0,
	})
	if err != nil {
		t.Fatal(err)
	}
	var queue, policy string
	for _, r := range declared(rs) {
		switch r.Type {
		case "aws:sqs/queue:Queue":
			queue = r.Inputs["name"].StringValue()
		case "aws:iam/rolePolicy:RolePolicy", "aws:iam/policy:Policy", "aws:iam/rolePolicyAttachment:RolePolicyAttachment":
			if v, ok := r.Inputs["role"]; ok && v.IsString() {
				policy = v.StringValue()
			}
		}
	}
	if queue != "kib-prod_"+cluster {
		t.Errorf("the cluster's queue is %q, want kib-prod_%s", queue, cluster)
	}
	if policy != "2024" {
		t.Errorf("the controller role the policy is given to is %q, want 2024", policy)
	}
}
