// Package apistub stands in for the Kubernetes API server of an EKS cluster that can be reached, where no cluster
// runs: what the real pulumi-kubernetes provider asks of one when it is configured (client-go's discovery: GET
// /version, /api, /api/v1, /apis, and the OpenAPI v2 document, /openapi/v2), and what the project's reach check asks
// (GET /version), over TLS with a certificate of its own authority (the cluster's certificate authority, as EKS gives
// it: CAData), from a client with a bearer token (the ExecCredential of `aws eks get-token`).
//
// What a real API server does that the stub does not: authenticate the token with IAM (EKS's aws-iam-authenticator)
// and authorize it by the cluster's access entries, serve any resource (the stub's discovery lists none: a client
// that asks for one gets 404), store anything (a Helm release's Secret), answer in protobuf. Like one, it refuses a
// request without a token (401), and the test's stand-in for the provider's release operations never asks it for
// more than discovery.
package apistub

import (
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/heldport"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/engine/authority"
)

// Server is a running API server stub.
type Server struct {
	// URL is its endpoint (https://127.0.0.1:port), CAData its authority's PEM, base64 (the cluster's
	// certificateAuthority.data).
	URL, CAData string

	addr     string
	port     *heldport.Port
	tls      *tls.Config
	handler  http.Handler
	mu       sync.Mutex
	srv      *http.Server
	serving  net.Listener // the server's listener, nil when stopped
	silent   net.Listener // Silence's listener, nil unless silent
	held     []net.Conn   // the connections Silence accepted and holds
	requests []string
	// far, when set, makes the server a large cluster's, reached from a distant runner (Far).
	far *Link
}

// Link is what a distant runner's connection to a large cluster's API server is: a round trip before each answer, a
// rate the answer's bytes arrive at, and the OpenAPI v2 document of a cluster with many definitions (CRDs), of
// DocumentBytes.
type Link struct {
	RTT           time.Duration
	BytesPerSec   int
	DocumentBytes int
}

// Far makes the server answer as a large cluster's API server reached over l: each answer after l.RTT, its body at
// l.BytesPerSec, and /openapi/v2 a document of l.DocumentBytes (OpenAPIDocument).
func (s *Server) Far(l Link) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.far = &l
}

// OpenAPIDocument is an OpenAPI v2 document of about size bytes, in protobuf as client-go's discovery asks for it
// (gnostic's openapi_v2.Document: swagger 1, info 2 {title 1, version 2}, definitions 9 {additional_properties 1:
// NamedSchema {name 1, value 2: Schema {description 4}}}): definitions of a kilobyte each, as many as it takes.
func OpenAPIDocument(size int) []byte {
	str := func(b []byte, field protowire.Number, v string) []byte {
		b = protowire.AppendTag(b, field, protowire.BytesType)
		return protowire.AppendString(b, v)
	}
	msg := func(b []byte, field protowire.Number, v []byte) []byte {
		b = protowire.AppendTag(b, field, protowire.BytesType)
		return protowire.AppendBytes(b, v)
	}
	doc := str(nil, 1, "2.0")
	doc = msg(doc, 2, str(str(nil, 1, "Kubernetes"), 2, "v1.33.0"))
	var defs []byte
	desc := strings.Repeat("a field of a custom resource, described as CRDs describe theirs. ", 16)
	for i := 0; len(defs) < size; i++ {
		schema := str(nil, 4, desc)
		named := msg(str(nil, 1, fmt.Sprintf("io.example.v1.Resource%05d", i)), 2, schema)
		defs = msg(defs, 1, named)
	}
	return msg(doc, 9, defs)
}

// Start starts a stub of a cluster of Kubernetes version 1.minor.
func Start(minor string) (*Server, error) {
	s := &Server{}
	s.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.Method+" "+r.URL.Path)
		far := s.far
		s.mu.Unlock()
		if far != nil {
			time.Sleep(far.RTT)
			w = &shaped{ResponseWriter: w, rate: far.BytesPerSec}
		}
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
			status(w, http.StatusUnauthorized, "Unauthorized")
			return
		}
		switch r.URL.Path {
		case "/version":
			write(w, map[string]string{"major": "1", "minor": minor, "gitVersion": "v1." + minor + ".0-eks", "platform": "linux/amd64"})
		case "/api":
			write(w, map[string]any{"kind": "APIVersions", "versions": []string{"v1"},
				"serverAddressByClientCIDRs": []any{map[string]string{"clientCIDR": "0.0.0.0/0", "serverAddress": s.addr}}})
		case "/api/v1":
			write(w, map[string]any{"kind": "APIResourceList", "groupVersion": "v1", "resources": []any{}})
		case "/apis":
			write(w, map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": []any{}})
		case "/openapi/v2":
			// An OpenAPI v2 document, as protobuf (what client-go's discovery asks for): the empty message, or a large
			// cluster's.
			w.Header().Set("Content-Type", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
			w.WriteHeader(http.StatusOK)
			if far != nil {
				_, _ = w.Write(OpenAPIDocument(far.DocumentBytes))
			}
		default:
			status(w, http.StatusNotFound, "the server could not find the requested resource")
		}
	})
	// The cluster's own authority signs its API server's certificate, as EKS's does.
	cert, caPEM, err := authority.New("kubernetes", "127.0.0.1")
	if err != nil {
		return nil, err
	}
	s.tls = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	s.CAData = base64.StdEncoding.EncodeToString(caPEM)
	// The port is held for the stub's life, so that once stopped it refuses connections rather than reach the
	// next listener the kernel gives it to.
	if s.port, err = heldport.Reserve(); err != nil {
		return nil, err
	}
	l, err := s.port.Listen()
	if err != nil {
		return nil, errors.Join(err, s.port.Close())
	}
	s.addr = s.port.Addr
	s.URL = "https://" + s.addr
	s.serve(l)
	return s, nil
}

func (s *Server) serve(l net.Listener) {
	srv := &http.Server{Handler: s.handler, TLSConfig: s.tls, ReadHeaderTimeout: 10 * time.Second}
	s.mu.Lock()
	s.srv, s.serving = srv, l
	s.mu.Unlock()
	go func() { _ = srv.ServeTLS(l, "", "") }()
}

// Stop stops the server: its endpoint then refuses connections (its port still held), as an API server that is
// down, or whose endpoint the runner's network does not route to, fails them.
func (s *Server) Stop() {
	s.mu.Lock()
	srv, l := s.srv, s.serving
	s.srv, s.serving = nil, nil
	s.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
	// The listener is closed here, not only by srv.Close: a server stopped before its goroutine reached Serve has
	// not tracked it yet, and would close it only once that goroutine runs, after the port is listened on again
	// (CI saw "address already in use" from a Silence right after Start).
	if l != nil {
		_ = l.Close()
	}
}

// Silence stops the server and accepts connections at its endpoint without ever answering (no TLS handshake, no
// byte), holding each until Close or Restart: an API server whose endpoint a firewall black-holes past the TCP
// handshake, or that hangs. What the kernel does not here that a black hole may: drop the TCP handshake itself (a
// listener whose backlog is full stands in for that, see offline/heldport's tests).
func (s *Server) Silence() error {
	s.Stop()
	l, err := s.port.Listen()
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.silent = l
	s.mu.Unlock()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.held = append(s.held, c)
			s.mu.Unlock()
		}
	}()
	return nil
}

// unsilence closes Silence's listener and the connections it holds.
func (s *Server) unsilence() {
	s.mu.Lock()
	l, held := s.silent, s.held
	s.silent, s.held = nil, nil
	s.mu.Unlock()
	if l != nil {
		_ = l.Close()
	}
	for _, c := range held {
		_ = c.Close()
	}
}

// Close stops the server and gives its port back.
func (s *Server) Close() {
	s.Stop()
	s.unsilence()
	_ = s.port.Close()
}

// Restart serves again, at the same endpoint and with the same authority.
func (s *Server) Restart() error {
	s.unsilence()
	l, err := s.port.Listen()
	if err != nil {
		return err
	}
	s.serve(l)
	return nil
}

// Requests are the requests it was sent, "METHOD /path".
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// shaped writes at rate bytes a second, in chunks of a tenth of it: a link's bandwidth.
type shaped struct {
	http.ResponseWriter
	rate int
}

func (s *shaped) Write(b []byte) (int, error) {
	chunk := max(s.rate/10, 1)
	n := 0
	for len(b) > 0 {
		k := min(chunk, len(b))
		w, err := s.ResponseWriter.Write(b[:k])
		n += w
		if err != nil {
			return n, err
		}
		if f, ok := s.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
		time.Sleep(time.Duration(k) * time.Second / time.Duration(s.rate))
		b = b[k:]
	}
	return n, nil
}

func write(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// status answers a Status object, as the API server answers an error.
func status(w http.ResponseWriter, code int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message, "code": code})
}
