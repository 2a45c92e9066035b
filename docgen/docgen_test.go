package docgen_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/docgen"
)

// TestDocumentsAreCurrent: every generated block of the committed documents is what the code says now (make docs
// rewrites them).
func TestDocumentsAreCurrent(t *testing.T) {
	root := ".."
	files, err := docgen.Documents(root)
	if err != nil {
		t.Fatal(err)
	}
	blocks := 0
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		blocks += strings.Count(string(b), "<!-- generated:")
		want, err := docgen.Apply(string(b))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if want != string(b) {
			t.Errorf("%s: a generated block differs from the code: run make docs and commit the result", f)
		}
	}
	for _, bl := range docgen.Blocks {
		if n := countBlock(t, root, files, bl.Name); n == 0 {
			t.Errorf("no document holds the generated block %s", bl.Name)
		}
	}
	if blocks == 0 {
		t.Error("no generated block in any document")
	}
}

func countBlock(t *testing.T, root string, files []string, name string) int {
	t.Helper()
	n := 0
	for _, f := range files {
		b, _ := os.ReadFile(filepath.Join(root, f))
		n += strings.Count(string(b), "<!-- generated:"+name+" -->")
	}
	return n
}

func TestApplyRefusesBadMarkers(t *testing.T) {
	for _, text := range []string{
		"<!-- generated:nothing -->\nx\n<!-- /generated:nothing -->\n",
		"<!-- generated:karpenter-versions -->\nx\n",
		"<!-- generated:karpenter-versions -->\nx\n<!-- /generated:other -->\n",
	} {
		if _, err := docgen.Apply(text); err == nil {
			t.Errorf("Apply accepted %q", text)
		}
	}
}

// TestNoBrokenLinks: every relative link of the documents names a file that exists, and an anchor one of its
// headings makes.
func TestNoBrokenLinks(t *testing.T) {
	broken, err := docgen.BrokenLinks("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range broken {
		t.Error(b)
	}
}

func TestAnchorsAreGitHubs(t *testing.T) {
	for heading, want := range map[string]string{
		"One bus for an organization":            "one-bus-for-an-organization",
		"Events dropped as no_owner or no_queue": "events-dropped-as-no_owner-or-no_queue",
		"The EC2 Spot service-linked role":       "the-ec2-spot-service-linked-role",
		"Moving to the next Karpenter release":   "moving-to-the-next-karpenter-release",
		"Costs: what, and why?":                  "costs-what-and-why",
		"1.15 (default)":                         "115-default",
	} {
		if got := docgen.Anchor(heading); got != want {
			t.Errorf("Anchor(%q) = %q, want %q", heading, got, want)
		}
	}
}

// TestBrokenLinksFindsThem: a missing file, a missing anchor (here and there), a repeated heading's second
// anchor, links in code ignored, other sites not followed.
func TestBrokenLinksFindsThem(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "# Top\n\n## Setup\n\n## Setup\n\n[a](#setup) [b](#setup-1) [c](#nowhere) [d](docs/ops.md#alarms)"+
		" [e](docs/ops.md#missing) [f](docs/gone.md) [g](https://example.com/x#y) `[h](#code)`\n")
	write("docs/ops.md", "# Operations\n\n## `Alarms`\n\n<a id=\"own\"></a>[back](../README.md#top) [up](../../x.md) [own](#own)\n")
	broken, err := docgen.BrokenLinks(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"README.md: #nowhere: no heading has the anchor #nowhere",
		"README.md: docs/ops.md#missing: no heading has the anchor #missing",
		"README.md: docs/gone.md: no such file",
		"docs/ops.md: ../../x.md: outside the repository",
	}
	slices.Sort(want)
	slices.Sort(broken)
	if !slices.Equal(broken, want) {
		t.Errorf("broken =\n%s\nwant\n%s", strings.Join(broken, "\n"), strings.Join(want, "\n"))
	}
}

// TestMermaidDiagramsParse: every mermaid diagram of the documents is one mermaid's own parser reads, and a
// broken one is caught.
func TestMermaidDiagramsParse(t *testing.T) {
	diagrams, err := docgen.Diagrams("..")
	if err != nil {
		t.Fatal(err)
	}
	if len(diagrams) == 0 {
		t.Fatal("no mermaid diagram found in the documents")
	}
	broken := docgen.Diagram{Where: "fixture:1", Text: "flowchart LR\n    a[x] --> --> b["}
	problems, err := docgen.ParseMermaid(context.Background(), "mermaid", append(diagrams, broken))
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) == 0 || problems[len(problems)-1].Where != "fixture:1" {
		t.Fatalf("the broken fixture was not refused: %+v", problems)
	}
	for _, p := range problems[:len(problems)-1] {
		t.Errorf("%s: %s", p.Where, p.Error)
	}
}

// TestConfigReferenceIsTheValidators: the reference's ranges, defaults and messages are what the configuration
// says, found by probing it.
func TestConfigReferenceIsTheValidators(t *testing.T) {
	ref, err := docgen.ConfigReference()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| `router.batchSize` | integer | `10` | 1 to 10000 | `0`: 0 is out of range 1 to 10000; `10001`: 10001 is out of range 1 to 10000 |",
		"| `router.maximumBatchingWindowSeconds` | integer | `0` | 0 to 300 |",
		"| `clusters[].name` | string | required: is required |",
		"| `heartbeat.enabled` | boolean | `true` |",
		"`router.logRetentionDays` | integer | `30` | between 14 and 30, not all |",
	} {
		if !strings.Contains(ref, want) {
			t.Errorf("the reference does not say %q", want)
		}
	}
}

// TestHandWrittenDefaultsAreTheCode: no page states, outside its generated blocks, a default of a stack key or a
// router variable that differs from the code's ("`router.maximumConcurrency` (20 by default", "`heartbeat.rate`
// (5 minutes by default"): a changed default cannot leave a page behind.
func TestHandWrittenDefaultsAreTheCode(t *testing.T) {
	root := ".."
	files, err := docgen.Documents(root)
	if err != nil {
		t.Fatal(err)
	}
	defaults := docgen.Defaults()
	found := 0
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		agree, differ := docgen.StatedDefaults(string(b), defaults)
		found += len(agree) + len(differ)
		for _, d := range differ {
			t.Errorf("%s states the default of %s as %s; the code's is %s", f, d.Key, d.Says, d.Code)
		}
	}
	t.Logf("%d stated defaults checked", found)
	if found < 3 {
		t.Errorf("only %d stated defaults found in the documents: the scan finds nothing", found)
	}
	// The scan itself, on a page that states the old defaults.
	_, differ := docgen.StatedDefaults("Lambda runs up to `router.maximumConcurrency` instances (5 by default), "+
		"every `heartbeat.rate` (7 minutes by default); `SEND_CONCURRENCY` (default 8).", defaults)
	if len(differ) != 3 {
		t.Errorf("stale defaults found: %+v, want all three", differ)
	}
}
