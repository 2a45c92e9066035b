package infra_test

import (
	"archive/zip"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/dashboard"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/concurrency"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/layout"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/policy"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/reach"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/routerbuild"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/providerrules"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/render"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/stackconfig"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/stacktest"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// arnPrefix starts the ARN of a queue of the default test stack (no aws:region: the mocks' us-east-1);
// devPrefix that of Pulumi.dev.yaml's (eu-west-1).
const (
	arnPrefix = "arn:aws:sqs:" + mocks.DefaultRegion + ":" + mocks.DefaultAccount + ":"
	devPrefix = "arn:aws:sqs:eu-west-1:" + mocks.DefaultAccount + ":"
)

// stubRouter writes a tiny zip instead of compiling the router: these tests are about what is declared. Its
// path and bytes are the same in every run, so runs compare equal.
func stubRouter(t *testing.T) func(context.Context) (routerbuild.Artifact, error) {
	return func(context.Context) (routerbuild.Artifact, error) {
		path := filepath.Join(os.TempDir(), "kib-infra-test-router.zip")
		f, err := os.Create(path)
		if err != nil {
			return routerbuild.Artifact{}, err
		}
		zw := zip.NewWriter(f)
		w, _ := zw.Create("bootstrap")
		_, _ = w.Write([]byte("stub"))
		_ = zw.Close()
		_ = f.Close()
		data, _ := os.ReadFile(path)
		sum := sha256.Sum256(data)
		return routerbuild.Artifact{Zip: path, SourceCodeHash: base64.StdEncoding.EncodeToString(sum[:]), Size: int64(len(data))}, nil
	}
}

type result struct {
	resources stacktest.Resources
	outputs   map[string]any
	// secret are the outputs exported as secrets.
	secret map[string]bool
}

// run runs the program for stack with kv ("key" -> value in the project's namespace, or "ns:key") under mocks,
// in the stack's aws:region, on its first update, with every command at hand, and returns what it declared and
// exported. Assertions happen after RunErr returns.
func run(t *testing.T, stack string, kv map[string]string) (result, error) {
	t.Helper()
	return runWith(t, &mocks.Mocks{Region: kv["aws:region"]}, render.AnyCommand, stack, kv)
}

// runWith runs as run does, under m (an account, a region, a last update's outputs), looking commands up with
// lookPath.
func runWith(t *testing.T, m *mocks.Mocks, lookPath func(string) (string, error), stack string, kv map[string]string) (result, error) {
	t.Helper()
	return runProbed(t, m, lookPath, reach.Always, stack, kv)
}

// runProbed runs as runWith does, with probe judging which clusters' Kubernetes APIs can be reached.
func runProbed(t *testing.T, m *mocks.Mocks, lookPath func(string) (string, error), probe reach.Probe, stack string, kv map[string]string) (result, error) {
	t.Helper()
	env, err := stackconfig.Env(namespaced(kv))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PULUMI_CONFIG", env)
	res := result{outputs: map[string]any{}, secret: map[string]bool{}}
	var mu sync.Mutex // applies run concurrently
	var secrets sync.WaitGroup
	m, err = m.Run(config.Namespace, stack, func(ctx *pulumi.Context) error {
		outs, err := infra.Deploy(ctx, infra.Options{BuildRouter: stubRouter(t), LookPath: lookPath, ReadConcurrency: m.ReadConcurrency,
			ReadArchiveOwner: m.ReadArchiveOwner, Probe: probe})
		if err != nil {
			return err
		}
		// Exporting the capturing apply makes RunErr wait for it.
		for k, v := range infra.Exports(outs) {
			o := pulumi.ToOutput(v)
			ctx.Export(k, o.ApplyT(func(x any) any {
				mu.Lock()
				defer mu.Unlock()
				res.outputs[k] = x
				return x
			}))
			// Whether it is a secret is known once it resolves, as RunErr waits for it to.
			secrets.Go(func() {
				secret := pulumi.IsSecret(o)
				mu.Lock()
				defer mu.Unlock()
				res.secret[k] = secret
			})
		}
		return nil
	})
	secrets.Wait()
	res.resources = m.Resources()
	return res, err
}

// namespaced puts the keys of kv without a namespace in the project's.
func namespaced(kv map[string]string) map[string]string {
	cfg := map[string]string{}
	for k, v := range kv {
		if !strings.Contains(k, ":") {
			k = config.Namespace + ":" + k
		}
		cfg[k] = v
	}
	return cfg
}

func mustRun(t *testing.T, stack string, kv map[string]string) result {
	t.Helper()
	r, err := run(t, stack, kv)
	if err != nil {
		t.Fatalf("program failed: %v", err)
	}
	return r
}

// devConfig is Pulumi.dev.yaml, the documented example stack.
func devConfig(t *testing.T) map[string]string {
	t.Helper()
	cfg, err := stackconfig.Load(filepath.Join("..", "Pulumi.dev.yaml"), config.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func sorted(xs []string) []string {
	out := slices.Clone(xs)
	sort.Strings(out)
	return out
}

// shared returns the resources that belong to no cluster.
func (r result) shared() stacktest.Resources {
	clusters := map[string]bool{}
	for _, x := range r.resources {
		if x.Type == "karpenter-interruption-bus:index:ClusterInterruption" {
			clusters[x.Name] = true
		}
	}
	return r.resources.Where(func(x mocks.Resource) bool {
		clusterProvider := x.Type == "pulumi:providers:kubernetes" && clusters[strings.TrimSuffix(x.Name, "-k8s")]
		return !clusters[x.Name] && !clusters[x.Parent] && !clusterProvider
	})
}

func TestSharedInventory(t *testing.T) {
	r := mustRun(t, "dev", devConfig(t))
	want := map[string]int{
		"karpenter-interruption-bus:index:Bus":             1,
		"karpenter-interruption-bus:index:Router":          1,
		"karpenter-interruption-bus:index:Alarms":          1,
		"karpenter-interruption-bus:index:Heartbeat":       1,
		"aws:scheduler/scheduleGroup:ScheduleGroup":        1,
		"aws:sqs/queue:Queue":                              3, // central, dead-letter, quarantine
		"aws:sqs/queuePolicy:QueuePolicy":                  3,
		"aws:cloudwatch/eventRule:EventRule":               6, // one per event type, and the canary rule
		"aws:cloudwatch/eventTarget:EventTarget":           6,
		"aws:iam/role:Role":                                4, // the router's, the forwarder (the rules'), the redrive role, the heartbeat's
		"aws:iam/rolePolicy:RolePolicy":                    4,
		"aws:cloudwatch/logGroup:LogGroup":                 1,
		"pulumi:pulumi:StackReference":                     1, // the last update's outputs, read
		"aws:lambda/function:Function":                     1,
		"aws:lambda/eventSourceMapping:EventSourceMapping": 1,
		"aws:cloudwatch/metricAlarm:MetricAlarm":           12,
		// The evidence: the seal key and its alias, the archive bucket and what protects it.
		"aws:kms/key:Key":                              1,
		"aws:kms/alias:Alias":                          1,
		"aws:s3/bucketV2:BucketV2":                     1,
		"aws:s3/bucketVersioningV2:BucketVersioningV2": 1,
		"aws:s3/bucketObjectLockConfigurationV2:BucketObjectLockConfigurationV2":                     1,
		"aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2": 1,
		"aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock":                                     1,
		"aws:s3/bucketPolicy:BucketPolicy":                                                           1,
		// The account has install clusters and, in the mocks' world, no EC2 Spot service-linked role yet.
		"karpenter-interruption-bus:index:SpotServiceLinkedRole": 1,
		"aws:iam/serviceLinkedRole:ServiceLinkedRole":            1,
	}
	got := map[string]int{}
	for _, x := range r.shared() {
		got[x.Type]++
		// Every resource of a provider belongs to one of the program's components.
		if x.Custom && x.Parent == "" {
			t.Errorf("%s %s is not parented to a component", x.Type, x.Name)
		}
		if !x.Custom && x.Parent != "" && strings.HasPrefix(x.Type, "karpenter-interruption-bus:") {
			t.Errorf("component %s has parent %s, want the stack", x.Name, x.Parent)
		}
	}
	for typ, n := range want {
		if got[typ] != n {
			t.Errorf("%s: %d declared, want %d", typ, got[typ], n)
		}
	}
	for typ := range got {
		if _, ok := want[typ]; !ok {
			t.Errorf("unexpected shared resource type %s", typ)
		}
	}
}

func TestRouterPolicy(t *testing.T) {
	r := mustRun(t, "dev", devConfig(t))
	d := stacktest.Doc(t, r.resources.Named(t, "aws:iam/rolePolicy:RolePolicy", "kib-dev-router"), "policy")
	archive := "arn:aws:s3:::" + r.outputs["archiveBucket"].(string)
	want := map[string]struct{ actions, resources []string }{
		"ReadCentralQueue": {
			[]string{"sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"},
			[]string{devPrefix + "kib-dev-central"},
		},
		// The prefix ends in "_", which no shared queue and no other stack's queue starts with.
		"ForwardToClusterQueues": {[]string{"sqs:GetQueueUrl", "sqs:SendMessage"}, []string{devPrefix + "kib-dev_*"}},
		"FindInstanceOwners":     {[]string{"ec2:DescribeInstances"}, []string{"*"}},
		"WriteOwnLogs": {
			[]string{"logs:CreateLogStream", "logs:PutLogEvents"},
			[]string{"arn:aws:logs:eu-west-1:123456789012:log-group:/aws/lambda/kib-dev-router:log-stream:*"},
		},
		// What it refuses it keeps: the quarantine, nothing else; sealed with the bus's key, archived in its bucket's
		// two prefixes.
		"KeepRefusedMessages": {[]string{"sqs:SendMessage"}, []string{devPrefix + "kib-dev-quarantine"}},
		"SealWhatItKeeps":     {[]string{"kms:GetPublicKey", "kms:Sign"}, []string{r.outputs["sealKeyArn"].(string)}},
		"ArchiveWhatItKeeps":  {[]string{"s3:PutObject"}, []string{archive + "/refused/*", archive + "/keys/*", archive + "/delivered/*", archive + "/claims/*"}},
		// Its ledger: read back, a record's claims listed by version, a missing entry told from a refusal; nothing else
		// of the archive.
		"ReadTheLedger":     {[]string{"s3:GetObject"}, []string{archive + "/delivered/*", archive + "/claims/*"}},
		"ListTheClaims":     {[]string{"s3:ListBucketVersions"}, []string{archive}},
		"TellAMissingEntry": {[]string{"s3:ListBucket"}, []string{archive}},
		// The dead-letter queue, taken in when the redrive role asks: read and deleted, never sent to.
		"TakeTheDeadLetterQueueIn": {[]string{"sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:ReceiveMessage"}, []string{devPrefix + "kib-dev-dlq"}},
		// The sender check learns the IDs of its account's forwarder (its rules) and redrive role: those, nothing else.
		"LearnTheSenderRoleIDs": {[]string{"iam:GetRole"}, []string{
			"arn:aws:iam::123456789012:role/kib-dev-forward-eu-west-1", "arn:aws:iam::123456789012:role/kib-dev-redrive-eu-west-1",
		}},
	}
	// Every S3 statement only in a bucket of the account (s3:ResourceAccount): a bucket of the archive's name that another
	// account holds is refused whatever its policy invites.
	inAccount := "map[StringEquals:map[s3:ResourceAccount:123456789012]]"
	conditions := map[string]string{"FindInstanceOwners": "map[StringEquals:map[aws:RequestedRegion:eu-west-1]]",
		"ArchiveWhatItKeeps": inAccount, "ReadTheLedger": inAccount, "TellAMissingEntry": inAccount,
		"ListTheClaims": "map[StringEquals:map[s3:ResourceAccount:123456789012] StringLike:map[s3:prefix:claims/*]]"}
	if len(d.Statement) != len(want) {
		t.Fatalf("%d statements, want %d: %+v", len(d.Statement), len(want), d)
	}
	for sid, w := range want {
		s := stacktest.Statement(t, d, sid)
		if s.Effect != "Allow" || !slices.Equal(sorted(s.Action), w.actions) || !slices.Equal(s.Resource, w.resources) ||
			(s.Condition != nil || conditions[sid] != "") && fmt.Sprint(s.Condition) != conditions[sid] {
			t.Errorf("%s = %+v, want Allow %v on %v %s", sid, s, w.actions, w.resources, conditions[sid])
		}
	}
	for _, s := range d.Statement {
		for _, a := range s.Action {
			if strings.Contains(a, "*") {
				t.Errorf("%s grants wildcard action %s", s.Sid, a)
			}
		}
		if slices.Contains(s.Resource, "*") && !slices.Equal(s.Action, []string{"ec2:DescribeInstances"}) {
			t.Errorf("%s grants %v on *; only ec2:DescribeInstances may", s.Sid, s.Action)
		}
	}
	trust := stacktest.Doc(t, r.resources.Named(t, "aws:iam/role:Role", "kib-dev-router"), "assumeRolePolicy")
	if len(trust.Statement) != 1 || fmt.Sprint(trust.Statement[0].Principal) != "map[Service:lambda.amazonaws.com]" ||
		!slices.Equal(trust.Statement[0].Action, []string{"sts:AssumeRole"}) {
		t.Errorf("trust policy = %+v, want only lambda.amazonaws.com to assume the role", trust)
	}
}

func TestQueuePolicies(t *testing.T) {
	r := mustRun(t, "dev", devConfig(t))
	var rules []string
	for _, rule := range r.resources.OfType("aws:cloudwatch/eventRule:EventRule") {
		rules = append(rules, "arn:aws:events:eu-west-1:123456789012:rule/"+stacktest.Str(t, rule, "name"))
	}
	redrive := "arn:aws:iam::123456789012:role/kib-dev-redrive-eu-west-1"
	forwarder := "arn:aws:iam::123456789012:role/kib-dev-forward-eu-west-1"
	router := "arn:aws:iam::123456789012:role/kib-dev-router-eu-west-1"
	for _, tt := range []struct {
		queue string
		// rules: the rules send through the queue's policy (EventBridge's service principal)
		rules bool
		// what the Deny excepts: who, besides, may send
		exceptSources, exceptPrincipals []string
		operator                        string
	}{
		// Every rule delivers to the central queue as the forwarder: no service principal, only roles.
		{"kib-dev-central", false, nil, []string{forwarder, redrive}, "ArnNotLike"},
		{"kib-dev-dlq", true, append(slices.Clone(rules), devPrefix+"kib-dev-central"), nil, ""},
		{"kib-dev-quarantine", false, nil, []string{router}, "ArnNotEquals"},
	} {
		q := tt.queue
		d := stacktest.Doc(t, r.resources.Named(t, "aws:sqs/queuePolicy:QueuePolicy", q), "policy")
		var allow *policy.Statement
		for i, st := range d.Statement {
			if st.Effect == "Allow" {
				allow = &d.Statement[i]
			}
		}
		switch {
		case tt.rules && allow == nil:
			t.Errorf("%s admits no rule", q)
		case tt.rules:
			if fmt.Sprint(allow.Principal) != "map[Service:events.amazonaws.com]" || !slices.Equal(allow.Action, []string{"sqs:SendMessage"}) ||
				!slices.Equal(allow.Resource, []string{devPrefix + q}) {
				t.Errorf("%s allow = %+v", q, allow)
			}
			if got := strings.Fields(fmt.Sprint(allow.Condition["ArnEquals"]["aws:SourceArn"])); !slices.Equal(sorted(trimBrackets(got)), sorted(rules)) {
				t.Errorf("%s: aws:SourceArn = %v, want exactly the rules %v", q, got, rules)
			}
		case allow != nil:
			t.Errorf("%s allows %+v: its senders are the account's roles, by their own policies", q, allow)
		}
		var deny policy.Statement
		for _, st := range d.Statement {
			if st.Effect == "Deny" && slices.Contains(st.Action, "sqs:SendMessage") {
				deny = st
			}
		}
		if deny.Principal != "*" || len(deny.Condition) != 1 {
			t.Errorf("%s: the send Deny %+v", q, deny)
		}
		if tt.exceptSources != nil && !slices.Equal(sorted(trimBrackets(strings.Fields(fmt.Sprint(deny.Condition["ArnNotEquals"]["aws:SourceArn"])))), sorted(tt.exceptSources)) {
			t.Errorf("%s: the send Deny %+v does not except exactly the sources %v", q, deny, tt.exceptSources)
		}
		if tt.exceptPrincipals != nil && fmt.Sprint(deny.Condition[tt.operator]["aws:PrincipalArn"]) != fmt.Sprint(anySlice(tt.exceptPrincipals)) &&
			fmt.Sprint(deny.Condition[tt.operator]["aws:PrincipalArn"]) != tt.exceptPrincipals[0] {
			t.Errorf("%s: the send Deny %+v does not except exactly %v", q, deny, tt.exceptPrincipals)
		}
		tls := stacktest.Statement(t, d, "DenyInsecureTransport")
		if tls.Effect != "Deny" || tls.Principal != "*" || tls.Condition["Bool"]["aws:SecureTransport"] != "false" {
			t.Errorf("%s deny = %+v, want every non-TLS request denied", q, tls)
		}
	}
	dlq := stacktest.Str(t, r.resources.Named(t, "aws:sqs/queue:Queue", "kib-dev-dlq"), "redriveAllowPolicy")
	if dlq != `{"redrivePermission":"byQueue","sourceQueueArns":["`+devPrefix+`kib-dev-central"]}` {
		t.Errorf("the DLQ takes redrive from %s, want the central queue only", dlq)
	}
	for _, name := range []string{"kib-dev-dlq", "kib-dev-quarantine"} {
		q := r.resources.Named(t, "aws:sqs/queue:Queue", name)
		if stacktest.Num(t, q, "messageRetentionSeconds") != 1209600 || !q.Inputs["sqsManagedSseEnabled"].BoolValue() {
			t.Errorf("%s keeps messages %v s, encrypted %v: want 14 days, SSE-SQS", name, q.Inputs["messageRetentionSeconds"], q.Inputs["sqsManagedSseEnabled"])
		}
	}
	// Every rule's target delivers as the forwarder, which EventBridge alone may take and which may only send to the
	// central queue.
	for _, tg := range r.resources.OfType("aws:cloudwatch/eventTarget:EventTarget") {
		if got := stacktest.Str(t, tg, "roleArn"); got != forwarder {
			t.Errorf("target %s delivers as %q, want the forwarder %s", tg.Name, got, forwarder)
		}
	}
	fwd := stacktest.Doc(t, r.resources.Named(t, "aws:iam/rolePolicy:RolePolicy", "kib-dev-forward"), "policy")
	if len(fwd.Statement) != 1 || !slices.Equal(fwd.Statement[0].Action, []string{"sqs:SendMessage"}) || !slices.Equal(fwd.Statement[0].Resource, []string{devPrefix + "kib-dev-central"}) {
		t.Errorf("the forwarder's policy = %+v, want sqs:SendMessage on the central queue only", fwd)
	}
	trust := stacktest.Doc(t, r.resources.Named(t, "aws:iam/role:Role", "kib-dev-forward"), "assumeRolePolicy")
	if len(trust.Statement) != 1 || fmt.Sprint(trust.Statement[0].Principal) != "map[Service:events.amazonaws.com]" {
		t.Errorf("the forwarder's trust = %+v, want EventBridge only", trust)
	}
}

func trimBrackets(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strings.Trim(x, "[]")
	}
	return out
}

func anySlice(xs []string) any {
	if xs == nil {
		return nil
	}
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

func TestCentralQueue(t *testing.T) {
	r := mustRun(t, "dev", map[string]string{"router": `{"timeoutSeconds":40,"maximumBatchingWindowSeconds":2}`})
	q := r.resources.Named(t, "aws:sqs/queue:Queue", "kib-dev-central")
	if got := stacktest.Num(t, q, "visibilityTimeoutSeconds"); got != 6*40+2 {
		t.Errorf("visibility timeout = %v, want 6 x 40 + 2", got)
	}
	if !q.Inputs["sqsManagedSseEnabled"].BoolValue() {
		t.Error("central queue without SSE-SQS")
	}
	var redrive struct {
		DeadLetterTargetArn string `json:"deadLetterTargetArn"`
		MaxReceiveCount     int    `json:"maxReceiveCount"`
	}
	if err := json.Unmarshal([]byte(stacktest.Str(t, q, "redrivePolicy")), &redrive); err != nil {
		t.Fatal(err)
	}
	if redrive.DeadLetterTargetArn != arnPrefix+"kib-dev-dlq" || redrive.MaxReceiveCount != config.DefaultCentralQueue.MaxReceiveCount {
		t.Errorf("redrive = %+v", redrive)
	}
	if dlq := r.resources.Named(t, "aws:sqs/queue:Queue", "kib-dev-dlq"); !dlq.Inputs["sqsManagedSseEnabled"].BoolValue() {
		t.Error("DLQ without SSE-SQS")
	}
}

// TestEveryQueueTakesTheRoutersLargestMessage: every queue of the bus, the shared ones, each cluster's and each
// member's, takes a message of contract.MaxMessageBytes, body and attributes together (which the router counts by):
// none sets its size, so each takes the pinned provider's default, which is that (providerrules.Defaults, from the
// provider's schema); a size set would have to be that too.
func TestEveryQueueTakesTheRoutersLargestMessage(t *testing.T) {
	def, ok := providerrules.Defaults["aws:sqs/queue:Queue"]["maxMessageSize"]
	if !ok || fmt.Sprint(def) != fmt.Sprint(contract.MaxMessageBytes) {
		t.Fatalf("the provider's default maxMessageSize is %v, want contract.MaxMessageBytes (%d)", def, contract.MaxMessageBytes)
	}
	r := mustRun(t, "dev", hubStack(accountA, accountB))
	queues := r.resources.OfType("aws:sqs/queue:Queue")
	if len(queues) < 5 {
		t.Fatalf("%d queues", len(queues))
	}
	for _, q := range queues {
		if v, set := q.Inputs["maxMessageSize"]; set && v.NumberValue() != contract.MaxMessageBytes {
			t.Errorf("queue %s in %s takes %v bytes, want %d", q.Name, q.Account, v.NumberValue(), contract.MaxMessageBytes)
		}
	}
}

func TestRouterFunctionAndMapping(t *testing.T) {
	r := mustRun(t, "dev", map[string]string{"router": `{"batchSize":250,"maximumBatchingWindowSeconds":3,"maximumConcurrency":7,"memoryMb":512,"ownerTagKeys":["a/b","c"]}`})
	fn := r.resources.Named(t, "aws:lambda/function:Function", "kib-dev-router")
	if stacktest.Str(t, fn, "runtime") != "provided.al2023" || stacktest.Str(t, fn, "handler") != "bootstrap" || stacktest.Num(t, fn, "memorySize") != 512 ||
		stacktest.Num(t, fn, "timeout") != 30 || fmt.Sprint(fn.Inputs["architectures"].ArrayValue()) != "[{arm64}]" {
		t.Errorf("function inputs = %v", fn.Inputs)
	}
	// The function's code hash is the build's own: routerbuild's test proves an unchanged source builds to the
	// same zip and hash, so an unchanged router shows no Lambda update in a preview.
	built, err := stubRouter(t)(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !fn.Inputs["code"].IsArchive() || !strings.HasSuffix(fn.Inputs["code"].ArchiveValue().Path, "router.zip") || stacktest.Str(t, fn, "sourceCodeHash") != built.SourceCodeHash {
		t.Errorf("function code = %v, hash %v, want the built zip and its hash %s", fn.Inputs["code"], fn.Inputs["sourceCodeHash"], built.SourceCodeHash)
	}
	settings := routerSettings(t, fn)
	if settings.ClusterQueuePrefix != "kib-dev_" || !slices.Equal(settings.BusQueues, []string{"kib-dev-central", "kib-dev-dlq", "kib-dev-quarantine"}) ||
		settings.QuarantineQueueURL != "https://sqs.us-east-1.amazonaws.com/123456789012/kib-dev-quarantine" ||
		settings.CentralQueueURL != "https://sqs.us-east-1.amazonaws.com/123456789012/kib-dev-central" || settings.BusName != "kib-dev" || settings.MetricsNamespace != contract.MetricsNamespace ||
		settings.LogLevel != "info" || !slices.Equal(settings.OwnerTagKeys, []string{"a/b", "c"}) {
		t.Errorf("the router reads its environment as %+v", settings)
	}
	if lg := fn.Inputs["loggingConfig"].ObjectValue()["logGroup"]; lg.StringValue() != "/aws/lambda/kib-dev-router" {
		t.Errorf("log group = %v", lg)
	}
	if lg := r.resources.Named(t, "aws:cloudwatch/logGroup:LogGroup", "kib-dev-router"); stacktest.Num(t, lg, "retentionInDays") != 30 {
		t.Errorf("log retention = %v", lg.Inputs["retentionInDays"])
	}
	esm := r.resources.Named(t, "aws:lambda/eventSourceMapping:EventSourceMapping", "kib-dev-router")
	if stacktest.Num(t, esm, "batchSize") != 250 || stacktest.Num(t, esm, "maximumBatchingWindowInSeconds") != 3 ||
		esm.Inputs["scalingConfig"].ObjectValue()["maximumConcurrency"].NumberValue() != 7 ||
		fmt.Sprint(esm.Inputs["functionResponseTypes"].ArrayValue()) != "[{ReportBatchItemFailures}]" ||
		stacktest.Str(t, esm, "eventSourceArn") != arnPrefix+"kib-dev-central" {
		t.Errorf("event source mapping = %v", esm.Inputs)
	}
}

// routerSettings reads the function's environment with the router's own loader, as the router does at start-up.
func routerSettings(t *testing.T, fn mocks.Resource) contract.Settings {
	t.Helper()
	env := map[string]string{}
	for k, v := range stacktest.Plain(fn)["environment"].(map[string]any)["variables"].(map[string]any) {
		env[k] = v.(string)
	}
	settings, err := contract.LoadSettings(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("the router would refuse to start with the environment the stack gives it: %v", err)
	}
	return settings
}

// TestRouterEnvironmentIsTheRoutersConfig: for stacks of every shape, what the infrastructure puts in the
// function's environment parses in the router's own loader into exactly the settings the program means.
func TestRouterEnvironmentIsTheRoutersConfig(t *testing.T) {
	for _, kv := range []map[string]string{
		nil,
		{"router": `{"logLevel":"debug","ownerTagKeys":["team/cluster","x"]}`, "namePrefix": "kib-a"},
		devConfig(t),
		hubStack(accountA, accountB),
		withOrganization(hubStack(accountA, accountB)),
		withOrganization(hubStack(accountA), testOU),
	} {
		r := mustRun(t, "dev", kv)
		cfg, err := config.Load("dev", mocks.DefaultAccount, config.Values(namespaced(kv), config.Namespace))
		if err != nil {
			t.Fatal(err)
		}
		got := routerSettings(t, r.resources.One(t, "aws:lambda/function:Function"))
		region := cmp.Or(kv["aws:region"], mocks.DefaultRegion)
		want := layout.RouterSettings(cfg, awsenv.Env{Partition: "aws", Region: region, Account: mocks.DefaultAccount}).WithDefaults()
		want.CentralQueueURL = r.outputs["centralQueueUrl"].(string)
		want.QuarantineQueueURL = r.outputs["quarantineQueueUrl"].(string)
		want.DeadLetterQueueURL = r.outputs["deadLetterQueueUrl"].(string)
		want.SealKey, want.ArchiveBucket = r.outputs["sealKeyArn"].(string), r.outputs["archiveBucket"].(string)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("the router reads %+v\nthe program means %+v", got, want)
		}
	}
}

func TestRuleTargets(t *testing.T) {
	r := mustRun(t, "dev", nil)
	for _, target := range r.resources.OfType("aws:cloudwatch/eventTarget:EventTarget") {
		retry := target.Inputs["retryPolicy"].ObjectValue()
		if stacktest.Str(t, target, "arn") != arnPrefix+"kib-dev-central" ||
			target.Inputs["deadLetterConfig"].ObjectValue()["arn"].StringValue() != arnPrefix+"kib-dev-dlq" ||
			retry["maximumEventAgeInSeconds"].NumberValue() != 300 || retry["maximumRetryAttempts"].NumberValue() != 185 {
			t.Errorf("target %s = %v", target.Name, target.Inputs)
		}
	}
}

// TestSilentFailureAlarms: the alarms on what would otherwise stay silent watch the router's own metrics, by the
// contract's names: drops for clusters or accounts the bus does not know, sustained (3 of 6 periods of 10 minutes);
// and the router at its maximum concurrency five minutes running (CloudWatch publishes no iterator age for SQS
// event sources; ConcurrentExecutions it publishes for every function).
func TestSilentFailureAlarms(t *testing.T) {
	cfg := map[string]string{"router": `{"maximumConcurrency":7}`}
	r := mustRun(t, "dev", cfg)
	byName := map[string]map[string]any{}
	for _, a := range r.resources.OfType("aws:cloudwatch/metricAlarm:MetricAlarm") {
		byName[stacktest.Str(t, a, "name")] = stacktest.Plain(a)
	}
	tests := []struct {
		name                                  string
		namespace, metric, statistic, compare string
		dims                                  map[string]any
		threshold, period, datapoints, evals  float64
	}{
		{"kib-dev-events-for-unknown-clusters", contract.MetricsNamespace, contract.MetricDropped, "Sum", "GreaterThanThreshold",
			map[string]any{contract.DimBus: "kib-dev", contract.DimReason: string(contract.ReasonNoQueue)}, 0, 600, 3, 6},
		{"kib-dev-events-from-unknown-accounts", contract.MetricsNamespace, contract.MetricDropped, "Sum", "GreaterThanThreshold",
			map[string]any{contract.DimBus: "kib-dev", contract.DimReason: string(contract.ReasonUnknownAccount)}, 0, 600, 3, 6},
		{"kib-dev-router-saturated", "AWS/Lambda", "ConcurrentExecutions", "Maximum", "GreaterThanOrEqualToThreshold",
			map[string]any{"FunctionName": "kib-dev-router"}, 7, 60, 5, 5},
	}
	for _, tt := range tests {
		in, ok := byName[tt.name]
		if !ok {
			t.Errorf("no alarm %s", tt.name)
			continue
		}
		if in["namespace"] != tt.namespace || in["metricName"] != tt.metric || in["statistic"] != tt.statistic ||
			in["comparisonOperator"] != tt.compare || fmt.Sprint(in["dimensions"]) != fmt.Sprint(tt.dims) ||
			in["threshold"] != tt.threshold || in["period"] != tt.period || in["datapointsToAlarm"] != tt.datapoints ||
			in["evaluationPeriods"] != tt.evals || in["treatMissingData"] != "notBreaching" {
			t.Errorf("alarm %s = %v", tt.name, in)
		}
	}
}

// TestConcurrencyCeiling: in every mode the function's reserved concurrency caps the routers at once, and the
// saturation alarm fires at that real ceiling: provisioned pollers 4 to 40 run up to 400 invocations (10 a poller),
// the standard mode its maximum concurrency, and an explicit reservation above it reserves its own while the
// alarm fires at the mapping's ceiling.
func TestConcurrencyCeiling(t *testing.T) {
	tests := []struct {
		name   string
		router string
		want   float64
	}{
		{"provisioned 4 to 40", `{"provisionedPollers":{"minimum":4,"maximum":40}}`, 400},
		{"standard, the default 20", `{}`, 20},
		{"standard 30, reserved 50", `{"maximumConcurrency":30,"reservedConcurrency":50}`, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustRun(t, "dev", map[string]string{"router": tt.router})
			fn := stacktest.Plain(r.resources.Named(t, "aws:lambda/function:Function", "kib-dev-router"))
			if fn["reservedConcurrentExecutions"] != tt.want {
				t.Errorf("reserved concurrency %v, want %v", fn["reservedConcurrentExecutions"], tt.want)
			}
			ceiling := min(tt.want, 400)
			if tt.name == "standard 30, reserved 50" {
				ceiling = 30
			}
			for _, a := range r.resources.OfType("aws:cloudwatch/metricAlarm:MetricAlarm") {
				if in := stacktest.Plain(a); in["name"] == "kib-dev-router-saturated" && in["threshold"] != ceiling {
					t.Errorf("the saturation alarm's threshold %v, want the ceiling %v", in["threshold"], ceiling)
				}
			}
		})
	}
}

func TestAlarms(t *testing.T) {
	const topic = "arn:aws:sns:us-east-1:123456789012:oncall"
	tests := []struct {
		name    string
		cfg     map[string]string
		actions int
	}{
		{"with a topic", map[string]string{"alarms": `{"topicArn":"` + topic + `"}`}, 1},
		{"without", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustRun(t, "dev", tt.cfg)
			want := map[string]string{
				"kib-dev-dlq-not-empty":                "ApproximateNumberOfMessagesVisible",
				"kib-dev-central-backlog":              "ApproximateAgeOfOldestMessage",
				"kib-dev-quiet-accounts-backlog":       "ApproximateAgeOfOldestMessageInQuietGroups",
				"kib-dev-router-errors":                "Errors",
				"kib-dev-router-throttles":             "Throttles",
				"kib-dev-router-saturated":             "ConcurrentExecutions",
				"kib-dev-events-for-unknown-clusters":  contract.MetricDropped,
				"kib-dev-events-from-unknown-accounts": contract.MetricDropped,
				"kib-dev-forged-senders":               contract.MetricForgedSender,
				"kib-dev-unsealed-requeues":            contract.MetricUnsealed,
				"kib-dev-replayed-requeues":            contract.MetricReplayed,
				"kib-dev-ledger-hidden":                contract.MetricDropped,
			}
			alarms := r.resources.OfType("aws:cloudwatch/metricAlarm:MetricAlarm")
			if len(alarms) != len(want) {
				t.Fatalf("%d alarms, want %d", len(alarms), len(want))
			}
			for _, a := range alarms {
				if want[stacktest.Str(t, a, "name")] != stacktest.Str(t, a, "metricName") {
					t.Errorf("alarm %s watches %s", stacktest.Str(t, a, "name"), stacktest.Str(t, a, "metricName"))
				}
				// A delete marker over a ledger entry: the router's drops of that one reason, on the first.
				if in := stacktest.Plain(a); in["name"] == "kib-dev-ledger-hidden" && (fmt.Sprint(in["dimensions"]) != "map[Bus:kib-dev Reason:ledger_hidden]" ||
					in["threshold"] != float64(0) || in["evaluationPeriods"] != float64(1) || in["datapointsToAlarm"] != float64(1) || in["statistic"] != "Sum") {
					t.Errorf("alarm kib-dev-ledger-hidden = %v, want the Sum of Dropped{Reason=ledger_hidden} over 0 in 1 of 1 periods", in)
				}
				var n int
				if acts := a.Inputs["alarmActions"]; acts.IsArray() {
					n = len(acts.ArrayValue())
					if n == 1 && acts.ArrayValue()[0].StringValue() != topic {
						t.Errorf("alarm %s notifies %v, want %s", a.Name, acts, topic)
					}
				}
				if n != tt.actions {
					t.Errorf("alarm %s has %d actions, want %d", a.Name, n, tt.actions)
				}
			}
		})
	}
}

func TestOutputs(t *testing.T) {
	r := mustRun(t, "dev", devConfig(t))
	want := map[string]string{
		"centralQueueArn":    devPrefix + "kib-dev-central",
		"centralQueueUrl":    "https://sqs.eu-west-1.amazonaws.com/123456789012/kib-dev-central",
		"deadLetterQueueArn": devPrefix + "kib-dev-dlq",
		"deadLetterQueueUrl": "https://sqs.eu-west-1.amazonaws.com/123456789012/kib-dev-dlq",
		"routerFunctionName": "kib-dev-router",
		"clusterQueuePrefix": "kib-dev_",
		"redriveRoleArn":     "arn:aws:iam::123456789012:role/kib-dev-redrive-eu-west-1",
		"busName":            "kib-dev",
		"region":             "eu-west-1",
		"routerLogGroupName": "/aws/lambda/kib-dev-router",
	}
	for k, v := range want {
		if r.outputs[k] != v {
			t.Errorf("output %s = %v, want %s", k, r.outputs[k], v)
		}
	}
	rules, _ := r.outputs["ruleArns"].(map[string]string)
	if len(rules) != 6 || rules["canary"] != "arn:aws:events:eu-west-1:123456789012:rule/kib-dev-canary" || rules["spot-interruption"] != "arn:aws:events:eu-west-1:123456789012:rule/kib-dev-spot-interruption" {
		t.Errorf("ruleArns = %v", r.outputs["ruleArns"])
	}
}

// TestConfigErrorsComeBeforeAnyResource: a mistake is reported with its path before anything is declared.
func TestConfigErrorsComeBeforeAnyResource(t *testing.T) {
	r, err := run(t, "dev", map[string]string{"clusters": `[{"name":"a"},{"name":"a"}]`, "router": `{"memoryMb":1}`})
	if err == nil {
		t.Fatal("an invalid configuration was accepted")
	}
	for _, want := range []string{"clusters[1].name: duplicate of clusters[0]", "router.memoryMb: 1 is out of range"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if len(r.resources) != 0 {
		t.Errorf("%d resources declared before the configuration was rejected", len(r.resources))
	}
}

func TestZeroClustersIsValid(t *testing.T) {
	r := mustRun(t, "dev", map[string]string{"clusters": `[]`})
	if len(r.resources.OfType("aws:lambda/function:Function")) != 1 {
		t.Error("a stack without clusters must still declare the bus")
	}
}

// TestTwoStacksDoNotCollide: dev and prod in one account and region name every shared resource apart, and each
// router may send only to its own stack's cluster queues.
func TestTwoStacksDoNotCollide(t *testing.T) {
	names := func(r result) map[string]bool {
		out := map[string]bool{}
		for _, x := range r.resources {
			if v, ok := x.Inputs["name"]; ok && v.IsString() && x.Type != "aws:iam/rolePolicy:RolePolicy" {
				out[x.Type+" "+v.StringValue()] = true
			}
		}
		return out
	}
	dev, prod := mustRun(t, "dev", nil), mustRun(t, "prod", nil)
	devNames, prodNames := names(dev), names(prod)
	if len(devNames) < 10 {
		t.Fatalf("only %d named resources", len(devNames))
	}
	for n := range devNames {
		if prodNames[n] {
			t.Errorf("dev and prod both declare %s", n)
		}
	}
	fwd := func(r result, stack string) []string {
		p := r.resources.Named(t, "aws:iam/rolePolicy:RolePolicy", "kib-"+stack+"-router")
		return stacktest.Statement(t, stacktest.Doc(t, p, "policy"), "ForwardToClusterQueues").Resource
	}
	if d, p := fwd(dev, "dev")[0], fwd(prod, "prod")[0]; strings.HasPrefix(strings.TrimSuffix(p, "*"), strings.TrimSuffix(d, "*")) ||
		strings.HasPrefix(strings.TrimSuffix(d, "*"), strings.TrimSuffix(p, "*")) {
		t.Errorf("dev may send to %s and prod to %s: one covers the other's queues", d, p)
	}
}

func TestDashboard(t *testing.T) {
	if got := mustRun(t, "dev", nil).resources.OfType("aws:cloudwatch/dashboard:Dashboard"); len(got) != 0 {
		t.Fatalf("a dashboard was declared without dashboard: true")
	}
	r := mustRun(t, "dev", map[string]string{"dashboard": "true"})
	dbs := r.resources.OfType("aws:cloudwatch/dashboard:Dashboard")
	if len(dbs) != 1 || stacktest.Str(t, dbs[0], "dashboardName") != "kib-dev-us-east-1" { // dashboards are one namespace for the account: its region in its name
		t.Fatalf("dashboards = %v", dbs)
	}
	if comp := r.resources.Named(t, dashboard.Type, dbs[0].Parent); comp.Parent != "" {
		t.Errorf("the dashboard's component %s is not its own, under the stack", comp.Name)
	}
	var body struct {
		Widgets []struct {
			Type       string
			Properties struct {
				Title   string
				Metrics [][]any
			}
		}
	}
	if err := json.Unmarshal([]byte(stacktest.Str(t, dbs[0], "dashboardBody")), &body); err != nil {
		t.Fatal(err)
	}
	text := stacktest.Str(t, dbs[0], "dashboardBody")
	for _, want := range []string{
		`MetricName=\"Received\" Bus=\"kib-dev\"`, `{KarpenterInterruptionBus,Bus,Kind}`,
		`MetricName=\"Forwarded\" Bus=\"kib-dev\"`, `{KarpenterInterruptionBus,Bus,Cluster}`,
		`MetricName=\"Dropped\" Bus=\"kib-dev\"`, `{KarpenterInterruptionBus,Bus,Reason}`,
		`"ForwardLag","Bus","kib-dev"`, `"ApproximateNumberOfMessagesVisible","QueueName","kib-dev-dlq"`,
		`"Errors","FunctionName","kib-dev-router"`, `"Throttles","FunctionName","kib-dev-router"`,
		`"Dropped","Bus","kib-dev","Reason","no_queue"`, `"Dropped","Bus","kib-dev","Reason","unknown_account"`,
		`"ConcurrentExecutions","FunctionName","kib-dev-router"`, `{"label":"concurrency limit","value":20}`,
		`"ApproximateNumberOfNoisyGroups","QueueName","kib-dev-central"`, `"ApproximateAgeOfOldestMessageInQuietGroups","QueueName","kib-dev-central"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("dashboard body lacks %s", want)
		}
	}
	if len(body.Widgets) != dashboard.BusWidgets {
		t.Errorf("%d widgets, want a title and 8 graphs", len(body.Widgets))
	}
}

// TestDashboardClusterRows: a row per cluster, by name whatever the configuration's order, with its canaries,
// its interruptions, and its queue's deletes and age; past CloudWatch's 500 widgets, a note says how many have
// no row.
func TestDashboardClusterRows(t *testing.T) {
	cfg := clusters(`{"name":"zeta"}`, `{"name":"alpha","mode":"existing-role","controllerRoleName":"k"}`)
	cfg["dashboard"] = "true"
	r := mustRun(t, "dev", cfg)
	var body dashboard.Body
	if err := json.Unmarshal([]byte(stacktest.Str(t, r.resources.One(t, "aws:cloudwatch/dashboard:Dashboard"), "dashboardBody")), &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Widgets) != dashboard.BusWidgets+2 {
		t.Fatalf("%d widgets, want the bus's %d and a row for each of 2 clusters", len(body.Widgets), dashboard.BusWidgets)
	}
	for i, c := range []string{"alpha", "zeta"} {
		w := body.Widgets[dashboard.BusWidgets+i]
		text, _ := json.Marshal(w)
		for _, want := range []string{
			`"CanaryForwarded","Bus","kib-dev","Cluster","` + c + `"`, `"Forwarded","Bus","kib-dev","Cluster","` + c + `"`,
			`"NumberOfMessagesDeleted","QueueName","kib-dev_` + c + `"`, `"ApproximateAgeOfOldestMessage","QueueName","kib-dev_` + c + `"`,
		} {
			if w.Properties.Title != "Cluster "+c || !strings.Contains(string(text), want) {
				t.Errorf("row %d = %s, want %s's with %s", i, text, c, want)
			}
		}
		if last := body.Widgets[dashboard.BusWidgets-1]; w.Y < last.Y+last.Height {
			t.Errorf("row %s at y=%d overlaps the bus's widgets", c, w.Y)
		}
	}
	many := make([]dashboard.Cluster, dashboard.MaxClusterRows+3)
	for i := range many {
		many[i] = dashboard.Cluster{Name: fmt.Sprintf("c%04d", i), Queue: fmt.Sprintf("q%04d", i)}
	}
	big := dashboard.NewBody(dashboard.Names{Bus: "b", Clusters: many})
	if n := len(big.Widgets); n != 500 || !strings.Contains(big.Widgets[n-1].Properties.Markdown, "3 more clusters") {
		t.Errorf("%d widgets for %d clusters, the last %+v; want 500 with a note on the 3 without a row", n, len(many), big.Widgets[n-1])
	}
}

// TestReservationTheAccountCannotGiveIsRefused: what the account can reserve is read from Lambda (its unreserved
// concurrency, plus what the function holds now, less the 100 Lambda keeps unreserved) before anything is declared;
// a reservation above it, explicit or the mode's default, is refused naming both figures and the fix; one within
// it, counting the function's own reservation, passes.
func TestReservationTheAccountCannotGiveIsRefused(t *testing.T) {
	for _, tt := range []struct {
		name   string
		lambda concurrency.Account
		router string
		want   []string // "" when it passes
	}{
		{"a new account's quota of 10", concurrency.Account{Limit: 10, Unreserved: 10}, `{}`, []string{
			"would reserve 20 concurrent executions (the default: router.maximumConcurrency 20), but account 123456789012 can give it none",
			"10 unreserved of the account's 10"}},
		{"other functions hold most of it", concurrency.Account{Limit: 1000, Unreserved: 130}, `{"maximumConcurrency":100}`, []string{
			"would reserve 100 concurrent executions (the default: router.maximumConcurrency 100), but account 123456789012 can give it at most 30",
			"130 unreserved of the account's 1000, plus the 0 the function holds now, less the 100 Lambda keeps unreserved",
			"set router.reservedConcurrency to at most 30"}},
		{"provisioned, the default reservation", concurrency.Account{Limit: 1000, Unreserved: 1000}, `{"provisionedPollers":{"minimum":2,"maximum":100}}`, []string{
			"would reserve 1000 concurrent executions (the default: 10 invocations per poller of router.provisionedPollers.maximum 100), but account 123456789012 can give it at most 900"}},
		{"explicit", concurrency.Account{Limit: 2000, Unreserved: 500}, `{"reservedConcurrency":600}`, []string{
			"would reserve 600 concurrent executions (router.reservedConcurrency 600), but account 123456789012 can give it at most 400"}},
		{"the function's own reservation counts", concurrency.Account{Limit: 1000, Unreserved: 100, Current: 900}, `{"maximumConcurrency":900}`, nil},
		{"the default account, the default stack", mocks.DefaultLambda, `{}`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := tt.lambda
			r, err := runWith(t, &mocks.Mocks{Lambda: &l}, render.AnyCommand, "dev", map[string]string{"router": tt.router})
			refusedBeforeDeclaring(t, r, err, tt.want)
		})
	}
}

// refusedBeforeDeclaring fails t unless the run failed saying each of want, with nothing declared; with want nil,
// unless it succeeded.
func refusedBeforeDeclaring(t *testing.T, r result, err error, want []string) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, w := range want {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error %v\nwant it to say %q", err, w)
		}
	}
	if len(r.resources) != 0 {
		t.Errorf("%d resources declared before the refusal", len(r.resources))
	}
}
