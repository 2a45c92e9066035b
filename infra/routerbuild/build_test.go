package routerbuild

import (
	"archive/zip"
	"bytes"
	"context"
	"debug/elf"
	"os"
	"path/filepath"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router"
)

// TestBuildIsReproducibleAndSmall builds the router twice in different directories, from its embedded source and
// from the checkout: the zips must be byte-identical (so a preview shows no Lambda change when nothing changed) and within the 8 MB target.
func TestBuildIsReproducibleAndSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the router twice")
	}
	ctx := context.Background()
	a, err := Build(ctx, router.Source, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := Build(ctx, os.DirFS(filepath.Join("..", "..", "router")), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	za, _ := os.ReadFile(a.Zip)
	zb, _ := os.ReadFile(b.Zip)
	if !bytes.Equal(za, zb) || a.SourceCodeHash != b.SourceCodeHash {
		t.Fatalf("two builds differ: %s (%d bytes) vs %s (%d bytes)", a.SourceCodeHash, len(za), b.SourceCodeHash, len(zb))
	}
	const limit = 8 << 20
	if a.Size > limit {
		t.Errorf("zip is %d bytes, target <= %d", a.Size, limit)
	}
	t.Logf("router.zip: %d bytes, sha256 %s", a.Size, a.SourceCodeHash)

	zr, err := zip.NewReader(bytes.NewReader(za), int64(len(za)))
	if err != nil {
		t.Fatal(err)
	}
	if len(zr.File) != 1 || zr.File[0].Name != "bootstrap" || zr.File[0].Mode().Perm()&0o111 == 0 {
		t.Fatalf("zip must hold one executable 'bootstrap', has %v", zr.File)
	}
	exe, err := elf.Open(a.Bootstrap)
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Close()
	if exe.Machine != elf.EM_AARCH64 || exe.Type != elf.ET_EXEC {
		t.Errorf("bootstrap is %v %v, want a static arm64 executable", exe.Machine, exe.Type)
	}
	for _, p := range exe.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("bootstrap has an ELF interpreter: it is dynamically linked (CGO on?)")
		}
	}
}
