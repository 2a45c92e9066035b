package main

import (
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/workspace"
)

// TestPluginManifest loads the manifest docs/package.md points pulumi package add at
// (<repo>.git/provider@<tag>: provider/PulumiPlugin.yaml) with Pulumi's own loader: a Go plugin whose directory, where
// the Go language host runs go build, is the provider's main package, with no Pulumi.yaml beside it (pulumi
// package commands refuse a directory holding both).
func TestPluginManifest(t *testing.T) {
	proj, err := workspace.LoadPluginProject("PulumiPlugin.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := proj.Runtime.Name(); got != "go" {
		t.Errorf("runtime %q, want go", got)
	}
	if err := proj.Validate(); err != nil {
		t.Errorf("Pulumi refuses the manifest: %v", err)
	}
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	if pkg.Name != "main" || !slices.Contains(pkg.Imports, "github.com/karpenter-interruption-bus/karpenter-interruption-bus/provider/components") {
		t.Errorf("the manifest's directory holds package %s importing %v, want the provider's main package", pkg.Name, pkg.Imports)
	}
	if _, err := os.Stat("Pulumi.yaml"); err == nil {
		t.Error("Pulumi.yaml beside PulumiPlugin.yaml: pulumi package commands refuse the directory")
	}
	if _, err := os.Stat(filepath.Join("..", "PulumiPlugin.yaml")); err == nil {
		t.Error("a PulumiPlugin.yaml at the repository's root: the Go language host would build the program there")
	}
}
