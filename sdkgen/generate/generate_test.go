package generate

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func generated(t *testing.T, version string) map[string][]byte {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("..", "..", "provider", "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generate(text, version)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestGenerate: both SDKs carry both components and the version asked for, and the TypeScript SDK's nested files
// import the package's root from one directory up (the generators' relative paths, which pulumi/pkg v3.175.0 got
// wrong on Go 1.26; v3.259.0 gets them right).
func TestGenerate(t *testing.T) {
	files := generated(t, "v1.2.3")
	for _, name := range []string{
		"nodejs/bus.ts", "nodejs/clusterInterruption.ts", "nodejs/types/input.ts", "nodejs/types/enums/index.ts", "nodejs/package.json",
		"python/karpenter_interruption_bus/bus.py", "python/karpenter_interruption_bus/cluster_interruption.py",
		"python/karpenter_interruption_bus/_enums.py", "python/karpenter_interruption_bus/pulumi-plugin.json",
	} {
		if _, ok := files[name]; !ok {
			t.Errorf("%s not generated; generated: %v", name, slices.Sorted(maps.Keys(files)))
		}
	}
	var pkg struct{ Name, Version string }
	if err := json.Unmarshal(files["nodejs/package.json"], &pkg); err != nil {
		t.Fatal(err)
	}
	if pkg.Name != "@karpenter-interruption-bus/pulumi" || pkg.Version != "1.2.3" {
		t.Errorf("package.json names %s %s, want @karpenter-interruption-bus/pulumi 1.2.3", pkg.Name, pkg.Version)
	}
	if !strings.Contains(string(files["python/karpenter_interruption_bus/pulumi-plugin.json"]), `"version": "1.2.3"`) {
		t.Errorf("the Python SDK's plugin file does not say version 1.2.3:\n%s", files["python/karpenter_interruption_bus/pulumi-plugin.json"])
	}
	for name, body := range files {
		if strings.HasPrefix(name, "nodejs/types/") && strings.Contains(string(body), `from "./types/`) {
			t.Errorf("%s imports ./types/... from inside types/: the generator ran on a Go whose filepath.Rel it does not expect", name)
		}
	}
}
