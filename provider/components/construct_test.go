package components_test

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"

	p "github.com/pulumi/pulumi-go-provider"
	"github.com/pulumi/pulumi-go-provider/integration"
	presource "github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/property"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/render"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/provider/components"
)

// The Construct tests run each component through pulumi-go-provider's in-process server, as the engine would
// call the provider, its children answered by the program's own mocks (offline/mocks): the provider
// lookups (account, region, EKS clusters, the Spot role) and the outputs AWS would give. What the mocks do not
// do that AWS would: enforce IAM, quotas and name rules at creation, which the program's tests check against
// AWS's documentation on the same components.

const (
	hub    = mocks.DefaultAccount
	member = "222222222222"
)

// construct runs component typ named name with inputs, as a preview, in the account of m, and returns the
// response or the error, and what was declared.
func construct(t *testing.T, m *mocks.Mocks, typ, name string, inputs map[string]any) (p.ConstructResponse, []mocks.Resource, error) {
	t.Helper()
	m.Project, m.Stack = "platform", "prod"
	s := server(t, integration.WithMocks(m))
	resp, err := s.Construct(p.ConstructRequest{
		Urn:    presource.URN(fmt.Sprintf("urn:pulumi:prod::platform::%s:index:%s::%s", components.Name, typ, name)),
		Inputs: presource.FromResourcePropertyMap(presource.NewPropertyMapFromMap(inputs)),
		DryRun: !m.Update,
	})
	return resp, m.Resources(), err
}

// declared is what rs declares under the component (its children's children included): "type name" each.
func declared(rs []mocks.Resource) map[string]mocks.Resource {
	out := map[string]mocks.Resource{}
	for _, r := range rs {
		out[r.Type+" "+r.Name] = r
	}
	return out
}

func output(t *testing.T, resp p.ConstructResponse, key string) property.Value {
	t.Helper()
	v, ok := resp.State.GetOk(key)
	if !ok {
		t.Fatalf("output %s missing from %v", key, resp.State)
	}
	return v
}

func str(t *testing.T, resp p.ConstructResponse, key string) string {
	t.Helper()
	v := output(t, resp, key)
	if v.Secret() {
		v = v.WithSecret(false)
	}
	if !v.IsString() {
		t.Fatalf("output %s = %v, want a string (known in this preview)", key, v)
	}
	return v.AsString()
}

func TestBus(t *testing.T) {
	tests := []struct {
		name   string
		inputs map[string]any
		// want are children by "type name"; absent must not be declared.
		want, absent []string
		outputs      map[string]string
		// accounts are the accounts resources are declared in.
		accounts []string
	}{
		{
			name:   "one account, defaults",
			inputs: map[string]any{},
			want: []string{
				"karpenter-interruption-bus:index:Bus hub", "aws:sqs/queue:Queue hub-central", "aws:sqs/queue:Queue hub-dlq",
				"aws:lambda/function:Function hub-router", "karpenter-interruption-bus:index:Alarms hub-alarms",
				"karpenter-interruption-bus:index:Heartbeat hub-heartbeat",
			},
			// One component per concept: the Bus is the bus, with no Bus of the program's inside it.
			absent: []string{
				"aws:cloudformation/stackSet:StackSet hub-member-baseline", "karpenter-interruption-bus:index:Dashboard hub-dashboard",
				"karpenter-interruption-bus:index:Bus kib-prod",
			},
			outputs:  map[string]string{"busName": "kib-prod", "account": hub, "region": "us-east-1", "heartbeatRate": "5m", "clusterQueuePrefix": "kib-prod_", "routerRoleArn": "arn:aws:iam::" + hub + ":role/kib-prod-router-us-east-1"},
			accounts: []string{hub},
		},
		{
			name: "organization by units, no heartbeat, a dashboard",
			inputs: map[string]any{
				"namePrefix": "fleet", "organization": map[string]any{"id": "o-abc123defg", "memberOUs": []any{"ou-ab12-cdef3456"}},
				"heartbeat": map[string]any{"enabled": false}, "dashboard": true, "clusterNames": []any{"blue"},
			},
			want:     []string{"aws:cloudformation/stackSet:StackSet hub-member-baseline", "aws:sqs/queue:Queue hub-central", "karpenter-interruption-bus:index:Dashboard hub-dashboard"},
			absent:   []string{"karpenter-interruption-bus:index:Heartbeat hub-heartbeat"},
			outputs:  map[string]string{"busName": "fleet", "heartbeatRate": ""},
			accounts: []string{hub},
		},
		{
			name:     "organization without units: members bring their own baselines",
			inputs:   map[string]any{"organization": map[string]any{"id": "o-abc123defg"}},
			want:     []string{"aws:sqs/queuePolicy:QueuePolicy hub-central", "karpenter-interruption-bus:index:Heartbeat hub-heartbeat"},
			absent:   []string{"aws:cloudformation/stackSet:StackSet hub-member-baseline"},
			outputs:  map[string]string{"busName": "kib-prod"},
			accounts: []string{hub},
		},
		{
			name: "member accounts through their deploy roles",
			inputs: map[string]any{
				"accounts":     map[string]any{member: map[string]any{"deployRoleArn": "arn:aws:iam::" + member + ":role/deploy"}},
				"clusterNames": []any{"blue", "green"},
			},
			want:     []string{"pulumi:providers:aws hub-account-" + member, "karpenter-interruption-bus:index:MemberAccount hub-account-" + member + "-bus", "karpenter-interruption-bus:index:Heartbeat hub-account-" + member + "-heartbeat"},
			outputs:  map[string]string{"busName": "kib-prod"},
			accounts: []string{hub, member},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, rs, err := construct(t, &mocks.Mocks{}, "Bus", "hub", tt.inputs)
			if err != nil {
				t.Fatal(err)
			}
			got := declared(rs)
			checkDeclared(t, got, tt.want, tt.absent)
			for k, v := range tt.outputs {
				if g := str(t, resp, k); g != v {
					t.Errorf("output %s = %q, want %q", k, g, v)
				}
			}
			var accounts []string
			for _, r := range rs {
				if !slices.Contains(accounts, r.Account) {
					accounts = append(accounts, r.Account)
				}
				if r.Parent == "" && r.Type != "karpenter-interruption-bus:index:Bus" {
					t.Errorf("%s %s is not under the Bus", r.Type, r.Name)
				}
				// Named after the component, each aliased to its name after the namePrefix (0.3.0 and before).
				if r.Type != "karpenter-interruption-bus:index:Bus" {
					prefix, _ := tt.inputs["namePrefix"].(string)
					if prefix == "" {
						prefix = "kib-prod"
					}
					former, ok := infra.FormerBusName("hub", prefix, r.Name)
					if !ok || !slices.Contains(r.Aliases, former) {
						t.Errorf("%s %s: aliases %v, want %s", r.Type, r.Name, r.Aliases, former)
					}
				}
			}
			slices.Sort(accounts)
			if !slices.Equal(accounts, tt.accounts) {
				t.Errorf("declared in accounts %v, want %v", accounts, tt.accounts)
			}
		})
	}
}

func TestBusRefusesBadArguments(t *testing.T) {
	tests := []struct {
		inputs map[string]any
		want   string
	}{
		{map[string]any{"router": map[string]any{"memoryMb": 64}}, "router.memoryMb"},
		{map[string]any{"namePrefix": "Not Valid!"}, "namePrefix"},
		{map[string]any{"heartbeat": map[string]any{"rate": "90s"}}, "heartbeat.rate"},
		{map[string]any{"clusterNames": []any{"bad name"}}, "clusterNames[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			_, rs, err := construct(t, &mocks.Mocks{}, "Bus", "hub", tt.inputs)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want one naming %s", err, tt.want)
			}
			for _, r := range rs {
				if r.Custom {
					t.Errorf("%s %s declared before the arguments were checked", r.Type, r.Name)
				}
			}
		})
	}
}

func TestClusterInterruption(t *testing.T) {
	const oidc = "arn:aws:iam::" + hub + ":oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/BLUE"
	tests := []struct {
		name   string
		world  *mocks.Mocks
		inputs map[string]any
		want   []string
		absent []string
		// hubReads: the queue policy lets the hub read the queue's counts (a cluster of another account).
		hubReads bool
		// kubeconfig: the output kubeconfig is set (install and create modes).
		kubeconfig bool
		importID   string
	}{
		{
			name:  "install, pod identity, the hub's account, Spot role created",
			world: &mocks.Mocks{Existing: []string{"blue"}},
			inputs: map[string]any{
				"busName": "kib-prod", "clusterName": "blue", "heartbeatRate": "5m", "ensureSpotServiceLinkedRole": true,
			},
			want: []string{
				"aws:sqs/queue:Queue blue-queue", "aws:sqs/queuePolicy:QueuePolicy blue-queue", "kubernetes:helm.sh/v3:Release blue-karpenter",
				"aws:eks/podIdentityAssociation:PodIdentityAssociation blue-pod-identity", "aws:scheduler/schedule:Schedule blue-heartbeat",
				"aws:cloudwatch/metricAlarm:MetricAlarm blue-karpenter-not-reading", "aws:iam/serviceLinkedRole:ServiceLinkedRole blue-spot-service-linked-role",
			},
			kubeconfig: true,
		},
		{
			name:  "install, IRSA, the Spot role adopted where it exists",
			world: &mocks.Mocks{Existing: []string{"blue"}, SpotServiceLinkedRole: []string{hub}},
			inputs: map[string]any{
				"busName": "kib-prod", "clusterName": "blue", "identity": "irsa", "oidcProviderArn": oidc, "ensureSpotServiceLinkedRole": true,
			},
			want:       []string{"kubernetes:helm.sh/v3:Release blue-karpenter", "aws:iam/serviceLinkedRole:ServiceLinkedRole blue-spot-service-linked-role"},
			absent:     []string{"aws:eks/podIdentityAssociation:PodIdentityAssociation blue-pod-identity", "aws:scheduler/schedule:Schedule blue-heartbeat"},
			kubeconfig: true,
			importID:   "arn:aws:iam::" + hub + ":role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot",
		},
		{
			name:  "existing role, a member account joining the hub with its own baseline",
			world: &mocks.Mocks{Account: member, Existing: []string{"green"}},
			inputs: map[string]any{
				"busName": "kib-prod", "hubAccountId": hub, "clusterName": "green", "mode": "existing-role", "controllerRoleName": "KarpenterController-green",
				"memberBaseline": true, "heartbeatRate": "1m",
			},
			want: []string{
				"aws:sqs/queue:Queue green-queue", "aws:iam/rolePolicy:RolePolicy green-interruption",
				"karpenter-interruption-bus:index:MemberAccount green-member-baseline", "karpenter-interruption-bus:index:Heartbeat green-heartbeat-shared",
				"aws:scheduler/schedule:Schedule green-heartbeat",
			},
			absent:   []string{"kubernetes:helm.sh/v3:Release green-karpenter"},
			hubReads: true,
		},
		{
			name:  "create, a member account covered by the hub's StackSet",
			world: &mocks.Mocks{Account: member, SpotServiceLinkedRole: []string{member}},
			inputs: map[string]any{
				"busName": "kib-prod", "hubAccountId": hub, "clusterName": "new", "mode": "create",
				"create": map[string]any{"vpcId": "vpc-0123456789abcdef0", "subnetIds": []any{"subnet-0123456789abcdef0", "subnet-0123456789abcdef1"}},
			},
			want:       []string{"eks:index:Cluster new-eks", "kubernetes:helm.sh/v3:Release new-karpenter"},
			absent:     []string{"karpenter-interruption-bus:index:MemberAccount new-member-baseline", "aws:iam/serviceLinkedRole:ServiceLinkedRole new-spot-service-linked-role"},
			hubReads:   true,
			kubeconfig: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			world := tt.world
			resp, rs, err := construct(t, world, "ClusterInterruption", tt.inputs["clusterName"].(string), tt.inputs)
			if err != nil {
				t.Fatal(err)
			}
			got := declared(rs)
			checkDeclared(t, got, tt.want, tt.absent)
			account := world.Account
			if account == "" {
				account = hub
			}
			cluster := tt.inputs["clusterName"].(string)
			queue := "kib-prod_" + cluster
			for k, v := range map[string]string{
				"queueName": queue, "queueArn": "arn:aws:sqs:us-east-1:" + account + ":" + queue,
				"chartValue": "settings.interruptionQueue=" + queue,
			} {
				if g := str(t, resp, k); g != v {
					t.Errorf("output %s = %q, want %q", k, g, v)
				}
			}
			if kc := output(t, resp, "kubeconfig"); !kc.Secret() && !kc.IsComputed() {
				t.Errorf("kubeconfig %v is not secret", kc)
			} else if kc.Secret() && kc.WithSecret(false).IsString() && (kc.WithSecret(false).AsString() != "") != tt.kubeconfig {
				t.Errorf("kubeconfig = %q, want one: %v", kc.WithSecret(false).AsString(), tt.kubeconfig)
			}
			policy := render.Plain(got["aws:sqs/queuePolicy:QueuePolicy "+cluster+"-queue"].Inputs)["policy"]
			text, _ := policy.(string)
			if !strings.Contains(text, "arn:aws:iam::"+hub+":role/kib-prod-router-us-east-1") {
				t.Errorf("the queue policy does not admit the hub's router: %s", text)
			}
			if strings.Contains(text, "HubReadsCounts") != tt.hubReads {
				t.Errorf("queue policy lets the hub read its counts: %v, want %v", !tt.hubReads, tt.hubReads)
			}
			for _, r := range rs {
				if r.Custom && r.Account != account {
					t.Errorf("%s %s declared in %s, want the cluster's account %s", r.Type, r.Name, r.Account, account)
				}
			}
			if tt.importID != "" {
				if id := got["aws:iam/serviceLinkedRole:ServiceLinkedRole "+cluster+"-spot-service-linked-role"].ImportID; id != tt.importID {
					t.Errorf("Spot role import ID %q, want %q", id, tt.importID)
				}
			}
		})
	}
}

func TestClusterInterruptionRefuses(t *testing.T) {
	tests := []struct {
		name     string
		world    *mocks.Mocks
		resource string // the component's name ("c" unless set)
		inputs   map[string]any
		want     string
	}{
		{
			name: "irsa without its OIDC provider", world: &mocks.Mocks{Existing: []string{"blue"}, SpotServiceLinkedRole: []string{hub}},
			inputs: map[string]any{"busName": "kib-prod", "clusterName": "blue", "identity": "irsa"}, want: "oidcProviderArn:",
		},
		{
			name: "an unknown mode", world: &mocks.Mocks{Existing: []string{"blue"}},
			inputs: map[string]any{"busName": "kib-prod", "clusterName": "blue", "mode": "manual"}, want: "mode:",
		},
		{
			name: "the cluster missing", world: &mocks.Mocks{SpotServiceLinkedRole: []string{hub}},
			inputs: map[string]any{"busName": "kib-prod", "clusterName": "ghost"}, want: "ghost",
		},
		{
			name: "no Spot role, not asked for", world: &mocks.Mocks{Existing: []string{"blue"}},
			inputs: map[string]any{"busName": "kib-prod", "clusterName": "blue"}, want: "ensureSpotServiceLinkedRole",
		},
		{
			name: "a baseline in the hub's own account", world: &mocks.Mocks{Existing: []string{"blue"}},
			inputs: map[string]any{"busName": "kib-prod", "clusterName": "blue", "memberBaseline": true}, want: "memberBaseline:",
		},
		{
			name: "an alarm action not a topic", world: &mocks.Mocks{Existing: []string{"blue"}, SpotServiceLinkedRole: []string{hub}},
			inputs: map[string]any{"busName": "kib-prod", "clusterName": "blue", "heartbeatRate": "5m", "heartbeatAlarmActions": []any{"arn:aws:sns:us-east-1:" + hub + ":ops", "ops"}},
			want:   `heartbeatAlarmActions[1]: "ops" is not an SNS topic ARN`,
		},
		{
			name: "an alarm action a topic of another account", world: &mocks.Mocks{Existing: []string{"blue"}, SpotServiceLinkedRole: []string{hub}},
			inputs: map[string]any{"busName": "kib-prod", "clusterName": "blue", "heartbeatRate": "5m", "heartbeatAlarmActions": []any{"arn:aws:sns:us-east-1:999999999999:ops"}},
			want:   `heartbeatAlarmActions[0]: "arn:aws:sns:us-east-1:999999999999:ops" is a topic of another account`,
		},
		{
			name: "a hub account that is not one", world: &mocks.Mocks{Existing: []string{"blue"}},
			inputs: map[string]any{"busName": "kib-prod", "clusterName": "blue", "hubAccountId": "12345"}, want: "hubAccountId:",
		},
		{
			name: "a heartbeat rate out of range", world: &mocks.Mocks{Existing: []string{"blue"}, SpotServiceLinkedRole: []string{hub}},
			inputs: map[string]any{"busName": "kib-prod", "clusterName": "blue", "heartbeatRate": "2h"}, want: "heartbeatRate:",
		},
		{
			name: "a bus name that is not one", world: &mocks.Mocks{Existing: []string{"blue"}, SpotServiceLinkedRole: []string{hub}},
			inputs: map[string]any{"busName": "Bad Bus!", "clusterName": "blue"}, want: "busName:",
		},
		{
			// pulumi-eks names the cluster's roles after the component (config.MaxCreateName), not after clusterName.
			name: "a cluster to create under a name past pulumi-eks's roles'", world: &mocks.Mocks{SpotServiceLinkedRole: []string{hub}},
			resource: strings.Repeat("b", 35),
			inputs: map[string]any{"busName": "kib-prod", "clusterName": "blue", "mode": "create",
				"create": map[string]any{"vpcId": "vpc-0123456789abcdef0", "subnetIds": []any{"subnet-0123456789abcdef0", "subnet-0123456789abcdef1"}}},
			want: `mode: create: the component's name "` + strings.Repeat("b", 35) + `" is 35 characters, at most 34`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			world := tt.world
			_, rs, err := construct(t, world, "ClusterInterruption", cmp.Or(tt.resource, "c"), tt.inputs)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want one naming %s", err, tt.want)
			}
			if strings.Contains(err.Error(), "clusters[0]") {
				t.Errorf("error %v names the program's configuration, not the component's arguments", err)
			}
			for _, r := range rs {
				if r.Custom {
					t.Errorf("%s %s declared before the checks ended", r.Type, r.Name)
				}
			}
		})
	}
}

// checkDeclared fails t for each of want not in got, and each of absent in it.
func checkDeclared(t *testing.T, got map[string]mocks.Resource, want, absent []string) {
	t.Helper()
	for _, w := range want {
		if _, ok := got[w]; !ok {
			t.Errorf("%s not declared; declared: %v", w, keysOf(got))
		}
	}
	for _, a := range absent {
		if _, ok := got[a]; ok {
			t.Errorf("%s declared", a)
		}
	}
}

func keysOf(m map[string]mocks.Resource) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestABusOfManyAccountsIsTaken: a Bus of more member accounts than a stack of the program takes within its provider
// budget is declared: the budget and its remedy (providerBudgetMB, make shards) are the program's stack's, not
// arguments of the Bus, whose stack the user composes.
func TestABusOfManyAccountsIsTaken(t *testing.T) {
	accounts := map[string]any{}
	for i := range 40 {
		id := fmt.Sprintf("3%011d", i)
		accounts[id] = map[string]any{"deployRoleArn": "arn:aws:iam::" + id + ":role/deploy"}
	}
	_, rs, err := construct(t, &mocks.Mocks{}, "Bus", "hub", map[string]any{"accounts": accounts})
	if err != nil {
		t.Fatal(err)
	}
	providers := 0
	for _, r := range rs {
		if r.Type == "pulumi:providers:aws" {
			providers++
		}
	}
	if providers != 40 {
		t.Errorf("%d member accounts' providers declared, want 40", providers)
	}
}
