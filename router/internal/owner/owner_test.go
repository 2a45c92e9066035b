package owner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// fakeEC2 answers DescribeInstances from a table of instance tags and records each call.
type fakeEC2 struct {
	tags    map[string][]types.Tag // instance id -> tags; ids absent here are unknown to EC2
	err     error
	calls   [][]string
	regions []string
}

func (f *fakeEC2) DescribeInstances(_ context.Context, in *ec2.DescribeInstancesInput, optFns ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error) {
	var o ec2.Options
	for _, fn := range optFns {
		fn(&o)
	}
	f.regions = append(f.regions, o.Region)
	if len(in.InstanceIds) > 0 || len(in.Filters) != 1 || aws.ToString(in.Filters[0].Name) != "instance-id" {
		return nil, fmt.Errorf("want exactly the instance-id filter, got %+v", in)
	}
	ids := in.Filters[0].Values
	f.calls = append(f.calls, slices.Clone(ids))
	if f.err != nil {
		return nil, f.err
	}
	var insts []types.Instance
	for _, id := range ids {
		if tags, ok := f.tags[id]; ok {
			insts = append(insts, types.Instance{InstanceId: aws.String(id), Tags: tags})
		}
	}
	return &ec2.DescribeInstancesOutput{Reservations: []types.Reservation{{Instances: insts}}}, nil
}

func tags(kv ...string) []types.Tag {
	var out []types.Tag
	for i := 0; i < len(kv); i += 2 {
		out = append(out, types.Tag{Key: aws.String(kv[i]), Value: aws.String(kv[i+1])})
	}
	return out
}

func opts() Options {
	return Options{ExtraTagKeys: []string{"team/cluster", "cluster"}, CacheSize: 1000, OwnerTTL: time.Hour, NoOwnerTTL: time.Hour}
}

func TestOwnerFromTagsPrecedence(t *testing.T) {
	tests := []struct {
		name string
		tags []types.Tag
		want string
	}{
		{"karpenter tag", tags("eks:eks-cluster-name", "a"), "a"},
		{"karpenter tag beats the rest", tags("cluster", "x", "eks:cluster-name", "y", "kubernetes.io/cluster/z", "owned", "eks:eks-cluster-name", "a"), "a"},
		{"cloud provider tag beats node group", tags("eks:cluster-name", "y", "kubernetes.io/cluster/b", "owned"), "b"},
		{"cloud provider tag, shared", tags("kubernetes.io/cluster/b", "shared"), "b"},
		{"cloud provider tag with another value is ignored", tags("kubernetes.io/cluster/b", "1"), ""},
		{"node group tag beats extra keys", tags("cluster", "x", "eks:cluster-name", "c"), "c"},
		{"extra keys in configured order", tags("cluster", "x", "team/cluster", "d"), "d"},
		{"second extra key", tags("cluster", "x"), "x"},
		{"empty karpenter tag falls through", tags("eks:eks-cluster-name", "", "eks:cluster-name", "c"), "c"},
		{"no owner tag", tags("Name", "web"), ""},
		{"no tags", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ownerFromTags(tt.tags, opts().ExtraTagKeys); got != tt.want {
				t.Errorf("owner = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	f := &fakeEC2{tags: map[string][]types.Tag{
		"i-1": tags("eks:eks-cluster-name", "a"),
		"i-2": tags("eks:cluster-name", "b"),
		"i-3": tags("Name", "untagged"),
	}}
	r := New(f, opts())
	got := r.Resolve(context.Background(), "eu-west-1", []string{"i-1", "i-2", "i-3", "i-4", "i-1"})
	want := map[string]Owner{"i-1": {Cluster: "a"}, "i-2": {Cluster: "b"}, "i-3": {}, "i-4": {}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Resolve = %v, want %v", got, want)
	}
	if len(f.calls) != 1 || len(f.calls[0]) != 4 {
		t.Fatalf("calls = %v, want one call naming the 4 distinct ids", f.calls)
	}
	if f.regions[0] != "eu-west-1" {
		t.Errorf("called region %q, want the event's region eu-west-1", f.regions[0])
	}

	// Owners and non-owners are now cached: no further call.
	got = r.Resolve(context.Background(), "eu-west-1", []string{"i-3", "i-2", "i-4", "i-1"})
	if fmt.Sprint(got) != fmt.Sprint(want) || len(f.calls) != 1 {
		t.Fatalf("warm Resolve = %v after %d calls, want %v after 1", got, len(f.calls), want)
	}

	// The cache is per region.
	r.Resolve(context.Background(), "us-east-1", []string{"i-1"})
	if len(f.calls) != 2 {
		t.Fatalf("calls = %d, want a new call for another region", len(f.calls))
	}
}

func TestResolveBatchesOf200(t *testing.T) {
	tests := []struct{ ids, wantCalls int }{{1, 1}, {200, 1}, {201, 2}, {450, 3}}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.ids), func(t *testing.T) {
			f := &fakeEC2{tags: map[string][]types.Tag{}}
			ids := make([]string, tt.ids)
			for i := range ids {
				ids[i] = fmt.Sprintf("i-%d", i)
				f.tags[ids[i]] = tags("eks:eks-cluster-name", "c")
			}
			got := New(f, opts()).Resolve(context.Background(), "r", ids)
			if len(f.calls) != tt.wantCalls {
				t.Fatalf("%d ids took %d calls, want %d", tt.ids, len(f.calls), tt.wantCalls)
			}
			for _, c := range f.calls {
				if len(c) > MaxIDsPerCall {
					t.Errorf("a call named %d ids, over %d", len(c), MaxIDsPerCall)
				}
			}
			for _, id := range ids {
				if got[id].Cluster != "c" {
					t.Fatalf("owner of %s = %+v, want c", id, got[id])
				}
			}
		})
	}
}

func TestResolveFailureIsReportedAndNotCached(t *testing.T) {
	throttled := errors.New("RequestLimitExceeded")
	f := &fakeEC2{tags: map[string][]types.Tag{"i-1": tags("eks:eks-cluster-name", "a")}, err: throttled}
	r := New(f, opts())
	got := r.Resolve(context.Background(), "r", []string{"i-1"})
	if !errors.Is(got["i-1"].Err, throttled) {
		t.Fatalf("owner = %+v, want the EC2 error", got["i-1"])
	}
	f.err = nil
	got = r.Resolve(context.Background(), "r", []string{"i-1"})
	if got["i-1"].Cluster != "a" || len(f.calls) != 2 {
		t.Fatalf("after recovery owner = %+v with %d calls, want a from a second call", got["i-1"], len(f.calls))
	}
}

func TestResolveExpiry(t *testing.T) {
	// The TTLs are tiny and the sleep is longer than both, so the outcome does not depend on scheduling.
	f := &fakeEC2{tags: map[string][]types.Tag{"i-1": tags("eks:eks-cluster-name", "a")}}
	r := New(f, Options{CacheSize: 10, OwnerTTL: 5 * time.Millisecond, NoOwnerTTL: 5 * time.Millisecond})
	r.Resolve(context.Background(), "r", []string{"i-1", "i-2"})
	time.Sleep(20 * time.Millisecond)
	r.Resolve(context.Background(), "r", []string{"i-1", "i-2"})
	if len(f.calls) != 2 {
		t.Fatalf("calls = %d, want 2: both entries expired", len(f.calls))
	}
}

func TestResolveNegativeTTLShorterThanPositive(t *testing.T) {
	f := &fakeEC2{tags: map[string][]types.Tag{"i-1": tags("eks:eks-cluster-name", "a")}}
	r := New(f, Options{CacheSize: 10, OwnerTTL: time.Hour, NoOwnerTTL: 5 * time.Millisecond})
	r.Resolve(context.Background(), "r", []string{"i-1", "i-2"})
	time.Sleep(20 * time.Millisecond)
	r.Resolve(context.Background(), "r", []string{"i-1", "i-2"})
	if len(f.calls) != 2 || !slices.Equal(f.calls[1], []string{"i-2"}) {
		t.Fatalf("calls = %v, want the second to ask only about the expired non-owner i-2", f.calls)
	}
}

func TestResolveCacheIsBounded(t *testing.T) {
	f := &fakeEC2{tags: map[string][]types.Tag{}}
	r := New(f, Options{CacheSize: 2, OwnerTTL: time.Hour, NoOwnerTTL: time.Hour})
	for _, id := range []string{"i-1", "i-2", "i-3"} {
		f.tags[id] = tags("eks:eks-cluster-name", "a")
	}
	r.Resolve(context.Background(), "r", []string{"i-1", "i-2", "i-3"})
	if n := r.owners.Len(); n != 2 {
		t.Fatalf("owner cache holds %d entries, want its bound 2", n)
	}
}
