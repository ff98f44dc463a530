// Package provenance describes what a run judged: the build of the running program, a binary's
// hash, version and Go build info, the machine's cores and load. seqgate writes it into the run
// record (ledger.Provenance); eventlogd prints its own build with --version.
package provenance

import (
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/seqgate/seqgate/ledger"
)

// Self is the build of the running program (runtime/debug.ReadBuildInfo): module, version, the VCS
// revision, time and modified flag that `go build` stamps (-buildvcs, on by default in a git work
// tree), and the Go version. A field the build info lacks stays empty.
func Self() ledger.Build {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ledger.Build{Go: runtime.Version()}
	}
	return fromInfo(bi)
}

func fromInfo(bi *debug.BuildInfo) ledger.Build {
	b := ledger.Build{Module: bi.Main.Path, Version: bi.Main.Version, Go: bi.GoVersion}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// Line is a build in one line: "module version (revision, modified) go1.26".
func Line(b ledger.Build) string {
	var s strings.Builder
	s.WriteString(orNone(b.Module))
	s.WriteString(" " + orNone(b.Version))
	if b.Revision != "" {
		rev := b.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		s.WriteString(" (revision " + rev)
		if b.Modified {
			s.WriteString(", modified")
		}
		s.WriteString(")")
	} else {
		s.WriteString(" (no VCS revision)")
	}
	if b.Go != "" {
		s.WriteString(" " + b.Go)
	}
	return s.String()
}

func orNone(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// maxVersionOutput bounds what a binary's --version may print into the ledger.
const maxVersionOutput = 512

// Describe hashes the binary at path and reads its Go build info (debug/buildinfo; nil for a binary
// that is not Go). With versionFlag it also runs `path --version` (at most 5 s) and keeps the first
// line it prints. Only a binary that cannot be read is an error.
func Describe(ctx context.Context, path string, versionFlag bool) (*ledger.Binary, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := &ledger.Binary{Path: path, SHA256: hex.EncodeToString(h.Sum(nil))}
	if bi, err := buildinfo.ReadFile(path); err == nil {
		b := fromInfo(bi)
		out.Build = &b
	}
	if versionFlag {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, path, "--version")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		if b, err := cmd.Output(); err == nil {
			line, _, _ := strings.Cut(string(b), "\n")
			if len(line) > maxVersionOutput {
				line = line[:maxVersionOutput]
			}
			out.Version = strings.TrimSpace(line)
		}
	}
	return out, nil
}

// Machine is this host now: its CPUs, OS, architecture and load averages.
func Machine() ledger.Machine {
	return ledger.Machine{Cores: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH, LoadAvg: LoadAvg()}
}

// LoadAvg is /proc/loadavg's 1, 5 and 15 minute averages, or nil where it cannot be read.
func LoadAvg() []float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return nil
	}
	return parseLoadAvg(string(b))
}

func parseLoadAvg(s string) []float64 {
	f := strings.Fields(s)
	if len(f) < 3 {
		return nil
	}
	out := make([]float64, 3)
	for i := range out {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil || v < 0 {
			return nil
		}
		out[i] = v
	}
	return out
}

// Redact replaces the secrets of a seqgate command line by "REDACTED": the value of --api-key and
// the password of a DSN given to --dsn (user:password@...). Either form, "--flag value" and
// "--flag=value", is handled.
func Redact(args []string) []string {
	out := make([]string, len(args))
	copy(out, args)
	for i := 0; i < len(out); i++ {
		name, value, eq := strings.Cut(out[i], "=")
		if !strings.HasPrefix(name, "-") {
			continue
		}
		flag := strings.TrimLeft(name, "-")
		var redact func(string) string
		switch flag {
		case "api-key":
			redact = func(string) string { return "REDACTED" }
		case "dsn":
			redact = RedactDSN
		default:
			continue
		}
		if eq {
			out[i] = name + "=" + redact(value)
		} else if i+1 < len(out) {
			out[i+1] = redact(out[i+1])
			i++
		}
	}
	return out
}

// RedactDSN hides the password of a go-sql-driver DSN (user:password@protocol(address)/db).
func RedactDSN(dsn string) string {
	at := strings.LastIndex(dsn, "@")
	if at < 0 {
		return dsn
	}
	user, _, hasPw := strings.Cut(dsn[:at], ":")
	if !hasPw {
		return dsn
	}
	return user + ":REDACTED" + dsn[at:]
}
