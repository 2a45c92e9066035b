package components

import (
	"strings"
	"testing"
)

func TestDeferredMessage(t *testing.T) {
	tests := []struct {
		name     string
		deferred []string
		want     []string
		not      []string
	}{
		{"each argument once, by its checks", []string{"clusterName", "heartbeatAlarmActions[0]", "heartbeatAlarmActions[1]"},
			[]string{"ClusterInterruption payments: checks deferred to the update", "clusterName (the EKS cluster exists and is ACTIVE",
				"heartbeatAlarmActions (SNS topic ARNs)", "before the cluster's first resource", "its outputs are unknown"},
			[]string{"[0]", "[1]", "heartbeatAlarmActions (SNS topic ARNs); heartbeatAlarmActions"}},
		{"an argument without listed checks: its form", []string{"karpenter.values.replicas"},
			[]string{"karpenter.values.replicas (its form)"}, nil},
		{"a member account's key dropped", []string{"accounts.222222222222.deployRoleArn"},
			[]string{"accounts.deployRoleArn (a role ARN of the stack's partition)"}, []string{"222222222222"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checks := clusterChecks
			if strings.HasPrefix(tt.deferred[0], "accounts") {
				checks = busChecks
			}
			got := deferredMessage("ClusterInterruption", "payments", "the cluster's", tt.deferred, checks)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("%s\nwant %q", got, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("%s\nhas %q", got, n)
				}
			}
		})
	}
}
