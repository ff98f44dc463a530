package main

import (
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
)

// TestSendBufferListener: an accepted connection's SO_SNDBUF is the one asked for (Linux reports
// twice the value set, and a floor), far below the kernel's default; without the wrapper
// (the control) it is the default.
func TestSendBufferListener(t *testing.T) {
	for _, tc := range []struct {
		name   string
		bytes  int
		wantLE int // the reported buffer is at most this
		wantGT int // and more than this
	}{
		{"4 KiB", 4096, 2*4096 + 1, 0},
		{"kernel default (no wrapper)", 0, 1 << 30, 2*4096 + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			if tc.bytes > 0 {
				ln = sendBufferListener{ln, tc.bytes}
			}
			done := make(chan int, 1)
			go func() {
				c, err := ln.Accept()
				if err != nil {
					done <- -1
					return
				}
				defer c.Close()
				raw, _ := c.(*net.TCPConn).SyscallConn()
				var v int
				_ = raw.Control(func(fd uintptr) { v, _ = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF) })
				done <- v
			}()
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			got := <-done
			if got > tc.wantLE || got <= tc.wantGT {
				t.Fatalf("SO_SNDBUF %d, want in (%d, %d]", got, tc.wantGT, tc.wantLE)
			}
		})
	}
}

// A send buffer out of range is refused, named.
func TestSendBufferFlagRange(t *testing.T) {
	for _, v := range []string{"-1", "67108865"} {
		err := run([]string{"--socket-send-buffer", v}, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "--socket-send-buffer "+v) {
			t.Errorf("--socket-send-buffer %s: %v", v, err)
		}
	}
}
