package canary

import (
	"sync"
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestOnePerClusterPerInterval(t *testing.T) {
	c := &clock{t: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	l := NewLimiter(30*time.Second, 100, c.now)
	a, b := Key{"111111111111", "a"}, Key{"111111111111", "b"}
	other := Key{"222222222222", "a"} // the same name in another account is another queue
	steps := []struct {
		after time.Duration
		key   Key
		want  bool
	}{
		{0, a, true}, {0, a, false}, {0, b, true}, {0, other, true},
		{29 * time.Second, a, false}, {time.Second, a, true}, {10 * time.Second, a, false}, {20 * time.Second, a, true},
	}
	for i, s := range steps {
		c.t = c.t.Add(s.after)
		if got := l.Take(s.key); got != s.want {
			t.Errorf("step %d (%v): Take = %t, want %t", i, s.key, got, s.want)
		}
	}
}

func TestReleaseLetsARetryThrough(t *testing.T) {
	c := &clock{t: time.Now()}
	l := NewLimiter(time.Minute, 10, c.now)
	k := Key{"111111111111", "a"}
	if !l.Take(k) {
		t.Fatal("first canary held back")
	}
	l.Release(k)
	if !l.Take(k) {
		t.Error("a released delivery still holds back its retry")
	}
}

func TestBoundedMemory(t *testing.T) {
	c := &clock{t: time.Now()}
	l := NewLimiter(time.Minute, 3, c.now)
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		c.t = c.t.Add(time.Second)
		if !l.Take(Key{"1", n}) {
			t.Errorf("%s held back", n)
		}
		if len(l.last) > 3 {
			t.Fatalf("remembers %d deliveries, bound 3", len(l.last))
		}
	}
	// Full at each of d and e, the limiter forgot the oldest delivery, a then b, and remembers c, d and e.
	for _, n := range []string{"c", "d", "e"} {
		if l.Take(Key{"1", n}) {
			t.Errorf("%s, among the newest three, was forgotten", n)
		}
	}
	for _, n := range []string{"a", "b"} {
		if !l.Take(Key{"1", n}) {
			t.Errorf("%s, among the oldest, is still remembered: a newer one was forgotten in its place", n)
		}
	}
}

func TestConcurrentTakesGrantOne(t *testing.T) {
	l := NewLimiter(time.Hour, 100, nil)
	var mu sync.Mutex
	granted := 0
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if l.Take(Key{"1", "a"}) {
				mu.Lock()
				granted++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if granted != 1 {
		t.Errorf("%d of 50 concurrent canaries granted, want 1", granted)
	}
}
