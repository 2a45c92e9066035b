// Package canary bounds the canaries the router delivers: at most one per cluster per interval, in this router
// instance. Anyone allowed events:PutEvents on a default bus of the bus's accounts can put a canary; each
// delivered costs the cluster's Karpenter a receive and a delete, so a loop of them could keep it busy with no-ops
// while a spot warning waits behind them. The heartbeat puts one per cluster per beat (a minute at the fastest),
// so an interval well below the fastest beat never holds a heartbeat back.
package canary

import (
	"sync"
	"time"
)

// Limiter says, for each canary delivery, whether the interval since the cluster's last one has passed. It is
// safe for concurrent use.
type Limiter struct {
	interval time.Duration
	now      func() time.Time
	max      int

	mu   sync.Mutex
	last map[Key]time.Time
}

// Key is one cluster queue: the account it is in and the cluster.
type Key struct{ Account, Cluster string }

// NewLimiter returns a limiter of one delivery per key per interval, remembering at most max keys at once
// (older deliveries are forgotten first, which can only let a canary through early, never hold one back);
// now defaults to time.Now.
func NewLimiter(interval time.Duration, max int, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{interval: interval, now: now, max: max, last: map[Key]time.Time{}}
}

// Take reserves k's delivery now and reports true, or reports false when k had one less than an interval ago.
func (l *Limiter) Take(k Key) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if t, ok := l.last[k]; ok && now.Sub(t) < l.interval {
		return false
	}
	if len(l.last) >= l.max {
		l.forget(now)
	}
	l.last[k] = now
	return true
}

// Release gives back k's reservation, for a delivery that failed and will be retried.
func (l *Limiter) Release(k Key) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.last, k)
}

// forget drops the deliveries older than an interval, and, if that is not enough, the oldest ones.
func (l *Limiter) forget(now time.Time) {
	var oldest Key
	var oldestAt time.Time
	for k, t := range l.last {
		if now.Sub(t) >= l.interval {
			delete(l.last, k)
		} else if oldestAt.IsZero() || t.Before(oldestAt) {
			oldest, oldestAt = k, t
		}
	}
	if len(l.last) >= l.max && !oldestAt.IsZero() {
		delete(l.last, oldest)
	}
}
