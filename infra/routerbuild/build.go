// Package routerbuild compiles the router Lambda from its module's source and packages it as a zip,
// reproducibly: the same source and toolchain give the same bytes, so `pulumi preview` shows no function change
// when nothing changed.
package routerbuild

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router"
)

// Lambda's target: the provided.al2023 runtime on Graviton.
const (
	Runtime      = "provided.al2023"
	Architecture = "arm64"
	Handler      = "bootstrap"
)

// zipTime stamps the zip entry: a constant, so the archive does not change with the build time.
var zipTime = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// Artifact is a built router.
type Artifact struct {
	Bootstrap string // path of the linux/arm64 executable
	Zip       string // path of the deployment package
	// SourceCodeHash is the base64 SHA-256 of the zip, as Lambda reports it.
	SourceCodeHash string
	Size           int64 // bytes of the zip
}

// Embedded builds the router from the source its module embeds (router.Source) into a directory of the user's
// cache named by that source's digest: the program and the component package's provider find it wherever they
// run, and a second build of the same source writes the same path and bytes.
func Embedded(ctx context.Context) (Artifact, error) {
	digest, err := Digest(router.Source)
	if err != nil {
		return Artifact{}, err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	return Build(ctx, router.Source, filepath.Join(cache, "karpenter-interruption-bus", "router", digest[:16]))
}

// Digest is the hex SHA-256 of every file of src, names and contents, in fs.WalkDir's (lexical) order.
func Digest(src fs.FS) (string, error) {
	h := sha256.New()
	err := fs.WalkDir(src, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(src, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(data))
		h.Write(data)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("reading the router's source: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Build compiles the router module whose source is src (its root holding go.mod; router.Source, or os.DirFS of
// a checkout) into outDir/bootstrap and outDir/router.zip. The source is copied to a temporary directory first:
// src may be embedded, and the build must not write next to it. The Go toolchain in PATH builds it, with the
// modules of the source's go.sum (from the module cache, or the module proxy as go fetches them).
func Build(ctx context.Context, src fs.FS, outDir string) (Artifact, error) {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return Artifact{}, fmt.Errorf("creating %s: %w", outDir, err)
	}
	work, err := os.MkdirTemp("", "karpenter-interruption-bus-router-")
	if err != nil {
		return Artifact{}, fmt.Errorf("building the router: %w", err)
	}
	defer os.RemoveAll(work)
	moduleDir := filepath.Join(work, "router")
	if err := os.CopyFS(moduleDir, src); err != nil {
		return Artifact{}, fmt.Errorf("copying the router's source: %w", err)
	}
	// -trimpath, no VCS stamp and an empty build ID keep paths (the temporary directory's among them), commits
	// and build hosts out of the binary; lambda.norpc drops the go1.x RPC shim the provided runtimes do not use.
	// The binary goes to this build's own directory first: two processes building at once never read a half-written one.
	tmpBin := filepath.Join(work, Handler)
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", "lambda.norpc", "-trimpath", "-buildvcs=false",
		"-ldflags", "-s -w -buildid=", "-o", tmpBin, router.Main)
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+Architecture, "GOFLAGS=-mod=readonly")
	if out, err := cmd.CombinedOutput(); err != nil {
		return Artifact{}, fmt.Errorf("building the router: %w\n%s", err, out)
	}
	return install(tmpBin, outDir)
}

// install puts the built binary tmp (in a directory of this build's own) into outDir as bootstrap and
// router.zip, and returns the artifact. Any number of processes may build into one outDir at once (two previews
// of two stacks, a preview beside the tests): each file is written under a name of its own in outDir and renamed
// over the final one, which POSIX makes atomic, so a reader sees a whole file, one build's or another's, which are
// the same bytes (the build is reproducible).
func install(tmp, outDir string) (Artifact, error) {
	bin, err := filepath.Abs(filepath.Join(outDir, Handler))
	if err != nil {
		return Artifact{}, err
	}
	data, err := zipBootstrap(tmp) // this build's binary, which no other process touches
	if err != nil {
		return Artifact{}, err
	}
	if err := os.Rename(tmp, bin); err != nil {
		// Another file system than the temporary directory's: copied under a name of its own, then renamed.
		exe, err := os.ReadFile(tmp)
		if err != nil {
			return Artifact{}, fmt.Errorf("reading the built router: %w", err)
		}
		if err := writeAtomic(bin, exe, 0o755); err != nil {
			return Artifact{}, err
		}
	}
	zipPath := filepath.Join(outDir, "router.zip")
	if err := writeAtomic(zipPath, data, 0o644); err != nil {
		return Artifact{}, err
	}
	sum := sha256.Sum256(data)
	return Artifact{Bootstrap: bin, Zip: zipPath, SourceCodeHash: base64.StdEncoding.EncodeToString(sum[:]), Size: int64(len(data))}, nil
}

// writeAtomic writes data to path through a temporary file of a unique name in path's directory, renamed over
// path once complete.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(f.Name()) // gone once renamed; left only on failure
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), mode)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// zipBootstrap packs bin as the single executable entry "bootstrap" with fixed metadata.
func zipBootstrap(bin string) ([]byte, error) {
	f, err := os.Open(bin)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", bin, err)
	}
	defer f.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	hdr := &zip.FileHeader{Name: Handler, Method: zip.Deflate, Modified: zipTime}
	hdr.SetMode(0o755) // Lambda runs bootstrap only if it is executable
	w, err := zw.CreateHeader(hdr)
	if err != nil {
		return nil, fmt.Errorf("zipping %s: %w", bin, err)
	}
	if _, err := io.Copy(w, f); err != nil {
		return nil, fmt.Errorf("zipping %s: %w", bin, err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("zipping %s: %w", bin, err)
	}
	return buf.Bytes(), nil
}

// Prebuilt is a BuildRouter that builds nothing: the deployment package zip (router.zip as Build makes it), which a
// release's provider carries (provider, build tag prebuiltrouter: no user of a released package needs Go), is written
// into a directory of the user's cache named by its digest, with its bootstrap, and returned as Build's artifact.
func Prebuilt(zipData []byte) func(context.Context) (Artifact, error) {
	return func(context.Context) (Artifact, error) {
		zr, err := zip.NewReader(bytes.NewReader(zipData), int64(len(zipData)))
		if err != nil {
			return Artifact{}, fmt.Errorf("the prebuilt router: %w", err)
		}
		if len(zr.File) != 1 || zr.File[0].Name != Handler {
			return Artifact{}, fmt.Errorf("the prebuilt router: want one entry %s, got %d entries", Handler, len(zr.File))
		}
		sum := sha256.Sum256(zipData)
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		outDir := filepath.Join(cache, "karpenter-interruption-bus", "router", "prebuilt-"+hex.EncodeToString(sum[:8]))
		if err := os.MkdirAll(outDir, 0o755); err != nil {
			return Artifact{}, fmt.Errorf("creating %s: %w", outDir, err)
		}
		rc, err := zr.File[0].Open()
		if err != nil {
			return Artifact{}, fmt.Errorf("the prebuilt router: %w", err)
		}
		defer rc.Close()
		exe, err := io.ReadAll(rc)
		if err != nil {
			return Artifact{}, fmt.Errorf("the prebuilt router: %w", err)
		}
		bin := filepath.Join(outDir, Handler)
		if err := writeAtomic(bin, exe, 0o755); err != nil {
			return Artifact{}, err
		}
		zipPath := filepath.Join(outDir, "router.zip")
		if err := writeAtomic(zipPath, zipData, 0o644); err != nil {
			return Artifact{}, err
		}
		return Artifact{Bootstrap: bin, Zip: zipPath, SourceCodeHash: base64.StdEncoding.EncodeToString(sum[:]), Size: int64(len(zipData))}, nil
	}
}
