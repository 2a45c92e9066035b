package routerbuild

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/base64"
	"os"
	"path/filepath"
	"sync"
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

// TestConcurrentBuildsIntoOneDirectory: any number of builds at once into one cache directory (two previews of two
// stacks, a preview beside the tests) all succeed, and leave one whole artifact. With a fixed temporary name
// (router.zip.tmp) 4 of 36 such builds failed on a rename.
func TestConcurrentBuildsIntoOneDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the router several times")
	}
	dir := t.TempDir()
	const n = 8
	arts := make([]Artifact, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { arts[i], errs[i] = Build(context.Background(), router.Source, dir) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("build %d of %d at once: %v", i, n, errs[i])
		}
		if arts[i].SourceCodeHash != arts[0].SourceCodeHash {
			t.Errorf("build %d: %s, build 0: %s", i, arts[i].SourceCodeHash, arts[0].SourceCodeHash)
		}
	}
	checkDir(t, dir, arts[0])
}

// TestConcurrentInstalls: the step that writes into the shared directory, 64 at once, five rounds.
func TestConcurrentInstalls(t *testing.T) {
	dir, exe := t.TempDir(), bytes.Repeat([]byte("bootstrap"), 1<<16)
	for round := range 5 {
		const n = 64
		errs := make([]error, n)
		arts := make([]Artifact, n)
		var wg sync.WaitGroup
		for i := range n {
			tmp := filepath.Join(t.TempDir(), Handler)
			if err := os.WriteFile(tmp, exe, 0o755); err != nil {
				t.Fatal(err)
			}
			wg.Go(func() { arts[i], errs[i] = install(tmp, dir) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, install %d of %d at once: %v", round, i, n, err)
			}
		}
		checkDir(t, dir, arts[0])
	}
}

// checkDir: dir holds exactly the artifact's bootstrap and zip, whole, and no temporary file.
func checkDir(t *testing.T, dir string, a Artifact) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 2 || names[0] != Handler || names[1] != "router.zip" {
		t.Errorf("%s holds %v, want bootstrap and router.zip only", dir, names)
	}
	data, err := os.ReadFile(filepath.Join(dir, "router.zip"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if got := base64.StdEncoding.EncodeToString(sum[:]); got != a.SourceCodeHash {
		t.Errorf("router.zip's hash %s, the builds' %s", got, a.SourceCodeHash)
	}
}

// TestInstallWritesBesideItsTargetWithItsModes: the files are written through temporary files in the target's own
// directory, never in $TMPDIR (a rename across file systems, where /tmp is a tmpfs, fails with EXDEV), and end with
// the modes Lambda's package needs and others can read: router.zip 0644, bootstrap 0755.
func TestInstallWritesBesideItsTargetWithItsModes(t *testing.T) {
	built := filepath.Join(t.TempDir(), Handler)
	if err := os.WriteFile(built, []byte("bootstrap"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "no-such-directory")) // a temporary file made there fails
	dir := t.TempDir()
	a, err := install(built, dir)
	if err != nil {
		t.Fatalf("install with $TMPDIR unusable: %v", err)
	}
	for path, want := range map[string]os.FileMode{a.Zip: 0o644, a.Bootstrap: 0o755} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", filepath.Base(path), fi.Mode().Perm(), want)
		}
	}
	if err := writeAtomic(filepath.Join(dir, "copy"), []byte("x"), 0o755); err != nil {
		t.Fatalf("writeAtomic with $TMPDIR unusable: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "copy")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("writeAtomic's file: %v, %v; want mode 0755", fi, err)
	}
}

// TestPrebuilt: a release's provider deploys the zip it carries as Build would have made it (the same hash and size,
// its bootstrap unpacked beside it), and refuses a zip that is not one.
func TestPrebuilt(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	exe := filepath.Join(t.TempDir(), "bootstrap")
	if err := os.WriteFile(exe, []byte("\x7fELF a router"), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := zipBootstrap(exe)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Prebuilt(data)(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if a.SourceCodeHash != base64.StdEncoding.EncodeToString(sum[:]) || a.Size != int64(len(data)) {
		t.Errorf("artifact %+v, want the zip's hash and size %d", a, len(data))
	}
	if got, _ := os.ReadFile(a.Zip); !bytes.Equal(got, data) {
		t.Error("the deployed zip is not the one carried")
	}
	if got, _ := os.ReadFile(a.Bootstrap); string(got) != "\x7fELF a router" {
		t.Errorf("bootstrap holds %q", got)
	}
	if info, err := os.Stat(a.Bootstrap); err != nil || info.Mode().Perm()&0o111 == 0 {
		t.Errorf("bootstrap not executable: %v %v", info, err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"bootstrap", "extra"} {
		if _, err := zw.Create(name); err != nil {
			t.Fatal(err)
		}
	}
	_ = zw.Close()
	var other bytes.Buffer
	zw = zip.NewWriter(&other)
	if _, err := zw.Create("main"); err != nil {
		t.Fatal(err)
	}
	_ = zw.Close()
	for name, bad := range map[string][]byte{"not a zip": []byte("nope"), "two entries": buf.Bytes(), "no bootstrap": other.Bytes()} {
		if _, err := Prebuilt(bad)(context.Background()); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
