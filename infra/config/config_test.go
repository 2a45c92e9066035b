package config

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// testAccount is the stack's own account in these tests.
const testAccount = "111111111111"

func TestLoadDefaults(t *testing.T) {
	c, err := Load("dev", testAccount, nil)
	if err != nil {
		t.Fatalf("a config with no keys (0 clusters) must be valid: %v", err)
	}
	if c.NamePrefix != "kib-dev" || c.QueuePrefix != "kib-dev_" || len(c.Clusters) != 0 {
		t.Errorf("defaults = %+v", c)
	}
	if !reflect.DeepEqual(c.Router, DefaultRouter) || c.CentralQueue != DefaultCentralQueue || c.Alarms != DefaultAlarms ||
		!c.Heartbeat.Enabled || c.Heartbeat.Interval() != 5*time.Minute || c.ProviderBudgetMB != DefaultProviderBudgetMB {
		t.Errorf("defaults = %+v", c)
	}
	if got := c.Router.VisibilityTimeout(); got != 180 || c.CentralQueue.MaxReceiveCount != 10 {
		t.Errorf("visibility timeout = %d, want 6 x 30 + no window", got)
	}
}

func TestLoadValues(t *testing.T) {
	c, err := Load("prod", testAccount, map[string]string{
		"clusters":         `[{"name":"alpha"},{"name":"beta"}]`,
		"router":           `{"batchSize":10,"maximumBatchingWindowSeconds":0,"maximumConcurrency":2,"memoryMb":512,"timeoutSeconds":60,"logRetentionDays":90,"logLevel":"debug","ownerTagKeys":["team/cluster"]}`,
		"centralQueue":     `{"messageRetentionSeconds":600,"maxReceiveCount":3,"eventMaxAgeSeconds":120}`,
		"alarms":           `{"topicArn":"arn:aws:sns:eu-west-1:123456789012:oncall","oldestMessageAgeSeconds":30}`,
		"heartbeat":        `{"enabled":false,"rate":"15m"}`,
		"tags":             `{"team":"platform"}`,
		"dashboard":        "true",
		"providerBudgetMB": "61440",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Clusters) != 2 || c.Clusters[1].Name != "beta" || c.Router.BatchSize != 10 || c.Router.OwnerTagKeys[0] != "team/cluster" ||
		c.CentralQueue.MaxReceiveCount != 3 || c.Alarms.TopicARN == "" || c.Tags["team"] != "platform" ||
		c.QueuePrefix != "kib-prod_" || !c.Dashboard || c.Heartbeat.Enabled || c.Heartbeat.Interval() != 15*time.Minute || c.ProviderBudgetMB != 61440 {
		t.Errorf("config = %+v", c)
	}
}

func TestLoadPartialObjectKeepsDefaults(t *testing.T) {
	c, err := Load("dev", testAccount, map[string]string{"router": `{"memoryMb":512}`})
	if err != nil {
		t.Fatal(err)
	}
	if c.Router.MemoryMB != 512 || c.Router.BatchSize != DefaultRouter.BatchSize {
		t.Errorf("router = %+v, want memoryMb set and the other defaults kept", c.Router)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		kv   map[string]string
		want []string
	}{
		{"duplicate cluster", map[string]string{"clusters": `[{"name":"a"},{"name":"b"},{"name":"a"}]`}, []string{"clusters[2].name: duplicate of clusters[0]"}},
		{"clusters differing only in case", map[string]string{"clusters": `[{"name":"prod"},{"name":"b"},{"name":"Prod"}]`}, []string{`clusters[2].name: "Prod" differs from clusters[0].name "prod" only in case: IAM role names are not case-sensitive`}},
		{"missing name", map[string]string{"clusters": `[{"name":"a"},{}]`}, []string{"clusters[1].name: is required"}},
		{"invalid name", map[string]string{"clusters": `[{"name":"bad.name"}]`}, []string{"clusters[0].name: \"bad.name\" must start with"}},
		{"name too long", map[string]string{"clusters": `[{"name":"` + strings.Repeat("c", 101) + `"}]`}, []string{"clusters[0].name: is 101 characters"}},
		{"unknown cluster key", map[string]string{"clusters": `[{"label":"a"}]`}, []string{`clusters[0]: unknown key "label"`}},
		{"clusters not a list", map[string]string{"clusters": `{"name":"a"}`}, []string{"clusters: must be a list, not a JSON object"}},
		{"clusters not JSON", map[string]string{"clusters": `[{name: a}]`}, []string{"clusters: is not valid JSON"}},
		{"name not a string", map[string]string{"clusters": `[{"name":7}]`}, []string{"clusters[0].name: must be a string, not a JSON number"}},
		{"unknown mode", map[string]string{"clusters": `[{"name":"a","mode":"magic"}]`}, []string{`clusters[0].mode: "magic" is not one of install, existing-role, create`}},
		{"unknown identity", map[string]string{"clusters": `[{"name":"a","identity":"keys"}]`}, []string{`clusters[0].identity: "keys" is not one of pod-identity, irsa`}},
		{"IRSA without OIDC provider", map[string]string{"clusters": `[{"name":"a","identity":"irsa"}]`}, []string{"clusters[0].oidcProviderArn: is required with identity irsa"}},
		{"bad OIDC provider", map[string]string{"clusters": `[{"name":"a","identity":"irsa","oidcProviderArn":"oidc"}]`}, []string{`clusters[0].oidcProviderArn: "oidc" is not an IAM OIDC provider ARN`}},
		{"OIDC provider with pod identity", map[string]string{"clusters": `[{"name":"a","oidcProviderArn":"arn:aws:iam::123456789012:oidc-provider/x"}]`}, []string{"clusters[0].oidcProviderArn: applies only to mode install with identity irsa"}},
		{"existing role without a role", map[string]string{"clusters": `[{"name":"a","mode":"existing-role"}]`}, []string{"clusters[0].controllerRoleName: is required with mode existing-role"}},
		{"role name in install mode", map[string]string{"clusters": `[{"name":"a","controllerRoleName":"r"}]`}, []string{"clusters[0].controllerRoleName: applies only to mode existing-role"}},
		{"identity in existing-role mode", map[string]string{"clusters": `[{"name":"a","mode":"existing-role","controllerRoleName":"r","identity":"irsa"}]`}, []string{"clusters[0].identity: applies only to modes install and create"}},
		{"create without settings", map[string]string{"clusters": `[{"name":"a","mode":"create"}]`}, []string{"clusters[0].create: is required with mode create"}},
		{"create settings in install mode", map[string]string{"clusters": `[{"name":"a","create":{"vpcId":"vpc-0123456789abcdef0"}}]`}, []string{"clusters[0].create: applies only to mode create"}},
		{"create with bad network", map[string]string{"clusters": `[{"name":"a","mode":"create","create":{"vpcId":"vpc-1","subnetIds":["subnet-x"],"kubernetesVersion":"2"}}]`}, []string{
			`clusters[0].create.vpcId: "vpc-1" is not a VPC ID`, "clusters[0].create.subnetIds: needs at least 2 subnets",
			`clusters[0].create.subnetIds[0]: "subnet-x" is not a subnet ID`, `clusters[0].create.kubernetesVersion: "2"`}},
		{"create with a Kubernetes its Karpenter does not run on", map[string]string{"clusters": `[{"name":"a","mode":"create","karpenter":{"version":"1.6.3"},"create":{"vpcId":"vpc-0123456789abcdef0","subnetIds":["subnet-0123456789abcdef0","subnet-0123456789abcdef1"],"kubernetesVersion":"1.34"}}]`}, []string{
			`clusters[0].create.kubernetesVersion: Kubernetes 1.34 is outside what Karpenter 1.6.3 runs on, 1.26 to 1.33`}},
		{"system nodes", map[string]string{"clusters": `[{"name":"a","mode":"create","create":{"vpcId":"vpc-0123456789abcdef0","subnetIds":["subnet-0123456789abcdef0","subnet-0123456789abcdef1"],"systemNodes":{"min":3,"max":2}}}]`}, []string{"clusters[0].create.systemNodes: needs 1 <= min (3)"}},
		{"chart version", map[string]string{"clusters": `[{"name":"a","karpenter":{"version":"latest"}}]`}, []string{`clusters[0].karpenter.version: "latest" is not a version such as 1.15.1`}},
		{"version too old", map[string]string{"clusters": `[{"name":"a","karpenter":{"version":"1.5.2"}}]`}, []string{`clusters[0].karpenter.version: "1.5.2" is outside the supported range, 1.6.0 to 1.15.x`}},
		{"version too new", map[string]string{"clusters": `[{"name":"a","karpenter":{"version":"1.16.0"}}]`}, []string{`clusters[0].karpenter.version: "1.16.0" is outside the supported range, 1.6.0 to 1.15.x`}},
		{"namespace", map[string]string{"clusters": `[{"name":"a","karpenter":{"namespace":"Kube_System"}}]`}, []string{`clusters[0].karpenter.namespace: "Kube_System"`}},
		{"overriding the queue", map[string]string{"clusters": `[{"name":"a","karpenter":{"values":{"settings":{"interruptionQueue":"mine"}}}}]`}, []string{"clusters[0].karpenter.values.settings.interruptionQueue: is set by the bus"}},
		{"unknown nested key", map[string]string{"clusters": `[{"name":"a","karpenter":{"release":"1.6.3"}}]`}, []string{`clusters[0]: unknown key`}},
		{"batch over 10 without window", map[string]string{"router": `{"batchSize":100,"maximumBatchingWindowSeconds":0}`}, []string{"router.maximumBatchingWindowSeconds: must be at least 1 when batchSize (100) is over 10"}},
		{"batch size", map[string]string{"router": `{"batchSize":20000}`}, []string{"router.batchSize: 20000 is out of range 1 to 10000"}},
		{"canary interval", map[string]string{"router": `{"canaryIntervalSeconds":0}`}, []string{"router.canaryIntervalSeconds: 0 is out of range 1 to 3600"}},
		{"canary interval not below the heartbeat", map[string]string{"router": `{"canaryIntervalSeconds":60}`, "heartbeat": `{"rate":"1m"}`},
			[]string{"router.canaryIntervalSeconds: 60 s is not below heartbeat.rate (1m)"}},
		{"concurrency", map[string]string{"router": `{"maximumConcurrency":1}`}, []string{"router.maximumConcurrency: 1 is out of range 2 to 1000"}},
		{"provisioned pollers beside a maximum concurrency", map[string]string{"router": `{"maximumConcurrency":20,"provisionedPollers":{"minimum":2,"maximum":10}}`},
			[]string{"router.provisionedPollers: cannot be combined with router.maximumConcurrency"}},
		{"provisioned pollers", map[string]string{"router": `{"provisionedPollers":{"minimum":1,"maximum":2001}}`},
			[]string{"router.provisionedPollers.minimum: 1 is out of range 2 to 200", "router.provisionedPollers.maximum: 2001 is out of range 2 to 2000"}},
		{"reserved concurrency", map[string]string{"router": `{"reservedConcurrency":1}`}, []string{"router.reservedConcurrency: 1 is out of range 2 to 100000"}},
		{"provisioned pollers' maximum below the minimum", map[string]string{"router": `{"provisionedPollers":{"minimum":10,"maximum":5}}`},
			[]string{"router.provisionedPollers.maximum: 5 is below minimum (10)"}},
		{"memory", map[string]string{"router": `{"memoryMb":64}`}, []string{"router.memoryMb: 64 is out of range"}},
		{"timeout", map[string]string{"router": `{"timeoutSeconds":901}`}, []string{"router.timeoutSeconds: 901 is out of range"}},
		{"retention", map[string]string{"router": `{"logRetentionDays":10}`}, []string{"router.logRetentionDays: 10 is not a CloudWatch Logs retention"}},
		{"log level", map[string]string{"router": `{"logLevel":"loud"}`}, []string{`router.logLevel: "loud" is not one of`}},
		{"owner tag key", map[string]string{"router": `{"ownerTagKeys":["a,b"]}`}, []string{"router.ownerTagKeys[0]"}},
		{"unknown router key", map[string]string{"router": `{"batchsize":5}`}, []string{`router: unknown key "batchsize" (did you mean "batchSize"?)`}},
		{"queue prefix", map[string]string{"queuePrefix": "kib-"}, []string{`queuePrefix: is no longer a key: cluster queues are "<namePrefix>_<cluster>"`}},
		{"unknown top-level key", map[string]string{"clusterz": "[]"}, []string{`clusterz: unknown key`}},
		{"misspelt top-level key", map[string]string{"Clusters": "[]"}, []string{`Clusters: unknown key (did you mean "clusters"?)`}},
		{"name prefix", map[string]string{"namePrefix": "-" + strings.Repeat("x", 50)}, []string{"namePrefix: "}},
		{"topic", map[string]string{"alarms": `{"topicArn":"oncall"}`}, []string{`alarms.topicArn: "oncall" is not an SNS topic ARN`}},
		{"max receive", map[string]string{"centralQueue": `{"maxReceiveCount":0}`}, []string{"centralQueue.maxReceiveCount: 0 is out of range"}},
		{"reserved tag", map[string]string{"tags": `{"aws:owner":"x"}`}, []string{"tags.aws:owner: keys starting with aws: are reserved"}},
		{"dashboard", map[string]string{"dashboard": `"yes"`}, []string{"dashboard: must be true or false, not a JSON string"}},
		{"heartbeat rate not a duration", map[string]string{"heartbeat": `{"rate":"often"}`}, []string{`heartbeat.rate: "often" is not a whole number of minutes from 1m to 60m, such as 5m`}},
		{"heartbeat rate in seconds", map[string]string{"heartbeat": `{"rate":"90s"}`}, []string{`heartbeat.rate: "90s" is not a whole number of minutes`}},
		{"heartbeat rate too slow", map[string]string{"heartbeat": `{"rate":"2h"}`}, []string{`heartbeat.rate: "2h" is not`}},
		{"heartbeat rate a number", map[string]string{"heartbeat": `{"rate":5}`}, []string{`heartbeat.rate: must be a string, not a JSON number`}},
		{"heartbeat key", map[string]string{"heartbeat": `{"enable":true}`}, []string{`heartbeat: unknown key "enable"`}},
		{"a shard sets what only the hub declares", map[string]string{"hub": "prod", "router": `{"batchSize":5}`, "dashboard": "true", "heartbeat": `{"rate":"5m"}`},
			[]string{"router: applies to the hub only: this stack is a shard of prod (hub)", "dashboard: applies to the hub only", "heartbeat: applies to the hub only"}},
		{"a shard of itself", map[string]string{"hub": "acme/kib/dev"}, []string{`hub: "acme/kib/dev" is this stack`}},
		{"a hub that is no stack name", map[string]string{"hub": "prod stack"}, []string{`hub: "prod stack" is not a stack name`}},
		{"chart values the bus writes into that are no objects", map[string]string{"clusters": `[{"name":"c","karpenter":{"values":{"settings":"x","serviceAccount":[1]}}},{"name":"d","karpenter":{"values":{"serviceAccount":{"annotations":"y"}}}}]`},
			[]string{"clusters[0].karpenter.values.settings: must be an object", "clusters[0].karpenter.values.serviceAccount: must be an object",
				"clusters[1].karpenter.values.serviceAccount.annotations: must be an object"}},
		{"a service account no DNS subdomain", map[string]string{"clusters": `[{"name":"c","karpenter":{"serviceAccount":"Karpenter_sa"}}]`},
			[]string{`clusters[0].karpenter.serviceAccount: "Karpenter_sa" is not a Kubernetes service account name`}},
		{"a service account past a DNS subdomain's 253 characters", map[string]string{"clusters": `[{"name":"c","karpenter":{"serviceAccount":"` + strings.Repeat("s", 254) + `"}}]`},
			[]string{`clusters[0].karpenter.serviceAccount: "` + strings.Repeat("s", 254) + `" is not a Kubernetes service account name`}},
		{"a StackSet after a prefix starting with a digit", map[string]string{"namePrefix": "9kib", "organization": `{"id":"o-a1b2c3d4e5","memberOUs":["ou-ab12-cd34ef56"]}`},
			[]string{`namePrefix: "9kib" starts with a digit: with organization.memberOUs the member StackSet is named after it (9kib-member-baseline)`}},
		{"a cluster to create past pulumi-eks's roles' names", map[string]string{"clusters": `[{"name":"` + strings.Repeat("c", MaxCreateName+1) + `","mode":"create","create":{"vpcId":"vpc-0123456789abcdef0","subnetIds":["subnet-0123456789abcdef0","subnet-0123456789abcdef1"]}}]`},
			[]string{fmt.Sprintf("clusters[0].name: %q is 35 characters: a cluster the stack creates takes at most 34", strings.Repeat("c", MaxCreateName+1))}},
		{"a shard with the StackSet", map[string]string{"hub": "prod", "organization": `{"id":"o-a1b2c3d4e5","memberOUs":["ou-ab12-cd34ef56"]}`},
			[]string{"organization.memberOUs: applies to the hub only"}},
		{"a budget below one provider's", map[string]string{"providerBudgetMB": "256"}, []string{"providerBudgetMB: 256 MB is less than one preview's providers can run in: at least 512"}},
		{"a budget that is no number", map[string]string{"providerBudgetMB": `"16GB"`}, []string{"providerBudgetMB: must be"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load("dev", testAccount, tt.kv)
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\ndoes not contain %q", err, w)
				}
			}
		})
	}
}

func TestLoadClusterDefaults(t *testing.T) {
	c, err := Load("dev", testAccount, map[string]string{"clusters": `[{"name":"a"},{"name":"b","mode":"existing-role","controllerRoleName":"k"},` +
		`{"name":"c","mode":"create","create":{"vpcId":"vpc-0123456789abcdef0","subnetIds":["subnet-0123456789abcdef0","subnet-0123456789abcdef1"]}}]`})
	if err != nil {
		t.Fatal(err)
	}
	a, b, cr := c.Clusters[0], c.Clusters[1], c.Clusters[2]
	if a.Mode != ModeInstall || a.Identity != IdentityPodIdentity || a.Karpenter.Version != DefaultKarpenterVersion ||
		a.Karpenter.Namespace != "kube-system" || a.Karpenter.ServiceAccount != "karpenter" {
		t.Errorf("install defaults = %+v", a)
	}
	if b.Identity != "" {
		t.Errorf("existing-role has identity %q, want none", b.Identity)
	}
	if cr.Create.SystemNodes != DefaultSystemNodes {
		t.Errorf("system nodes = %+v, want %+v", cr.Create.SystemNodes, DefaultSystemNodes)
	}
}

func TestLoadReportsAllProblemsAtOnce(t *testing.T) {
	_, err := Load("dev", testAccount, map[string]string{
		"clusters": `[{"name":"a"},{"name":"a"},{"name":""}]`,
		"router":   `{"memoryMb":1,"logLevel":"x"}`,
		"alarms":   `{"topicArn":"nope"}`,
	})
	var cfgErr *Error
	if !errors.As(err, &cfgErr) {
		t.Fatalf("error %v is not a *config.Error", err)
	}
	if len(cfgErr.Problems) != 5 {
		t.Fatalf("got %d problems, want 5 (duplicate, missing name, memory, log level, topic):\n%v", len(cfgErr.Problems), err)
	}
	// In the order of their text, "path: reason": the same configuration, the same message.
	if !slices.IsSortedFunc(cfgErr.Problems, func(a, b Problem) int { return strings.Compare(a.String(), b.String()) }) {
		t.Errorf("problems not in order:\n%v", err)
	}
}

// TestValidateFillsNothingIn: validation checks what it is given; a field left empty is a problem, not a default.
func TestValidateFillsNothingIn(t *testing.T) {
	c := defaults("dev", testAccount)
	c.NamePrefix, c.QueuePrefix = "kib-dev", "kib-dev-"
	c.Clusters = []Cluster{{Name: "a"}}
	var p problems
	validate(c, shape{}, &p)
	if len(p) != 1 || !strings.Contains(p[0].String(), `clusters[0].mode: "" is not one of install, existing-role, create`) {
		t.Fatalf("problems = %v, want the empty mode reported", p)
	}
	if c.Clusters[0].Mode != "" {
		t.Fatal("validate filled in the mode")
	}
}

func TestLoadAccounts(t *testing.T) {
	c, err := Load("hub", testAccount, map[string]string{
		"clusters": `[{"name":"a"},{"name":"b","account":"222222222222"},{"name":"c","account":"` + testAccount + `"}]`,
		"accounts": `{"222222222222":{"deployRoleArn":"arn:aws:iam::222222222222:role/pulumi-deploy","alarmTopicArn":"arn:aws:sns:eu-west-1:222222222222:oncall"}}`,
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Clusters[0].Account != testAccount || c.Clusters[1].Account != "222222222222" || !c.IsMember("222222222222") || c.IsMember(testAccount) ||
		len(c.MemberAccounts()) != 1 || c.Accounts["222222222222"].DeployRoleARN != "arn:aws:iam::222222222222:role/pulumi-deploy" {
		t.Errorf("config = %+v", c)
	}
	_, err = Load("hub", testAccount, map[string]string{
		"clusters": `[{"name":"a","account":"999999999999"},{"name":"b","account":"12"},{"name":"c","account":"222222222222"}]`,
		"accounts": `{"222222222222":{"deployRoleArn":"arn:aws:iam::333333333333:role/d"},"333333333333":{"deployRoleArn":"role/d"},` +
			`"` + testAccount + `":{"deployRoleArn":"arn:aws:iam::` + testAccount + `:role/d"},"44":{},` +
			`"555555555555":{"deployRoleArn":"arn:aws:iam::555555555555:role/d","alarmTopicArn":"arn:aws:sns:eu-west-1:111111111111:t"},` +
			`"666666666666":{"deployRolearn":"x"}}`,
	})
	for _, want := range []string{
		`clusters[0].account: 999999999999 is neither the stack's account (111111111111) nor in accounts`,
		`clusters[1].account: "12" is not a 12-digit account ID`,
		`accounts.222222222222.deployRoleArn: "arn:aws:iam::333333333333:role/d" is a role of account 333333333333, not of 222222222222`,
		`accounts.333333333333: has no cluster`,
		`accounts.333333333333.deployRoleArn: "role/d" is not an IAM role ARN`,
		`accounts.111111111111: is the stack's own account`,
		`accounts.44: is not a 12-digit account ID`,
		`accounts.555555555555.alarmTopicArn: "arn:aws:sns:eu-west-1:111111111111:t" is a topic of another account`,
		`accounts.666666666666: unknown key "deployRolearn" (did you mean "deployRoleArn"?)`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error\n%v\ndoes not say %q", err, want)
		}
	}
}

// TestKeyTypesAreTheKeys: the reference's types cover exactly the keys decode reads.
func TestKeyTypesAreTheKeys(t *testing.T) {
	types := KeyTypes()
	if len(types) != len(Keys()) {
		t.Errorf("%d key types for %d keys", len(types), len(Keys()))
	}
	for _, k := range Keys() {
		if types[k] == nil {
			t.Errorf("key %s has no type", k)
		}
	}
}

// TestPartitions: every ARN the configuration takes (a member's deploy role and alarm topic, the alarm topic, an
// IRSA cluster's OIDC provider) is taken in every AWS partition (contract.Partitions: the isolated ones have more
// than one hyphen) and refused in anything else, naming the field.
func TestPartitions(t *testing.T) {
	const member = "222222222222"
	values := func(p string) map[string]string {
		return map[string]string{
			"accounts": `{"` + member + `":{"deployRoleArn":"arn:` + p + `:iam::` + member + `:role/deploy","alarmTopicArn":"arn:` + p + `:sns:r-1:` + member + `:ops"}}`,
			"alarms":   `{"topicArn":"arn:` + p + `:sns:r-1:` + testAccount + `:ops"}`,
			"clusters": `[{"name":"a","identity":"irsa","oidcProviderArn":"arn:` + p + `:iam::` + testAccount + `:oidc-provider/oidc.example/id/A"},` +
				`{"name":"b","account":"` + member + `","mode":"existing-role","controllerRoleName":"k"}]`,
		}
	}
	for _, p := range []string{"aws", "aws-cn", "aws-us-gov", "aws-iso", "aws-iso-b", "aws-iso-e", "aws-iso-f", "aws-eusc"} {
		if _, err := Load("dev", testAccount, values(p)); err != nil {
			t.Errorf("partition %s refused: %v", p, err)
		}
	}
	for _, p := range []string{"awsx", "aws-moon", "aws-iso-z", "azure"} {
		_, err := Load("dev", testAccount, values(p))
		var cfgErr *Error
		if !errors.As(err, &cfgErr) {
			t.Fatalf("partition %s: %v, want a configuration error", p, err)
		}
		for _, field := range []string{"accounts." + member + ".deployRoleArn", "accounts." + member + ".alarmTopicArn", "alarms.topicArn", "clusters[0].oidcProviderArn"} {
			if !strings.Contains(err.Error(), field+":") {
				t.Errorf("partition %s: %v does not name %s", p, err, field)
			}
		}
	}
}

// TestProvisionedPollersReplaceTheDefaultConcurrency: provisioned pollers alone are taken, the default maximum
// concurrency, which the stack did not set, not counted against them; the saturation alarm's limit is the pollers',
// 10 invocations each; the pinned provider's most pollers, 2,000 (AWS takes 10,000 for SQS), validates.
func TestProvisionedPollersReplaceTheDefaultConcurrency(t *testing.T) {
	c, err := Load("dev", testAccount, map[string]string{"router": `{"provisionedPollers":{"minimum":5,"maximum":50}}`})
	if err != nil {
		t.Fatal(err)
	}
	if pp := c.Router.ProvisionedPollers; pp == nil || *pp != (ProvisionedPollers{Minimum: 5, Maximum: 50}) || c.Router.ConcurrencyLimit() != 500 {
		t.Errorf("provisioned pollers %+v, limit %d", pp, c.Router.ConcurrencyLimit())
	}
	if d, err := Load("dev", testAccount, nil); err != nil || d.Router.ConcurrencyLimit() != DefaultRouter.MaximumConcurrency {
		t.Errorf("without provisioned pollers the limit is %d (%v)", d.Router.ConcurrencyLimit(), err)
	}
	if _, err := Load("dev", testAccount, map[string]string{"router": `{"provisionedPollers":{"minimum":200,"maximum":2000}}`}); err != nil {
		t.Errorf("the provider's bounds refused: %v", err)
	}
}

// TestAnEntryDecodedOneByOneIsDecodedOnce: accounts and organization are decoded entry by entry, each problem naming
// its entry, and not also as a whole: an organization that does not decode is no organization (its ID is not checked
// as one), and an account that does not decode is one problem of its decoding, not two.
func TestAnEntryDecodedOneByOneIsDecodedOnce(t *testing.T) {
	_, err := Load("hub", testAccount, map[string]string{
		"clusters":     `[{"name":"a"}]`,
		"organization": `{"id":"not-an-organization","CallAs":"SELF"}`,
		"accounts":     `{"222222222222":5}`,
	})
	var cfgErr *Error
	if !errors.As(err, &cfgErr) {
		t.Fatalf("error %v, want problems", err)
	}
	var got []string
	for _, p := range cfgErr.Problems {
		if strings.HasPrefix(p.Path, "organization") {
			got = append(got, p.Path+": "+p.Reason)
		}
	}
	want := []string{`organization: unknown key "CallAs" (did you mean "callAs"?)`}
	if !slices.Equal(got, want) {
		t.Errorf("organization's problems %q, want %q", got, want)
	}
	n := 0
	for _, p := range cfgErr.Problems {
		if strings.HasPrefix(p.Path, "accounts") && strings.Contains(p.Reason, "must be an object") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the account that does not decode: %d problems of its decoding, want 1: %v", n, err)
	}
}

// TestWhatTheProvidersTakeIsTaken: at the edges of the checks that follow the pinned providers' rules, the values they
// take load: a cluster to create of MaxCreateName characters, a prefix starting with a digit where no StackSet is named
// after it, tags counted in characters as AWS counts them (128 and 256 characters of two bytes each).
func TestWhatTheProvidersTakeIsTaken(t *testing.T) {
	for name, kv := range map[string]map[string]string{
		"a cluster to create at the longest":          {"clusters": `[{"name":"` + strings.Repeat("c", MaxCreateName) + `","mode":"create","create":{"vpcId":"vpc-0123456789abcdef0","subnetIds":["subnet-0123456789abcdef0","subnet-0123456789abcdef1"]}}]`},
		"a prefix starting with a digit, no StackSet": {"namePrefix": "9kib", "organization": `{"id":"o-a1b2c3d4e5"}`},
		"tags in two-byte characters":                 {"tags": `{"` + strings.Repeat("é", 128) + `":"` + strings.Repeat("ü", 256) + `"}`},
		"the most provisioned pollers":                {"router": `{"provisionedPollers":{"minimum":2,"maximum":2000},"reservedConcurrency":20000}`},
		"chart objects the bus writes into, null":     {"clusters": `[{"name":"c","karpenter":{"values":{"settings":null,"serviceAccount":{"annotations":null}}}}]`},
		"a service account named as a DNS subdomain":  {"clusters": `[{"name":"c","karpenter":{"serviceAccount":"karpenter.controller-` + strings.Repeat("s", 232) + `"}}]`},
	} {
		if _, err := Load("dev", testAccount, kv); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestAComponentToCreateIsNamedWithinPulumiEKSsRoles: a cluster joining as a component (LoadJoin) is created under the
// component's name, which pulumi-eks names its roles after: the component's name is held to MaxCreateName, on mode,
// and the cluster's own name is not.
func TestAComponentToCreateIsNamedWithinPulumiEKSsRoles(t *testing.T) {
	cluster := func(name string) map[string]string {
		return map[string]string{"clusters": `[{"name":"` + name + `","mode":"create","create":{"vpcId":"vpc-0123456789abcdef0","subnetIds":["subnet-0123456789abcdef0","subnet-0123456789abcdef1"]}}]`}
	}
	if _, err := LoadJoin("dev", testAccount, cluster(strings.Repeat("c", 60)), "blue"); err != nil {
		t.Errorf("a long cluster name under a short component's: %v", err)
	}
	long := strings.Repeat("b", MaxCreateName+1)
	_, err := LoadJoin("dev", testAccount, cluster("c"), long)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("clusters[0].mode: create: the component's name %q is 35 characters, at most 34", long)) {
		t.Errorf("a component's name past pulumi-eks's roles': %v", err)
	}
	if _, err := LoadJoin("dev", testAccount, cluster("c"), long[1:]); err != nil {
		t.Errorf("a component's name at the longest: %v", err)
	}
}

// TestIsLetter: a StackSet's name starts with one of A-Z and a-z (CreateStackSet), at each edge of both ranges.
func TestIsLetter(t *testing.T) {
	for b, want := range map[byte]bool{'a': true, 'z': true, 'A': true, 'Z': true, 'm': true, 'M': true,
		'0': false, '9': false, '@': false, '[': false, '`': false, '{': false, '-': false} {
		if isLetter(b) != want {
			t.Errorf("isLetter(%q) = %v, want %v", b, !want, want)
		}
	}
}

// TestAComponentsChartObjectsAreTheChartsToJudge: in the package (LoadJoin), a chart value the bus writes into that is
// not an object is the component's stand-in for one unknown at a preview, and is taken; the program refuses it.
func TestAComponentsChartObjectsAreTheChartsToJudge(t *testing.T) {
	values := map[string]string{"clusters": `[{"name":"c","karpenter":{"values":{"settings":"kib0standin"}}}]`}
	if _, err := LoadJoin("dev", testAccount, values, "c"); err != nil {
		t.Errorf("the package: %v", err)
	}
	if _, err := Load("dev", testAccount, values); err == nil {
		t.Error("the program took settings that are no object")
	}
}
