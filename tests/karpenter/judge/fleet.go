// Package judge puts Karpenter's own interruption controller at the end of the bus: one controller per cluster,
// each built by the Karpenter version under test (pkg/controllers/interruption of karpenter-provider-aws) with a
// controller-runtime fake client holding that cluster's NodeClaims and Nodes (indexed as Karpenter's operator
// indexes them), Karpenter's own SQS provider reading the cluster's goaws queue found by name, as in production,
// and the router between the central queue and the cluster queues. A case publishes events on the central queue
// and then reads the whole fleet: which NodeClaims each controller deleted, which it only reported on, which
// offerings it marked unavailable, and which messages were left anywhere.
//
// What a version's controller needs differs from version to version (its constructor, its caches), so each
// module under tests/karpenter/ supplies a Build; everything else is here, written against the APIs all
// supported versions share.
package judge

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/karpenter-provider-aws/pkg/operator/options"
	"github.com/aws/karpenter-provider-aws/pkg/utils"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/log"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/harness"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/sqsemu"
)

// Karpenter's controllers log through controller-runtime's logger; the judge reads what they did from their
// clients, caches and errors instead, and an unset logger would print a warning with a stack trace.
func init() { log.SetLogger(logr.Discard()) }

// Controller is one cluster's Karpenter interruption controller, as the version under test builds it.
type Controller interface {
	// Reconcile is one pass of the controller's loop: one receive from its queue, its actions, its deletes.
	Reconcile(ctx context.Context) error
	// Unavailable reports whether this controller's caches now hold in's offering unavailable: the Spot
	// offering (instance type and zone) of a Spot instance, the capacity reservation of a reserved one.
	Unavailable(in Instance) bool
}

// Build makes the controller of c, Karpenter's own: reading c.Queue, found by name through c.SQS, acting
// through c.Kube and publishing its events to c.Recorder.
type Build func(c *Cluster) (Controller, error)

// Capacity types, as Karpenter labels them (karpenter.sh/capacity-type).
const (
	Spot     = "spot"
	OnDemand = "on-demand"
	Reserved = "reserved"
)

// LabelCapacityReservationID is the label Karpenter reads a reserved NodeClaim's reservation from
// (karpenter.k8s.aws/capacity-reservation-id: v1.LabelCapacityReservationID of karpenter-provider-aws, the same
// in every supported version).
const LabelCapacityReservationID = "karpenter.k8s.aws/capacity-reservation-id"

// Instance is one of a cluster's EC2 instances: its NodeClaim and Node carry its labels.
type Instance struct {
	ID, Zone, Type, Capacity string
	Reservation              string // for Reserved
}

// Offering is what Karpenter marks unavailable after an interruption.
func (in Instance) Offering() string {
	return in.Capacity + "/" + in.Type + "/" + in.Zone + "/" + in.Reservation
}

// ProviderID is the instance's Kubernetes provider ID, as the AWS cloud provider writes it.
func (in Instance) ProviderID() string { return "aws:///" + in.Zone + "/" + in.ID }

// Cluster is one cluster of the fleet, as its Karpenter sees it.
type Cluster struct {
	Name, Account, Queue string
	SQS                  *sqs.Client // in the cluster's account
	Kube                 client.Client
	Recorder             *Recorder
	Instances            []Instance
	Controller           Controller
}

// Spec shapes a fleet.
type Spec struct {
	Hub     []string            // clusters in the bus's account
	Members map[string][]string // member account -> its clusters (their queues in that account)
	// Instances per cluster, cycling through Spot, on-demand and reserved capacity.
	Instances int
	// Router is the router bootstrap to run as Lambda runs it (harness.NewWithBinary); "" for the router's
	// handler in this process.
	Router string
	// Organization admits the members by organization (the router derives their reader roles).
	Organization string
	BatchSize    int
	// Environments is how many router processes to run (Lambda's concurrent invocations); 1 when 0.
	Environments int
}

// Fleet is a bus and the clusters behind it.
type Fleet struct {
	Bus      *harness.Bus
	Clusters []*Cluster
	owner    map[string]*Cluster // instance id -> its cluster
}

// zones and types are the offerings instances cycle through: every cluster has the same ones, so a cache that
// leaked from one cluster to another would show.
var (
	zones = []string{"us-east-1a", "us-east-1b", "us-east-1c"}
	kinds = []struct{ capacity, typ string }{{Spot, "m5.large"}, {OnDemand, "c5.xlarge"}, {Reserved, "r5.large"}}
)

// NewFleet starts a bus for spec and builds every cluster's controller with build. Close it when done.
func NewFleet(ctx context.Context, spec Spec, build Build) (*Fleet, error) {
	opts := harness.Options{Clusters: spec.Hub, Members: spec.Members, Organization: spec.Organization, BatchSize: spec.BatchSize}
	var (
		b   *harness.Bus
		err error
	)
	if spec.Router != "" {
		b, err = harness.NewWithBinaries(ctx, opts, spec.Router, max(1, spec.Environments))
	} else {
		b, err = harness.New(ctx, opts)
	}
	if err != nil {
		return nil, err
	}
	f := &Fleet{Bus: b, owner: map[string]*Cluster{}}
	add := func(account string, names []string) error {
		for _, name := range names {
			c, err := f.cluster(account, name, len(f.Clusters), spec.Instances, build)
			if err != nil {
				return err
			}
			f.Clusters = append(f.Clusters, c)
		}
		return nil
	}
	if err := add(sqsemu.Account, spec.Hub); err != nil {
		b.Close()
		return nil, err
	}
	for _, m := range slices.Sorted(maps.Keys(spec.Members)) {
		if err := add(m, spec.Members[m]); err != nil {
			b.Close()
			return nil, err
		}
	}
	return f, nil
}

// Close stops the bus.
func (f *Fleet) Close() { f.Bus.Close() }

func (f *Fleet) cluster(account, name string, index, n int, build Build) (*Cluster, error) {
	c := &Cluster{Name: name, Account: account, Queue: harness.QueueOf(name), SQS: f.Bus.SQS.ClientIn(account), Recorder: &Recorder{}}
	var objs []client.Object
	for j := range n {
		k := kinds[j%len(kinds)]
		in := Instance{ID: fmt.Sprintf("i-0%05x%011x", index, j), Zone: zones[j/len(kinds)%len(zones)], Type: k.typ, Capacity: k.capacity}
		if k.capacity == Reserved {
			in.Reservation = fmt.Sprintf("cr-0%05x%011x", index, j)
		}
		c.Instances = append(c.Instances, in)
		f.owner[in.ID] = c
		// Karpenter tags the instances it launches with the cluster's name (eks:eks-cluster-name): the router
		// finds the owner by it.
		f.Bus.EC2.PutIn(account, in.ID, map[string]string{"eks:eks-cluster-name": name})
		objs = append(objs, nodeClaim(in), node(in))
	}
	c.Kube = fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).
		WithIndex(&karpv1.NodeClaim{}, "status.instanceID", nodeClaimInstanceID).
		WithIndex(&corev1.Node{}, "spec.instanceID", nodeInstanceID).Build()
	ctl, err := build(c)
	if err != nil {
		return nil, fmt.Errorf("building the controller of %s: %w", name, err)
	}
	c.Controller = ctl
	return c, nil
}

func labels(in Instance) map[string]string {
	l := map[string]string{
		karpv1.NodePoolLabelKey: "default", karpv1.CapacityTypeLabelKey: in.Capacity,
		corev1.LabelTopologyZone: in.Zone, corev1.LabelInstanceTypeStable: in.Type,
	}
	if in.Reservation != "" {
		l[LabelCapacityReservationID] = in.Reservation
	}
	return l
}

// nodeClaim is in's NodeClaim as Karpenter leaves it once launched: its finalizer makes a delete a request
// (a deletion timestamp) that Karpenter's termination controller would then carry out.
func nodeClaim(in Instance) *karpv1.NodeClaim {
	return &karpv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "nc-" + in.ID, Labels: labels(in), Finalizers: []string{karpv1.TerminationFinalizer}},
		Status:     karpv1.NodeClaimStatus{ProviderID: in.ProviderID(), NodeName: "node-" + in.ID},
	}
}

func node(in Instance) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-" + in.ID, Labels: labels(in), Finalizers: []string{karpv1.TerminationFinalizer}},
		Spec:       corev1.NodeSpec{ProviderID: in.ProviderID()},
	}
}

// nodeClaimInstanceID and nodeInstanceID are the field indexes the interruption controller lists by, as
// Karpenter's operator declares them (SetupIndexers in pkg/operator/operator.go: the instance ID its own
// utils.ParseInstanceID reads from the provider ID). Importing the operator for them would compile every AWS
// provider of Karpenter.
func nodeClaimInstanceID(o client.Object) []string {
	return instanceID(o.(*karpv1.NodeClaim).Status.ProviderID)
}

func nodeInstanceID(o client.Object) []string { return instanceID(o.(*corev1.Node).Spec.ProviderID) }

func instanceID(providerID string) []string {
	if providerID == "" {
		return nil
	}
	id, err := utils.ParseInstanceID(providerID)
	if err != nil || id == "" {
		return nil
	}
	return []string{id}
}

// Owner is the cluster of instance id, nil for an instance of no cluster.
func (f *Fleet) Owner(id string) *Cluster { return f.owner[id] }

// Cluster is the cluster named name.
func (f *Fleet) Cluster(name string) *Cluster {
	for _, c := range f.Clusters {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Settle runs the bus until nothing is left to do: the event source mapping drains the central queue through
// the router, and each controller reconciles while its queue holds messages, as Karpenter's singleton loop does.
// A controller's error fails the settle, as it would be logged and retried by Karpenter: a case expects none.
// It gives up after rounds rounds.
func (f *Fleet) Settle(ctx context.Context, rounds int) error {
	for range rounds {
		if _, err := f.Bus.Drain(ctx); err != nil {
			return fmt.Errorf("draining the central queue: %w", err)
		}
		busy := false
		for _, c := range f.Clusters {
			visible, _, err := c.depth(ctx)
			if err != nil {
				return err
			}
			if visible == 0 {
				continue // Karpenter's receive would long-poll 20 s for nothing
			}
			busy = true
			if err := c.Controller.Reconcile(ctx); err != nil {
				return fmt.Errorf("the controller of %s: %w", c.Name, err)
			}
		}
		if !busy {
			return nil
		}
	}
	return fmt.Errorf("the fleet did not settle in %d rounds", rounds)
}

// Left is every queue that still holds messages, visible or in flight, with their count: the central queue and
// every cluster's.
func (f *Fleet) Left(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	n, err := f.Bus.ESM.Left(ctx)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		out[harness.CentralQueue] = n
	}
	for _, c := range f.Clusters {
		visible, hidden, err := c.depth(ctx)
		if err != nil {
			return nil, err
		}
		if visible+hidden > 0 {
			out[c.Queue] = visible + hidden
		}
	}
	return out, nil
}

func (c *Cluster) depth(ctx context.Context) (visible, hidden int, err error) {
	u, err := c.URL(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("the queue of %s: %w", c.Name, err)
	}
	out, err := c.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &u, AttributeNames: []types.QueueAttributeName{
		types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
	}})
	if err != nil {
		return 0, 0, fmt.Errorf("the queue of %s: %w", c.Name, err)
	}
	visible, _ = strconv.Atoi(out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessages)])
	hidden, _ = strconv.Atoi(out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessagesNotVisible)])
	return visible, hidden, nil
}

// State is what a cluster's Karpenter did to one instance.
type State struct {
	// Deleting: its NodeClaim has a deletion timestamp (Karpenter deleted it; the finalizer holds it for the
	// termination controller). Gone: it no longer exists at all.
	Deleting, Gone bool
	// Annotations Karpenter added to the NodeClaim (a termination timestamp, where a version does that).
	Annotated bool
	// Reported: Karpenter published an event about the NodeClaim or its Node (e.g. RebalanceRecommendation).
	Reported bool
	// Unavailable: the cluster's caches hold the instance's offering unavailable.
	Unavailable bool
	// NodeChanged: the Node is gone or being deleted (the interruption controller never touches Nodes).
	NodeChanged bool
}

func (s State) String() string {
	var on []string
	for name, v := range map[string]bool{"deleting": s.Deleting, "gone": s.Gone, "annotated": s.Annotated, "reported": s.Reported, "unavailable": s.Unavailable, "node changed": s.NodeChanged} {
		if v {
			on = append(on, name)
		}
	}
	slices.Sort(on)
	if len(on) == 0 {
		return "untouched"
	}
	return fmt.Sprint(on)
}

// States reads every instance of every cluster: cluster -> instance id -> state.
func (f *Fleet) States(ctx context.Context) (map[string]map[string]State, error) {
	out := map[string]map[string]State{}
	for _, c := range f.Clusters {
		out[c.Name] = map[string]State{}
		reported := c.Recorder.Objects()
		for _, in := range c.Instances {
			var s State
			nc := &karpv1.NodeClaim{}
			switch err := c.Kube.Get(ctx, client.ObjectKey{Name: "nc-" + in.ID}, nc); {
			case err == nil:
				s.Deleting = !nc.DeletionTimestamp.IsZero()
				s.Annotated = len(nc.Annotations) > 0
			case isNotFound(err):
				s.Gone = true
			default:
				return nil, err
			}
			n := &corev1.Node{}
			switch err := c.Kube.Get(ctx, client.ObjectKey{Name: "node-" + in.ID}, n); {
			case err == nil:
				s.NodeChanged = !n.DeletionTimestamp.IsZero()
			case isNotFound(err):
				s.NodeChanged = true
			default:
				return nil, err
			}
			s.Reported = reported["nc-"+in.ID] || reported["node-"+in.ID]
			s.Unavailable = c.Controller.Unavailable(in)
			out[c.Name][in.ID] = s
		}
	}
	return out, nil
}

func isNotFound(err error) bool {
	var status interface{ Status() metav1.Status }
	return errors.As(err, &status) && status.Status().Reason == metav1.StatusReasonNotFound
}

// Recorder is the Kubernetes event recorder Karpenter's events.Recorder publishes through: it keeps which
// objects each event was about.
type Recorder struct {
	mu      sync.Mutex
	objects map[string]bool
	reasons []string
}

func (r *Recorder) note(obj runtime.Object, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.objects == nil {
		r.objects = map[string]bool{}
	}
	if o, ok := obj.(client.Object); ok {
		r.objects[o.GetName()] = true
	}
	r.reasons = append(r.reasons, reason)
}

// Event records an event (record.EventRecorder).
func (r *Recorder) Event(obj runtime.Object, _, reason, _ string) { r.note(obj, reason) }

// Eventf records an event (record.EventRecorder).
func (r *Recorder) Eventf(obj runtime.Object, _, reason, _ string, _ ...any) { r.note(obj, reason) }

// AnnotatedEventf records an event (record.EventRecorder).
func (r *Recorder) AnnotatedEventf(obj runtime.Object, _ map[string]string, _, reason, _ string, _ ...any) {
	r.note(obj, reason)
}

// Objects are the names of the objects events were published about.
func (r *Recorder) Objects() map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.objects)
}

// URL is the queue URL of c, as Karpenter resolves it at start-up.
func (c *Cluster) URL(ctx context.Context) (string, error) {
	out, err := c.SQS.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: &c.Queue})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.QueueUrl), nil
}

// interceptorClient is kube with every Delete reported to onDelete (the object's name) and every List by an
// exact field to onList (the field and its value), before the client carries them out.
func interceptorClient(kube client.Client, onDelete func(name string), onList func(field, value string)) client.Client {
	return interceptor.NewClient(kube.(client.WithWatch), interceptor.Funcs{
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			onDelete(obj.GetName())
			return c.Delete(ctx, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			lo := &client.ListOptions{}
			lo.ApplyOptions(opts)
			if lo.FieldSelector != nil {
				for _, r := range lo.FieldSelector.Requirements() {
					onList(r.Field, r.Value)
				}
			}
			return c.List(ctx, list, opts...)
		},
	})
}

// Reconciler is a version's interruption controller: its Reconcile's result type differs between versions
// (controller-runtime's reconcile.Result, then operatorpkg's reconciler.Result).
type Reconciler[R any] interface {
	Reconcile(ctx context.Context) (R, error)
}

// Adapt makes ctl a judge's Controller: each Reconcile runs with the options that name its queue, queue, as
// settings.interruptionQueue does (its SQS provider finds the queue by that name on its first Reconcile), and
// unavailable reads the version's own caches.
func Adapt[R any](ctl Reconciler[R], queue string, unavailable func(Instance) bool) Controller {
	return &adapted[R]{ctl: ctl, opts: &options.Options{InterruptionQueue: queue}, unavailable: unavailable}
}

type adapted[R any] struct {
	ctl         Reconciler[R]
	opts        *options.Options
	unavailable func(Instance) bool
}

func (a *adapted[R]) Reconcile(ctx context.Context) error {
	_, err := a.ctl.Reconcile(options.ToContext(ctx, a.opts))
	return err
}

func (a *adapted[R]) Unavailable(in Instance) bool { return a.unavailable(in) }
