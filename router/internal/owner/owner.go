// Package owner finds the EKS cluster that owns an EC2 instance, from the instance's tags, with caches in front
// of EC2 DescribeInstances.
package owner

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// Describer is the one EC2 call the resolver makes.
type Describer interface {
	DescribeInstances(ctx context.Context, in *ec2.DescribeInstancesInput, optFns ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error)
}

var _ Describer = (*ec2.Client)(nil)

// Tags read in this order; the first present names the owner.
const (
	// TagKarpenter is set by Karpenter v1 on every instance it launches.
	TagKarpenter = "eks:eks-cluster-name"
	// TagClusterPrefix starts the Kubernetes cloud-provider tag kubernetes.io/cluster/<name>=owned|shared.
	TagClusterPrefix = "kubernetes.io/cluster/"
	// TagNodeGroup is set on EKS managed node group instances.
	TagNodeGroup = "eks:cluster-name"
)

// MaxIDsPerCall is how many instance IDs one DescribeInstances call asks about (the filter's value limit).
const MaxIDsPerCall = contract.MaxIDsPerDescribe

// Options configures a Resolver.
type Options struct {
	// ExtraTagKeys are consulted, in order, after the built-in tags.
	ExtraTagKeys []string
	// CacheSize bounds each cache, in instances.
	CacheSize int
	// OwnerTTL is how long a found owner is kept; ownership never changes in an instance's life.
	OwnerTTL time.Duration
	// NoOwnerTTL is how long "no owner" is kept, short so a late-tagged or new instance is found again.
	NoOwnerTTL time.Duration
}

// Owner is the outcome for one instance: Cluster is "" when no cluster owns it; Err is set when the lookup
// failed and may succeed if tried again.
type Owner struct {
	Cluster string
	Err     error
}

type key struct{ region, id string }

// Resolver answers which cluster owns which instance.
type Resolver struct {
	ec2      Describer
	extra    []string
	owners   *expirable.LRU[key, string]
	noOwners *expirable.LRU[key, struct{}]
}

// New returns a Resolver calling ec2 on cache misses.
func New(ec2 Describer, opts Options) *Resolver {
	return &Resolver{
		ec2:      ec2,
		extra:    opts.ExtraTagKeys,
		owners:   expirable.NewLRU[key, string](opts.CacheSize, nil, opts.OwnerTTL),
		noOwners: expirable.NewLRU[key, struct{}](opts.CacheSize, nil, opts.NoOwnerTTL),
	}
}

// Resolve returns the owner of each of ids in region, asking EC2 only about those not cached, at most
// MaxIDsPerCall at a time. Every id has an entry in the result.
func (r *Resolver) Resolve(ctx context.Context, region string, ids []string) map[string]Owner {
	out := make(map[string]Owner, len(ids))
	var misses []string
	for _, id := range ids {
		k := key{region, id}
		if c, ok := r.owners.Get(k); ok {
			out[id] = Owner{Cluster: c}
		} else if _, ok := r.noOwners.Get(k); ok {
			out[id] = Owner{}
		} else if _, dup := out[id]; !dup {
			out[id] = Owner{} // placeholder; keeps a repeated id from being asked about twice
			misses = append(misses, id)
		}
	}
	for start := 0; start < len(misses); start += MaxIDsPerCall {
		chunk := misses[start:min(start+MaxIDsPerCall, len(misses))]
		found, err := r.describe(ctx, region, chunk)
		for _, id := range chunk {
			switch cluster, ok := found[id]; {
			case err != nil:
				out[id] = Owner{Err: err}
			case ok && cluster != "":
				r.owners.Add(key{region, id}, cluster)
				out[id] = Owner{Cluster: cluster}
			default: // unknown to EC2, or no owner tag
				r.noOwners.Add(key{region, id}, struct{}{})
				out[id] = Owner{}
			}
		}
	}
	return out
}

// describe returns the owner tag value of each instance EC2 knows among ids ("" for untagged ones). The
// instance-id filter, unlike InstanceIds, does not fail the whole call on one unknown id. Filtered and paginated,
// the call also draws on DescribeInstances's own throttling bucket (100 tokens, refilled at 20 a second per account
// and region, shared with the account's other callers of DescribeInstances, Karpenter among them), not on the
// smaller one (50, refilled at 10) EC2 keeps for unfiltered, unpaginated DescribeInstances ("Request throttling
// for the Amazon EC2 API", https://docs.aws.amazon.com/ec2/latest/devguide/ec2-api-throttling.html).
func (r *Resolver) describe(ctx context.Context, region string, ids []string) (map[string]string, error) {
	in := &ec2.DescribeInstancesInput{
		Filters:    []types.Filter{{Name: aws.String("instance-id"), Values: ids}},
		MaxResults: aws.Int32(1000),
	}
	inRegion := func(o *ec2.Options) { o.Region = region }
	found := make(map[string]string, len(ids))
	for p := ec2.NewDescribeInstancesPaginator(r.ec2, in); p.HasMorePages(); {
		page, err := p.NextPage(ctx, inRegion)
		if err != nil {
			return nil, fmt.Errorf("describing %d instances in %s: %w", len(ids), region, err)
		}
		for _, res := range page.Reservations {
			for _, inst := range res.Instances {
				found[aws.ToString(inst.InstanceId)] = ownerFromTags(inst.Tags, r.extra)
			}
		}
	}
	return found, nil
}

// ownerFromTags applies the precedence: eks:eks-cluster-name, kubernetes.io/cluster/<name>, eks:cluster-name,
// then the extra keys in order.
func ownerFromTags(tags []types.Tag, extra []string) string {
	var byCloudProvider, byNodeGroup string
	byExtra := make([]string, len(extra))
	for _, t := range tags {
		k, v := aws.ToString(t.Key), aws.ToString(t.Value)
		switch {
		case k == TagKarpenter && v != "":
			return v
		case strings.HasPrefix(k, TagClusterPrefix) && (v == "owned" || v == "shared"):
			if byCloudProvider == "" {
				byCloudProvider = strings.TrimPrefix(k, TagClusterPrefix)
			}
		case k == TagNodeGroup:
			byNodeGroup = v
		default:
			for i, e := range extra {
				if k == e {
					byExtra[i] = v
				}
			}
		}
	}
	if byCloudProvider != "" {
		return byCloudProvider
	}
	if byNodeGroup != "" {
		return byNodeGroup
	}
	for _, v := range byExtra {
		if v != "" {
			return v
		}
	}
	return ""
}
