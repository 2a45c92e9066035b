//go:build !linux

package heldport

import "net"

// hold, where the socket options of Linux cannot be relied on, only picks a free port: it can be taken by another
// listener once freed, as closing a listener leaves it.
func hold() (string, func() error, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		return "", nil, err
	}
	return addr, func() error { return nil }, nil
}
