package deadline

import (
	"context"
	"testing"
	"time"
)

func TestBefore(t *testing.T) {
	for _, tc := range []struct {
		name    string
		left    time.Duration // before ctx's deadline; 0: none
		reserve time.Duration
		share   int
		want    time.Duration // what the returned deadline leaves, about
	}{
		{"the reserve, when time is ample", 30 * time.Second, 2 * time.Second, 10, 2 * time.Second},
		{"a share of what is left, when less", 10 * time.Second, 2 * time.Second, 10, time.Second},
		{"the share, at the bound", 20 * time.Second, 2 * time.Second, 10, 2 * time.Second},
		{"no deadline", 0, 2 * time.Second, 10, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := context.Background()
			var end time.Time
			if tc.left > 0 {
				end = time.Now().Add(tc.left)
				var cancel context.CancelFunc
				parent, cancel = context.WithDeadline(parent, end)
				defer cancel()
			}
			ctx, cancel := Before(parent, tc.reserve, tc.share)
			got, ok := ctx.Deadline()
			if tc.left == 0 {
				if ok {
					t.Fatalf("deadline %v; want none", got)
				}
				cancel()
				if ctx.Err() == nil {
					t.Fatal("cancel did not end the context")
				}
				return
			}
			defer cancel()
			// The time left is read after the parent's deadline was set: the reserve computed may be short of want by that much.
			if leaves := end.Sub(got); leaves > tc.want || leaves < tc.want-50*time.Millisecond {
				t.Errorf("the deadline leaves %v of the parent's; want %v", leaves, tc.want)
			}
		})
	}
}

// TestReturning: the context an invocation returns within ends returnReserve before its deadline, or a twentieth of
// what is left when that is less.
func TestReturning(t *testing.T) {
	for left, want := range map[time.Duration]time.Duration{30 * time.Second: returnReserve, 2 * time.Second: 100 * time.Millisecond} {
		end := time.Now().Add(left)
		parent, cancelParent := context.WithDeadline(context.Background(), end)
		ctx, cancel := Returning(parent)
		got, _ := ctx.Deadline()
		cancel()
		cancelParent()
		if leaves := end.Sub(got); leaves > want || leaves < want-50*time.Millisecond {
			t.Errorf("%v left: the deadline leaves %v; want %v", left, leaves, want)
		}
	}
}
