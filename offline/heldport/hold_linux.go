package heldport

import (
	"fmt"
	"net"
	"strconv"
	"syscall"
)

// hold binds a socket to 127.0.0.1:0 with SO_REUSEADDR and never listens on it. Linux then refuses connections to
// the port (no listening socket), skips it when it picks a port for a bind to port 0 (a socket is bound to it), and
// lets a listener with SO_REUSEADDR (as Go's are) bind it as well, since the holder does not listen.
func hold() (addr string, release func() error, err error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return "", nil, fmt.Errorf("socket: %w", err)
	}
	defer func() {
		if err != nil {
			_ = syscall.Close(fd)
		}
	}()
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		return "", nil, fmt.Errorf("SO_REUSEADDR: %w", err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return "", nil, fmt.Errorf("bind: %w", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		return "", nil, fmt.Errorf("getsockname: %w", err)
	}
	in4, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		return "", nil, fmt.Errorf("getsockname: %T, want an IPv4 address", sa)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(in4.Port)), func() error { return syscall.Close(fd) }, nil
}
