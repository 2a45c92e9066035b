package engine_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/auto/optpreview"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optup"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/engine/standin"
)

// TestOutOfReachFleet measures what clusters whose API servers never answer cost a stack, through the real CLI, the
// real pulumi-kubernetes provider and the program's real reach probe (make reach-fleet, docs/performance.md,
// "Clusters out of reach"): KIB_REACH_CLUSTERS install clusters are deployed in reach (each API server an apistub),
// then every one is silenced (it accepts connections and never answers: apistub.Silence), and a pulumi preview and a
// pulumi up that change nothing are timed. Each must succeed, warning of every cluster. Skipped unless a size is
// given: the figures are the docs', not an assertion on time. KIB_REACH_PARALLEL sets the operations' --parallel
// (the CLI's default, 4 per CPU, otherwise).
func TestOutOfReachFleet(t *testing.T) {
	n := 0
	if v := os.Getenv("KIB_REACH_CLUSTERS"); v != "" {
		if _, err := fmt.Sscan(v, &n); err != nil || n < 1 {
			t.Fatalf("KIB_REACH_CLUSTERS: %q is not a number of clusters", v)
		}
	}
	if n == 0 {
		t.Skip("no size: make reach-fleet sets KIB_REACH_CLUSTERS")
	}
	parallel := 0
	if v := os.Getenv("KIB_REACH_PARALLEL"); v != "" {
		if _, err := fmt.Sscan(v, &parallel); err != nil || parallel < 1 {
			t.Fatalf("KIB_REACH_PARALLEL: %q is not a number of operations", v)
		}
	}
	var upOpts []optup.Option
	var previewOpts []optpreview.Option
	at := "the CLI's default --parallel"
	if parallel > 0 {
		upOpts, previewOpts = []optup.Option{optup.Parallel(parallel)}, []optpreview.Option{optpreview.Parallel(parallel)}
		at = fmt.Sprintf("--parallel %d", parallel)
	}
	rig := newKubernetesRig(t)
	var clusters []any
	var names []string
	for i := range n {
		name := fmt.Sprintf("c%03d", i)
		clusters = append(clusters, cluster(name, nil))
		names = append(names, name)
	}
	servers, endpoints := apiServers(t, names)
	world := func(unreachable []string) standin.World {
		return standin.World{Region: region, Account: hub, SpotServiceLinkedRole: []string{hub}, Config: clustersConfig(clusters...),
			Clusters: endpoints, Versions: versions(t), Unreachable: unreachable}
	}
	e := newEnv(t, world(nil))
	e.Path, e.Extra = []string{rig.Tools}, rig.Extra
	if v := os.Getenv("PULUMI_PARALLEL_DIFF"); v != "" { // the engine's diffs in parallel, as the CLI takes it
		e.Extra["PULUMI_PARALLEL_DIFF"] = v
		at += ", PULUMI_PARALLEL_DIFF=" + v
	}
	opts := rig.options()
	s := newStackWith(t, e, fmt.Sprintf("reach%d", n), opts)
	s.configure(map[string]any{"namePrefix": "kib-reach", "clusters": clusters})

	var rows []string
	timed := func(what string, f func() error) {
		start := time.Now()
		if err := f(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		rows = append(rows, fmt.Sprintf("| %d | %s | %s | %.1f s |", n, what, at, time.Since(start).Seconds()))
		t.Log(rows[len(rows)-1])
	}
	timed("`pulumi up`, every cluster in reach (installs each release)", func() error { _, _, err := s.upWith(upOpts...); return err })
	timed("`pulumi preview`, every cluster in reach, no change", func() error { _, _, err := s.previewWarned(previewOpts...); return err })

	for _, srv := range servers {
		if err := srv.Silence(); err != nil {
			t.Fatal(err)
		}
	}
	e.SetWorld(t, world(names))
	warned := func(warnings []warning) error {
		if got := len(unreachable(warnings)); got != n {
			return fmt.Errorf("%d clusters warned of as out of reach, want %d", got, n)
		}
		return nil
	}
	timed("`pulumi preview`, every API server silent, no change", func() error {
		_, warnings, err := s.previewWarned(previewOpts...)
		if err != nil {
			return err
		}
		return warned(warnings)
	})
	timed("`pulumi up`, every API server silent, no change", func() error {
		_, warnings, err := s.upWith(upOpts...)
		if err != nil {
			return err
		}
		return warned(warnings)
	})
	table := "| clusters | command | parallel | time |\n|---|---|---|---|\n" + strings.Join(rows, "\n") + "\n"
	fmt.Print(table)
	if out := os.Getenv("KIB_REACH_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
