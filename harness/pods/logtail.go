package pods

import (
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Start-up errors quote the end of the pod's log: the reason a pod exited is there, not in the
// harness's own error.
const (
	tailLines = 10
	tailBytes = 4096
)

// logTail returns the last lines of the log at path (at most tailLines, read from its last tailBytes),
// each indented for an error message, or "" when the log is empty or unreadable.
func logTail(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(st.Size()-tailBytes, 0)
	b := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil && err != io.EOF {
		return ""
	}
	text := strings.TrimRight(strings.ToValidUTF8(string(b), "?"), "\n")
	lines := strings.Split(text, "\n")
	if off > 0 && len(lines) > 1 {
		lines = lines[1:] // the first line was cut by the read window
	}
	if len(lines) > tailLines {
		lines = lines[len(lines)-tailLines:]
	}
	if len(lines) == 1 && lines[0] == "" {
		return ""
	}
	return "\n    " + strings.Join(lines, "\n    ")
}

// logPath is the pod's log file (every life of the pod appends to it).
func (p *Pod) logPath() string { return filepath.Join(p.cfg.LogDir, p.Name+".log") }

// logHint is what a start-up error appends: the last lines of the pod's log, or where the log is.
func (p *Pod) logHint() string {
	path := p.logPath()
	if tail := logTail(path); tail != "" {
		return "; the end of " + path + ":" + tail
	}
	return " (log " + path + ")"
}
