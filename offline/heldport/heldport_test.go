//go:build linux

package heldport

import (
	"errors"
	"net"
	"syscall"
	"testing"
)

func refused(t *testing.T, addr string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err == nil {
		_ = c.Close()
		t.Fatalf("a connection to %s was accepted, want it refused", addr)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dialling %s: %v, want connection refused", addr, err)
	}
}

// bindPlain binds a socket without SO_REUSEADDR to addr, as a process that wants the port for itself does.
func bindPlain(t *testing.T, addr string) error {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	ap, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return syscall.Bind(fd, &syscall.SockaddrInet4{Port: ap.Port, Addr: [4]byte(ap.IP.To4())})
}

// TestAHeldPortRefusesAndIsTaken: held, the port refuses connections and no one else can bind it; a listener on it
// serves, and once closed the port refuses again.
func TestAHeldPortRefusesAndIsTaken(t *testing.T) {
	p, err := Reserve()
	if err != nil {
		t.Fatal(err)
	}
	refused(t, p.Addr)
	if err := bindPlain(t, p.Addr); !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("binding the held port: %v, want it in use", err)
	}

	for range 2 { // a server stopped and started again
		l, err := p.Listen()
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			if c, err := l.Accept(); err == nil {
				_, _ = c.Write([]byte("up"))
				_ = c.Close()
			}
		}()
		c, err := net.Dial("tcp", p.Addr)
		if err != nil {
			t.Fatalf("the listener on the held port: %v", err)
		}
		buf := make([]byte, 2)
		if _, err := c.Read(buf); err != nil || string(buf) != "up" {
			t.Fatalf("read %q, %v from the listener", buf, err)
		}
		_ = c.Close()
		_ = l.Close()
		refused(t, p.Addr)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestAPortGivenBackIsFree: once closed, anyone can bind it (no connection was made: none of it lingers in
// TIME_WAIT).
func TestAPortGivenBackIsFree(t *testing.T) {
	p, err := Reserve()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := bindPlain(t, p.Addr); err != nil {
		t.Fatalf("binding a port given back: %v", err)
	}
}
