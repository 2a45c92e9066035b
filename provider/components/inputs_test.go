package components_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/render"
)

// inputCase sets one input of a component (its schema path) to a value other than its default, on a base that
// makes it valid, and names the evidence that it reached the declared resources: marker is in the declared
// resources (or the outputs) with the input set (and not without it), or, with gone, the other way round.
type inputCase struct {
	component, path string
	world           func() *mocks.Mocks
	base, with      map[string]any
	marker          string
	gone            bool
	// fails: the input reaches the checks made before anything is declared: with it, the construction fails saying
	// marker; without it, it succeeds.
	fails bool
}

func TestEveryInputReachesTheResources(t *testing.T) {
	hubWorld := func() *mocks.Mocks {
		return &mocks.Mocks{Existing: []string{"blue", "green"}, SpotServiceLinkedRole: []string{hub}}
	}
	memberWorld := func() *mocks.Mocks { return &mocks.Mocks{Account: member, Existing: []string{"blue"}} }
	cluster := map[string]any{"busName": "kib-prod", "clusterName": "blue"}
	existing := merge(cluster, map[string]any{"mode": "existing-role", "controllerRoleName": "KarpenterController"})
	create := merge(cluster, map[string]any{"mode": "create", "create": map[string]any{
		"vpcId": "vpc-0123456789abcdef0", "subnetIds": []any{"subnet-0123456789abcdef0", "subnet-0123456789abcdef1"},
	}})
	withCreate := func(k string, v any) map[string]any {
		c := maps.Clone(create["create"].(map[string]any))
		c[k] = v
		return merge(create, map[string]any{"create": c})
	}
	withSystemNodes := func(k string, v any) map[string]any { return withCreate("systemNodes", map[string]any{k: v}) }
	oidc := func(id string) string {
		return "arn:aws:iam::" + hub + ":oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/" + id
	}
	irsa := merge(cluster, map[string]any{"identity": "irsa", "oidcProviderArn": oidc("BLUE")})
	memberBase := map[string]any{member: map[string]any{"deployRoleArn": "arn:aws:iam::" + member + ":role/deploy"}}
	org := map[string]any{"organization": map[string]any{"id": "o-abc123defg", "memberOUs": []any{"ou-ab12-cdef3456"}}}
	bus := func(k string, v any) map[string]any { return map[string]any{k: v} }
	router := func(k string, v any) map[string]any { return bus("router", map[string]any{k: v}) }
	cq := func(k string, v any) map[string]any { return bus("centralQueue", map[string]any{k: v}) }

	tests := []inputCase{
		{component: "Bus", path: "namePrefix", with: bus("namePrefix", "kib-sentinel"), marker: "kib-sentinel-central"},
		{component: "Bus", path: "accounts.deployRoleArn", with: bus("accounts", map[string]any{member: map[string]any{"deployRoleArn": "arn:aws:iam::" + member + ":role/sentinel-deploy"}}), marker: "sentinel-deploy"},
		{
			component: "Bus", path: "accounts.alarmTopicArn", base: bus("accounts", memberBase),
			with:   bus("accounts", map[string]any{member: map[string]any{"deployRoleArn": "arn:aws:iam::" + member + ":role/deploy", "alarmTopicArn": "arn:aws:sns:us-east-1:" + member + ":sentinel-ops"}}),
			marker: "sentinel-ops",
		},
		{component: "Bus", path: "alarms.oldestMessageAgeSeconds", with: bus("alarms", map[string]any{"oldestMessageAgeSeconds": 37}), marker: `"threshold":37`},
		{component: "Bus", path: "alarms.topicArn", with: bus("alarms", map[string]any{"topicArn": "arn:aws:sns:us-east-1:" + hub + ":sentinel-hub-ops"}), marker: "sentinel-hub-ops"},
		{component: "Bus", path: "centralQueue.eventMaxAgeSeconds", with: cq("eventMaxAgeSeconds", 123), marker: `"maximumEventAgeInSeconds":123`},
		{component: "Bus", path: "centralQueue.maxReceiveCount", with: cq("maxReceiveCount", 7), marker: `"maxReceiveCount":7`},
		{component: "Bus", path: "centralQueue.messageRetentionSeconds", with: cq("messageRetentionSeconds", 1234), marker: `"messageRetentionSeconds":1234`},
		{component: "Bus", path: "centralQueue.hubDelivery", with: cq("hubDelivery", "queuePolicy"), marker: `TheHubsRules`},
		{component: "Bus", path: "redrive.principals", with: bus("redrive", map[string]any{"principals": []any{"arn:aws:iam::" + hub + ":role/sentinel-oncall"}}), marker: "sentinel-oncall"},
		{component: "Bus", path: "redrive.trustPolicyLimit", base: bus("redrive", map[string]any{"principals": []any{"arn:aws:iam::" + hub + ":role/oncall"}}),
			with:   bus("redrive", map[string]any{"principals": []any{"arn:aws:iam::" + hub + ":role/oncall"}, "trustPolicyLimit": 1000}),
			marker: "redrive.trustPolicyLimit: 1000 is not between", fails: true},
		{component: "Bus", path: "archive.mode", with: bus("archive", map[string]any{"mode": "compliance"}), marker: `"mode":"COMPLIANCE"`},
		{component: "Bus", path: "archive.retentionDays", with: bus("archive", map[string]any{"retentionDays": 4321}), marker: `"days":4321`},
		{component: "Bus", path: "clusterNames", base: bus("dashboard", true), with: map[string]any{"dashboard": true, "clusterNames": []any{"sentinel-cluster"}}, marker: "sentinel-cluster"},
		{component: "Bus", path: "dashboard", with: bus("dashboard", true), marker: "aws:cloudwatch/dashboard:Dashboard"},
		{component: "Bus", path: "heartbeat.enabled", with: bus("heartbeat", map[string]any{"enabled": false}), marker: "karpenter-interruption-bus:index:Heartbeat", gone: true},
		{component: "Bus", path: "heartbeat.rate", with: bus("heartbeat", map[string]any{"rate": "7m"}), marker: `"heartbeatRate":"7m"`},
		{
			component: "Bus", path: "organization.callAs", base: org,
			with:   bus("organization", map[string]any{"id": "o-abc123defg", "memberOUs": []any{"ou-ab12-cdef3456"}, "callAs": "SELF"}),
			marker: `"callAs":"SELF"`,
		},
		{component: "Bus", path: "organization.id", with: bus("organization", map[string]any{"id": "o-sentinel12"}), marker: "o-sentinel12"},
		{
			component: "Bus", path: "organization.memberOUs", base: bus("organization", map[string]any{"id": "o-abc123defg"}),
			with: bus("organization", map[string]any{"id": "o-abc123defg", "memberOUs": []any{"ou-sent-12345678"}}), marker: "ou-sent-12345678",
		},
		{component: "Bus", path: "router.batchSize", with: router("batchSize", 7), marker: `"batchSize":7`},
		{component: "Bus", path: "router.canaryIntervalSeconds", with: router("canaryIntervalSeconds", 17), marker: `"CANARY_INTERVAL":"17s"`},
		{component: "Bus", path: "router.logLevel", with: router("logLevel", "debug"), marker: `"LOG_LEVEL":"debug"`},
		{component: "Bus", path: "router.logRetentionDays", with: router("logRetentionDays", 14), marker: `"retentionInDays":14`},
		{component: "Bus", path: "router.maximumBatchingWindowSeconds", with: router("maximumBatchingWindowSeconds", 3), marker: `"maximumBatchingWindowInSeconds":3`},
		{component: "Bus", path: "router.maximumConcurrency", with: router("maximumConcurrency", 9), marker: `"maximumConcurrency":9`},
		{component: "Bus", path: "router.provisionedPollers.maximum", with: router("provisionedPollers", map[string]any{"minimum": 2, "maximum": 77}), marker: `"maximumPollers":77`},
		{component: "Bus", path: "router.provisionedPollers.minimum", with: router("provisionedPollers", map[string]any{"minimum": 7, "maximum": 70}), marker: `"minimumPollers":7`},
		{component: "Bus", path: "router.memoryMb", with: router("memoryMb", 333), marker: `"memorySize":333`},
		{component: "Bus", path: "router.ownerTagKeys", with: router("ownerTagKeys", []any{"sentinel/cluster"}), marker: "sentinel/cluster"},
		{component: "Bus", path: "router.reservedConcurrency", with: router("reservedConcurrency", 37), marker: `"reservedConcurrentExecutions":37`},
		{component: "Bus", path: "router.senderCheck", with: router("senderCheck", "observe"), marker: `"SENDER_CHECK":"observe"`},
		{component: "Bus", path: "router.timeoutSeconds", with: router("timeoutSeconds", 23), marker: `"timeout":23`},
		{component: "Bus", path: "tags", with: bus("tags", map[string]any{"sentinel-tag": "v"}), marker: `"sentinel-tag":"v"`},

		{component: "ClusterInterruption", path: "busName", world: hubWorld, base: cluster, with: merge(cluster, bus("busName", "kib-other")), marker: "kib-other_blue"},
		{component: "ClusterInterruption", path: "clusterName", world: hubWorld, base: cluster, with: merge(cluster, bus("clusterName", "green")), marker: "kib-prod_green"},
		{component: "ClusterInterruption", path: "controllerRoleName", world: hubWorld, base: existing, with: merge(existing, bus("controllerRoleName", "SentinelController")), marker: "SentinelController"},
		{component: "ClusterInterruption", path: "create.kubernetesVersion", world: hubWorld, base: create, with: withCreate("kubernetesVersion", "1.31"), marker: `"version":"1.31"`},
		{component: "ClusterInterruption", path: "create.subnetIds", world: hubWorld, base: create, with: withCreate("subnetIds", []any{"subnet-0aaaaaaaaaaaaaaa1", "subnet-0aaaaaaaaaaaaaaa2"}), marker: "subnet-0aaaaaaaaaaaaaaa1"},
		{component: "ClusterInterruption", path: "create.systemNodes.desired", world: hubWorld, base: create, with: withSystemNodes("desired", 3), marker: `"desiredSize":3`},
		{component: "ClusterInterruption", path: "create.systemNodes.instanceType", world: hubWorld, base: create, with: withSystemNodes("instanceType", "c7g.4xlarge"), marker: "c7g.4xlarge"},
		{component: "ClusterInterruption", path: "create.systemNodes.max", world: hubWorld, base: create, with: withSystemNodes("max", 9), marker: `"maxSize":9`},
		{component: "ClusterInterruption", path: "create.systemNodes.min", world: hubWorld, base: create, with: withSystemNodes("min", 1), marker: `"minSize":1`},
		{component: "ClusterInterruption", path: "create.vpcId", world: hubWorld, base: create, with: withCreate("vpcId", "vpc-0aaaaaaaaaaaaaaaa"), marker: "vpc-0aaaaaaaaaaaaaaaa"},
		{component: "ClusterInterruption", path: "ensureSpotServiceLinkedRole", world: hubWorld, base: cluster, with: merge(cluster, bus("ensureSpotServiceLinkedRole", true)), marker: "aws:iam/serviceLinkedRole:ServiceLinkedRole"},
		{component: "ClusterInterruption", path: "fis.enabled", world: hubWorld, base: cluster, with: merge(cluster, bus("fis", map[string]any{"enabled": true})), marker: "aws:fis/experimentTemplate:ExperimentTemplate"},
		{
			component: "ClusterInterruption", path: "heartbeatAlarmActions", world: hubWorld, base: merge(cluster, bus("heartbeatRate", "5m")),
			with:   merge(cluster, map[string]any{"heartbeatRate": "5m", "heartbeatAlarmActions": []any{"arn:aws:sns:us-east-1:" + hub + ":sentinel-beat"}}),
			marker: "sentinel-beat",
		},
		{component: "ClusterInterruption", path: "heartbeatRate", world: hubWorld, base: cluster, with: merge(cluster, bus("heartbeatRate", "9m")), marker: "rate(9 minutes)"},
		{component: "ClusterInterruption", path: "hubAccountId", world: memberWorld, base: existing, with: merge(existing, bus("hubAccountId", hub)), marker: hub + ":role/kib-prod-router-us-east-1"},
		{component: "ClusterInterruption", path: "identity", world: hubWorld, base: cluster, with: irsa, marker: "AssumeRoleWithWebIdentity"},
		{component: "ClusterInterruption", path: "karpenter.namespace", world: hubWorld, base: cluster, with: merge(cluster, bus("karpenter", map[string]any{"namespace": "sentinel-ns"})), marker: "sentinel-ns"},
		{component: "ClusterInterruption", path: "karpenter.replaceRelease", world: hubWorld, base: cluster, with: merge(cluster, bus("karpenter", map[string]any{"replaceRelease": true})), marker: "deleteBeforeReplace kubernetes:helm.sh/v3:Release"},
		{component: "ClusterInterruption", path: "karpenter.serviceAccount", world: hubWorld, base: cluster, with: merge(cluster, bus("karpenter", map[string]any{"serviceAccount": "sentinel-sa"})), marker: "sentinel-sa"},
		{component: "ClusterInterruption", path: "karpenter.values", world: hubWorld, base: cluster, with: merge(cluster, bus("karpenter", map[string]any{"values": map[string]any{"sentinelValue": 5}})), marker: `"sentinelValue":5`},
		{component: "ClusterInterruption", path: "karpenter.version", world: hubWorld, base: cluster, with: merge(cluster, bus("karpenter", map[string]any{"version": "1.14.1"})), marker: `"version":"1.14.1"`},
		{component: "ClusterInterruption", path: "memberBaseline", world: memberWorld, base: merge(existing, bus("hubAccountId", hub)), with: merge(existing, map[string]any{"hubAccountId": hub, "memberBaseline": true}), marker: "karpenter-interruption-bus:index:MemberAccount"},
		{component: "ClusterInterruption", path: "mode", world: hubWorld, base: cluster, with: merge(cluster, map[string]any{"mode": "existing-role", "controllerRoleName": "KarpenterController"}), marker: "kubernetes:helm.sh/v3:Release", gone: true},
		{
			component: "ClusterInterruption", path: "oidcProviderArn", base: cluster, with: merge(irsa, bus("oidcProviderArn", oidc("SENTINEL"))), marker: "id/SENTINEL",
			world: func() *mocks.Mocks {
				m := hubWorld()
				m.Clusters = map[string]mocks.EKSCluster{"blue": {OIDCIssuer: "https://oidc.eks.us-east-1.amazonaws.com/id/SENTINEL"}}
				return m
			},
		},
		{component: "ClusterInterruption", path: "tags", world: hubWorld, base: cluster, with: merge(cluster, bus("tags", map[string]any{"sentinel-tag": "v"})), marker: `"sentinel-tag":"v"`},
	}

	covered := map[string]bool{}
	for _, tt := range tests {
		covered[tt.component+" "+tt.path] = true
	}
	for _, p := range schemaInputs(t) {
		if !covered[p] {
			t.Errorf("input %s has no case: add one showing it reaches the declared resources", p)
		}
	}
	for _, tt := range tests {
		t.Run(tt.component+" "+tt.path, func(t *testing.T) {
			world := tt.world
			if world == nil {
				world = func() *mocks.Mocks { return &mocks.Mocks{} }
			}
			base := tt.base
			if base == nil {
				base = map[string]any{}
			}
			name := map[string]string{"Bus": "hub", "ClusterInterruption": "blue"}[tt.component]
			if tt.fails {
				declaredText(t, world(), tt.component, name, base)
				if _, _, err := construct(t, world(), tt.component, name, tt.with); err == nil || !strings.Contains(err.Error(), tt.marker) {
					t.Errorf("with %s set: %v, want the construction refused saying %q", tt.path, err, tt.marker)
				}
				return
			}
			without, with := declaredText(t, world(), tt.component, name, base), declaredText(t, world(), tt.component, name, tt.with)
			if strings.Contains(with, tt.marker) == tt.gone {
				t.Errorf("with %s set, %q is %s the declared resources", tt.path, tt.marker, map[bool]string{true: "still in", false: "not in"}[tt.gone])
			}
			if strings.Contains(without, tt.marker) != tt.gone {
				t.Errorf("without %s, %q is %s the declared resources: the case proves nothing", tt.path, tt.marker, map[bool]string{true: "not in", false: "already in"}[tt.gone])
			}
		})
	}
}

func merge(a, b map[string]any) map[string]any {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}

// declaredText is everything the component declares with inputs, as text: each resource's type, name, options
// and inputs as JSON, the strings among them also as they are (JSON inside a string, a policy or a redrive
// policy, unescaped), and its outputs.
func declaredText(t *testing.T, m *mocks.Mocks, component, name string, inputs map[string]any) string {
	t.Helper()
	resp, rs, err := construct(t, m, component, name, inputs)
	if err != nil {
		t.Fatalf("constructing %s with %v: %v", component, inputs, err)
	}
	var b strings.Builder
	for _, r := range rs {
		plain := render.Plain(r.Inputs)
		text, _ := json.Marshal(plain)
		b.WriteString(r.Type + " " + r.Name + " " + string(text) + "\n")
		if r.DeleteBeforeReplace {
			b.WriteString("deleteBeforeReplace " + r.Type + "\n")
		}
		var strs func(v any)
		strs = func(v any) {
			switch x := v.(type) {
			case string:
				b.WriteString(x + "\n")
			case map[string]any:
				for _, e := range x {
					strs(e)
				}
			case []any:
				for _, e := range x {
					strs(e)
				}
			}
		}
		strs(plain)
	}
	for k, v := range resp.State.All {
		if v.IsString() {
			text, _ := json.Marshal(map[string]string{k: v.AsString()})
			b.Write(text)
		}
	}
	return b.String()
}

// schemaInputs are the inputs of both components in provider/schema.json, as "<Component> <path>", objects'
// properties by dotted paths (maps' values as their type's properties).
func schemaInputs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	type prop struct {
		Ref                  string `json:"$ref"`
		Items                *prop  `json:"items"`
		AdditionalProperties *prop  `json:"additionalProperties"`
	}
	var spec struct {
		Resources map[string]struct {
			InputProperties map[string]prop `json:"inputProperties"`
		} `json:"resources"`
		Types map[string]struct {
			Type       string          `json:"type"`
			Properties map[string]prop `json:"properties"`
		} `json:"types"`
	}
	if err := json.Unmarshal(b, &spec); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(component, prefix string, props map[string]prop)
	walk = func(component, prefix string, props map[string]prop) {
		for k, p := range props {
			ref := p.Ref
			if p.Items != nil {
				ref = p.Items.Ref
			}
			if p.AdditionalProperties != nil {
				ref = p.AdditionalProperties.Ref
			}
			if typ, ok := spec.Types[strings.TrimPrefix(ref, "#/types/")]; ok && typ.Type == "object" {
				walk(component, prefix+k+".", typ.Properties)
				continue
			}
			out = append(out, component+" "+prefix+k)
		}
	}
	for tok, r := range spec.Resources {
		walk(tok[strings.LastIndex(tok, ":")+1:], "", r.InputProperties)
	}
	slices.Sort(out)
	return out
}
