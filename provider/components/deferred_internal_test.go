package components

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/urn"
	"github.com/pulumi/pulumi/sdk/v3/go/property"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/standin"
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

// TestASecretMakesSecretWhatHoldsIt: a secret argument whose value reaches the children whole makes secret only what
// holds it; one that names resources (cut down and hashed when long) or sits in a value of any type (a number in
// chart values) makes every value of the children secret. Each input's dependencies go with its values, an object's
// to its fields, all of an input's (not only the first).
func TestASecretMakesSecretWhatHoldsIt(t *testing.T) {
	secret := func(v property.Value) property.Value { return v.WithSecret(true) }
	for _, tt := range []struct {
		name string
		in   property.Map
		all  bool
	}{
		{"a tag", property.NewMap(map[string]property.Value{"tags": property.New(map[string]property.Value{"cost": secret(property.New("cc-4711"))})}), false},
		{"an alarm topic", property.NewMap(map[string]property.Value{"heartbeatAlarmActions": property.New([]property.Value{secret(property.New("arn:aws:sns:us-east-1:1:ops"))})}), false},
		{"the hub's account", property.NewMap(map[string]property.Value{"hubAccountId": secret(property.New("111111111111"))}), false},
		{"the cluster's name", property.NewMap(map[string]property.Value{"clusterName": secret(property.New("blue"))}), true},
		{"a chart value", property.NewMap(map[string]property.Value{"karpenter": property.New(map[string]property.Value{
			"values": property.New(map[string]property.Value{"replicas": secret(property.New(2.0))})})}), true},
	} {
		var r resolver
		r.object("", nil, tt.in, reflect.TypeFor[ClusterInterruptionArgs](), within{})
		if r.allSecret != tt.all {
			t.Errorf("%s: every value secret = %v, want %v", tt.name, r.allSecret, tt.all)
		}
	}
	a, b := urn.URN("urn:pulumi:s::p::aws:sns/topic:Topic::a"), urn.URN("urn:pulumi:s::p::aws:sns/topic:Topic::b")
	var r resolver
	r.object("", nil, property.NewMap(map[string]property.Value{
		"tags":      property.New(map[string]property.Value{"team": property.New("payments")}).WithDependencies([]urn.URN{a, b}),
		"karpenter": property.New(map[string]property.Value{"namespace": property.New("karpenter")}).WithDependencies([]urn.URN{b}),
	}), reflect.TypeFor[ClusterInterruptionArgs](), within{})
	if got := r.dependencies["payments"]; !slices.Equal(got, []string{string(a), string(b)}) {
		t.Errorf("the tag's value depends on %v, want both of its input's", got)
	}
	if got := r.dependencies["karpenter"]; !slices.Equal(got, []string{string(b)}) {
		t.Errorf("an object's field depends on %v, want the object's", got)
	}
}

// TestAListWhoseEmptinessDecidesResourcesIsNotStoodFor: a wholly unknown list of redrive principals or member units
// (empty: no redrive role, no StackSet) has no stand-in; one element of it, or a list that decides none, has.
func TestAListWhoseEmptinessDecidesResourcesIsNotStoodFor(t *testing.T) {
	env := awsenv.Env{Partition: "aws", Region: "us-east-1", Account: "123456789012"}
	for _, tt := range []struct {
		at   argPath
		left bool
	}{
		{argPath{"redrive", "principals"}, true},
		{argPath{"organization", "memberOUs"}, true},
		{argPath{"router", "ownerTagKeys"}, false},
		{argPath{"tags"}, false},
	} {
		args := BusArgs{Redrive: &Redrive{}, Organization: &Organization{}, Router: &Router{}}
		if left := standIns(&args, []argPath{tt.at}, standin.New(), env); (len(left) > 0) != tt.left {
			t.Errorf("%v wholly unknown: left %v, want left %v", tt.at, left, tt.left)
		}
	}
	args := BusArgs{Redrive: &Redrive{Principals: []string{""}}}
	if left := standIns(&args, []argPath{{"redrive", "principals", 0}}, standin.New(), env); len(left) > 0 || args.Redrive.Principals[0] == "" {
		t.Errorf("one principal unknown: left %v, principals %v", left, args.Redrive.Principals)
	}
}

// recordingLog records what it is told.
type recordingLog struct{ said []string }

func (l *recordingLog) Debug(msg string, _ *pulumi.LogArgs) error {
	l.said = append(l.said, msg)
	return nil
}
func (l *recordingLog) Info(msg string, _ *pulumi.LogArgs) error {
	l.said = append(l.said, msg)
	return nil
}
func (l *recordingLog) Warn(msg string, _ *pulumi.LogArgs) error {
	l.said = append(l.said, msg)
	return nil
}
func (l *recordingLog) Error(msg string, _ *pulumi.LogArgs) error {
	l.said = append(l.said, msg)
	return nil
}

// TestTheLogSaysNoSecret: every level of the component's log shows each secret argument's value as [secret].
func TestTheLogSaysNoSecret(t *testing.T) {
	rec := &recordingLog{}
	l := redactingLog{rec, []string{"payments-prod", ""}}
	for _, say := range []func(string, *pulumi.LogArgs) error{l.Debug, l.Info, l.Warn, l.Error} {
		if err := say("cluster payments-prod, karpenter.version 1.6.3: support ends", nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(rec.said) != 4 {
		t.Fatalf("said %d lines, want 4", len(rec.said))
	}
	for _, s := range rec.said {
		if s != "cluster [secret], karpenter.version 1.6.3: support ends" {
			t.Errorf("said %q", s)
		}
	}
}

// TestASecretMapsKeysAreSecrets: the keys of a secret map of the arguments (tags) are secrets as its values are, so
// that the tags of a child holding one are secret as a whole; a map not secret gives none.
func TestASecretMapsKeysAreSecrets(t *testing.T) {
	tags := property.New(map[string]property.Value{"customer-acme-corp": property.New("x1234")})
	var r resolver
	r.value("tags", argPath{"tags"}, tags.WithSecret(true), reflect.TypeOf(map[string]string{}), within{arg: "tags"})
	if !slices.Contains(r.secrets, "customer-acme-corp") || !slices.Contains(r.secrets, "x1234") {
		t.Errorf("secrets %v; want the key and the value", r.secrets)
	}
	var plain resolver
	plain.value("tags", argPath{"tags"}, tags, reflect.TypeOf(map[string]string{}), within{arg: "tags"})
	if len(plain.secrets) != 0 {
		t.Errorf("secrets %v of a map not secret", plain.secrets)
	}
}
