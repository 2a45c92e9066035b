// Package interruption builds Karpenter v1.14's own interruption controller for one cluster of a judge.Fleet.
package interruption

import (
	"time"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/karpenter-provider-aws/pkg/cache"
	"github.com/aws/karpenter-provider-aws/pkg/controllers/interruption"
	"github.com/aws/karpenter-provider-aws/pkg/providers/capacityreservation"
	gocache "github.com/patrickmn/go-cache"
	"k8s.io/utils/clock"
	"sigs.k8s.io/karpenter/pkg/events"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/karpenter/judge"
)

// Build is judge.Build for this version: NewController(kubeClient, clock, cloudProvider, recorder, sqsProvider,
// sqsAPI, unavailableOfferingsCache, capacityReservationProvider). The SQS provider is left nil so the
// controller makes its own on its first Reconcile, finding the queue by the name in its options, as in
// production; the cloud provider is nil (called on no interruption path of v1.14.3). Its capacity reservation
// provider is Karpenter's own, told each reservation has capacity, as its nodeclass controller would have
// found: a capacity reservation interruption marks the reservation unavailable there (count 0).
func Build(c *judge.Cluster) (judge.Controller, error) {
	clk := clock.RealClock{}
	offerings := cache.NewUnavailableOfferings()
	reservations := capacityreservation.NewProvider(nil, clk, gocache.New(time.Hour, time.Hour), gocache.New(time.Hour, time.Hour))
	for _, in := range c.Instances {
		if in.Reservation != "" {
			reservations.SetAvailableInstanceCount(in.Reservation, 1)
		}
	}
	ctl := interruption.NewController(c.Kube, clk, nil, events.NewRecorder(c.Recorder), nil, c.SQS, offerings, reservations)
	return judge.Adapt(ctl, c.Queue, func(in judge.Instance) bool {
		if in.Capacity == judge.Reserved {
			return reservations.GetAvailableInstanceCount(in.Reservation) == 0
		}
		return offerings.IsUnavailable(ec2types.InstanceType(in.Type), in.Zone, nil, in.Capacity)
	}), nil
}
