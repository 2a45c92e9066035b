package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/shardplan"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/fleet"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/engine/standin"
)

// TestFleetFootprint measures what one stack of a fleet costs the real engine (make fleet, docs/performance.md,
// "One stack in the real engine"): for each size, the wall time of pulumi preview (and of pulumi up, for the sizes
// KIB_FLEET_UP names), the peak resident and proportional memory of the whole process tree (this process, which
// serves the program inline as the Go host would run it, the CLI and every plugin it starts) and the number of provider
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
	// The guard: a stack too large for this machine is stopped before the kernel's OOM killer picks a victim
	// (which may be anything on the machine), and its row says so.
	floor := int64(1 << 30)
	if v := os.Getenv("KIB_FLEET_FLOOR_MB"); v != "" {
		mb, err := strconv.Atoi(v)
		if err != nil || mb < 1 {
			t.Fatalf("KIB_FLEET_FLOOR_MB: %q is not a size in MB", v)
		}
		floor = int64(mb) << 20
	}
	var rows []string
	run := func(name, what string, cfg map[string]string) {
		// The default budget, as a team's stack would have; the sized stack's own once it has been refused.
		oneStack := cfg[config.Namespace+":providerBudgetMB"]
		delete(cfg, config.Namespace+":providerBudgetMB")
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
		// measure runs op and adds its row; refused, a preview the program refuses (its size past providerBudgetMB),
		// which then has its own row.
		measure := func(op string, f func() error, refused bool) bool {
			command := "`pulumi " + op + "`"
			if refused {
				command += ", refused (default providerBudgetMB)"
			}
			w := watch(os.Getpid(), floor)
			start := time.Now()
			err := f()
			elapsed := time.Since(start)
			m := w.stop()
			if m.guarded {
				rows = append(rows, fmt.Sprintf("| %s | %s | %d when stopped | stopped after %.1f s | over this machine: %.2f GB resident, %.2f GB proportional when fewer than %d MB were left |",
					what, command, m.providers, elapsed.Seconds(), gb(m.rss), gb(m.pss), floor>>20))
				t.Log(rows[len(rows)-1])
				return false
			}
			switch {
			case refused && (err == nil || !strings.Contains(err.Error(), "past providerBudgetMB")):
				t.Fatalf("%s %s, past the default providerBudgetMB by shardplan: not refused for its size: %v", what, op, err)
			case !refused && err != nil:
				t.Fatalf("%s %s: %v", what, op, err)
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %d | %.1f s | %.2f GB | %.2f GB |", what, command, m.providers, elapsed.Seconds(), gb(m.rss), gb(m.pss)))
			t.Log(rows[len(rows)-1])
			return true
		}
		preview := func() error { _, err := s.preview(); return err }
		if c, err := config.Load(name, hub, config.Values(cfg, config.Namespace)); err != nil {
			t.Fatal(err)
		} else if !shardplan.Of(c).Fits(c.ProviderBudgetMB) {
			// Past the limit the program refuses the stack; what the refusal costs, then the stack itself, as a
			// machine with the memory for it would run it.
			measure("preview", preview, true)
			keys["providerBudgetMB"] = oneStack
			s.configure(keys)
		}
		if measure("preview", preview, false) && up[name] {
			measure("up", func() error { s.up(); return nil }, false)
		}
	}
	for _, n := range clusters {
		run(fmt.Sprintf("c%d", n), fmt.Sprintf("%d install clusters", n), fleet.Clusters(n))
	}
	for _, n := range accounts {
		run(fmt.Sprintf("a%d", n), fmt.Sprintf("%d member accounts, a cluster each", n), fleet.Members(n, false))
	}
	table := "| stack | command | provider processes | time | peak resident memory (RSS), whole tree | peak proportional memory (PSS), whole tree |\n|---|---|---|---|---|---|\n" + strings.Join(rows, "\n") + "\n"
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

func gb(b int64) float64 { return float64(b) / (1 << 30) }

// watcher samples a process tree every 100 ms: the peaks of its summed resident memory (RSS) and of its summed
// proportional memory (PSS), and the most provider processes (pulumi-resource-*) alive at once. RSS counts the
// pages processes share (the text of a plugin binary that a thousand processes run) once per process; PSS shares
// them out, so it sums to what the tree takes of the machine. When the machine has less than floor bytes
// available, the watcher kills the tree's provider processes and says so: the CLI then fails the operation as
// it fails on a provider that died, and ends its event stream (killed itself, it would leave the Automation API
// waiting on that stream for good).
type watcher struct {
	done  chan struct{}
	wg    sync.WaitGroup
	floor int64
	peak  measured
}

type measured struct {
	rss, pss  int64
	providers int
	guarded   bool
}

func watch(root int, floor int64) *watcher {
	w := &watcher{done: make(chan struct{}), floor: floor}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			m, providers := sample(root)
			w.peak.rss, w.peak.pss, w.peak.providers = max(w.peak.rss, m.rss), max(w.peak.pss, m.pss), max(w.peak.providers, m.providers)
			if avail := available(); avail >= 0 && avail < w.floor && !w.peak.guarded {
				w.peak.guarded = true
				for _, pid := range providers {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			select {
			case <-w.done:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

func (w *watcher) stop() measured {
	close(w.done)
	w.wg.Wait()
	return w.peak
}

// available is the kernel's estimate of the memory a new process could take without swapping (MemAvailable in
// /proc/meminfo), in bytes; -1 when it cannot be read.
func available() int64 { return kB("/proc/meminfo", "MemAvailable")[0] }

// sample reads /proc: the resident and proportional memory of root and all its descendants, how many of them
// are providers, and the providers' pids.
func sample(root int) (m measured, providers []int) {
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
	for pid := range parent {
		if !inTree(pid) {
			continue
		}
		// Rss and Pss of smaps_rollup (Linux 4.14 and later): one read for both.
		if v := kB(fmt.Sprintf("/proc/%d/smaps_rollup", pid), "Rss", "Pss"); v[0] >= 0 && v[1] >= 0 {
			m.rss, m.pss = m.rss+v[0], m.pss+v[1]
		}
		if cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && strings.Contains(filepath.Base(strings.SplitN(string(cmd), "\x00", 2)[0]), "pulumi-resource-") {
			m.providers++
			providers = append(providers, pid)
		}
	}
	return m, providers
}

// kB reads the values of keys in a /proc file of "Key: N kB" lines (meminfo, smaps_rollup), in bytes, in the
// order of keys: -1 for a key the file does not hold, or for all of them when it cannot be read.
func kB(path string, keys ...string) []int64 {
	out := make([]int64, len(keys))
	for i := range out {
		out[i] = -1
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		key, rest, ok := strings.Cut(line, ":")
		if i := slices.Index(keys, key); ok && i >= 0 {
			if f := strings.Fields(rest); len(f) > 0 {
				if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					out[i] = n << 10
				}
			}
		}
	}
	return out
}
