package engine_test

import (
	"fmt"
	"os"
	"testing"
)

// systemTemp is the temporary directory the tests were started with, where KIB_ENGINE_KEEP keeps what it keeps.
var systemTemp string

// TestMain gives the tests and every process they start a temporary directory of their own (TMPDIR), removed when
// they end. The Go language host (the stand-in, as the real one's RunPlugin) builds each provider plugin it runs
// into a temporary file of about 90 MB, and removes it only if it outlives the plugin, which it does not when the
// engine stops it: each run of these tests left several in /tmp, until a disk filled. The stand-ins' builds
// (builtOnce) go there too.
func TestMain(m *testing.M) {
	systemTemp = os.TempDir()
	dir, err := os.MkdirTemp("", "kib-engine-tmp-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.Setenv("TMPDIR", dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := os.RemoveAll(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}
