// Package ocistub stands in for the registry Karpenter's Helm chart is pulled from, oci://public.ecr.aws/karpenter/
// karpenter, where no network reaches it: an HTTPS proxy (the process's HTTPS_PROXY) that answers CONNECT to
// public.ecr.aws:443 itself, with a certificate of its own authority (the process's SSL_CERT_FILE, which Go's TLS
// trusts instead of the system's), and serves there the OCI distribution API for the karpenter/karpenter repository,
// a Helm chart of each version given ("Distribution Specification", https://github.com/opencontainers/distribution-spec;
// Helm's OCI media types, https://helm.sh/docs/topics/registries/). The real pulumi-kubernetes provider's Check pulls
// the chart of a release from it, as it does from the real registry.
//
// What the real registry does that the stub does not: ask for a token (an anonymous one, public.ecr.aws's
// WWW-Authenticate), serve the real chart (the stub's has its Chart.yaml and no template: what Check reads of it),
// serve other repositories. Like it, the stub answers 404 for a version it does not have, and it refuses every
// other host the proxy is asked for.
package ocistub

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/engine/authority"
)

// Host is the registry's host, and Repository the chart's repository there.
const (
	Host       = "public.ecr.aws"
	Repository = "karpenter/karpenter"
)

// Registry is the running proxy and registry.
type Registry struct {
	// ProxyURL is the proxy's address (HTTPS_PROXY), CAFile the PEM of its authority (SSL_CERT_FILE).
	ProxyURL, CAFile string

	listener net.Listener
	cert     tls.Certificate
	blobs    map[string][]byte // digest -> content
	tags     map[string]string // version -> manifest digest
	mu       sync.Mutex
	pulls    map[string]int // version -> manifests served
}

// Start serves the chart at each of versions; its authority is written in dir.
func Start(dir string, versions ...string) (*Registry, error) {
	r := &Registry{CAFile: filepath.Join(dir, "registry-ca.pem"), blobs: map[string][]byte{}, tags: map[string]string{}, pulls: map[string]int{}}
	var err error
	if r.cert, err = authority.Issue("kib registry stand-in", Host, r.CAFile); err != nil {
		return nil, err
	}
	for _, v := range versions {
		if err := r.add(v); err != nil {
			return nil, err
		}
	}
	if r.listener, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		return nil, err
	}
	r.ProxyURL = "http://" + r.listener.Addr().String()
	go func() { _ = http.Serve(r.listener, http.HandlerFunc(r.proxy)) }()
	return r, nil
}

// Close stops the proxy.
func (r *Registry) Close() { _ = r.listener.Close() }

// Pulls is how many times the manifest of version was served.
func (r *Registry) Pulls(version string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pulls[version]
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// add packs the chart of version (Chart.yaml and an empty values.yaml, in a karpenter/ directory, gzipped tar, as helm
// package writes it) and its OCI manifest.
func (r *Registry) add(version string) error {
	chartYAML := fmt.Sprintf("apiVersion: v2\nname: karpenter\nversion: %s\nappVersion: %s\ndescription: A stand-in of Karpenter's chart\ntype: application\n", version, version)
	var tgz bytes.Buffer
	gz := gzip.NewWriter(&tgz)
	tw := tar.NewWriter(gz)
	for name, body := range map[string]string{"karpenter/Chart.yaml": chartYAML, "karpenter/values.yaml": ""} {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	config, _ := json.Marshal(map[string]string{"apiVersion": "v2", "name": "karpenter", "version": version, "appVersion": version, "type": "application"})
	layer := tgz.Bytes()
	manifest, _ := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": map[string]any{"mediaType": "application/vnd.cncf.helm.config.v1+json", "digest": digest(config), "size": len(config)},
		"layers": []any{map[string]any{"mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip", "digest": digest(layer), "size": len(layer)}},
	})
	for _, b := range [][]byte{config, layer, manifest} {
		r.blobs[digest(b)] = b
	}
	r.tags[version] = digest(manifest)
	return nil
}

// proxy answers CONNECT to the registry's host by serving the registry over TLS in the tunnel; any other request or
// host is refused, as a machine without that network would fail it.
func (r *Registry) proxy(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodConnect || req.Host != Host+":443" {
		http.Error(w, "the registry stand-in serves "+Host+" only", http.StatusForbidden)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "no hijacking", http.StatusInternalServerError)
		return
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	_, _ = buf.WriteString("HTTP/1.1 200 Connection Established\r\n\r\n")
	_ = buf.Flush()
	tconn := tls.Server(conn, &tls.Config{Certificates: []tls.Certificate{r.cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}})
	defer tconn.Close()
	br := bufio.NewReader(tconn)
	for {
		in, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		rec := &response{header: http.Header{}, status: http.StatusOK}
		r.registry(rec, in)
		resp := &http.Response{StatusCode: rec.status, ProtoMajor: 1, ProtoMinor: 1, Header: rec.header, ContentLength: int64(rec.body.Len()),
			Body: nopCloser{bytes.NewReader(rec.body.Bytes())}, Request: in}
		if in.Method == http.MethodHead {
			resp.Body = nopCloser{bytes.NewReader(nil)}
		}
		if err := resp.Write(tconn); err != nil {
			return
		}
	}
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// response is what the registry answers one request with.
type response struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *response) Header() http.Header         { return r.header }
func (r *response) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *response) WriteHeader(s int)           { r.status = s }

// registry is the OCI distribution API of the one repository.
func (r *Registry) registry(w http.ResponseWriter, req *http.Request) {
	path := req.URL.Path
	prefix := "/v2/" + Repository + "/"
	notFound := func(code string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"errors":[{"code":%q,"message":"not found"}]}`, code)
	}
	switch {
	case path == "/v2/" || path == "/v2":
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}"))
	case path == prefix+"tags/list":
		var tags []string
		for t := range r.tags {
			tags = append(tags, t)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"name": Repository, "tags": tags})
	case strings.HasPrefix(path, prefix+"manifests/"):
		ref := strings.TrimPrefix(path, prefix+"manifests/")
		d, ok := r.tags[ref]
		if !ok && r.blobs[ref] != nil {
			d, ok = ref, true
		}
		if !ok {
			notFound("MANIFEST_UNKNOWN")
			return
		}
		r.mu.Lock()
		r.pulls[ref]++
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
		w.Header().Set("Docker-Content-Digest", d)
		_, _ = w.Write(r.blobs[d])
	case strings.HasPrefix(path, prefix+"blobs/"):
		b, ok := r.blobs[strings.TrimPrefix(path, prefix+"blobs/")]
		if !ok {
			notFound("BLOB_UNKNOWN")
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Docker-Content-Digest", digest(b))
		_, _ = w.Write(b)
	default:
		notFound("NAME_UNKNOWN")
	}
}
