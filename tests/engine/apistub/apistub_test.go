package apistub_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/engine/apistub"
)

// TestSilenceAcceptsAndNeverAnswers: silenced, the endpoint accepts a connection and sends nothing, not even the
// TLS handshake's first byte; restarted, it answers again at the same endpoint, with the same authority.
func TestSilenceAcceptsAndNeverAnswers(t *testing.T) {
	s, err := apistub.Start("33")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.Silence(); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", s.URL[len("https://"):])
	if err != nil {
		t.Fatalf("a silenced endpoint refused the connection: %v", err)
	}
	defer c.Close()
	// The client speaks first in TLS: the server's answer to its hello is what never comes.
	if _, err := c.Write([]byte{0x16, 0x03, 0x01, 0x00, 0x00}); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	n, err := c.Read(make([]byte, 1))
	var ne net.Error
	if n != 0 || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("read %d bytes (%v) from a silenced endpoint, want nothing until the deadline", n, err)
	}

	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	ca, err := base64.StdEncoding.DecodeString(s.CAData)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/version", nil)
	req.Header.Set("Authorization", "Bearer k8s-aws-v1.stand-in")
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("restarted, it does not answer: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("restarted, /version answers %s", resp.Status)
	}
}
