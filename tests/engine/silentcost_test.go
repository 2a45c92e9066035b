package engine_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/engine/apistub"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/engine/standin"
)

// farLink is a large cluster's API server reached from a distant runner: 150 ms a round trip, 100 Mbit/s, and an
// OpenAPI v2 document of 12 MB (a cluster of many CRDs; Kubernetes' own is about 3 MB as protobuf).
var farLink = apistub.Link{RTT: 150 * time.Millisecond, BytesPerSec: 100e6 / 8, DocumentBytes: 12 << 20}

// TestASilentClusterCostsAPreview measures, through the real CLI, the real pulumi-kubernetes provider and the program's
// real reach probe, what one cluster whose API server never answers adds to a stack's preview (make bench,
// docs/performance.md, "Clusters out of reach"): KIB_SILENT_CLUSTERS install clusters in reach, one of them a large
// cluster reached over farLink, and one more, quiet, are deployed; a preview is timed with every cluster in reach,
// then with quiet silenced (it accepts connections and never answers), in one run; quiet answering again, a preview
// has no change. The far cluster is in reach at every preview: its document arrives within the provider's timeout.
// Skipped unless a size is given: the figures are the docs', not an assertion on time.
func TestASilentClusterCostsAPreview(t *testing.T) {
	n := 0
	if v := os.Getenv("KIB_SILENT_CLUSTERS"); v != "" {
		if _, err := fmt.Sscan(v, &n); err != nil || n < 1 {
			t.Fatalf("KIB_SILENT_CLUSTERS: %q is not a number of clusters", v)
		}
	}
	if n == 0 {
		t.Skip("no size: make bench sets KIB_SILENT_CLUSTERS")
	}
	rig := newKubernetesRig(t)
	var clusters []any
	var names []string
	for i := range n {
		names = append(names, fmt.Sprintf("c%03d", i))
	}
	names = append(names, "far", "quiet")
	for _, name := range names {
		clusters = append(clusters, cluster(name, nil))
	}
	servers, endpoints := apiServers(t, names)
	servers["far"].Far(farLink)
	world := func(unreachable []string) standin.World {
		return standin.World{Region: region, Account: hub, SpotServiceLinkedRole: []string{hub}, Config: clustersConfig(clusters...),
			Clusters: endpoints, Versions: versions(t), Unreachable: unreachable}
	}
	e := newEnv(t, world(nil))
	e.Path, e.Extra = []string{rig.Tools}, rig.Extra
	s := newStackWith(t, e, fmt.Sprintf("silent%d", n), rig.options())
	s.configure(map[string]any{"namePrefix": "kib-silent", "clusters": clusters})
	if _, _, err := s.upWith(); err != nil {
		t.Fatal(err)
	}
	outOfReach := func(warnings []warning) []string {
		var out []string
		for _, w := range unreachable(warnings) {
			for _, name := range names {
				if strings.Contains(w.Message, "("+name+",") {
					out = append(out, name)
				}
			}
		}
		return out
	}
	preview := func(what string, want []string) time.Duration {
		start := time.Now()
		_, warnings, err := s.previewWarned()
		took := time.Since(start)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := outOfReach(warnings); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: out of reach %v, want %v", what, got, want)
		}
		return took
	}
	preview("a first preview (the chart cached)", nil)
	inReach := preview("every cluster in reach", nil)
	if err := servers["quiet"].Silence(); err != nil {
		t.Fatal(err)
	}
	e.SetWorld(t, world([]string{"quiet"}))
	silent := preview("quiet silent", []string{"quiet"})
	if err := servers["quiet"].Restart(); err != nil {
		t.Fatal(err)
	}
	e.SetWorld(t, world(nil))
	steps, _, err := s.previewWarned()
	if err != nil {
		t.Fatal(err)
	}
	none(t, "the preview once quiet answers again", steps)

	table := fmt.Sprintf("| clusters in reach | `pulumi preview`, every cluster in reach | the same, one API server silent | what the silent one adds |\n"+
		"|---:|---:|---:|---:|\n| %d (one of them far: %s a round trip, %d Mbit/s, an OpenAPI document of %d MB) | %.1f s | %.1f s | %.1f s |\n",
		n+1, farLink.RTT, farLink.BytesPerSec*8/1e6, farLink.DocumentBytes>>20, inReach.Seconds(), silent.Seconds(), (silent - inReach).Seconds())
	fmt.Print(table)
	if out := os.Getenv("KIB_SILENT_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
