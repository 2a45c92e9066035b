package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/auto"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/events"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optdestroy"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optpreview"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optup"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
	"github.com/pulumi/pulumi/sdk/v3/go/common/tokens"
	"github.com/pulumi/pulumi/sdk/v3/go/common/workspace"
	pulumisdk "github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/bus"
	clustercomp "github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/cluster"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/concurrency"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/reach"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/routerbuild"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/shardplan"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/engine/standin"
)

const (
	hub     = "111111111111"
	member  = "222222222222"
	member2 = "333333333333"
	region  = "eu-west-1"
	project = "kib-engine"
)

// The program's options under the real engine: the router built for real from its embedded source; the AWS
// CLI and kubectl, which a real pulumi up needs where it runs (infra's check), taken as found, since nothing here
// runs them (the stand-ins install no chart and create no cluster).
func programOptions() infra.Options {
	// Lambda's account settings: an account of the default quota (mocks.DefaultLambda); the program's check refuses
	// what Lambda would of it.
	return infra.Options{BuildRouter: routerbuild.Embedded, LookPath: func(string) (string, error) { return "/usr/bin/true", nil },
		ReadConcurrency: (*mocks.Mocks)(nil).ReadConcurrency, ReadArchiveOwner: (*mocks.Mocks)(nil).ReadArchiveOwner, Probe: reach.Always}
}

// stack is the program's stack, run inline by the Automation API against the real CLI: the test process serves
// the program, so no Go language host is needed.
type stack struct {
	t     *testing.T
	env   *env
	stack auto.Stack
}

func newStack(t *testing.T, e *env, name string) *stack {
	t.Helper()
	return newStackWith(t, e, name, programOptions())
}

// newStackWith is newStack with the program's options opts.
func newStackWith(t *testing.T, e *env, name string, opts infra.Options) *stack {
	t.Helper()
	return &stack{t: t, env: e, stack: inlineStack(t, e, name, project, infra.Program(opts))}
}

// inlineStack is the stack name of project, program run in this process through the Automation API and the real
// CLI (build/), in e's environment.
func inlineStack(t *testing.T, e *env, name, project string, program pulumisdk.RunFunc) auto.Stack {
	t.Helper()
	root, err := filepath.Abs(filepath.Join(repoRoot, "build"))
	if err != nil {
		t.Fatal(err)
	}
	cli, err := auto.NewPulumiCommand(&auto.PulumiCommandOptions{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	s, err := auto.UpsertStackInlineSource(context.Background(), name, project, program,
		auto.Pulumi(cli), auto.WorkDir(t.TempDir()), auto.PulumiHome(e.Home), auto.EnvVars(e.Vars()), auto.SecretsProvider("passphrase"),
		auto.Project(workspace.Project{Name: tokens.PackageName(project), Runtime: workspace.NewProjectRuntimeInfo("go", nil)}))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// configure sets the stack's whole configuration: aws:region and the program's keys (JSON values).
func (s *stack) configure(keys map[string]any) {
	s.t.Helper()
	cfg := auto.ConfigMap{"aws:region": {Value: region}}
	for k, v := range keys {
		text, ok := v.(string)
		if !ok {
			b, err := json.Marshal(v)
			if err != nil {
				s.t.Fatal(err)
			}
			text = string(b)
		}
		cfg[config.Namespace+":"+k] = auto.ConfigValue{Value: text}
	}
	ctx := context.Background()
	old, err := s.stack.GetAllConfig(ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	for k := range old {
		if _, ok := cfg[k]; !ok {
			if err := s.stack.RemoveConfig(ctx, k); err != nil {
				s.t.Fatal(err)
			}
		}
	}
	if err := s.stack.SetAllConfigWithOptions(ctx, cfg, &auto.ConfigOptions{Path: false}); err != nil {
		s.t.Fatal(err)
	}
}

// step is one resource operation the engine reported.
type step struct {
	Op  apitype.OpType
	URN string
	// Diffs are the properties an update changes.
	Diffs []string
}

func (st step) String() string { return string(st.Op) + " " + st.URN }

// bookkeeping are steps of the engine's own, not of a cloud resource: the stack itself, a default provider
// (created when first used, deleted when no resource uses it any more), the reads of stack references (to
// itself, which every run makes, and to a hub or a moved cluster's source), and the discard of one no longer read.
func bookkeeping(st step) bool {
	return strings.Contains(st.URN, "::pulumi:pulumi:Stack::") || strings.Contains(st.URN, "::pulumi:providers:") && strings.Contains(st.URN, "::default") ||
		(st.Op == apitype.OpRead || st.Op == apitype.OpReadDiscard) && strings.Contains(st.URN, "::pulumi:pulumi:StackReference::")
}

// collect gathers the engine's resource steps, but for unchanged ones and bookkeeping, from its events.
func collect() (chan events.EngineEvent, func() []step) {
	ch, done := collectAll()
	return ch, func() []step { steps, _ := done(); return steps }
}

// warning is a warning the engine showed, and the URN of the resource it is about ("" for the stack's).
type warning struct{ URN, Message string }

// collectAll gathers the steps, as collect does, and the warnings. Its second result, called once the run has
// returned, waits for the events and returns them.
func collectAll() (chan events.EngineEvent, func() ([]step, []warning)) {
	ch := make(chan events.EngineEvent)
	var steps []step
	var warnings []warning
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ev := range ch {
			if pre := ev.ResourcePreEvent; pre != nil && pre.Metadata.Op != apitype.OpSame {
				if st := (step{pre.Metadata.Op, pre.Metadata.URN, pre.Metadata.Diffs}); !bookkeeping(st) {
					steps = append(steps, st)
				}
			}
			if d := ev.DiagnosticEvent; d != nil && d.Severity == "warning" {
				warnings = append(warnings, warning{d.URN, d.Message})
			}
		}
	}()
	return ch, func() ([]step, []warning) { closeIfOpen(ch); wg.Wait(); return steps, warnings }
}

// closeIfOpen closes ch, given to a run that has returned, unless the Automation API has: it closes the channels it
// is given when the CLI's event stream ends, so a CLI that never streamed (it failed or was killed before it
// connected) leaves them open, and the collector would wait for ever. Once a run has returned, no event can come: its
// events server is stopped, gracefully, so any stream has ended.
func closeIfOpen(ch chan events.EngineEvent) {
	defer func() { _ = recover() }() // closed by the Automation API, as a stream that ran ends
	close(ch)
}

func (s *stack) up() []step {
	s.t.Helper()
	ch, done := collect()
	var out bytes.Buffer
	_, err := s.stack.Up(context.Background(), optup.EventStreams(ch), optup.ProgressStreams(&out), optup.ErrorProgressStreams(&out))
	steps := done()
	if err != nil {
		s.t.Fatalf("pulumi up: %v\n%s", err, out.String())
	}
	return steps
}

func (s *stack) preview() ([]step, error) {
	steps, _, err := s.previewWarned()
	return steps, err
}

// previewWarned is preview with the warnings the engine showed.
func (s *stack) previewWarned(opts ...optpreview.Option) ([]step, []warning, error) {
	s.t.Helper()
	ch, done := collectAll()
	var out bytes.Buffer
	_, err := s.stack.Preview(context.Background(), append(opts, optpreview.EventStreams(ch), optpreview.ProgressStreams(&out), optpreview.ErrorProgressStreams(&out))...)
	steps, warnings := done()
	if err != nil {
		return steps, warnings, &runError{err: err, output: out.String()}
	}
	return steps, warnings, nil
}

type runError struct {
	err    error
	output string
}

func (e *runError) Error() string { return e.err.Error() + "\n" + e.output }

// only fails the test for every step that is not op on a resource whose URN holds one of names.
func only(t *testing.T, what string, steps []step, op apitype.OpType, names ...string) {
	t.Helper()
	if len(steps) == 0 {
		t.Errorf("%s: no resource changed", what)
	}
	for _, st := range steps {
		if st.Op != op || !slices.ContainsFunc(names, func(n string) bool { return strings.Contains(st.URN, n) }) {
			t.Errorf("%s: %s, want only %s of %v", what, st, op, names)
		}
	}
}

// none fails the test for every step.
func none(t *testing.T, what string, steps []step) {
	t.Helper()
	for _, st := range steps {
		t.Errorf("%s: %s, want no change", what, st)
	}
}

func cluster(name string, extra map[string]any) map[string]any {
	c := map[string]any{"name": name}
	for k, v := range extra {
		c[k] = v
	}
	return c
}

// TestProgramLifeCycle runs the Go program through the real engine: the Pulumi CLI v3.259.0 with a file backend,
// the Automation API serving the program inline, the stand-in providers as plugins. A hub with one member
// account and a cluster of every mode goes through the updates a platform team makes, and each must change only
// what it should.
func TestProgramLifeCycle(t *testing.T) {
	t.Parallel()
	deploy := func(account string) string { return "arn:aws:iam::" + account + ":role/kib-deploy" }
	alpha := cluster("alpha", nil)                                                                                                        // install, Pod Identity
	beta := cluster("beta", map[string]any{"mode": "existing-role", "controllerRoleName": "KarpenterController-beta", "account": member}) // a member's
	gamma := cluster("gamma", map[string]any{"mode": "create", "create": map[string]any{
		"vpcId": "vpc-0123456789abcdef0", "subnetIds": []any{"subnet-0123456789abcdef0", "subnet-0123456789abcdef1"},
	}})
	delta := cluster("delta", map[string]any{"identity": "irsa", "oidcProviderArn": "arn:aws:iam::" + hub + ":oidc-provider/oidc.eks." + region + ".amazonaws.com/id/DELTA"})
	epsilon := cluster("epsilon", map[string]any{"account": member2}) // install, in an account without the Spot role
	accounts := map[string]any{member: map[string]any{"deployRoleArn": deploy(member)}}
	keys := func(clusters []any, accounts map[string]any) map[string]any {
		return map[string]any{"namePrefix": "kib-prod", "clusters": clusters, "accounts": accounts, "heartbeat": map[string]any{"rate": "5m"}}
	}
	all := []any{alpha, beta, gamma, delta, epsilon}
	world := func(clusters []any) standin.World {
		cfg := map[string]string{}
		b, _ := json.Marshal(clusters)
		cfg[config.Namespace+":clusters"] = string(b)
		// The hub's account has the EC2 Spot service-linked role, the member's has not: the stack creates it there.
		return standin.World{Region: region, Account: hub, SpotServiceLinkedRole: []string{hub}, Config: cfg, Versions: versions(t)}
	}

	e := newEnv(t, world(all))
	s := newStack(t, e, "prod")
	s.configure(keys([]any{alpha, beta, gamma}, accounts))

	t.Run("a configuration mistake fails the preview, naming the field, with nothing created", func(t *testing.T) {
		s.configure(keys([]any{cluster("alpha", map[string]any{"mode": "instal"})}, accounts))
		steps, err := s.preview()
		if err == nil || !strings.Contains(err.Error(), "clusters[0].mode") {
			t.Fatalf("preview: %v, want an error naming clusters[0].mode", err)
		}
		none(t, "the refused preview", steps)
		if rs := e.Records(t); len(rs) != 0 {
			t.Errorf("the refused preview created %d resources", len(rs))
		}
		s.configure(keys([]any{alpha, beta, gamma}, accounts))
	})

	t.Run("up, then a preview with no change at all", func(t *testing.T) {
		steps := s.up()
		for _, st := range steps {
			if st.Op != apitype.OpCreate {
				t.Errorf("first up: %s", st)
			}
		}
		if len(steps) < 60 {
			t.Errorf("first up created %d resources", len(steps))
		}
		steps, err := s.preview()
		if err != nil {
			t.Fatal(err)
		}
		none(t, "the preview after up", steps)
	})

	t.Run("the Spot service-linked role not declared where it exists", func(t *testing.T) {
		// Karpenter runs in alpha and gamma (the hub), whose account has the role: the stack leaves it alone. beta
		// is existing-role: the stack installs no Karpenter in the member, and so no role there.
		if got := spotRoles(t, e); len(got) != 0 {
			t.Errorf("the stack declared the Spot role in %v", got)
		}
	})

	t.Run("the kubeconfig is never in plaintext in the backend's checkpoint", func(t *testing.T) {
		var found bool
		err := filepath.Walk(e.Backend, func(path string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if bytes.Contains(b, []byte("client.authentication.k8s.io")) || bytes.Contains(b, []byte("get-token")) {
				t.Errorf("%s holds a kubeconfig in plaintext", path)
			}
			if strings.HasSuffix(path, "prod.json") && bytes.Contains(b, []byte(`"ciphertext"`)) {
				found = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !found {
			t.Error("no encrypted secret in the stack's checkpoint: where did the kubeconfigs go?")
		}
	})

	t.Run("adding a cluster creates only its resources", func(t *testing.T) {
		s.configure(keys([]any{alpha, beta, gamma, delta}, accounts))
		only(t, "adding delta", s.up(), apitype.OpCreate, "::delta")
	})

	t.Run("reordering the clusters changes nothing", func(t *testing.T) {
		s.configure(keys([]any{delta, gamma, beta, alpha}, accounts))
		steps, err := s.preview()
		if err != nil {
			t.Fatal(err)
		}
		none(t, "reordering", steps)
	})

	t.Run("removing a cluster deletes only its resources", func(t *testing.T) {
		s.configure(keys([]any{alpha, beta, delta}, accounts))
		only(t, "removing gamma", s.up(), apitype.OpDelete, "::gamma")
	})

	t.Run("a created cluster removed, then added back, adopts its roles only", func(t *testing.T) {
		// gamma's cluster went with its removal, and with it what the stack installed in it (access entry, pod
		// identity association, release): only its IAM roles, which IAM keeps, are adopted; the rest is created anew.
		if err := e.Store.Age(time.Minute); err != nil { // SQS holds gamma's queue's name for 60 seconds
			t.Fatal(err)
		}
		s.configure(keys([]any{alpha, beta, gamma, delta}, accounts))
		imported := 0
		for _, st := range s.up() {
			switch {
			case st.Op == apitype.OpImport && strings.Contains(st.URN, "::gamma"):
				imported++
				for _, inCluster := range []string{"-node-access", "-pod-identity", "-karpenter"} {
					if strings.HasSuffix(st.URN, inCluster) {
						t.Errorf("adopted what the old cluster took with it: %s", st)
					}
				}
			case st.Op == apitype.OpCreate && strings.Contains(st.URN, "::gamma"):
				for _, kept := range []string{"::gamma-node-role", "::gamma-controller-role", "::gamma-controller-policy"} {
					if strings.HasSuffix(st.URN, kept) {
						t.Errorf("created again, not adopted: %s", st)
					}
				}
			case st.Op == apitype.OpUpdate: // the router's and the dashboard's lists of clusters
			default:
				t.Errorf("adding gamma back: %s", st)
			}
		}
		if imported != 7 { // 2 roles, 4 attachments, the controller's policy
			t.Errorf("%d resources of gamma adopted, want 7", imported)
		}
		s.configure(keys([]any{alpha, beta, delta}, accounts))
		only(t, "removing gamma again", s.up(), apitype.OpDelete, "::gamma")
	})

	t.Run("install clusters removed, then added back, adopt what they retained", func(t *testing.T) {
		// The stand-ins refuse, as IAM, EKS and Helm do, a second role, access entry, association or release of one
		// name: adding the clusters back succeeds only if what their removal retained is adopted, not created.
		s.configure(keys([]any{beta}, accounts))
		only(t, "removing alpha and delta", s.up(), apitype.OpDelete, "::alpha", "::delta")
		// A minute later: SQS holds a deleted queue's name for 60 seconds (QueueDeletedRecently), as the stand-ins do.
		if err := e.Store.Age(time.Minute); err != nil {
			t.Fatal(err)
		}
		s.configure(keys([]any{alpha, beta, delta}, accounts))
		steps := s.up()
		imported := 0
		for _, st := range steps {
			switch {
			case st.Op == apitype.OpImport && (strings.Contains(st.URN, "::alpha") || strings.Contains(st.URN, "::delta")):
				imported++
			case st.Op == apitype.OpCreate && (strings.Contains(st.URN, "::alpha") || strings.Contains(st.URN, "::delta")):
				for _, kept := range []string{"-node-role", "-controller-role", "-controller-policy", "-node-access", "-pod-identity", "-karpenter"} {
					if strings.HasSuffix(st.URN, kept) {
						t.Errorf("created again, not adopted: %s", st)
					}
				}
			case st.Op == apitype.OpUpdate: // the router's and the dashboard's lists of clusters
			default:
				t.Errorf("adding alpha and delta back: %s", st)
			}
		}
		// alpha: 2 roles, 4 attachments, the policy, the access entry, the association, the release; delta (IRSA) the same
		// but the association.
		if imported != 19 {
			t.Errorf("%d resources adopted, want 19", imported)
		}
		steps, err := s.preview()
		if err != nil {
			t.Fatal(err)
		}
		none(t, "the preview after adopting", steps)
	})

	t.Run("adding a member account replaces nothing of the hub or the other member", func(t *testing.T) {
		more := map[string]any{member: accounts[member], member2: map[string]any{"deployRoleArn": deploy(member2)}}
		s.configure(keys([]any{alpha, beta, delta, epsilon}, more))
		for _, st := range s.up() {
			switch {
			case st.Op == apitype.OpCreate && (strings.Contains(st.URN, member2) || strings.Contains(st.URN, "::epsilon")):
			case st.Op == apitype.OpUpdate: // the router's member list, the queue policies admitting the new member
			default:
				t.Errorf("adding account %s: %s", member2, st)
			}
		}
	})

	t.Run("the Spot service-linked role the stack created is kept through its reference to its last update", func(t *testing.T) {
		if got := spotRoles(t, e); !slices.Equal(got, []string{member2}) {
			t.Fatalf("Spot roles created in %v, want in %s only (the hub had one)", got, member2)
		}
		// Now IAM lists the role in member2 too: only the last update's output (spotServiceLinkedRoles, read through
		// the stack's reference to itself from the file backend) says the stack made it, and must keep declaring it.
		steps, err := s.preview()
		if err != nil {
			t.Fatal(err)
		}
		none(t, "the preview after creating the role", steps)
	})

	var archiveBefore string
	t.Run("destroy leaves nothing in the stand-ins but what the program retains", func(t *testing.T) {
		archiveBefore = archives(t, e)[0]
		var out bytes.Buffer
		if _, err := s.stack.Destroy(context.Background(), optdestroy.ProgressStreams(&out)); err != nil {
			t.Fatalf("destroy: %v\n%s", err, out.String())
		}
		retained := retainedURNs(t, e)
		if len(retained) < 10 {
			t.Fatalf("%d resources retained on delete in the stack's history: is the history read?", len(retained))
		}
		left := map[string]bool{}
		for _, r := range e.Records(t) {
			left[r.URN] = true
			// Retained on delete: the Spot role (other users of Spot depend on it), Karpenter's release and the
			// identities it runs with (taking a cluster off the bus never uninstalls Karpenter).
			if !retained[r.URN] {
				t.Errorf("left after destroy: %s %s in %s (%s)", r.Type, r.ID, r.Account, r.URN)
			}
		}
		for urn := range retained {
			if !left[urn] {
				t.Errorf("retained on delete, but deleted: %s", urn)
			}
		}
	})

	t.Run("deploying again after destroy adopts what it retained, once told the associations' IDs", func(t *testing.T) {
		more := map[string]any{member: accounts[member], member2: map[string]any{"deployRoleArn": deploy(member2)}}
		if err := e.Store.Age(time.Minute); err != nil { // a minute after the destroy, as SQS requires of a queue's name
			t.Fatal(err)
		}
		s.configure(keys([]any{alpha, beta, delta, epsilon}, more))
		_, err := s.preview()
		for _, want := range []string{"clusters[0].karpenter.podIdentityAssociationId", "clusters[3].karpenter.podIdentityAssociationId"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("preview: %v, want it to name the command setting %s", err, want)
			}
		}
		// What the command the preview names finds (aws eks list-pod-identity-associations): the association's ID.
		association := func(cluster string) string {
			for _, r := range e.Records(t) {
				if id, ok := strings.CutPrefix(r.ID, cluster+","); ok && r.Type == "aws:eks/podIdentityAssociation:PodIdentityAssociation" {
					return id
				}
			}
			t.Fatalf("no association of %s in the stand-ins", cluster)
			return ""
		}
		told := func(c map[string]any) map[string]any {
			return cluster(c["name"].(string), map[string]any{"account": c["account"], "karpenter": map[string]any{"podIdentityAssociationId": association(c["name"].(string))}})
		}
		alphaTold, epsilonTold := told(alpha), told(epsilon)
		delete(alphaTold, "account")
		s.configure(keys([]any{alphaTold, beta, delta, epsilonTold}, more))
		imported := map[string]bool{}
		for _, st := range s.up() {
			if st.Op != apitype.OpCreate && st.Op != apitype.OpImport {
				t.Errorf("deploying again: %s", st)
			}
			if st.Op == apitype.OpImport {
				imported[urnType(st.URN)] = true
			}
		}
		steps, err := s.preview()
		if err != nil {
			t.Fatal(err)
		}
		none(t, "the preview after deploying again", steps)
		// One archive for the life of the bus: the one the first deployment made, adopted with what protects it, its
		// records (before the destroy and after) in one bucket.
		if got := archives(t, e); len(got) != 1 || got[0] != archiveBefore {
			t.Errorf("the stand-ins hold the archives %v after deploying again, want the one of before, %s", got, archiveBefore)
		}
		for _, typ := range []string{"aws:s3/bucketV2:BucketV2", "aws:s3/bucketVersioningV2:BucketVersioningV2",
			"aws:s3/bucketObjectLockConfigurationV2:BucketObjectLockConfigurationV2", "aws:s3/bucketPolicy:BucketPolicy",
			"aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2", "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"} {
			if !imported[typ] {
				t.Errorf("deploying again did not adopt the archive's %s", typ)
			}
		}
		if out, err := s.stack.Outputs(context.Background()); err != nil || out["archiveBucket"].Value != archiveBefore {
			t.Errorf("output archiveBucket = %v (%v), want %s", out["archiveBucket"].Value, err, archiveBefore)
		}
	})
}

// archives are the buckets the stand-ins hold, by name.
func archives(t *testing.T, e *env) []string {
	t.Helper()
	return held(t, e, "aws:s3/bucketV2:BucketV2", func(r standin.Record) string { return r.ID })
}

// spotRoles are the accounts where the stand-ins hold a Spot service-linked role the stack created.
func spotRoles(t *testing.T, e *env) []string {
	t.Helper()
	return held(t, e, "aws:iam/serviceLinkedRole:ServiceLinkedRole", func(r standin.Record) string { return r.Account })
}

// held is what of names of each resource of type typ the stand-ins hold, sorted.
func held(t *testing.T, e *env, typ string, of func(standin.Record) string) []string {
	t.Helper()
	var out []string
	for _, r := range e.Records(t) {
		if r.Type == typ {
			out = append(out, of(r))
		}
	}
	slices.Sort(out)
	return out
}

// retainedURNs are the resources any update of the stack marked retained on delete, from every checkpoint the
// file backend keeps in its history.
func retainedURNs(t *testing.T, e *env) map[string]bool {
	t.Helper()
	return retainedIn(t, e, project)
}

// retainedIn is retainedURNs of the project proj's stacks.
func retainedIn(t *testing.T, e *env, proj string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(e.Backend, ".pulumi", "history", proj, "*", "*.checkpoint.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no checkpoint in the backend's history (%v)", err)
	}
	out := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cp struct {
			Checkpoint struct {
				Latest struct {
					Resources []struct {
						URN            string `json:"urn"`
						Custom         bool   `json:"custom"`
						RetainOnDelete bool   `json:"retainOnDelete"`
					} `json:"resources"`
				} `json:"latest"`
			} `json:"checkpoint"`
		}
		if err := json.Unmarshal(b, &cp); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, r := range cp.Checkpoint.Latest.Resources {
			if r.RetainOnDelete && r.Custom {
				out[r.URN] = true
			}
		}
	}
	return out
}

// TestOrganizationThroughOUsOnly runs, through the real engine, a hub whose members join only through
// organization.memberOUs (no account listed): the baseline goes to the units as a StackSet, the router starts with
// the forwarder's name (it would refuse every event without it), and a preview after up changes nothing.
func TestOrganizationThroughOUsOnly(t *testing.T) {
	t.Parallel()
	alpha := cluster("alpha", nil)
	keys := map[string]any{
		"namePrefix": "kib-org", "clusters": []any{alpha},
		"organization": map[string]any{"id": "o-a1b2c3d4e5", "memberOUs": []any{"ou-ab12-cd34ef56"}},
	}
	b, _ := json.Marshal([]any{alpha})
	e := newEnv(t, standin.World{Region: region, Account: hub, SpotServiceLinkedRole: []string{hub},
		Config: map[string]string{config.Namespace + ":clusters": string(b)}, Versions: versions(t)})
	s := newStack(t, e, "org")
	s.configure(keys)
	stackSet := false
	for _, st := range s.up() {
		if st.Op != apitype.OpCreate {
			t.Errorf("first up: %s", st)
		}
		stackSet = stackSet || strings.Contains(st.URN, "aws:cloudformation/stackSet:StackSet")
	}
	if !stackSet {
		t.Error("no StackSet created for the units")
	}
	var fn struct {
		Environment struct {
			Variables map[string]string `json:"variables"`
		} `json:"environment"`
	}
	for _, r := range e.Records(t) {
		if r.Type == "aws:lambda/function:Function" {
			if err := json.Unmarshal(r.Inputs, &fn); err != nil {
				t.Fatalf("the function's inputs: %v", err)
			}
		}
	}
	getenv := func(k string) string { return fn.Environment.Variables[k] }
	settings, err := contract.LoadSettings(getenv)
	if err != nil {
		t.Fatalf("the router would refuse to start: %v", err)
	}
	if settings.ForwarderRole("444444444444") == "" || settings.ForwarderRole(hub) == "" {
		t.Errorf("the router knows no forwarder of an organization's account (%q) or of the hub (%q)",
			settings.ForwarderRole("444444444444"), settings.ForwarderRole(hub))
	}
	steps, err := s.preview()
	if err != nil {
		t.Fatal(err)
	}
	none(t, "the preview after up", steps)
}

// TestConcurrencyTheAccountCannotGiveIsRefusedAtPreview: in an account whose Lambda concurrency is a new account's 10
// (Lambda's account settings, as the program reads them before declaring anything), the preview of a stack of the
// default router fails naming what the stack reserves and what the account can give, with the fix, and creates
// nothing; told a reservation within what a larger account can give, it passes.
func TestConcurrencyTheAccountCannotGiveIsRefusedAtPreview(t *testing.T) {
	t.Parallel()
	alpha := cluster("alpha", nil)
	b, _ := json.Marshal([]any{alpha})
	e := newEnv(t, standin.World{Region: region, Account: hub, SpotServiceLinkedRole: []string{hub},
		Config: map[string]string{config.Namespace + ":clusters": string(b)}, Versions: versions(t)})
	opts := programOptions()
	small := concurrency.Account{Limit: 10, Unreserved: 10}
	opts.ReadConcurrency = (&mocks.Mocks{Lambda: &small, Account: hub}).ReadConcurrency // read in the stack's own account
	s := newStackWith(t, e, "small", opts)
	s.configure(map[string]any{"namePrefix": "kib-small", "clusters": []any{alpha}})
	steps, err := s.preview()
	for _, want := range []string{"router.reservedConcurrency", "would reserve 20 concurrent executions (the default: router.maximumConcurrency 20)",
		"account " + hub + " can give it none", "10 unreserved of the account's 10", "Service Quotas"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("preview: %v\nwant it to say %q", err, want)
		}
	}
	none(t, "the refused preview", steps)
	if rs := e.Records(t); len(rs) != 0 {
		t.Errorf("the refused preview created %d resources", len(rs))
	}
}

// TestAnArchiveOfAnotherAccountIsRefusedAtPreview: a bucket of the archive's name (S3's names are global) that another
// account holds, and lets anyone list: the preview stops naming it and why, before anything is declared, so no
// resource of the stack, the bucket's adoption least of all, reaches it; a name no account holds previews.
func TestAnArchiveOfAnotherAccountIsRefusedAtPreview(t *testing.T) {
	t.Parallel()
	alpha := cluster("alpha", nil)
	b, _ := json.Marshal([]any{alpha})
	e := newEnv(t, standin.World{Region: region, Account: hub, SpotServiceLinkedRole: []string{hub},
		Config: map[string]string{config.Namespace + ":clusters": string(b)}, Versions: versions(t)})
	taken := bus.ArchiveBucketName("kib-taken", hub, region)
	opts := programOptions()
	opts.ReadArchiveOwner = (&mocks.Mocks{ForeignBuckets: []string{taken}, Account: hub}).ReadArchiveOwner
	s := newStackWith(t, e, "taken", opts)
	s.configure(map[string]any{"namePrefix": "kib-taken", "clusters": []any{alpha}})
	steps, err := s.preview()
	for _, want := range []string{"archive: bucket " + taken, "is not account " + hub + "'s", "Nothing was declared", "set namePrefix"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("preview: %v\nwant it to say %q", err, want)
		}
	}
	none(t, "the refused preview", steps)
	if rs := e.Records(t); len(rs) != 0 {
		t.Errorf("the refused preview created %d resources", len(rs))
	}

	s.configure(map[string]any{"namePrefix": "kib-free", "clusters": []any{alpha}})
	if _, err := s.preview(); err != nil {
		t.Errorf("a name no account holds: %v", err)
	}
}

// TestKarpenterSupportAtPreview: Karpenter's support policy and compatibility page, told where users choose a
// version. A cluster running Kubernetes 1.37 with Karpenter 1.14.3 (the newer LTS line, which runs up to 1.36) is
// refused at preview, naming both, before anything is declared; a cluster on 1.6.3 previews with a warning on its
// component naming the day its support ended and the supported lines' newest patches; one on the default, none.
func TestKarpenterSupportAtPreview(t *testing.T) {
	t.Parallel()
	old := cluster("old", map[string]any{"karpenter": map[string]any{"version": "1.6.3"}})
	lts := cluster("lts", map[string]any{"karpenter": map[string]any{"version": "1.14.3"}})
	current := cluster("current", nil)
	b, _ := json.Marshal([]any{old, lts, current})
	e := newEnv(t, standin.World{Region: region, Account: hub, SpotServiceLinkedRole: []string{hub},
		Config:   map[string]string{config.Namespace + ":clusters": string(b)},
		Clusters: map[string]mocks.EKSCluster{"lts": {Version: "1.37"}}, Versions: versions(t)})
	opts := programOptions()
	opts.Today = time.Date(2026, time.November, 26, 0, 0, 0, 0, time.UTC) // the warning's figures are the table's on that day
	s := newStackWith(t, e, "support", opts)
	s.configure(map[string]any{"namePrefix": "kib-support", "clusters": []any{old, lts, current}})
	steps, _, err := s.previewWarned()
	if err == nil || !strings.Contains(err.Error(), "clusters[1] (lts, account "+hub+", "+region+"): it runs Kubernetes 1.37, which Karpenter 1.14.3 does not run on (1.26 to 1.36)") {
		t.Errorf("preview of Kubernetes 1.37 with Karpenter 1.14.3: %v", err)
	}
	none(t, "the refused preview", steps)

	s.configure(map[string]any{"namePrefix": "kib-support", "clusters": []any{old, current}})
	_, warnings, err := s.previewWarned()
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, w := range warnings {
		if strings.Contains(w.Message, "karpenter.version") {
			found = found || strings.HasSuffix(w.URN, "::old")
			if !strings.HasSuffix(w.URN, "::old") {
				t.Errorf("a support warning on %s: %s", w.URN, w.Message)
			}
			for _, want := range []string{"cluster old, karpenter.version 1.6.3", "out of Karpenter's support since 2026-07-14",
				"1.15.1 (the newest release", "1.14.3 (LTS, until 2027-07-10)"} {
				if !strings.Contains(w.Message, want) {
					t.Errorf("the warning %q does not say %q", w.Message, want)
				}
			}
		}
	}
	if !found {
		t.Errorf("no support warning on cluster old's component; warnings: %v", warnings)
	}
}

// TestAClusterMovesToAShard: a hub with two clusters; one moves to a shard, then back (docs/deploying.md, "One stack
// or shards"), the documented way: the shard stack is created, pulumi state move (the real CLI's) takes the cluster's
// component and everything under it, then each stack's configuration says where the cluster now is. Neither
// preview creates, replaces or deletes anything of the cluster's: the hub's changes only its dashboard (a row
// fewer) and drops the copy of the provider the move left behind; the shard's shows no change at all; after both
// updates every resource the hub created is still there, with its ID, the cluster's queue among them, and nothing
// was created twice.
func TestAClusterMovesToAShard(t *testing.T) {
	t.Parallel()
	alpha, beta := cluster("alpha", nil), cluster("beta", nil)
	b, _ := json.Marshal([]any{alpha, beta})
	e := newEnv(t, standin.World{Region: region, Account: hub, SpotServiceLinkedRole: []string{hub},
		Config: map[string]string{config.Namespace + ":clusters": string(b)}, Versions: versions(t)})
	h := newStack(t, e, "hub")
	h.configure(map[string]any{"namePrefix": "kib-fleet", "clusters": []any{alpha, beta}, "dashboard": true})
	h.up()
	before := map[string]string{}
	for _, r := range e.Records(t) {
		before[r.Type+" "+r.ID] = r.URN
	}

	shard := newStack(t, e, "shard-1")
	// A shard is checked against its hub before anything is declared.
	shard.configure(map[string]any{"namePrefix": "kib-other", "hub": "organization/" + project + "/hub", "clusters": []any{beta}})
	if _, err := shard.preview(); err == nil || !strings.Contains(err.Error(), `namePrefix: "kib-other", but the bus of hub organization/`+project+`/hub is "kib-fleet"`) {
		t.Errorf("a shard of another bus: %v", err)
	}
	shard.configure(map[string]any{"namePrefix": "kib-fleet", "hub": "organization/" + project + "/hub", "clusters": []any{beta}})
	component := "urn:pulumi:hub::" + project + "::" + clustercomp.Type + "::beta"
	stateMove(t, e, shard, "hub", "shard-1", component)

	h.configure(map[string]any{"namePrefix": "kib-fleet", "clusters": []any{alpha}, "dashboard": true})
	steps, err := h.preview()
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range steps {
		dashboard := st.Op == apitype.OpUpdate && strings.Contains(st.URN, "aws:cloudwatch/dashboard:Dashboard")
		leftProvider := st.Op == apitype.OpDelete && strings.Contains(st.URN, "::pulumi:providers:")
		if !dashboard && !leftProvider {
			t.Errorf("the hub's preview after the move: %s, want only its dashboard updated and a provider left behind deleted", st)
		}
	}
	steps, err = shard.preview()
	if err != nil {
		t.Fatal(err)
	}
	// The moved resources say which stack manages them: that tag, and nothing else, changes, in place.
	for _, st := range steps {
		if st.Op != apitype.OpUpdate || !strings.Contains(st.URN, "::beta") || len(st.Diffs) == 0 ||
			slices.ContainsFunc(st.Diffs, func(d string) bool { return d != "tags" && d != "tagsAll" }) {
			t.Errorf("the shard's preview after the move: %s %v, want only the moved resources' stack tag updated", st, st.Diffs)
		}
	}

	shard.up()
	h.up()
	steps, err = shard.preview()
	if err != nil {
		t.Fatal(err)
	}
	none(t, "the shard's preview after its update", steps)
	// Then back from the shard to the hub, which, no shard, reads no hub: the entry says where the cluster came
	// from until its first update there. Without it, the hub would take beta's roles for what it retained when beta
	// left, and adopt them again.
	moved := cluster("beta", map[string]any{"movedFrom": "organization/" + project + "/shard-1"})
	h.configure(map[string]any{"namePrefix": "kib-fleet", "clusters": []any{alpha, moved}, "dashboard": true})
	stateMove(t, e, h, "shard-1", "hub", "urn:pulumi:shard-1::"+project+"::"+clustercomp.Type+"::beta")
	shard.configure(map[string]any{"namePrefix": "kib-fleet", "hub": "organization/" + project + "/hub", "clusters": []any{}})
	for _, st := range shard.up() {
		if st.Op != apitype.OpDelete || !strings.Contains(st.URN, "::pulumi:providers:") {
			t.Errorf("the shard's update after beta left: %s, want only a provider left behind deleted", st)
		}
	}
	for _, st := range h.up() {
		tagsOnly := st.Op == apitype.OpUpdate && strings.Contains(st.URN, "::beta") &&
			!slices.ContainsFunc(st.Diffs, func(d string) bool { return d != "tags" && d != "tagsAll" })
		dashboard := st.Op == apitype.OpUpdate && strings.Contains(st.URN, "aws:cloudwatch/dashboard:Dashboard")
		if !tagsOnly && !dashboard {
			t.Errorf("the hub's update after beta came back: %s %v, want only beta's stack tag and the dashboard updated", st, st.Diffs)
		}
	}
	h.configure(map[string]any{"namePrefix": "kib-fleet", "clusters": []any{alpha, beta}, "dashboard": true})
	steps, err = h.preview()
	if err != nil {
		t.Fatal(err)
	}
	none(t, "the hub's preview once movedFrom is gone", steps)

	after := map[string]string{}
	for _, r := range e.Records(t) {
		after[r.Type+" "+r.ID] = r.URN
	}
	queues := 0
	for k := range before {
		if _, ok := after[k]; !ok {
			t.Errorf("%s, created by the hub, is gone after the move", k)
		}
		if strings.HasPrefix(k, "aws:sqs/queue:Queue ") && strings.Contains(k, "beta") {
			queues++
		}
	}
	if queues != 1 {
		t.Errorf("beta's queue: %d before the move, want 1", queues)
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("%s was created by the move", k)
		}
	}
}

// stateMove runs the real CLI's pulumi state move of urn from the stack source to dest, from dest's project
// directory, as docs/deploying.md says to.
func stateMove(t *testing.T, e *env, dest *stack, source, destName, urn string) {
	t.Helper()
	cli, err := filepath.Abs(filepath.Join(binDir, "pulumi"))
	if err != nil {
		t.Fatal(err)
	}
	move := exec.Command(cli, "state", "move", "--source", "organization/"+project+"/"+source,
		"--dest", "organization/"+project+"/"+destName, "--yes", urn)
	move.Dir = dest.stack.Workspace().WorkDir()
	for k, v := range e.Vars() {
		move.Env = append(move.Env, k+"="+v)
	}
	out, err := move.CombinedOutput()
	if err != nil {
		t.Fatalf("pulumi state move: %v\n%s", err, out)
	}
	if name := urn[strings.LastIndex(urn, "::"):]; !strings.Contains(string(out), name) {
		t.Fatalf("pulumi state move moved nothing of %s:\n%s", urn, out)
	}
}

// TestAStackPastTheLimitIsRefusedAtPreview: a stack whose provider processes would take more than its budget
// (providerBudgetMB, lowered here so that four clusters pass it rather than 78: shardplan's tests judge the
// figures) is refused at preview, through the real engine, before anything is declared, with its size, the limit,
// the command of the split and the key a larger machine raises; raised by one cluster's provider, it previews.
func TestAStackPastTheLimitIsRefusedAtPreview(t *testing.T) {
	t.Parallel()
	n := 4
	var clusters []any
	for i := range n {
		clusters = append(clusters, cluster(fmt.Sprintf("c%02d", i), nil))
	}
	b, _ := json.Marshal(clusters)
	e := newEnv(t, standin.World{Region: region, Account: hub, SpotServiceLinkedRole: []string{hub},
		Config: map[string]string{config.Namespace + ":clusters": string(b)}, Versions: versions(t)})
	s := newStack(t, e, "big")
	budget := shardplan.AWSProviderMB + (n-1)*shardplan.KubernetesProviderMB // one cluster too many
	s.configure(map[string]any{"namePrefix": "kib-big", "clusters": clusters, "providerBudgetMB": budget})
	steps, err := s.preview()
	if err == nil {
		t.Fatal("a stack past its providerBudgetMB previewed")
	}
	for _, want := range []string{fmt.Sprintf("this stack starts %d provider processes", n+1), fmt.Sprintf("%d clusters with Karpenter installed", n),
		fmt.Sprintf("past providerBudgetMB, %d MB", budget), "make shards STACK=big", "raise providerBudgetMB"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q:\n%v", want, err)
		}
	}
	none(t, "the refused preview", steps)
	s.configure(map[string]any{"namePrefix": "kib-big", "clusters": clusters, "providerBudgetMB": budget + shardplan.KubernetesProviderMB})
	if _, err := s.preview(); err != nil {
		t.Fatalf("a stack within its raised providerBudgetMB: %v", err)
	}
}
