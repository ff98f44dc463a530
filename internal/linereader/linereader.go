// Package linereader gives tests a reader that returns one line per Read, so a bufio.Reader above
// it refills its buffer from the start for every line (what makes a kept borrowed string show it
// was lent rather than copied).
package linereader

import (
	"io"
	"strings"
)

// New returns a reader of s that returns at most one line (with its newline) per Read.
func New(s string) io.Reader { return &reader{lines: strings.SplitAfter(s, "\n")} }

type reader struct{ lines []string }

func (l *reader) Read(p []byte) (int, error) {
	for len(l.lines) > 0 && l.lines[0] == "" {
		l.lines = l.lines[1:]
	}
	if len(l.lines) == 0 {
		return 0, io.EOF
	}
	n := copy(p, l.lines[0])
	l.lines[0] = l.lines[0][n:]
	if l.lines[0] == "" {
		l.lines = l.lines[1:]
	}
	return n, nil
}
