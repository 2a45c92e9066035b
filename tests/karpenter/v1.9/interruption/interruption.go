// Package interruption builds Karpenter v1.9's own interruption controller for one cluster of a judge.Fleet.
package interruption

import (
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/karpenter-provider-aws/pkg/cache"
	"github.com/aws/karpenter-provider-aws/pkg/controllers/interruption"
	"k8s.io/utils/clock"
	"sigs.k8s.io/karpenter/pkg/events"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/karpenter/judge"
)

// Build is judge.Build for this version: NewController(kubeClient, cloudProvider, clock, recorder, sqsProvider,
// sqsAPI, unavailableOfferingsCache). The SQS provider is left nil so the controller makes its own on its first
// Reconcile, finding the queue by the name in its options, as in production; the cloud provider is nil (called
// on no interruption path of v1.9.3). This version parses no capacity reservation interruption: it keeps no
// reservation state to mark.
func Build(c *judge.Cluster) (judge.Controller, error) {
	offerings := cache.NewUnavailableOfferings()
	ctl := interruption.NewController(c.Kube, nil, clock.RealClock{}, events.NewRecorder(c.Recorder), nil, c.SQS, offerings)
	return judge.Adapt(ctl, c.Queue, func(in judge.Instance) bool {
		return in.Capacity != judge.Reserved && offerings.IsUnavailable(ec2types.InstanceType(in.Type), in.Zone, in.Capacity)
	}), nil
}
