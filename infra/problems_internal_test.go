package infra

import (
	"errors"
	"slices"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/preflight"
)

// TestAProblemIsNamedByTheComponentsArgument: a problem of a joining cluster's configuration is named by the
// component's argument, its path mapped as data, the keys its reason names too.
func TestAProblemIsNamedByTheComponentsArgument(t *testing.T) {
	for _, tt := range []struct {
		in, want config.Problem
	}{
		{config.Problem{Path: "clusters[0].name", Reason: "required"}, config.Problem{Path: "clusterName", Reason: "required"}},
		{config.Problem{Path: "clusters[0].karpenter.namespace", Reason: "x"}, config.Problem{Path: "karpenter.namespace", Reason: "x"}},
		{config.Problem{Path: "clusters[0]", Reason: "x"}, config.Problem{Path: "cluster", Reason: "x"}},
		{config.Problem{Path: "namePrefix", Reason: "too long"}, config.Problem{Path: "busName", Reason: "too long"}},
		{config.Problem{Path: "heartbeat.rate", Reason: "7s"}, config.Problem{Path: "heartbeatRate", Reason: "7s"}},
		{config.Problem{Path: "tags", Reason: "key"}, config.Problem{Path: "tags", Reason: "key"}},
		{config.Problem{Path: "clusters[0].oidcProviderArn", Reason: "is required with clusters[0].identity irsa"},
			config.Problem{Path: "oidcProviderArn", Reason: "is required with identity irsa"}},
		{config.Problem{Path: "clusters[0].account", Reason: "its account (clusters[0].account) is not the hub's"},
			config.Problem{Path: "account", Reason: "the account of the AWS provider the component is given is not the hub's"}},
	} {
		if got := asArgument(tt.in); got != tt.want {
			t.Errorf("asArgument(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestKnownDropsTheProblemsOfTheUnknownsAlone: at a preview, a problem of an argument unknown there (or within it) is
// no problem yet; one of an argument holding it, or of another, is.
func TestKnownDropsTheProblemsOfTheUnknownsAlone(t *testing.T) {
	problems := []config.Problem{
		{Path: "heartbeatAlarmActions[0]", Reason: "not a topic"},
		{Path: "heartbeatAlarmActions[1]", Reason: "not a topic"},
		{Path: "tags", Reason: "a key too long"},
		{Path: "tags.team", Reason: "a value too long"},
		{Path: "busNameX", Reason: "another argument"},
	}
	for _, tt := range []struct {
		unknown []string
		left    []string
	}{
		{nil, []string{"heartbeatAlarmActions[0]", "heartbeatAlarmActions[1]", "tags", "tags.team", "busNameX"}},
		{[]string{"heartbeatAlarmActions[0]"}, []string{"heartbeatAlarmActions[1]", "tags", "tags.team", "busNameX"}},
		{[]string{"heartbeatAlarmActions"}, []string{"tags", "tags.team", "busNameX"}},
		{[]string{"tags.team"}, []string{"heartbeatAlarmActions[0]", "heartbeatAlarmActions[1]", "tags", "busNameX"}},
		{[]string{"busName"}, []string{"heartbeatAlarmActions[0]", "heartbeatAlarmActions[1]", "tags", "tags.team", "busNameX"}},
	} {
		var left []string
		var cerr *config.Error
		if err := known(slices.Clone(problems), tt.unknown); errors.As(err, &cerr) {
			for _, p := range cerr.Problems {
				left = append(left, p.Path)
			}
		}
		if !slices.Equal(left, tt.left) {
			t.Errorf("unknown %v: left %v, want %v", tt.unknown, left, tt.left)
		}
	}
}

// TestNaming: the program names as ever; a Bus component names after itself, a name that only starts like the
// prefix (kibble-x for kib) as any other.
func TestNaming(t *testing.T) {
	for _, tt := range []struct {
		n          naming
		name, want string
	}{
		{programNaming(config.Config{NamePrefix: "kib"}), "kib-router", "kib-router"},
		{programNaming(config.Config{NamePrefix: "kib"}), "account-1-bus", "account-1-bus"},
		{componentNaming("west", "kib"), "kib", "west"},
		{componentNaming("west", "kib"), "kib-router", "west-router"},
		{componentNaming("west", "kib"), "account-1-bus", "west-account-1-bus"},
		{componentNaming("west", "kib"), "kibble-x", "west-kibble-x"},
	} {
		if got := tt.n.of(tt.name); got != tt.want {
			t.Errorf("%+v.of(%s) = %s, want %s", tt.n, tt.name, got, tt.want)
		}
	}
	// A member account's names are never cut as the prefix's, even by a prefix that starts like them: the
	// component's children keep one name whatever namePrefix turns out to be at the update.
	for _, tt := range []struct {
		n          naming
		name, want string
	}{
		{programNaming(config.Config{NamePrefix: "account"}), "account-1-bus", "account-1-bus"},
		{componentNaming("west", "account"), "account-1-bus", "west-account-1-bus"},
		{componentNaming("west", "account-1"), "account-1", "west-account-1"},
		{componentNaming("west", "kib"), "account-1", "west-account-1"},
	} {
		if got := tt.n.ofAccount(tt.name); got != tt.want {
			t.Errorf("%+v.ofAccount(%s) = %s, want %s", tt.n, tt.name, got, tt.want)
		}
	}
	for _, tt := range []struct{ child, want string }{
		{"west-router", "kib-router"}, {"west-account-1-bus", "account-1-bus"}, {"east-router", ""}, {"west", ""},
	} {
		if got, ok := FormerBusName("west", "kib", tt.child); got != tt.want || ok != (tt.want != "") {
			t.Errorf("FormerBusName(west, kib, %s) = %q, %v; want %q", tt.child, got, ok, tt.want)
		}
	}
}

// TestAShardKeepsItsHubsSecrets: what a shard exports again of its hub's outputs is a secret where the hub's was.
func TestAShardKeepsItsHubsSecrets(t *testing.T) {
	h := preflight.Hub{Secret: map[string]bool{"routerLogGroupName": true}}
	h.RouterLogGroupName, h.CanaryIntervalSeconds = "/aws/lambda/kib-prod-router", 30
	out := shardOutputs(h, config.Config{Hub: "prod", NamePrefix: "kib-prod"}, awsenv.Env{Region: "us-east-1"})
	if !pulumi.IsSecret(out.RouterLogGroupName.ToStringOutput()) {
		t.Error("the hub's secret log group is exported in plain text")
	}
	if pulumi.IsSecret(out.CanaryIntervalSeconds.ToIntOutput()) {
		t.Error("the hub's canary interval, no secret, is exported as one")
	}
}
