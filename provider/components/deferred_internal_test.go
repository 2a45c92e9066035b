package components

import (
	"reflect"
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
				"heartbeatAlarmActions (SNS topic ARNs)", "before the cluster's first resource", "this preview shows the cluster's resources, with unknown values"},
			[]string{"[0]", "[1]", "heartbeatAlarmActions (SNS topic ARNs); heartbeatAlarmActions", "none of"}},
		{"no stand-in for it: none of the resources", []string{"karpenter.version"},
			[]string{"this preview shows none of the cluster's resources, and its outputs are unknown: karpenter.version decide"}, []string{"with unknown values"}},
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
			got := deferredMessage("ClusterInterruption", "payments", "the cluster's", nil, tt.deferred, checks)
			if strings.HasPrefix(tt.deferred[0], "karpenter.version") {
				got = deferredMessage("ClusterInterruption", "payments", "the cluster's", tt.deferred, tt.deferred, checks)
			}
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

func TestFormerName(t *testing.T) {
	for _, tt := range []struct {
		child, want string
		ok          bool
	}{
		{"payments-queue", "blue-queue", true},
		{"payments-karpenter", "blue-karpenter", true},
		{"payments", "", false},        // the component itself
		{"paymentsx-queue", "", false}, // another component's
		{"blue-queue", "", false},
	} {
		got, ok := formerName("payments", "blue", tt.child)
		if got != tt.want || ok != tt.ok {
			t.Errorf("formerName(payments, blue, %s) = %q, %v; want %q, %v", tt.child, got, ok, tt.want, tt.ok)
		}
	}
}

// TestAnObjectIsPlainOnlyHoldingAPlainArgument: an object of inputs only is an input itself.
func TestAnObjectIsPlainOnlyHoldingAPlainArgument(t *testing.T) {
	type inputsOnly struct {
		A string `pulumi:"a"`
	}
	type holdsACount struct {
		A string `pulumi:"a"`
		N *int   `pulumi:"n,optional"`
	}
	for _, tt := range []struct {
		f    reflect.StructField
		want bool
	}{
		{reflect.StructField{Name: "X", Type: reflect.TypeFor[*inputsOnly]()}, false},
		{reflect.StructField{Name: "X", Type: reflect.TypeFor[*holdsACount]()}, true},
		{reflect.StructField{Name: "X", Type: reflect.TypeFor[[]string](), Tag: `plain:"one resource each"`}, true},
		{reflect.StructField{Name: "X", Type: reflect.TypeFor[*string]()}, false},
		{reflect.StructField{Name: "X", Type: reflect.TypeFor[*Mode]()}, true},
	} {
		if got := isPlain(tt.f); got != tt.want {
			t.Errorf("isPlain(%v) = %v, want %v", tt.f.Type, got, tt.want)
		}
	}
}
