// Package routerbuild compiles the router Lambda from its module and packages it as a zip, reproducibly: the
// same source and toolchain give the same bytes, so `pulumi preview` shows no function change when nothing
// changed.
package routerbuild

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"
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

// Build compiles the module in routerDir into outDir/bootstrap and outDir/router.zip.
func Build(ctx context.Context, routerDir, outDir string) (Artifact, error) {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return Artifact{}, fmt.Errorf("creating %s: %w", outDir, err)
	}
	bin, err := filepath.Abs(filepath.Join(outDir, Handler))
	if err != nil {
		return Artifact{}, err
	}
	// -trimpath, no VCS stamp and an empty build ID keep paths, commits and build hosts out of the binary;
	// lambda.norpc drops the go1.x RPC shim the provided runtimes do not use.
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", "lambda.norpc", "-trimpath", "-buildvcs=false",
		"-ldflags", "-s -w -buildid=", "-o", bin, ".")
	cmd.Dir = routerDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+Architecture, "GOFLAGS=-mod=readonly")
	if out, err := cmd.CombinedOutput(); err != nil {
		return Artifact{}, fmt.Errorf("building the router in %s: %w\n%s", routerDir, err, out)
	}
	zipPath := filepath.Join(outDir, "router.zip")
	data, err := zipBootstrap(bin)
	if err != nil {
		return Artifact{}, err
	}
	if err := os.WriteFile(zipPath, data, 0o644); err != nil {
		return Artifact{}, fmt.Errorf("writing %s: %w", zipPath, err)
	}
	sum := sha256.Sum256(data)
	return Artifact{Bootstrap: bin, Zip: zipPath, SourceCodeHash: base64.StdEncoding.EncodeToString(sum[:]), Size: int64(len(data))}, nil
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
