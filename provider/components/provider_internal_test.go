package components

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRouterSource: the provider finds the router's module beside its own source (Pulumi runs a source package's
// provider from its directory), or where RouterSourceEnv says, and otherwise says how to tell it.
func TestRouterSource(t *testing.T) {
	// The test runs in provider/components: neither router/ nor ../router is the module here.
	t.Setenv(RouterSourceEnv, "")
	if dir, err := routerSource(); err == nil || !strings.Contains(err.Error(), RouterSourceEnv) {
		t.Fatalf("routerSource() = %q, %v; want an error naming %s", dir, err, RouterSourceEnv)
	}
	t.Setenv(RouterSourceEnv, filepath.Join("..", "..", "router"))
	dir, err := routerSource()
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(dir) || filepath.Base(dir) != "router" {
		t.Errorf("routerSource() = %q, want the router module's absolute path (the function's archive is read from another directory)", dir)
	}
}
