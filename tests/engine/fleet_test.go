package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/offline/fleet"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/engine/standin"
)

// TestFleetFootprint measures what one stack of a fleet costs the real engine (make fleet, docs/performance.md,
// "One stack in the real engine"): for each size, the wall time of pulumi preview (and of pulumi up, for the sizes
// KIB_FLEET_UP names), the peak resident memory of the whole process tree (this process, which serves the
// program inline as the Go host would run it, the CLI and every plugin it starts) and the number of provider
// processes. Sizes: KIB_FLEET_CLUSTERS install clusters in the hub's account, KIB_FLEET_ACCOUNTS member accounts
// with one install cluster each (organization.id), comma-separated. The providers are the project's stand-ins,
// far smaller than pulumi-aws or pulumi-kubernetes: the memory is a lower bound, the process count exact, since
// the engine starts one process per provider configuration whatever the plugin. Skipped unless a size is given.
func TestFleetFootprint(t *testing.T) {
	clusters, accounts := sizes(t, "KIB_FLEET_CLUSTERS"), sizes(t, "KIB_FLEET_ACCOUNTS")
	if len(clusters)+len(accounts) == 0 {
		t.Skip("no size: make fleet sets KIB_FLEET_CLUSTERS and KIB_FLEET_ACCOUNTS")
	}
	up := map[string]bool{}
	for _, s := range strings.Split(os.Getenv("KIB_FLEET_UP"), ",") {
		up[strings.TrimSpace(s)] = true
	}
	var rows []string
	run := func(name, what string, cfg map[string]string) {
		keys := map[string]any{}
		world := map[string]string{}
		for k, v := range cfg {
			if k, ok := strings.CutPrefix(k, config.Namespace+":"); ok {
				keys[k] = v
				world[config.Namespace+":"+k] = v
			}
		}
		keys["namePrefix"] = "kib-" + name
		e := newEnv(t, standin.World{Region: region, Account: hub, SpotServiceLinkedRole: accountsOf(cfg), Config: world, Versions: versions(t)})
		s := newStack(t, e, name)
		s.configure(keys)
		measure := func(op string, f func() error) {
			w := watch(os.Getpid())
			start := time.Now()
			err := f()
			elapsed := time.Since(start)
			peak, providers := w.stop()
			if err != nil {
				t.Fatalf("%s %s: %v", what, op, err)
			}
			rows = append(rows, fmt.Sprintf("| %s | `pulumi %s` | %d | %.1f s | %.2f GB |", what, op, providers, elapsed.Seconds(), float64(peak)/(1<<30)))
			t.Log(rows[len(rows)-1])
		}
		measure("preview", func() error { _, err := s.preview(); return err })
		if up[name] {
			measure("up", func() error { s.up(); return nil })
		}
	}
	for _, n := range clusters {
		run(fmt.Sprintf("c%d", n), fmt.Sprintf("%d install clusters", n), fleet.Clusters(n))
	}
	for _, n := range accounts {
		run(fmt.Sprintf("a%d", n), fmt.Sprintf("%d member accounts, a cluster each", n), fleet.Members(n, false))
	}
	table := "| stack | command | provider processes | time | peak memory, whole tree |\n|---|---|---|---|---|\n" + strings.Join(rows, "\n") + "\n"
	fmt.Print(table)
	if out := os.Getenv("KIB_FLEET_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func sizes(t *testing.T, key string) []int {
	t.Helper()
	var out []int
	for _, s := range strings.Split(os.Getenv(key), ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("%s: %q is not a size", key, s)
		}
		out = append(out, n)
	}
	return out
}

// accountsOf are the hub and every member account a fleet's configuration names: the stand-ins' world gives them
// the EC2 Spot service-linked role, so that only the fleet's own resources are measured.
func accountsOf(cfg map[string]string) []string {
	out := []string{hub}
	for i := 0; ; i++ {
		id := fleet.Account(i)
		if !strings.Contains(cfg[config.Namespace+":accounts"], `"`+id+`"`) {
			return out
		}
		out = append(out, id)
	}
}

// watcher samples a process tree every 100 ms: the peak of its summed resident memory, and the most provider
// processes (pulumi-resource-*) alive at once.
type watcher struct {
	done      chan struct{}
	wg        sync.WaitGroup
	peak      int64
	providers int
}

func watch(root int) *watcher {
	w := &watcher{done: make(chan struct{})}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			rss, providers := sample(root)
			w.peak, w.providers = max(w.peak, rss), max(w.providers, providers)
			select {
			case <-w.done:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

func (w *watcher) stop() (peak int64, providers int) {
	close(w.done)
	w.wg.Wait()
	return w.peak, w.providers
}

// sample reads /proc: the resident memory of root and all its descendants, and how many of them are providers.
func sample(root int) (rss int64, providers int) {
	entries, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after its last ')'.
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 {
			parent[pid], _ = strconv.Atoi(fields[1])
		}
	}
	inTree := func(pid int) bool {
		for p := pid; p > 1; p = parent[p] {
			if p == root {
				return true
			}
		}
		return false
	}
	page := int64(os.Getpagesize())
	for pid := range parent {
		if !inTree(pid) {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 1 {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			rss += n * page
		}
		if cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && strings.Contains(filepath.Base(strings.SplitN(string(cmd), "\x00", 2)[0]), "pulumi-resource-") {
			providers++
		}
	}
	return rss, providers
}
