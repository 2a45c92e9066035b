package generate

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
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
	files, err := Generate(text, Options{Version: version})
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

// TestPublishedTypeScriptSDK: as npm publishes it, the TypeScript SDK has no postinstall (an install with scripts off
// works) and needs no compiler at run time; as pulumi package add generates it in a project, it compiles itself.
func TestPublishedTypeScriptSDK(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "..", "provider", "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		publish       bool
		postinstall   bool
		compilerInDep bool
	}{
		{publish: true},
		{publish: false, postinstall: true, compilerInDep: true},
	} {
		files, err := Generate(text, Options{Version: "v1.2.3", Publish: tc.publish})
		if err != nil {
			t.Fatal(err)
		}
		var pkg struct {
			Version         string
			Scripts         map[string]string
			Dependencies    map[string]string
			DevDependencies map[string]string
		}
		if err := json.Unmarshal(files["nodejs/package.json"], &pkg); err != nil {
			t.Fatal(err)
		}
		_, post := pkg.Scripts["postinstall"]
		_, tsc := pkg.Dependencies["typescript"]
		_, types := pkg.Dependencies["@types/node"]
		if post != tc.postinstall || tsc != tc.compilerInDep || types != tc.compilerInDep || pkg.Version != "1.2.3" {
			t.Errorf("publish %v: version %s, postinstall %v, typescript %v and @types/node %v among dependencies; want postinstall and both %v",
				tc.publish, pkg.Version, post, tsc, types, tc.postinstall)
		}
		if _, ok := pkg.Dependencies["@pulumi/pulumi"]; !ok {
			t.Errorf("publish %v: @pulumi/pulumi is not a dependency: %v", tc.publish, pkg.Dependencies)
		}
		if _, ok := files["nodejs/scripts/postinstall.js"]; ok != tc.postinstall {
			t.Errorf("publish %v: scripts/postinstall.js generated %v", tc.publish, ok)
		}
	}
}

// TestTheReleasedSchemaCarriesItsVersion: the schema a release attaches says the release's version, the rest as the
// provider's.
func TestTheReleasedSchemaCarriesItsVersion(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "..", "provider", "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Versioned(text, "v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	var before, after map[string]any
	if err := json.Unmarshal(text, &before); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &after); err != nil {
		t.Fatal(err)
	}
	if after["version"] != "1.2.3" {
		t.Errorf("version %v, want 1.2.3", after["version"])
	}
	delete(before, "version")
	delete(after, "version")
	if !reflect.DeepEqual(before, after) {
		t.Error("the released schema differs from the provider's in more than its version")
	}
}

// TestTheGoSDKIsTheCommittedOne: the Go SDK is committed where its import path says (sdk/go/kib of the root module:
// go get takes it at a release's tag), and is what the generator makes of the schema, file for file: a change of
// the schema without make sdk fails here.
func TestTheGoSDKIsTheCommittedOne(t *testing.T) {
	files := generated(t, "")
	dir := filepath.Join("..", "..", "sdk", "go")
	want := map[string]bool{}
	for name, body := range files {
		rest, ok := strings.CutPrefix(name, "go/")
		if !ok || rest == ".gitattributes" {
			continue
		}
		want[rest] = true
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rest)))
		if err != nil || string(got) != string(body) {
			t.Errorf("sdk/go/%s is not what the generator makes of provider/schema.json (%v): run make sdk", rest, err)
		}
	}
	if len(want) < 5 {
		t.Fatalf("the Go SDK has %d files", len(want))
	}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if !want[filepath.ToSlash(rel)] {
			t.Errorf("sdk/go/%s is not generated: run make sdk", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTheGoSDKWrittenIsAModuleOfItsOwn: written under the repository (build/sdk), the Go SDK is a module of its own,
// which the root module's go test ./... leaves out (its internal package is another module's to import).
func TestTheGoSDKWrittenIsAModuleOfItsOwn(t *testing.T) {
	out := t.TempDir()
	if err := FromFile(filepath.Join("..", "..", "provider", "schema.json"), out, Options{}); err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(out, "go", "go.mod"))
	if err != nil || !strings.HasPrefix(string(mod), "module github.com/karpenter-interruption-bus/karpenter-interruption-bus/sdk/go\n") {
		t.Errorf("go/go.mod: %q, %v", mod, err)
	}
	if _, err := os.Stat(filepath.Join(out, "go", "kib", "clusterInterruption.go")); err != nil {
		t.Error(err)
	}
}
