package preflight_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/bucketowner"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/bus"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/concurrency"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/preflight"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
)

// errStop ends a run once the checks that need no account's provider have passed: Input.Accounts is called before the
// lookups, so the archive's step is the last to run.
var errStop = errors.New("stopped before the lookups")

// untilLookups runs the program's preflight under m up to its lookups.
func untilLookups(t *testing.T, m *mocks.Mocks, opts preflight.Options, values map[string]string) (preflight.Flight, error) {
	t.Helper()
	var f preflight.Flight
	_, err := m.Run("karpenter-interruption-bus", "dev", func(ctx *pulumi.Context) error {
		var err error
		f, err = preflight.Run(ctx, preflight.Input{Kind: preflight.Program, Load: func(ctx *pulumi.Context, env awsenv.Env) (config.Config, error) {
			return config.Load(ctx.Stack(), env.Account, values)
		}, Accounts: func(config.Config, awsenv.Env) (map[string][]pulumi.InvokeOption, error) { return nil, errStop }}, opts)
		return err
	})
	return f, err
}

// TestTheArchiveStep: the preflight asks S3, as the stack's provider's identity, who owns the archive's bucket (the one
// the last update had, or the one of the archive's name), and says what the bus adopts: the account's own bucket alone,
// never over an archive in state, nothing that is missing; a bucket S3 answers as another account's, or refuses both
// ways, or places in another region, stops the run there, naming it and why, before any lookup.
func TestTheArchiveStep(t *testing.T) {
	const name, old = "kib-dev-archive-123456789012-us-east-1", "kib-dev-archive-20261127123456789000000001"
	one := map[string]string{"clusters": `[{"name":"alpha"}]`}
	for _, tt := range []struct {
		name     string
		m        *mocks.Mocks
		answer   bucketowner.Answer // what the read answers instead of m's world, if set
		fails    error
		bucket   string
		inState  bool
		want     bucketowner.Answer
		adoption bus.Adoption
		err      []string
	}{
		{name: "a first deployment", bucket: name, want: bucketowner.Missing, adoption: bus.AdoptNothing},
		{name: "the account's own, retained", m: &mocks.Mocks{Buckets: []string{name}}, bucket: name, want: bucketowner.Owned, adoption: bus.AdoptOwned},
		{name: "the archive in state", m: &mocks.Mocks{Buckets: []string{name}, Previous: map[string]any{"archiveBucket": name}}, bucket: name, inState: true,
			want: bucketowner.Owned, adoption: bus.AdoptNothing},
		{name: "a release before 0.4.0's archive in state", m: &mocks.Mocks{Buckets: []string{name, old}, Previous: map[string]any{"archiveBucket": old}},
			bucket: old, inState: true, want: bucketowner.Owned, adoption: bus.AdoptNothing},
		{name: "another account's", m: &mocks.Mocks{ForeignBuckets: []string{name}}, bucket: name, want: bucketowner.Foreign,
			err: []string{"archive: bucket " + name + ", the name of the bus's archive (its name prefix, account and region), is not account 123456789012's",
				"S3 refuses it as account 123456789012's (ExpectedBucketOwner) and answers it as another's", "Nothing was declared", "set namePrefix"}},
		{name: "refused both ways", answer: bucketowner.Refused, bucket: name, want: bucketowner.Refused,
			err: []string{"bucket " + name + ",", "S3 refuses it both as account 123456789012's (ExpectedBucketOwner) and as anyone's",
				"may not list it (s3:ListBucket on arn:aws:s3:::" + name + ")"}},
		{name: "of another region", answer: bucketowner.ElsewhereRegion, m: &mocks.Mocks{Previous: map[string]any{"archiveBucket": name}}, bucket: name, inState: true,
			want: bucketowner.ElsewhereRegion, err: []string{"bucket " + name + ", the archive the stack's last update had, is not account 123456789012's",
				"a bucket of another region than the stack's us-east-1"}},
		{name: "S3 fails", fails: errors.New("throttled"), bucket: name,
			err: []string{"archive: asking S3 who owns bucket " + name + " failed: throttled", "s3:ListBucket on arn:aws:s3:::" + name}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.m
			if m == nil {
				m = &mocks.Mocks{}
			}
			m.Config = map[string]string{"karpenter-interruption-bus:clusters": one["clusters"]}
			opts := options(m)
			var asked []string
			opts.ReadArchiveOwner = func(ctx context.Context, region string, id concurrency.Identity, bucket, account string) (bucketowner.Answer, error) {
				asked = append(asked, region+" "+bucket+" "+account)
				if tt.fails != nil || tt.answer != "" {
					return tt.answer, tt.fails
				}
				return m.ReadArchiveOwner(ctx, region, id, bucket, account)
			}
			f, err := untilLookups(t, m, opts, one)
			if want := []string{"us-east-1 " + tt.bucket + " 123456789012"}; !slices.Equal(asked, want) {
				t.Errorf("asked %v, want %v", asked, want)
			}
			if f.ArchiveBucket != tt.bucket || f.ArchiveInState != tt.inState || f.Archive != tt.want {
				t.Errorf("archive %s (in state %v): %q, want %s (%v): %q", f.ArchiveBucket, f.ArchiveInState, f.Archive, tt.bucket, tt.inState, tt.want)
			}
			if f.Ran[len(f.Ran)-1] != preflight.StepArchive {
				t.Errorf("ran %v: want the archive's step last", f.Ran)
			}
			if len(tt.err) == 0 {
				if !errors.Is(err, errStop) {
					t.Fatal(err)
				}
				if got := f.ArchiveAdoption(); got != tt.adoption {
					t.Errorf("adoption %v, want %v", got, tt.adoption)
				}
				return
			}
			for _, want := range tt.err {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("error %v, want it to say %q", err, want)
				}
			}
			if errors.Is(err, errStop) {
				t.Errorf("the run went on to the accounts' providers after the archive was refused")
			}
		})
	}
}

// TestTheBusAsksTooAndTheJoinNever: the component package's Bus asks who owns the archive of its name (it reads no last
// update); a ClusterInterruption, which declares no archive, never does (nor does a shard: its steps have none,
// TestEachKindRunsItsStepsInTheOneOrder).
func TestTheBusAsksTooAndTheJoinNever(t *testing.T) {
	for _, tt := range []struct {
		kind   preflight.Kind
		values map[string]string
		asks   bool
	}{
		{preflight.Bus, map[string]string{}, true},
		{preflight.Join, map[string]string{"clusters": `[{"name":"alpha"}]`}, false},
	} {
		m := &mocks.Mocks{Config: map[string]string{"karpenter-interruption-bus:clusters": `[{"name":"alpha"}]`}, ForeignBuckets: []string{"kib-dev-archive-123456789012-us-east-1"}}
		asked := false
		opts := options(m)
		opts.ReadArchiveOwner = func(ctx context.Context, region string, id concurrency.Identity, bucket, account string) (bucketowner.Answer, error) {
			asked = true
			return m.ReadArchiveOwner(ctx, region, id, bucket, account)
		}
		_, err := run(t, m, tt.kind, opts, tt.values)
		if asked != tt.asks || (err != nil) != tt.asks {
			t.Errorf("%v %v: asked %v, error %v; want asked and refused: %v", tt.kind, tt.values, asked, err, tt.asks)
		}
	}
}

// TestTheArchiveCheckStepsAside: with a key of the provider it does not follow, the check asks nothing (it would ask as
// another identity) and leaves the adoption to the provider's lookup; the offline render's world, which cannot look,
// answers nothing either.
func TestTheArchiveCheckStepsAside(t *testing.T) {
	t.Setenv("PULUMI_CONFIG", `{"aws:httpsProxy":"http://proxy.corp:3128"}`)
	m := &mocks.Mocks{Config: map[string]string{"karpenter-interruption-bus:clusters": `[{"name":"alpha"}]`}, ForeignBuckets: []string{"kib-dev-archive-123456789012-us-east-1"}}
	opts := options(m)
	opts.ReadArchiveOwner = func(context.Context, string, concurrency.Identity, string, string) (bucketowner.Answer, error) {
		t.Error("S3 asked as an identity the check does not follow")
		return bucketowner.NotChecked, nil
	}
	opts.ReadConcurrency = func(context.Context, string, concurrency.Identity, string) (concurrency.Account, error) {
		t.Error("Lambda asked as an identity the check does not follow")
		return concurrency.Account{}, nil
	}
	f, err := untilLookups(t, m, opts, map[string]string{"clusters": `[{"name":"alpha"}]`})
	if !errors.Is(err, errStop) {
		t.Fatal(err)
	}
	if f.Archive != bucketowner.NotChecked || f.ArchiveAdoption() != bus.AdoptIfFound {
		t.Errorf("archive %q, adoption %v: want not checked, the lookup deciding", f.Archive, f.ArchiveAdoption())
	}
	if a, err := (*mocks.Mocks)(nil).ReadArchiveOwner(context.Background(), "us-east-1", concurrency.Identity{}, "b", "123456789012"); a != bucketowner.NotChecked || err != nil {
		t.Errorf("the render's world answers %q, %v", a, err)
	}
}
