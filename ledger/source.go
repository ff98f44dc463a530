package ledger

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
)

// source is one ledger file being read: lines out of a (possibly gzip) stream, decoded into its own
// reused Record.
type source struct {
	name   string
	br     *bufio.Reader
	closer io.Closer
	line   int
	long   []byte // a line longer than the bufio buffer is assembled here
	eof    bool
	ended  bool // an end record was read: nothing may follow
	idx    int  // position among the Reader's files (merge tie-break)
	rec    Record
	// out, when set, is where next decodes instead of rec (Reader.NextInto): the caller's buffer.
	out   *Record
	dec   decoder
	hdr   Record // its run record (several files: checked against the others')
	shift int64  // added to its times: its start_unix_ns minus the earliest of the run's files
	audit auditOutcome
	// declared: the tenants its own run record declares, when it is read among several files; a
	// record of another tenant is refused (shardset.go).
	declared      map[string]bool
	othersSkipped int     // metric samples labelled with another file's tenant, left out
	r             *Reader // for warnings and the shared interner
	// pending: rec holds a record read ahead (the first after the run's tenant records), which the
	// next call to next returns.
	pending bool
	// spec is the kind of the record next returned last (nil before the first).
	spec *kindSpec
	// kindCache and declCache save map lookups per record: the specs of kinds seen lately (kindOf)
	// and tenants lately found declared (checkDeclared).
	kindCache [8]kindSlot
	declCache [8]string
}

type kindSlot struct {
	k    string
	spec *kindSpec
}

// kindOf is kinds[k] through s.kindCache.
func (s *source) kindOf(k string) *kindSpec {
	if k == "" {
		return nil
	}
	slot := &s.kindCache[(len(k)+int(k[len(k)-1]))%len(s.kindCache)]
	if slot.k == k && slot.spec != nil {
		return slot.spec
	}
	spec := kinds[k]
	if spec != nil {
		*slot = kindSlot{k: k, spec: spec}
	}
	return spec
}

const readBufSize = 64 << 10

// MaxLineBytes bounds one ledger line, so a file that is not a ledger cannot make the reader hold
// gigabytes looking for a newline. Real records are a few hundred bytes.
const MaxLineBytes = 16 << 20

// openSource opens path ("-" = stdin) and sets up gzip when the name ends in .gz or the stream starts
// with gzip's magic bytes.
func openSource(path string, r *Reader) (*source, error) {
	var f io.ReadCloser
	name := path
	if path == "-" {
		f, name = io.NopCloser(os.Stdin), "stdin"
	} else {
		fh, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("ledger: %w", err)
		}
		f = fh
	}
	return newSource(name, f, r)
}

func newSource(name string, f io.ReadCloser, r *Reader) (*source, error) {
	s := &source{name: name, closer: f, r: r}
	s.dec.in = r.in
	raw := bufio.NewReaderSize(f, 512) // only for peeking at the magic: large reads bypass it
	magic, _ := raw.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(raw)
		if err != nil {
			f.Close()
			return nil, &LineError{File: name, Line: 1, Msg: "corrupt gzip stream: " + err.Error()}
		}
		s.br = bufio.NewReaderSize(gz, readBufSize)
	} else {
		s.br = bufio.NewReaderSize(raw, readBufSize)
	}
	// A UTF-8 byte order mark (some editors and Windows tools write one) is not part of the first line.
	if bom, _ := s.br.Peek(3); len(bom) == 3 && bom[0] == 0xef && bom[1] == 0xbb && bom[2] == 0xbf {
		s.br.Discard(3)
	}
	return s, nil
}

// readLine returns the next line without its newline, whether it ended in one, and io.EOF at the end.
// A truncated gzip stream ends the input with a warning. A line longer than MaxLineBytes is not held:
// ended by a newline it is unusable input (a LineError); ended by the end of the file it is a torn last
// line, whatever its length (errTornLong), such as the NUL-padded tail a power loss leaves.
func (s *source) readLine() (line []byte, complete bool, err error) {
	if s.eof {
		return nil, false, io.EOF
	}
	s.long = s.long[:0]
	skipped := 0 // bytes of a too-long line read and dropped
	for {
		chunk, err := s.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			if skipped > 0 || len(s.long)+len(chunk) > MaxLineBytes {
				skipped += len(s.long) + len(chunk)
				s.long = s.long[:0]
				continue
			}
			s.long = append(s.long, chunk...)
			continue
		}
		if skipped > 0 || len(s.long)+len(chunk) > MaxLineBytes+1 { // +1: the newline
			if err == nil {
				return nil, false, &LineError{File: s.name, Line: s.line + 1,
					Msg: "line longer than " + itoa(MaxLineBytes) + " bytes (not a ledger record?)"}
			}
			s.eof = true
			if err != io.EOF {
				if ferr := s.ioErr(err); ferr != nil {
					return nil, false, ferr
				}
			}
			s.line++
			s.long = s.long[:0]
			return nil, false, errTornLong
		}
		if len(s.long) > 0 {
			s.long = append(s.long, chunk...)
			chunk = s.long
		}
		if err == nil {
			s.line++
			return chunk[:len(chunk)-1], true, nil
		}
		s.eof = true
		if err != io.EOF {
			if ferr := s.ioErr(err); ferr != nil {
				return nil, false, ferr
			}
		}
		if len(chunk) == 0 {
			return nil, false, io.EOF
		}
		s.line++
		return chunk, false, nil
	}
}

// errTornLong is readLine's answer for a last line without a newline longer than MaxLineBytes.
var errTornLong = errors.New("torn last line longer than the line limit")

// ioErr classifies a read error: a truncated gzip stream is tolerated (a warning, nil returned); a
// corrupt one is a LineError; anything else is the OS's error, wrapped with the file name.
func (s *source) ioErr(err error) error {
	var corrupt flate.CorruptInputError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		s.r.warn(s.name, s.line+1, "truncated gzip stream (a run cut short?): reading stops here")
		return nil
	case errors.Is(err, gzip.ErrChecksum), errors.Is(err, gzip.ErrHeader), errors.As(err, &corrupt):
		return &LineError{File: s.name, Line: s.line + 1, Msg: "corrupt gzip stream: " + err.Error()}
	}
	return fmt.Errorf("ledger: reading %s: %w", s.name, err)
}

// next decodes the next record of this file into s.rec. Blank lines are skipped; a record of an
// unknown kind is skipped with a warning; a torn last line (no newline, whatever it holds and however
// long) ends the file with a warning.
func (s *source) next() (*Record, error) {
	if s.pending {
		s.pending = false
		return &s.rec, nil
	}
	for {
		line, complete, err := s.readLine()
		if err == errTornLong {
			s.r.warn(s.name, s.line, "torn last line ignored (no newline, longer than "+itoa(MaxLineBytes)+" bytes)")
			return nil, io.EOF
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		rec := &s.rec
		if s.out != nil {
			rec = s.out
		}
		*rec = Record{}
		serr := s.dec.decode(line, rec)
		if !complete {
			// A last line without a newline is torn even when it parses: the writer did not finish it.
			msg := "no newline"
			if serr != nil {
				msg = serr.Error()
			}
			s.r.warn(s.name, s.line, "torn last line ignored ("+msg+")")
			return nil, io.EOF
		}
		if serr != nil {
			return nil, &LineError{File: s.name, Line: s.line, Msg: serr.Error()}
		}
		if !s.dec.present.has(fK) {
			if fe := s.dec.firstFieldError(""); fe != nil {
				return nil, &LineError{File: s.name, Line: s.line, Field: "k", Msg: fe.msg}
			}
			return nil, &LineError{File: s.name, Line: s.line, Field: "k", Msg: "missing (every record needs its kind)"}
		}
		spec := s.kindOf(rec.K)
		if spec == nil {
			s.r.warn(s.name, s.line, "unknown record kind "+quote(rec.K)+" skipped")
			continue
		}
		if fe := s.dec.firstFieldError(rec.K); fe != nil {
			return nil, &LineError{File: s.name, Line: s.line, Field: fe.field, Msg: fe.msg}
		}
		if rec.K == KindAudit && !s.dec.present.has(fTenantCount) && s.dec.present.has(fTenants) {
			// the audited tenants given as a list: count them
			rec.AuditTenants, rec.Tenants = int64(len(rec.Tenants)), nil
			s.dec.present.add(fTenantCount)
		}
		if field, msg := validate(rec, spec, s.dec.present); field != "" {
			return nil, &LineError{File: s.name, Line: s.line, Field: field, Msg: msg}
		}
		s.spec = spec
		return rec, nil
	}
}

func (s *source) close() error { return s.closer.Close() }
