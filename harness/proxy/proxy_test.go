package proxy

import (
	"io"
	"net"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// echo serves one loopback echo server until the test ends.
func echo(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); c.Close() }()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String()
}

func TestCountersExact(t *testing.T) {
	up := echo(t)
	tests := []struct {
		name   string
		conns  int
		chunks []int
	}{
		{"idle", 0, nil},
		{"one conn", 1, []int{5}},
		{"three conns", 3, []int{1, 1000, 70000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSet()
			defer s.Close()
			p, err := s.Add("tenant_1", up)
			if err != nil {
				t.Fatal(err)
			}
			var want int64
			for i := 0; i < tc.conns; i++ {
				c, err := net.Dial("tcp", p.Addr())
				if err != nil {
					t.Fatal(err)
				}
				for _, n := range tc.chunks {
					msg := make([]byte, n)
					if _, err := c.Write(msg); err != nil {
						t.Fatal(err)
					}
					if _, err := io.ReadFull(c, msg); err != nil {
						t.Fatal(err)
					}
					want += int64(n)
				}
				c.Close()
			}
			got := p.Counters()
			if got.Conns != int64(tc.conns) || got.BytesUp != want || got.BytesDown != want {
				t.Errorf("counters = %+v, want conns %d, %d bytes each way", got, tc.conns, want)
			}
		})
	}
}

func TestStopRefusesAndStartResumes(t *testing.T) {
	s := NewSet()
	defer s.Close()
	p, err := s.Add("meta", echo(t))
	if err != nil {
		t.Fatal(err)
	}
	addr := p.Addr()
	p.Toxi.Stop()
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatal("a stopped proxy accepted a connection")
	}
	if err := p.Toxi.Start(); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("restarted proxy on %s: %v", addr, err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := io.ReadFull(c, b); err != nil {
		t.Fatal(err)
	}
}
