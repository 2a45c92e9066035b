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
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

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
}

// Start starts a stub of a cluster of Kubernetes version 1.minor.
func Start(minor string) (*Server, error) {
	s := &Server{}
	s.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
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
			// An OpenAPI v2 document of no definitions, as protobuf (what client-go's discovery asks for): the
			// empty message.
			w.Header().Set("Content-Type", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
			w.WriteHeader(http.StatusOK)
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
