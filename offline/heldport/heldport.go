// Package heldport gives tests a loopback TCP port that refuses connections and that nothing else takes: what an
// endpoint that is down looks like, for as long as a test needs it to be down.
//
// Closing a listener and dialling its port afterwards is not that: the kernel hands freed ports to the next
// listener that asks for port 0 (another test's server, one of Pulumi's gRPC servers), and the dial then reaches
// it. It happened in CI: a stopped API server stub's port, taken by a plain-text server, answered "tls: first record
// does not look like a TLS handshake" where "connection refused" was asserted.
package heldport

import "net"

// Port is a loopback port held by a socket that is bound and never listens: a connection to it is refused (the
// kernel answers its SYN with RST), and the kernel gives it to no one asking for port 0 while it is held. Listen
// serves on it meanwhile, and the port stays held after that listener is closed.
type Port struct {
	// Addr is 127.0.0.1:port.
	Addr    string
	release func() error
}

// Reserve holds a new port.
func Reserve() (*Port, error) {
	addr, release, err := hold()
	if err != nil {
		return nil, err
	}
	return &Port{Addr: addr, release: release}, nil
}

// Listen listens on the port; closing the listener leaves the port held.
func (p *Port) Listen() (net.Listener, error) {
	return net.Listen("tcp", p.Addr)
}

// Close gives the port back.
func (p *Port) Close() error {
	return p.release()
}
