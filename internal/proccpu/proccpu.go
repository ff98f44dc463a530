// Package proccpu measures the CPU time of processes from /proc: one process's user and system time
// (/proc/PID/stat), and the share of a window each of several named components used.
package proccpu

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

// ticksPerSecond is USER_HZ, the unit of /proc's CPU times: 100 on every Linux ABI Go supports.
const ticksPerSecond = 100

// Times are one process's CPU times from /proc/PID/stat.
type Times struct {
	User, System time.Duration // of the process itself (all its threads)
	// ChildUser and ChildSystem are of its children that it waited for (cutime, cstime).
	ChildUser, ChildSystem time.Duration
}

// Self is the process's own user plus system time.
func (t Times) Self() time.Duration { return t.User + t.System }

// maxTicks bounds a tick count: 2^39 ticks are 174 years of CPU, far from time.Duration's overflow.
const maxTicks = 1 << 39

// maxStat bounds what ParseStat accepts: a real stat line is a few hundred bytes.
const maxStat = 4096

// ParseStat parses the content of /proc/PID/stat. The command name (field 2) is in parentheses and
// may hold spaces and parentheses itself, so the fields are counted from its last ')'.
func ParseStat(b []byte) (Times, error) {
	if len(b) > maxStat {
		return Times{}, fmt.Errorf("stat line of %d bytes: longer than any /proc/PID/stat", len(b))
	}
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return Times{}, fmt.Errorf("stat line %q: no (command) field", clip(b))
	}
	if _, err := strconv.Atoi(string(bytes.TrimSpace(b[:open]))); err != nil {
		return Times{}, fmt.Errorf("stat line %q: the pid field is not a number", clip(b))
	}
	rest := bytes.Fields(b[end+1:])
	// rest[0] is field 3 (state); utime, stime, cutime and cstime are fields 14 to 17.
	const first = 14 - 3
	if len(rest) < first+4 {
		return Times{}, fmt.Errorf("stat line %q: %d fields after the command, want at least %d", clip(b), len(rest), first+4)
	}
	var v [4]time.Duration
	for i := range v {
		f := rest[first+i]
		n, err := strconv.ParseInt(string(f), 10, 64)
		if err != nil || n < 0 || n > maxTicks {
			return Times{}, fmt.Errorf("stat line: field %d is %q, want a tick count", 14+i, clip(f))
		}
		v[i] = time.Duration(n) * (time.Second / ticksPerSecond)
	}
	return Times{User: v[0], System: v[1], ChildUser: v[2], ChildSystem: v[3]}, nil
}

func clip(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}

// Read reads /proc/PID/stat.
func Read(pid int) (Times, error) {
	if pid <= 0 {
		return Times{}, fmt.Errorf("pid %d: not a process", pid)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Times{}, err
	}
	return ParseStat(b)
}

// ErrGone is returned for a process that ended (or was replaced) within the window.
var ErrGone = errors.New("the process ended or was restarted during the window")
