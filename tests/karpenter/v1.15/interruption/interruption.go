// Package interruption builds Karpenter v1.15's own interruption controller for one cluster of a judge.Fleet.
package interruption

import (
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/karpenter-provider-aws/pkg/cache"
	"github.com/aws/karpenter-provider-aws/pkg/controllers/interruption"
	"k8s.io/utils/clock"
	"sigs.k8s.io/karpenter/pkg/events"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/karpenter/judge"
)

// Build is judge.Build for this version: NewController(kubeClient, clock, cloudProvider, recorder, sqsProvider,
// sqsAPI, unavailableOfferingsCache). The SQS provider is left nil so the controller makes its own on its first
// Reconcile, finding the queue by the name in its options (settings.interruptionQueue), as in production. The
// cloud provider is nil: the interruption controller holds it but calls it on no path (v1.15.1's
// pkg/controllers/interruption).
func Build(c *judge.Cluster) (judge.Controller, error) {
	offerings := cache.NewUnavailableOfferings()
	ctl := interruption.NewController(c.Kube, clock.RealClock{}, nil, events.NewRecorder(c.Recorder), nil, c.SQS, offerings)
	return judge.Adapt(ctl, c.Queue, func(in judge.Instance) bool {
		// A Spot warning marks the Spot offering; a capacity reservation interruption marks the reserved offering
		// of that reservation only (cache.WithReservationID).
		if in.Capacity == judge.Reserved {
			return offerings.IsUnavailable(ec2types.InstanceType(in.Type), in.Zone, nil, in.Capacity, cache.WithReservationID(in.Reservation))
		}
		return offerings.IsUnavailable(ec2types.InstanceType(in.Type), in.Zone, nil, in.Capacity)
	}), nil
}
