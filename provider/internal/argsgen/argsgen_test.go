package argsgen_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/provider/internal/argsgen"
)

// TestTheArgumentsAreTheConfigurations: provider/components/args.go, the package's arguments, is what Generate makes
// of the program's configuration (infra/config), so a key added there is an argument of the package with no other
// change (make schema rewrites it, then the schema and the SDKs).
func TestTheArgumentsAreTheConfigurations(t *testing.T) {
	got, err := argsgen.Generate("../../../infra/config")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../components/args.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("provider/components/args.go is not what argsgen makes of infra/config: run make schema")
	}
}

// TestASourceThatDoesNotParseIsRefused: the doc comments are read from the configuration's sources; a source that
// does not parse, or a directory with none, is an error, not arguments without descriptions.
func TestASourceThatDoesNotParseIsRefused(t *testing.T) {
	empty, dir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(dir+"/bad.go", []byte("package config\nfunc {"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, empty} {
		if _, err := argsgen.Generate(d); err == nil || !strings.Contains(err.Error(), "reading the configuration's sources") {
			t.Errorf("%s: %v", d, err)
		}
	}
}
