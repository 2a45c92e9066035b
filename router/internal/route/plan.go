package route

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/event"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/accounts"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/forward"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/owner"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
)

// where is an account and a region: the scope of an instance id.
type where struct{ account, region string }

// lookups are the instance ids of the pending events to look up, per account and region (canaries name clusters,
// not instances).
func lookups(msgs []message) map[where][]string {
	ids := make(map[where][]string, 1)
	for i := range msgs {
		m := &msgs[i]
		if m.kind != anEvent || m.out.verdict != pending || m.ev.Kind == contract.KindCanary {
			continue
		}
		w := where{m.ev.Account, m.ev.Region}
		if _, ok := ids[w]; !ok && len(ids) == 0 { // sized for the usual batch: one scope, one instance a message
			ids[w] = make([]string, 0, len(msgs))
		}
		ids[w] = append(ids[w], m.ev.InstanceIDs...)
	}
	return ids
}

// owned appends to clusters, once each, the clusters event ev goes to: those its instances' owners (known) name, or
// a canary's own. Its outcome says when it goes nowhere now: retried while an owner is not known, dropped when its
// account's instances cannot be read (unknown_account) or no instance has an owner (no_owner).
func owned(ev event.Event, known map[string]owner.Owner, clusters []string) ([]string, outcome) {
	if ev.Kind == contract.KindCanary {
		return append(clusters, ev.Clusters...), outcome{} // named, not looked up
	}
	for _, id := range ev.InstanceIDs {
		o := known[id]
		if o.Err != nil {
			err := fmt.Errorf("finding owner of %s: %w", id, o.Err)
			if errors.Is(err, accounts.ErrUnknownAccount) {
				return clusters, drop(contract.ReasonUnknownAccount, err)
			}
			return clusters, retry(err) // deliver nothing now, all on redelivery
		}
		if o.Cluster != "" && !slices.Contains(clusters, o.Cluster) {
			clusters = append(clusters, o.Cluster)
		}
	}
	if len(clusters) == 0 {
		return clusters, drop(contract.ReasonNoOwner, fmt.Errorf("no instance of %v has an owner tag", ev.InstanceIDs))
	}
	return clusters, outcome{}
}

// naming is how the bus names its clusters' queues.
type naming struct {
	prefix string
	// busQueues are never a destination: an event must not loop back into the bus.
	busQueues []string
}

// queueOf is a cluster's queue name, or why no queue on the bus can bear its name.
type queueOf struct {
	name string
	err  error
}

func (n naming) queueOf(cluster string) queueOf {
	if err := queuename.ValidateCluster(cluster); err != nil {
		// A tag value no EKS cluster can have.
		return queueOf{err: fmt.Errorf("owner tag value %w", err)}
	}
	name := queuename.For(n.prefix, cluster)
	if slices.Contains(n.busQueues, name) {
		return queueOf{err: fmt.Errorf("refusing to forward the event of cluster %q into the bus's own queue %s", cluster, name)}
	}
	return queueOf{name: name}
}

// destination is the queue named name of a cluster that event ev goes to: in the account of its instance, or the one
// a canary names.
func destination(ev event.Event, name string) forward.Queue {
	account := ev.Account
	if ev.Kind == contract.KindCanary {
		account = ev.To
	}
	return forward.Queue{Account: account, Region: ev.Region, Name: name}
}

// delivery is every body bound for one queue in this batch.
type delivery struct {
	queue   forward.Queue
	cluster string
	n       int // messages bound for the queue
	msgs    []*message
	bodies  []*string
}

// bound is one message bound for one queue.
type bound struct {
	m *message
	d *delivery
}

// plan settles the pending events that go nowhere now (owned), and groups the others by destination queue: an event
// naming instances of k clusters goes to each of the k queues once; a canary to a cluster that had one less than an
// interval ago does not go there (canary.Limiter).
func (r *Router) plan(ctx context.Context, msgs []message, ownersByScope map[where]map[string]owner.Owner) []*delivery {
	var out []*delivery
	byQueue := make(map[forward.Queue]*delivery)
	queues := make(map[string]queueOf) // cluster -> its queue, worked out once a batch
	// Each message's destinations first, counted per queue, so each delivery is sized once.
	dests := make([]bound, 0, len(msgs))
	var clusters []string
	for i := range msgs {
		m := &msgs[i]
		if m.kind != anEvent || m.out.verdict != pending {
			continue
		}
		var o outcome
		if clusters, o = owned(m.ev, ownersByScope[where{m.ev.Account, m.ev.Region}], clusters[:0]); o.verdict != pending {
			r.decide(ctx, m, o)
			continue
		}
		for _, c := range clusters {
			qo, ok := queues[c]
			if !ok {
				qo = r.naming.queueOf(c)
				queues[c] = qo
			}
			if qo.err != nil {
				m.noQueue = qo.err
				continue
			}
			q := destination(m.ev, qo.name)
			if !r.takeCanary(m, q, c) {
				continue
			}
			d := byQueue[q]
			if d == nil {
				d = &delivery{queue: q, cluster: c}
				byQueue[q] = d
				out = append(out, d)
			}
			d.n++
			dests = append(dests, bound{m, d})
		}
	}
	for _, d := range out {
		d.msgs, d.bodies = make([]*message, 0, d.n), make([]*string, 0, d.n)
	}
	for _, x := range dests {
		x.d.msgs = append(x.d.msgs, x.m)
		x.d.bodies = append(x.d.bodies, &x.m.rec.Body)
	}
	return out
}
